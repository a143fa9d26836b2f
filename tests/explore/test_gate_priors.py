"""A wait behind a wait on the same barrier with the other parity (`Gate.prior`, `explore.frozen` rule
(e)): the first passes only once the current phase completed, so the second passes only once the next
one completed too. Thread 1 waits for phase 0, then for phase 1, then sets `flag`; thread 2 completes
both phases (arrive, wait, arrive); thread 0 traps if it reads the flag set (the first seed the
reduction tries: taken alone where the store looks out of reach). Races off: only the order
of thread 0's read and thread 1's store can tell (the trap is reachable; so is a deadlock, where thread 2
completes both phases before thread 1 waits for the first). With an arrival too few for phase 1
(`short`: thread 2 arrives once), thread 1 never gets past its second wait: a deadlock, and the trap is
not reachable. Same verdicts and finding kinds as without reductions."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import load, outcome

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<8>;
	.reg .b32 %r<8>;
	.shared .align 8 .b64 bar;
	.shared .align 4 .b32 flag;
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar], 1;
	st.shared.u32 [flag], 0;
SYNC:
	bar.sync 0;
	@!%p0 bra READER;
	setp.eq.u32 %p1, %r0, 1;
	@%p1 bra WAITER;
	mbarrier.arrive.shared::cta.b64 _, [bar];
W0:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
	@!%p3 bra W0;
{second}	exit;
WAITER:
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
	@!%p4 bra WAITER;
W1:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [bar], 1;
	@!%p5 bra W1;
	mov.u32 %r1, 1;
	st.shared.u32 [flag], %r1;
	exit;
READER:
	ld.shared.u32 %r2, [flag];
	setp.eq.u32 %p6, %r2, 1;
	@%p6 trap;
	exit;
}}
"""


@pytest.mark.parametrize("short", [False, True])
def test_a_second_phase_wait_same_outcomes_as_without_reductions(tmp_path: Path, short: bool) -> None:
    second = "" if short else "\tmbarrier.arrive.shared::cta.b64 _, [bar];\n"
    module = load(tmp_path, KERNEL.format(second=second))
    on, off = (check(module, block=3, options=Options(reductions=reduce, races=False, max_findings=1000,
                                                      walks=0)) for reduce in (True, False))
    assert off.verdict == "finding"
    assert outcome(on) == outcome(off), ([(f.kind, f.rule) for f in on.findings],
                                         [(f.kind, f.rule) for f in off.findings])
    kinds = outcome(off)[1]
    assert "deadlock" in kinds and ("violation" in kinds) != short
