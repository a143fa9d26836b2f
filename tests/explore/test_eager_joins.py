"""Arrivals that only join run eagerly (`explore.check.joins_only`, `Explorer.is_local`): every arrival at
wgmma.mma_async and wgmma.wait_group, an arrival at ldmatrix/stmatrix that is not its warp's last, one at
barrier.cluster.arrive that is not its cluster's last, and barrier.cluster.wait. The search takes no state
for them. Same verdicts and finding kinds as without reductions on small kernels of these shapes with their
bugs: a lane exiting before the collective, a write racing with the operation's read, a register read
before wait_group retires it, an arrival twice. (Thread-granular without reductions is 2^32 arrival orders
for a warp collective, so the warp-granular search without reductions is the reference there, as in
`test_matrix_collectives`; the thread-granular search with reductions and no random walk must agree.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore import check as explore_check
from mbarrier.explore.check import Options, check
from mbarrier.explore.code import BRANCH, LOCAL, WARP
from mbarrier.ptx import ast

from .helpers import differential, load, outcome


def _same(module: ast.Module, block: int) -> tuple[str, frozenset[str]]:
    """The outcome warp-granular without reductions, which the thread-granular search with them (no walks)
    and the warp-granular one with them must give too."""
    ref, warp_on, threads = (check(module, grid=1, block=block, options=Options(
        warp=warp, reductions=red, max_findings=1000, walks=0, max_states=200_000))
        for warp, red in ((True, False), (True, True), (False, True)))
    assert ref.verdict != "incomplete" and threads.verdict != "incomplete", (ref.verdict, threads.verdict)
    assert outcome(warp_on) == outcome(ref), (outcome(warp_on), outcome(ref))
    assert outcome(threads) == outcome(ref), ([(f.kind, f.rule) for f in threads.findings], outcome(ref))
    return outcome(ref)


# One warpgroup: each thread stores 16 bytes of the operands (f16 1.0), fences them for the async proxy
# (`fence`), and the CTA meets; the warpgroup multiplies A and B (one descriptor for both) and waits.
# Bugs: no proxy fence (the engine's read races with the stores), thread `writer` storing into the
# operands after the meeting and before the wait_group (`late`: unordered with the engines' reads; after
# the wait_group, which returns once every warp's share is done, it is ordered), a register read before
# the wait_group (`early`), a lane that exits first (`exit`: the warpgroup is not whole).
WGMMA = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .f32 %d<8>;
	.reg .b64 %rd<8>;
	.shared .align 1024 .b8 smem[4096];
	mov.u32 %r1, %tid.x;
	{leave}
	mov.u32 %r2, smem;
	shl.b32 %r3, %r1, 4;
	add.u32 %r3, %r2, %r3;
	mov.b32 %r4, 0x3c003c00;
	st.shared.v4.u32 [%r3], {{%r4, %r4, %r4, %r4}};
	{fence}
	bar.sync 0;
	cvt.u64.u32 %rd1, %r2;
	shr.u64 %rd1, %rd1, 4;
	or.b64 %rd1, %rd1, 0x1000080000;
	mov.f32 %d0, 0f00000000;
	mov.f32 %d1, 0f00000000;
	mov.f32 %d2, 0f00000000;
	mov.f32 %d3, 0f00000000;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {{%d0, %d1, %d2, %d3}}, %rd1, %rd1, 1, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	{before}
	wgmma.wait_group.sync.aligned 0;
	{after}
	ret;
}}
"""
LATE = "setp.eq.u32 %p1, %r1, {writer};\n\t@%p1 st.shared.u32 [smem+64], %r4;"
FENCE = "fence.proxy.async.shared::cta;"
WGMMA_CASES = {
    "correct": ({}, frozenset()),
    "no-fence": ({"fence": ""}, frozenset({"race"})),
    "late-own-warp": ({"before": LATE.format(writer=5)}, frozenset({"race"})),
    "late-other-warp": ({"before": LATE.format(writer=70)}, frozenset({"race"})),
    "after-wait": ({"after": LATE.format(writer=70)}, frozenset()),
    "early-read": ({"before": "mov.f32 %d5, %d1;"}, frozenset({"violation"})),
    "exit": ({"leave": "setp.eq.u32 %p2, %r1, 100;\n\t@%p2 ret;"}, frozenset({"violation"})),
}


@pytest.mark.parametrize("case", list(WGMMA_CASES))
def test_wgmma_arrivals_same_outcomes(tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warpgroup is 128 threads: without reductions (thread- or warp-granular) the search does not end in
    minutes, so the reference is the search with the reductions these arrivals had before (each arrival a
    visible step, its footprint `Footprints._mma`), itself checked against none on smaller kernels."""
    fill, expected = WGMMA_CASES[case]
    parts = {"leave": "", "fence": FENCE, "before": "", "after": ""} | fill
    module = load(tmp_path, WGMMA.format(**parts))
    opts = Options(walks=0, max_findings=1000, max_states=20_000)
    on = check(module, grid=1, block=128, options=opts)
    monkeypatch.setattr(explore_check, "_EAGER", (LOCAL, BRANCH, WARP))
    monkeypatch.setattr(explore_check, "_JOINS", ())
    before = check(module, grid=1, block=128, options=opts)
    assert before.verdict != "incomplete" and on.verdict != "incomplete"
    assert outcome(on) == outcome(before) == (("verified" if not expected else "finding"), expected)
    assert on.stats.states < before.stats.states, (on.stats.states, before.stats.states)


# Two warps: warp 0 writes an 8x8 tile with stmatrix and arrives on `full`; warp 1 waits and reads it with
# ldmatrix. Bugs: lane 5 of warp 1 exits before the ldmatrix (every lane must execute it), warp 0 writes the
# tile again after arriving (a race with warp 1's read).
MATRIX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<8>;
	.reg .b32 %r<16>;
	.shared .align 16 .b8 tile[128];
	.shared .align 8 .b64 full;
	mov.u32 %r0, %tid.x;
	and.b32 %r1, %r0, 7;
	shl.b32 %r2, %r1, 4;
	mov.u32 %r3, tile;
	add.u32 %r4, %r3, %r2;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC;
	mbarrier.init.shared::cta.b64 [full], 32;
SYNC:
	bar.sync 0;
	setp.ge.u32 %p1, %r0, 32;
	@%p1 bra CONS;
	stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r4], {{%r0}};
	mbarrier.arrive.shared::cta.b64 _, [full];
	{again}
	exit;
CONS:
	{leave}
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], 0;
	@!%p2 bra CONS;
	ldmatrix.sync.aligned.m8n8.x1.shared.b16 {{%r5}}, [%r4];
	exit;
}}
"""
MATRIX_CASES = {
    "correct": ({}, frozenset()),
    "exit": ({"leave": "setp.eq.u32 %p3, %r0, 37;\n\t@%p3 exit;"}, frozenset({"violation"})),
    "again": ({"again": "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r4], {%r1};"}, frozenset({"race"})),
}


@pytest.mark.parametrize("case", list(MATRIX_CASES))
def test_matrix_arrivals_same_outcomes(tmp_path: Path, case: str) -> None:
    fill, expected = MATRIX_CASES[case]
    parts = {"leave": "", "again": ""} | fill
    got = _same(load(tmp_path, MATRIX.format(**parts)), block=64)
    assert got[1] == expected, got


def test_matrix_arrivals_take_no_state(tmp_path: Path) -> None:
    """Only the last lane's arrival at each of stmatrix and ldmatrix is a state of its own (before: 64 more
    states, one per arrival; `test_matrix_collectives`: 258)."""
    r = check(load(tmp_path, MATRIX.format(leave="", again="")), grid=1, block=64,
              options=Options(walks=0))
    assert r.verdict == "verified"
    assert r.stats.states <= 200, r.stats.states


# Two CTAs of a cluster: each thread stores its word, the cluster meets (`arrive` then `wait`), each reads
# the other CTA's word, the cluster meets again. Bugs: the read before the first meeting (a race), thread 0
# arriving twice (a fault), no second meeting (a CTA may exit while the other reads it), one thread of CTA
# 1 exiting after its store, without arriving (the phase completes without it; its store then races with
# CTA 0's read of it, and with one thread a CTA, CTA 1 may be gone when CTA 0 reads).
CLUSTER = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.shared .align 4 .b8 word[16];
	mov.u32 %r0, %tid.x;
	shl.b32 %r1, %r0, 2;
	mov.u32 %r2, word;
	add.u32 %r3, %r2, %r1;
	mov.u32 %r4, %cluster_ctarank;
	xor.b32 %r5, %r4, 1;
	mapa.shared::cluster.u32 %r6, %r3, %r5;
	{leave}
	st.shared.u32 [%r3], 1;
	{early}
	{twice}
	barrier.cluster.arrive.release;
	barrier.cluster.wait.acquire;
	ld.shared::cluster.u32 %r7, [%r6];
	{last}
	exit;
}}
"""
SYNC = "barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;"
V, R = frozenset({"violation"}), frozenset({"race"})
# By case: the fill and the kinds found with 1 and with 2 threads a CTA.
CLUSTER_CASES: dict[str, tuple[dict[str, str], tuple[frozenset[str], frozenset[str]]]] = {
    "correct": ({}, (frozenset(), frozenset())),
    "early": ({"early": "ld.shared::cluster.u32 %r8, [%r6];"}, (R, R)),
    "twice": ({"twice": "setp.eq.u32 %p0, %r0, 0;\n\t@%p0 barrier.cluster.arrive.release;"}, (V, V)),
    "leave": ({"last": ""}, (V, V)),
    "one-exits": ({"early": "setp.eq.u32 %p1, %r0, 0;\n\tsetp.eq.u32 %p2, %r4, 1;\n\tand.pred %p1, %p1, %p2;"
                   "\n\t@%p1 exit;"}, (V, R)),
}


CLUSTER_RUNS = [(c, 1) for c in CLUSTER_CASES] + [("correct", 2), ("twice", 2)]


@pytest.mark.parametrize(("case", "threads"), CLUSTER_RUNS)
def test_cluster_arrivals_same_outcomes_as_without_reductions(tmp_path: Path, case: str,
                                                              threads: int) -> None:
    fill, expected = CLUSTER_CASES[case]
    parts = {"leave": "", "early": "", "twice": "", "last": SYNC} | fill
    on, off = differential(load(tmp_path, CLUSTER.format(**parts)), grid=2, block=threads, cluster=2)
    assert outcome(off)[1] == expected[threads - 1], outcome(off)
