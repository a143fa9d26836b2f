"""A producer that issues a stage's bulk copies before its `arrive.expect_tx` for all of them (DeepGEMM's
order, docs/performance.md): with the copies in flight the arrival completes the phase only after every
one of them lands, so it commutes with their landings (`explore.quiet`, `footprints.LAST`) and the
producer's step no longer takes the copies into the stubborn set. Same verdicts and finding kinds as
without reductions, correct and with bugs; states linear in the rounds, fewer than before."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Options, check

from .helpers import differential, load

# Thread 0 initializes `full` (count {full}) and `empty` (count {empty}); then, for `rounds` rounds, it
# waits for `empty`, issues two 32-byte bulk copies into `tile` on `full` and arrives on `full` expecting
# {bytes} bytes; the other threads wait for `full`, read their word of `tile` and arrive on `empty`. At
# the end the producer waits for the last release.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out, .param .u32 rounds)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<24>;
	.reg .b64 %rd<12>;
	.shared .align 128 .b8 tile[64];
	.shared .align 8 .b64 full;
	.shared .align 8 .b64 empty;
	mov.u32 %r1, %tid.x;
	ld.param.u32 %r20, [rounds];
	mov.u32 %r21, 0;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared::cta.b64 [full], {full};
	mbarrier.init.shared::cta.b64 [empty], {empty};
SYNC:
	bar.sync 0;
	@%p1 bra CONSUME;
	ld.param.u64 %rd1, [src];
	cvta.to.global.u64 %rd1, %rd1;
	add.u64 %rd2, %rd1, 32;
	mov.u32 %r2, tile;
	add.u32 %r3, %r2, 32;
PRODUCE:
	and.b32 %r4, %r21, 1;
	xor.b32 %r4, %r4, 1;
PWAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [empty], %r4;
	@!%p2 bra PWAIT;
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd1], 32, [full];
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd2], 32, [full];
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [full], {bytes};
	add.u32 %r21, %r21, 1;
	setp.lt.u32 %p3, %r21, %r20;
	@%p3 bra PRODUCE;
	and.b32 %r4, %r21, 1;
	xor.b32 %r4, %r4, 1;
TWAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [empty], %r4;
	@!%p2 bra TWAIT;
	ret;
CONSUME:
	and.b32 %r5, %r1, 15;
	shl.b32 %r6, %r5, 2;
	mov.u32 %r7, tile;
	add.u32 %r8, %r7, %r6;
	ld.param.u64 %rd6, [out];
	mul.wide.u32 %rd7, %r1, 4;
	add.u64 %rd8, %rd6, %rd7;
CLOOP:
	and.b32 %r9, %r21, 1;
CWAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [full], %r9;
	@!%p4 bra CWAIT;
	ld.shared.u32 %r10, [%r8];
	st.global.u32 [%rd8], %r10;
	mbarrier.arrive.shared::cta.b64 _, [empty];
	add.u32 %r21, %r21, 1;
	setp.lt.u32 %p5, %r21, %r20;
	@%p5 bra CLOOP;
	ret;
}}
"""


def _kernel(consumers: int, expected: int = 64, full: int = 1) -> str:
    return KERNEL.format(full=full, empty=consumers, bytes=expected)


def _args(rounds: int) -> dict[str | int, object]:
    return {"src": sim.Buffer(64), "out": sim.Buffer(256), "rounds": rounds}


# Armed for both copies (verified); 4 bytes more (the phase never completes: a deadlock); for one copy
# (the phase completes when it lands: the consumers read the other half while it lands, a race, and its
# bytes fall into the next phase); `full` expecting two arrivals (a deadlock).
CASES = [(rounds, name, expected, full, answer) for rounds in (1, 2)
         for name, expected, full, answer in (("ok", 64, 1, None), ("plus4", 68, 1, "deadlock"),
                                              ("one", 32, 1, "race"), ("count", 64, 2, "deadlock"))]


@pytest.mark.parametrize(("rounds", "name", "expected", "full", "answer"), CASES,
                         ids=[f"{c[1]}-{c[0]}" for c in CASES])
def test_expect_after_copies_same_outcomes_as_without_reductions(
        tmp_path: Path, rounds: int, name: str, expected: int, full: int, answer: str | None) -> None:
    on, off = differential(load(tmp_path, _kernel(1, expected, full)), block=2, args=_args(rounds))
    assert (off.verdict == "verified") == (answer is None)
    assert answer is None or answer in {str(f.kind) for f in on.findings}


def test_the_arrival_after_its_copies_adds_no_branch(tmp_path: Path) -> None:
    """One consumer: 26, 46, 86 states for 2, 4, 8 rounds (34, 62, 118 when the arrival took the copies
    in flight into its set); linear in the rounds, at most 10 a round."""
    module = load(tmp_path, _kernel(1))
    states = [check(module, grid=1, block=2, args=_args(k), options=Options(walks=0)).stats.states
              for k in (2, 4, 8)]
    assert states[2] - states[1] == 2 * (states[1] - states[0])
    assert states[1] - states[0] <= 2 * 10
