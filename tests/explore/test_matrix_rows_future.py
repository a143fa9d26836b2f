"""The rows an ldmatrix/stmatrix of a thread's future reads or writes (`Footprints._matrix`,
`joins.own_row`): the row its own address gives there, not anywhere in the CTA's shared memory. A row
belongs to the lane that names it: the meeting's last arrival reads or writes it only after that lane
arrived, so a lane already waiting inside the meeting keeps the row in its future
(`values.future_start` starts it at the stmatrix too). Before, CUTLASS pingpong's four epilogue warps
(`ldmatrix` then `stmatrix` on rows of their own) formed stubborn sets of 2-4 at every matrix step, as
each warp's future `stmatrix` could write anywhere.

Two warps of one CTA: warp 0 reads and writes its rows (lanes 0-7 of an `.x1` name them), warp 1 reads
its rows and hangs if a row is not 0, then writes them; `stride` 128 gives each warp rows of its own, 0
the same rows (warp 1 then hangs where warp 0 wrote first). With `lag` n, the last n lanes of warp 0 load
a word before each of its `stmatrix` that lane 31 of warp 1 stores after each round, while the other
lanes wait inside the `stmatrix` with their rows given."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import load, outcome

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .pred %p<8>;
	.reg .b32 %r<16>;
	.shared .align 16 .b8 tile[256];
	.shared .align 8 .b64 mb;
	.shared .align 4 .b32 word;
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC;
	mbarrier.init.shared::cta.b64 [mb], 1;
SYNC:
	bar.sync 0;
	shr.u32 %r1, %r0, 5;
	and.b32 %r2, %r0, 7;
	shl.b32 %r3, %r2, 4;
	mul.lo.u32 %r6, %r1, STRIDE;
	mov.u32 %r7, tile;
	add.u32 %r4, %r7, %r3;
	add.u32 %r4, %r4, %r6;
	mov.u32 %r8, 65537;
	mov.u32 %r9, 0;
	and.b32 %r10, %r0, 31;
	setp.eq.u32 %p4, %r10, 31;
	setp.ge.u32 %p5, %r10, FIRST;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra W1;
"""
LAG = "\t@%p5 ld.shared.u32 %r11, [word];\n"
WARP0 = """	ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r5}, [%r4];
LAG	stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r4], {%r8};
"""
WARP1 = """	ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r5}, [%r4];
	setp.ne.u32 %p2, %r5, 0;
	@%p2 bra HANG;
	stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r4], {%r9};
	@%p4 st.shared.u32 [word], %r9;
"""
TAIL = """	exit;
HANG:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [mb], 0;
	@!%p3 bra HANG;
	exit;
}
"""


def _kernel(stride: int, lag: int, rounds: int) -> str:
    warp0 = WARP0.replace("LAG", LAG if lag else "")
    head = HEAD.replace("STRIDE", str(stride)).replace("FIRST", str(32 - lag))
    return head + warp0 * rounds + "\texit;\nW1:\n" + WARP1 * rounds + TAIL


def _check(tmp_path: Path, text: str, races: bool, warp: bool = False,
           reductions: bool = True, runs: bool = True) -> tuple[str, frozenset[str], int]:
    r = check(load(tmp_path, text), grid=1, block=64, options=Options(
        races=races, warp=warp, reductions=reductions, max_findings=1000, walks=0, max_states=100_000,
        runs=runs))
    verdict, kinds = outcome(r)
    return verdict, kinds, r.stats.states


CASES = [(stride, lag, 1, races) for stride in (0, 128) for lag in (0, 1, 2) for races in (False, True)]
CASES += [(0, 1, 2, False), (128, 1, 2, False)]


@pytest.mark.parametrize(("stride", "lag", "rounds", "races"), CASES,
                         ids=[f"stride{c[0]}-lag{c[1]}-r{c[2]}-races{int(c[3])}" for c in CASES])
def test_same_outcomes_as_without_reductions(tmp_path: Path, stride: int, lag: int, rounds: int,
                                             races: bool) -> None:
    """Thread-granular with reductions against warp-granular without them (thread-granular without them
    is every order of 64 threads): the same verdict and kinds. The bugs lie between the warps, which
    warp granularity interleaves. Without `future_start` at the stmatrix, `stride0-lag1-r1-races0` was
    verified: warp 1's ldmatrix formed a set of one while warp 0's lanes 0-7 waited inside their
    stmatrix with its rows given and lane 31 was still loading `word`; and `stride0-lag2-r1-races0` while
    a lane inside the stmatrix counted itself twice (`joins.completes`), so that its future's first
    step, its arrival there, was neither the meeting's completion nor gave its row (`joins.inside`)."""
    text = _kernel(stride, lag, rounds)
    verdict, kinds, _ = _check(tmp_path, text, races=races)
    off = _check(tmp_path, text, races=races, warp=True, reductions=False)
    assert off[0] != "incomplete"
    assert (verdict, kinds) == off[:2]
    if not races:
        expected = ("verified", frozenset()) if stride else ("finding", frozenset({"deadlock"}))
        assert (verdict, kinds) == expected


def test_warps_on_rows_of_their_own_interleave_once(tmp_path: Path) -> None:
    """Each warp's future stmatrix names its own rows, so the two warps' matrix steps commute: 71, 76 and
    81 states for 1, 2 and 3 rounds (before: 72, 88 and 116, the interleavings of the two warps' matrix
    steps)."""
    states = [_check(tmp_path, _kernel(128, 0, n), races=True, runs=False) for n in (1, 2, 3)]
    assert [s[0] for s in states] == ["verified"] * 3
    assert [s[2] for s in states] == [71, 76, 81]
