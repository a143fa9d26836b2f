"""A lane blocked inside a warp collective already stands past it (the simulator moves pc first), while
the registers the collective writes hold their old values until it completes (PTX ISA 9.7.13.1, vote:
the destination holds the warp's result). Its future, as the stubborn sets see it while another warp's
thread is the seed, must start at the collective (`values.future_start`), not read those stale values."""

from __future__ import annotations

from pathlib import Path

from mbarrier import sim
from mbarrier.explore.check import Explorer, Options
from mbarrier.explore.values import future_start, unroll
from mbarrier.sim.machine import BLOCKED
from mbarrier.sim.waits import InCollective

from .helpers import load

# Lane 0 of warp 1 (thread 32) votes with lane 1 (mask 0x3); the vote's result decides its arrival on
# `bar`, which thread 0 waits for. Thread 33 first sleeps, so thread 32 blocks inside the vote with the
# old (false) %p1: read as it stands, its future has no arrival at all.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p3, %r1, 0;
	@%p3 bra SKIP_INIT;
	mbarrier.init.shared.b64 [bar], 1;
SKIP_INIT:
	bar.sync 0;
	setp.eq.u32 %p3, %r1, 0;
	@%p3 bra WAIT;
	setp.lt.u32 %p3, %r1, 32;
	@%p3 bra DONE;
	setp.gt.u32 %p3, %r1, 33;
	@%p3 bra DONE;
	setp.eq.u32 %p2, %r1, 33;
	@!%p2 bra VOTE;
	nanosleep.u32 10;
VOTE:
	vote.sync.any.pred %p1, %p2, 3;
	@!%p1 bra DONE;
	mbarrier.arrive.shared.b64 _, [bar];
	bra DONE;
WAIT:
	mbarrier.try_wait.parity.shared.b64 %p1, [bar], 0;
	@!%p1 bra WAIT;
DONE:
	ret;
}
"""


def test_a_lane_inside_a_collective_has_the_collectives_results_ahead(tmp_path: Path) -> None:
    module = load(tmp_path, KERNEL)
    m = sim.launch(module, grid=1, block=64)
    ex = Explorer(m, module, Options(walks=0))
    for u in m.threads:  # every thread to the bar.sync, the last one releases them
        while u.status != BLOCKED and u.pc < 5:
            m.step(u)
    t = m.threads[32]
    while t.status != BLOCKED:
        m.step(t)
    assert isinstance(t.wait, InCollective)
    code = ex.code
    arrive = next(x.pc for x in code.ins if x.op == "mbarrier.arrive")
    live = code.live

    def reached(thread: object) -> bool:
        g = unroll(m, code, thread, live,  # type: ignore[arg-type]
                   lambda j, env: ex.fp.fps["k"].successors(thread, j, thread.pc, env))  # type: ignore[attr-defined]
        return arrive in g.pcs

    assert not reached(t), "the stale predicate hides the arrival (the case this guards against)"
    start = future_start(code, t)
    assert start.pc == t.pc - 1 and code.ins[start.pc].op == "vote"
    assert reached(start)
    assert t.pc == start.pc + 1  # the thread itself is untouched

