"""ldmatrix and stmatrix in the checker (`code.MATRIX`, `Footprints._matrix`): warp collectives whose last
arrival reads (writes) rows of the CTA's shared memory, nothing else. Before, the checker took them as
steps that may touch anything (an opaque instruction): in a thread's future, one of them could reset or
complete any mbarrier, so every wait behind it counted as passable and the futures of the consumers of
CUTLASS's, FlashAttention-3's, DeepGEMM's and ThunderKittens' kernels (whose epilogues use them) reached
everything. Same verdicts and finding kinds as without reductions (warp-granular, where a search without
reductions stays small), and the thread-granular search agrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Options, check
from mbarrier.explore.code import BAR, MATRIX, analyse_module, shared_symbols
from mbarrier.explore.footprints import JOIN, WRITE, Footprints

from .helpers import load, outcome

# Warp 0 writes an 8x8 tile with stmatrix (lane i < 8 names row i) and every lane arrives on `full`
# (count 32); warp 1 waits for the phase (`parity`: 1 does not wait) and reads the tile with ldmatrix.
# With `twice`, warp 0 writes the tile again after arriving: unordered with warp 1's read.
KERNEL = """.version 8.0
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
{again}	exit;
CONS:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], {parity};
	@!%p2 bra CONS;
	ldmatrix.sync.aligned.m8n8.x1.shared.b16 {{%r5}}, [%r4];
	exit;
}}
"""
AGAIN = "\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r4], {%r1};\n"

CASES = [(0, False, None), (1, False, "race"), (0, True, "race")]


def _kernel(parity: int, twice: bool) -> str:
    return KERNEL.format(parity=parity, again=AGAIN if twice else "")


@pytest.mark.parametrize(("parity", "twice", "expected"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_matrix_collectives_same_outcomes_as_without_reductions(tmp_path: Path, parity: int, twice: bool,
                                                                expected: str | None) -> None:
    """Warp-granular with and without reductions (thread-granular without them is 2^32 arrival orders),
    and thread-granular with them and the random walks (bugs first): the same verdict and kind."""
    module = load(tmp_path, _kernel(parity, twice))
    on, off = (check(module, grid=1, block=64, options=Options(
        warp=True, reductions=red, max_findings=1000, walks=0, max_states=100_000)) for red in (True, False))
    assert off.verdict != "incomplete"
    assert outcome(on) == outcome(off)
    threads = check(module, grid=1, block=64, options=Options(max_states=100_000))
    if expected is None:
        assert off.verdict == threads.verdict == "verified"
    else:
        assert expected in outcome(off)[1] and expected in outcome(threads)[1]


def test_a_matrix_epilogue_verifies_thread_granular(tmp_path: Path) -> None:
    """The correct kernel, thread-granular, without walks: verified in 258 states (before: incomplete,
    13,140 states after 7.6 s: the ldmatrix in the consumers' futures could complete `full`, so their
    waits were no gates and every lane's future reached the other warp's)."""
    r = check(load(tmp_path, _kernel(0, False)), grid=1, block=64, options=Options(walks=0, max_states=5_000))
    assert r.verdict == "verified"
    assert r.stats.states <= 300, r.stats.states


def test_the_last_arrival_names_the_rows_its_lanes_gave(tmp_path: Path) -> None:
    """The arrival that completes a warp's stmatrix writes the 8 rows lanes 0-7 named (`Footprints._rows`),
    not anywhere in shared memory: a copy landing elsewhere in the CTA commutes with it (CUTLASS's
    epilogue reads C from one stage while the next stages' loads are in flight)."""
    module = load(tmp_path, _kernel(0, False))
    m = sim.launch(module, grid=1, block=64)
    fp = Footprints(m, analyse_module(module, m)["k"])
    x = next(y for y in fp.code.ins if y.kind == MATRIX and y.stores)
    for u in m.threads:  # every thread to the bar.sync and into it (the last arrival releases them all)
        while fp.code.ins[u.pc].kind != BAR:
            m.step(u)
    for u in m.threads:
        m.step(u)
    lanes = m.threads[:32]
    for u in lanes:
        while u.pc != x.pc:
            m.step(u)
    tile = shared_symbols(m)["tile"]
    for u in lanes[:31]:
        assert fp.current(u) == [(("warp", 0, 0), JOIN)]  # not the last: a join only
        m.step(u)
    rows = [obj for obj, mode in fp.current(lanes[31]) if obj[0] == "sm" and mode == WRITE]
    assert rows == [("sm", 0, tile + 16 * r, tile + 16 * r + 16) for r in range(8)]
