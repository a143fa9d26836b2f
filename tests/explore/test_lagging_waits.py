"""Waits that cannot tell: every thread of a block arrives on bar[s] and waits on its token (kept in a
register, as libcu++'s `cuda::barrier` with `cuda::memcpy_async` does), s alternating over two stages,
while thread 0 writes the stage's word before its arrival and the others read it after their wait.

A thread standing at a wait that would pass commutes with every step outside the stubborn set when the
barrier's current phase cannot complete meanwhile (the wait reads only the phase: PTX ISA 9.7.13.15.16)
and its mark of the phase as waited for changes nothing an outside arrival reads: the mark is set, or
every agent that may arrive there stands at such a wait itself (`explore.quiet`, `Quiet.wait_quiet`).
Before, each such wait conflicted with every other thread's next-phase arrival in its future, and every
phase of the 128-thread CCCL pipeline was a stubborn set of all its threads. Same verdicts and kinds of
findings as without reductions, with bugs the rule must not hide: a thread that never waits (its
arrival two rounds on may come before anyone waited for the phase: PhaseNotWaited), one that waits with
the token of two rounds before (stale, or passing early: a race), an expected count one too high."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.core.barrier import Barrier
from mbarrier.core.violations import PhaseNotWaited
from mbarrier.explore.check import Options, check

from .helpers import differential, load


def kernel(bug: str | None = None) -> str:
    """n rounds (a kernel parameter); round r uses stage s = r & 1: every thread arrives on bar[s] and
    waits (the stage is full: thread 0 wrote data[s] before), the others read data[s], every thread
    arrives on bar[s] again and waits (the stage is empty), and thread 0 writes data[s] for round r + 2.
    Bugs: `nowait` (thread 1 never waits for a full stage), `stale` (thread 1 waits for the empty stage
    with its token of the full one), `early` (thread 0 writes the stage before it is empty), `count`
    (bar[] expects one arrival more than the block makes)."""
    nowait = "@%p4 bra READ;" if bug == "nowait" else ""
    stale = "@%p4 mov.b64 %rd3, %rd2;" if bug == "stale" else ""
    early = "@%p3 st.shared.u32 [%r13], %r15;" if bug == "early" else ""
    late = "" if bug == "early" else "@%p3 st.shared.u32 [%r13], %r15;"
    count = "add.u32 %r30, %r30, 1;" if bug == "count" else ""
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{{
	.reg .pred %p<10>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<20>;
	.shared .align 8 .b64 bar[2];
	.shared .align 16 .b8 data[8];
	mov.u32 %r0, %tid.x;
	mov.u32 %r30, %ntid.x;
	{count}
	ld.param.u32 %r1, [n];
	setp.eq.u32 %p3, %r0, 0;
	setp.eq.u32 %p4, %r0, 1;
	mov.u32 %r6, bar;
	mov.u32 %r12, data;
	@!%p3 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar], %r30;
	mbarrier.init.shared::cta.b64 [bar+8], %r30;
	st.shared.u32 [data], 0;
	st.shared.u32 [data+4], 1;
SYNC:
	bar.sync 0;
	mov.u32 %r2, 0;
LOOP:
	setp.ge.u32 %p1, %r2, %r1;
	@%p1 bra DONE;
	and.b32 %r4, %r2, 1;
	shl.b32 %r5, %r4, 3;
	add.u32 %r7, %r6, %r5;
	shl.b32 %r11, %r4, 2;
	add.u32 %r13, %r12, %r11;
	add.u32 %r15, %r2, 2;
	mbarrier.arrive.shared::cta.b64 %rd2, [%r7];
	{nowait}
FULL:
	mbarrier.try_wait.shared::cta.b64 %p2, [%r7], %rd2;
	@!%p2 bra FULL;
READ:
	@!%p3 ld.shared.u32 %r14, [%r13];
	mbarrier.arrive.shared::cta.b64 %rd3, [%r7];
	{stale}
	{early}
EMPTY:
	mbarrier.try_wait.shared::cta.b64 %p2, [%r7], %rd3;
	@!%p2 bra EMPTY;
	{late}
	add.u32 %r2, %r2, 1;
	bra.uni LOOP;
DONE:
	exit;
}}
"""


CASES = [(None, 2, 3), (None, 3, 3), ("nowait", 2, 3), ("nowait", 3, 2), ("stale", 2, 3), ("stale", 3, 2),
         ("early", 2, 3), ("count", 2, 2), ("count", 3, 2)]


@pytest.mark.parametrize(("bug", "block", "n"), CASES, ids=[f"{b}-{t}t-n{n}" for b, t, n in CASES])
def test_same_outcomes_as_without_reductions(tmp_path: Path, bug: str | None, block: int, n: int) -> None:
    on, _ = differential(load(tmp_path, kernel(bug)), block=block, args={"n": n})
    assert (on.verdict == "verified") == (bug is None)


def test_the_bugs_found(tmp_path: Path) -> None:
    kinds = {}
    for bug in ("nowait", "stale"):
        r = check(load(tmp_path, kernel(bug), bug), grid=1, block=2, args={"n": 3},
                  options=Options(walks=0, max_findings=1000))
        kinds[bug] = {f.rule for f in r.findings}
    assert "phase-not-waited" in kinds["nowait"], kinds   # missed where every passing wait commuted
    assert "wait-stale-token" in kinds["stale"], kinds    # missed where the phase's completion was not asked


def test_one_chain_per_round(tmp_path: Path) -> None:
    module = load(tmp_path, kernel())
    states = [check(module, grid=1, block=8, args={"n": n}, options=Options(walks=0)).stats.states
              for n in (2, 4, 6)]
    assert states[2] - states[1] == states[1] - states[0] > 0, states
    assert states[0] <= 100, states  # 42,499 before (2 rounds; 84,985 and 127,471 for 4 and 6)


def test_wait_result_leaves_the_object_alone() -> None:
    b = Barrier()
    b.init(1)
    tok = b.arrive()                       # completes phase 0
    assert not b.waited
    assert b.wait_result(tok) is True and not b.waited
    assert b.wait_result(parity=1) is False and b.wait_result(parity=2) is None
    with pytest.raises(PhaseNotWaited):   # the mark was never set: an arrival for phase 1 raises
        b.arrive()
