"""A 2-CTA cluster where each CTA's `full` needs both CTAs' copies: each CTA's producer arms its own
`full` for the whole stage (two halves) and multicasts its half into both CTAs, as CUTLASS's 2x1 TMA
multicast does. The gate fixpoint (`explore.frozen`) must compare byte counts: one half alone cannot
complete a phase that expects both (9.7.13.15.6), and a phase armed for one half can complete with either
(the `short` bug). The copies are bulk copies of a constant size, or tensor loads whose box comes from a
tensor map in kernel parameter memory (`Footprints.tensor_box`). Same verdicts and finding kinds as
without reductions, correct and with bugs, one and two rounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import CheckResult, Options, check_machine

from .helpers import load, outcome

# Thread 0 of each CTA initializes its barriers and produces: from the second round on it waits on its
# CTA's `empty` (every consumer of both CTAs releases both CTAs' stage), arms its `full` for both halves
# (arrive.expect_tx) and copies its half (16 bytes at offset rank * 128 of `tile`, a tensor box's
# alignment) into both CTAs (ctaMask 3). Every thread waits on its CTA's `full`, reads both halves and
# releases on both CTAs' `empty` remotely. A cluster barrier follows the initialization and precedes the
# exit.
KERNEL = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 128 .b8 tmap[128], .param .u64 src)
{{
	.reg .pred %p<12>;
	.reg .b16 %rs<4>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<8>;
	.shared .align 8 .b8 full[8];
	.shared .align 8 .b8 empty[8];
	.shared .align 128 .b8 tile[256];
	mov.u32 %r0, %tid.x;
	mov.u32 %r1, %cluster_ctarank;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC0;
	mbarrier.init.shared::cta.b64 [full], 1;
	mbarrier.init.shared::cta.b64 [empty], {count};
	fence.mbarrier_init.release.cluster;
SYNC0:
	barrier.cluster.arrive.release;
	barrier.cluster.wait.acquire;
	ld.param.u64 %rd0, [src];
	cvta.to.global.u64 %rd0, %rd0;
	mul.wide.u32 %rd1, %r1, 16;
	add.u64 %rd1, %rd0, %rd1;
	mov.b64 %rd2, tmap;
	cvta.param.u64 %rd3, %rd2;
	shl.b32 %r15, %r1, 2;
	mov.u32 %r6, full;
	mov.u32 %r8, tile;
	shl.b32 %r9, %r1, 7;
	add.u32 %r8, %r8, %r9;
	mov.u16 %rs1, {mask};
	mov.u32 %r20, 0;
LOOP:
	@%p0 bra CONSUME;
	setp.eq.u32 %p2, %r20, 0;
	@%p2 bra ARM;
	add.u32 %r22, %r20, 1;
	and.b32 %r22, %r22, 1;
EMPTY:
	mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p3, [empty], %r22;
	@!%p3 bra EMPTY;
ARM:
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [full], {bytes};
{copy}
CONSUME:
	and.b32 %r21, %r20, {parity};
WAITF:
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [full], %r21;
	@!%p4 bra WAITF;
	ld.shared.u32 %r10, [tile];
	ld.shared.u32 %r11, [tile+128];
	mov.u32 %r12, empty;
	mapa.shared::cluster.u32 %r13, %r12, 0;
	mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r13];
	mapa.shared::cluster.u32 %r14, %r12, 1;
	mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r14];
	add.u32 %r20, %r20, 1;
	setp.lt.u32 %p5, %r20, {rounds};
	@%p5 bra LOOP;
	barrier.cluster.arrive.release;
	barrier.cluster.wait.acquire;
	exit;
}}
"""
COPIES = {
    "bulk": "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            " [%r8], [%rd1], 16, [%r6], %rs1;",
    "tensor": "\tcp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
              ".multicast::cluster [%r8], [%rd3, {%r15}], [%r6], %rs1;",
}
# A 1D map of 64 ints whose box is 4 of them: 16 bytes, the bulk copy's size.
LAUNCH = {
    "kernel": "k", "grid": 2, "cluster": 2,
    "buffers": {"src": {"size": 256, "random": {"seed": 1, "type": "s32", "low": 0, "high": 100}}},
    "tensor_maps": {"t": {"encode": "tiled", "tensorDataType": "INT32", "tensorRank": 1,
                          "globalAddress": "src", "globalDim": [64], "globalStrides": [], "boxDim": [4],
                          "elementStrides": [1]}},
    "params": {"0": {"tensor_map": "t"}, "1": {"pointer": "src"}},
}

# Bugs: `bytes` (`full` armed for 4 bytes more than both halves: it never completes), `mask` (CTA 1's copy
# leaves CTA 0 out: CTA 0's `full` misses a half), `short` (`full` armed for one half: either copy completes
# the phase, and a consumer reads the other half while it lands), `parity` (the second round waits for
# parity 0 again: it reads while the copies land).
EXPECTED = {None: None, "bytes": "deadlock", "mask": "deadlock", "short": "race", "parity": "race"}


def _kernel(copy: str, bug: str | None, threads: int, rounds: int) -> str:
    return KERNEL.format(count=2 * threads, bytes={"bytes": 36, "short": 16}.get(bug or "", 32),
                         mask="%rs2" if bug == "mask" else 3, parity=0 if bug == "parity" else 1,
                         rounds=rounds, copy=COPIES[copy])


def _check(tmp_path: Path, copy: str, bug: str | None, threads: int, rounds: int,
           reduce: bool) -> CheckResult:
    text = _kernel(copy, bug, threads, rounds)
    if bug == "mask":  # ctaMask 3, but 2 (CTA 1 alone) in CTA 1
        text = text.replace("\tmov.u16 %rs1, %rs2;\n", "\tsetp.eq.u32 %p6, %r1, 1;\n"
                            "\tselp.b32 %r16, 2, 3, %p6;\n\tcvt.u16.u32 %rs1, %r16;\n")
    module = load(tmp_path, text)
    launch = tmp_path / "k.launch.json"
    launch.write_text(json.dumps(dict(LAUNCH, block=threads)))
    m = sim.launch(module, spec=sim.read_launch(launch))
    return check_machine(m, module, Options(reductions=reduce, max_findings=1000, max_states=200_000,
                                            walks=0))


CASES = ([(copy, bug, 1, 1) for copy in ("bulk", "tensor") for bug in (None, "bytes", "mask", "short")]
         + [(copy, bug, 1, 2) for copy in ("bulk", "tensor") for bug in (None, "parity")]
         # three rounds: a round's wait behind the last arrive.expect_tx (`short` takes minutes unreduced)
         + [("bulk", bug, 1, 3) for bug in (None, "bytes", "parity")])


@pytest.mark.parametrize(("copy", "bug", "threads", "rounds"), CASES,
                         ids=[f"{c}-{b}-{n}-{r}" for c, b, n, r in CASES])
def test_both_halves_same_outcomes_as_without_reductions(tmp_path: Path, copy: str, bug: str | None,
                                                         threads: int, rounds: int) -> None:
    on = _check(tmp_path, copy, bug, threads, rounds, True)
    off = _check(tmp_path, copy, bug, threads, rounds, False)
    assert off.verdict != "incomplete"
    assert outcome(on) == outcome(off), ([(f.kind, f.rule) for f in on.findings],
                                         [(f.kind, f.rule) for f in off.findings])
    assert on.stats.states <= off.stats.states
    expected = EXPECTED[bug]
    assert (off.verdict == "verified") == (expected is None)
    assert expected is None or expected in outcome(off)[1]


def test_a_tensor_box_is_as_precise_as_a_bulk_copy(tmp_path: Path) -> None:
    """With its box known from the map, a tensor load writes the box's bytes and completes its bytes, as
    a bulk copy of that size does: the same states (before the box: 12,618 for tensor loads, 12,578 for
    bulk copies; now 1,364 each, 4 threads per CTA, 2 rounds)."""
    states = [_check(tmp_path, copy, None, 4, 2, True) for copy in ("bulk", "tensor")]
    assert [r.verdict for r in states] == ["verified", "verified"]
    assert states[0].stats.states == states[1].stats.states


# One CTA: thread 0 loads a 16-byte box of `src` with a tensor copy and traps when its first word is 77;
# thread 1 stores 77 there, unordered with the copy. Whether the copy reads the store depends on the order
# of the store and the copy's landing: the landing reads the box's global bytes (races off, so that only
# the order can tell).
LANDING = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 128 .b8 tmap[128], .param .u64 src)
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	.shared .align 8 .b8 full[8];
	.shared .align 128 .b8 tile[128];
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra WRITER;
	mbarrier.init.shared::cta.b64 [full], 1;
	mov.b64 %rd2, tmap;
	cvta.param.u64 %rd3, %rd2;
	mov.u32 %r1, 0;
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [full], 16;
	cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [tile], [%rd3, {%r1}], [full];
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p1, [full], 0;
	@!%p1 bra WAIT;
	ld.shared.u32 %r2, [tile];
	setp.eq.u32 %p2, %r2, 77;
	@%p2 trap;
	exit;
WRITER:
	ld.param.u64 %rd0, [src];
	cvta.to.global.u64 %rd0, %rd0;
	mov.u32 %r3, 77;
	st.global.u32 [%rd0], %r3;
	exit;
}
"""


def test_a_tensor_landing_reads_its_box_in_global_memory(tmp_path: Path) -> None:
    module = load(tmp_path, LANDING)
    launch = tmp_path / "k.launch.json"
    one_cta = {k: v for k, v in LAUNCH.items() if k != "cluster"}
    launch.write_text(json.dumps(one_cta | {"grid": 1, "block": 2}))
    on, off = (check_machine(sim.launch(module, spec=sim.read_launch(launch)), module, Options(
        reductions=reduce, races=False, max_findings=1000, walks=0)) for reduce in (True, False))
    assert off.verdict == "finding"
    assert outcome(on) == outcome(off)


def test_each_round_and_each_consumer_costs_alike_states(tmp_path: Path) -> None:
    """A round's last arrival on `full` is its producer's arrive.expect_tx, which raises the tx-count
    again: the phase needs both halves' bytes after it (`frozen`, rule (b)), so a consumer's next-round
    wait stays shut while one half can land, and its releases stay out of the producers' futures. Each
    round then costs the same states, 10 more per consumer per CTA (before: 40, 56, 196 per round for 1,
    2, 4 threads per CTA)."""
    per_round = []
    for threads in (1, 2, 4):
        states = [_check(tmp_path, "tensor", None, threads, rounds, True).stats.states for rounds in (2, 3)]
        per_round.append(states[1] - states[0])
    assert per_round[2] - per_round[1] == 2 * (per_round[1] - per_round[0]), per_round
