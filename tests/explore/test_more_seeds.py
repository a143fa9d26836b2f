"""Seeds of other kinds where every seed tried first pauses (`closure.stubborn`, `seeds.more`).

CUTLASS's cp.async warp-specialized mainloop: each producer thread issues its cp.async copies, then
`cp.async.mbarrier.arrive` (without `.noinc`: the issue raises the pending count, the arrive-on lowers it
when the thread's copies land, PTX ISA 9.7.9.24) and an explicit `mbarrier.arrive` (9.7.13.15.13) on the
stage's full barrier, whose expected count is the number of producers. Seeds are tried copies first: the
pending arrive-ons, each of which may be the arrival that completes the phase, so each conflicts with
every other producer's future arrival, and the in-flight copies. Where all of those closures grow past
the first pass, a producer thread about to issue its next copy (another pc) closes alone. Before, the
paused closures were resumed and the state's set held every producer: the states grew with the subsets
of producers that had issued."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

# Threads 0 .. n-2 produce: four 16-byte cp.async each (their own chunks), then the arrive pair on `full`
# (count n-1, or n for the bug: one arrival short, the consumer never passes). Thread n-1 consumes.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u32 count)
{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 16 .b8 buf[2048];
	.shared .align 8 .b64 full;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ntid.x;
	sub.u32 %r3, %r2, 1;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	ld.param.u32 %r4, [count];
	mbarrier.init.shared::cta.b64 [full], %r4;
SYNC:
	bar.sync 0;
	setp.eq.u32 %p2, %r1, %r3;
	@%p2 bra CONSUME;
	ld.param.u64 %rd1, [src];
	cvta.to.global.u64 %rd1, %rd1;
	mul.wide.u32 %rd2, %r1, 16;
	add.s64 %rd3, %rd1, %rd2;
	mov.u32 %r5, buf;
	shl.b32 %r6, %r1, 4;
	add.u32 %r7, %r5, %r6;
	cp.async.ca.shared.global [%r7], [%rd3], 16;
	cp.async.ca.shared.global [%r7+256], [%rd3+256], 16;
	cp.async.ca.shared.global [%r7+512], [%rd3+512], 16;
	cp.async.ca.shared.global [%r7+768], [%rd3+768], 16;
	cp.async.mbarrier.arrive.shared::cta.b64 [full];
	mbarrier.arrive.shared::cta.b64 %rd5, [full];
	ret;
CONSUME:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [full], 0;
	@!%p3 bra CONSUME;
	ld.shared.u32 %r9, [buf];
	ret;
}
"""


# The kernel with one copy per producer: the search without reductions stays small.
ONE_COPY = "\n".join(line for line in KERNEL.splitlines() if "+256]" not in line and "+512]" not in line
                      and "+768]" not in line)


@pytest.mark.parametrize("short", [False, True])
def test_same_answers_as_without_reductions(tmp_path: Path, short: bool) -> None:
    on, _ = differential(load(tmp_path, ONE_COPY), block=3, args={"count": 2 + (1 if short else 0)})
    assert outcome(on) == (("finding", frozenset({"deadlock"})) if short else ("verified", frozenset()))


def test_states_linear_in_the_producers(tmp_path: Path) -> None:
    # 345, 493, 641 states at 6, 8, 10 producers; before, 586 at 4 and more than 20,000 at 6.
    k = load(tmp_path, KERNEL)
    states = []
    for n in (6, 8, 10):
        r = check(k, grid=1, block=n + 1, args={"count": n}, options=Options(walks=0, max_states=5000))
        assert r.verdict == "verified"
        states.append(r.stats.states)
    assert states[2] - states[1] == states[1] - states[0], states
