"""Twin bulk stores (issue #15): every thread of a block issues the same `cp.async.bulk` store (the same
staging bytes in shared memory to the same global bytes), as CUTLASS's TMA-store epilogues do from all 32
lanes of a warp. Their landings write the same bytes with the same values: no race between them
(docs/memory-model.md), and their order changes neither memory nor the race tracker's state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import CheckResult, Explorer, Options, check, check_machine
from mbarrier.explore.code import CP_WAIT
from mbarrier.explore.sleep import independent
from mbarrier.sim.machine import RUNNABLE
from mbarrier.sim.races import track

from .helpers import differential, load, outcome


def kernel(bug: str | None = None) -> str:
    """Thread 0 fills a 32-byte `tile`, fences it to the async proxy; the block meets at bar.sync; every
    thread stores `tile` to `out` (a bulk group), commits, waits for the group's reads, then for all of it;
    the block meets again and thread 0 reads `out`. Bugs: `differ` (the last thread stores `other`,
    which holds other bytes: its landing races with the others'), `overwrite` (thread 0 writes `tile`
    again before its wait_group.read: the engines may still read it), `early` (every thread waits only
    for the reads before the second bar.sync: thread 0's read of `out` races with the landings)."""
    src = "other" if bug == "differ" else "tile"
    pick = ("setp.eq.u32 %p2, %r1, %r9;\n\t@%p2 bra OTHER;\n\t" if bug == "differ" else "")
    over = "@!%p1 st.shared.u32 [tile], %r1;\n\t" if bug == "overwrite" else ""
    wait = "" if bug == "early" else "cp.async.bulk.wait_group 0;\n\t"
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 128 .b8 tile[32];
	.shared .align 128 .b8 other[32];
	mov.u32 %r1, %tid.x;
	mov.u32 %r8, %ntid.x;
	sub.u32 %r9, %r8, 1;
	setp.ne.u32 %p1, %r1, 0;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	@%p1 bra SYNC;
	mov.u32 %r2, 7;
	st.shared.v4.u32 [tile], {{%r2, %r2, %r2, %r2}};
	st.shared.v4.u32 [tile+16], {{%r2, %r2, %r2, %r2}};
	mov.u32 %r3, 5;
	st.shared.v4.u32 [other], {{%r3, %r3, %r3, %r3}};
	st.shared.v4.u32 [other+16], {{%r3, %r3, %r3, %r3}};
	fence.proxy.async.shared::cta;
SYNC:
	bar.sync 0;
	{pick}cp.async.bulk.global.shared::cta.bulk_group [%rd1], [tile], 32;
	bra.uni COMMIT;
OTHER:
	cp.async.bulk.global.shared::cta.bulk_group [%rd1], [{src}], 32;
COMMIT:
	cp.async.bulk.commit_group;
	{over}cp.async.bulk.wait_group.read 0;
	{wait}bar.sync 0;
	@%p1 bra DONE;
	ld.global.u32 %r4, [%rd1];
DONE:
	exit;
}}
"""


CASES = [(None, 2), (None, 3), ("differ", 3), ("overwrite", 2), ("overwrite", 3), ("early", 3)]


@pytest.mark.parametrize("races", [True, False])
@pytest.mark.parametrize(("bug", "n"), CASES, ids=[f"{b}-n{n}" for b, n in CASES])
def test_same_outcomes_as_without_reductions(tmp_path: Path, bug: str | None, n: int, races: bool) -> None:
    on, _ = differential(load(tmp_path, kernel(bug)), block=n, args={"out": sim.Buffer(64)}, races=races)
    if races:  # each bug is a race (with races off, none is a finding: nothing hangs on the bytes)
        assert outcome(on) == (("verified", frozenset()) if bug is None else ("finding", frozenset({"race"})))


def test_twin_landings_commute(tmp_path: Path) -> None:
    # 29, 531 and incomplete after 103,879 states before their landings commuted; then 16, 40 and 706
    # while the reader's future, which reads what every store writes, still took in the landings (its
    # bar.sync cannot complete while a landing's issuer waits for it: `por._cuts`). Linear now.
    module = load(tmp_path, kernel())
    states = [check(module, grid=1, block=n, args={"out": sim.Buffer(64)},
                    options=Options(runs=False, walks=0)).stats.states for n in (2, 4, 8)]
    assert states == [12, 18, 30], states  # 16, 26, 46 while a wait that would block was a step


def _in_flight(tmp_path: Path, bug: str | None, n: int, races: bool = True) -> Explorer:
    """The launch run until every thread issued its store (none landed)."""
    module = load(tmp_path, kernel(bug))
    m = sim.launch(module, grid=1, block=n, args={"out": sim.Buffer(64)})
    if races:
        track(m)
    ex = Explorer(m, module, Options(walks=0))
    while len(m.inflight) < n:
        ex.step(next(t for t in m.threads if t.status == RUNNABLE and t.pc < len(t.code) - 1
                     and ex.ins(t).kind != CP_WAIT), [])
    return ex


def _landings_commute(ex: Explorer) -> bool:
    a, b = ex.m.inflight[:2]
    return independent(ex.fp.current(a), ex.fp.current(b))


@pytest.mark.parametrize("races", [True, False])
def test_twins_commute_where_their_landings_write_the_same(tmp_path: Path, races: bool) -> None:
    ex = _in_flight(tmp_path, None, 3, races)
    assert _landings_commute(ex)
    a, b, c = ex.m.inflight
    ex.step(a, [])  # one landed: the others still commute (the tracker's history holds its twin only)
    assert independent(ex.fp.current(b), ex.fp.current(c))


def test_stores_of_other_bytes_conflict(tmp_path: Path) -> None:
    ex = _in_flight(tmp_path, "differ", 2)   # thread 1 stores `other`: another source
    assert not _landings_commute(ex)


def test_a_destination_read_since_keeps_them_conflicting(tmp_path: Path) -> None:
    # Once anything but a twin of the same values touched the destination, the first landing would hide
    # it from the other (its history keeps the last write only): their order matters to the verdicts.
    ex = _in_flight(tmp_path, None, 3)
    assert _landings_commute(ex)
    out = ex.m.inflight[0].dst
    ex.m.hb.gmem.access(  # type: ignore[attr-defined]
        out, 4, {}, 0, 1, (0, None, 8, "global", -1, out, 4, "ld"))  # thread 0 reads it
    assert not _landings_commute(ex)


# The tensor-store form, as CUTLASS's epilogue issues it: every thread stores two column slices of a
# 4 x 8 int tensor (boxes of 4 x 4 from the halves of `tile` at columns 0 and 4, a bulk group each: their
# spans interleave, their elements do not), waits, and thread 0 reads the tensor. `differ`: the last
# thread stores its second slice from the first half of `tile` (other bytes).
TENSOR = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 128 .b8 dmap[128], .param .u64 d)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 128 .b8 tile[256];
	mov.u32 %r1, %tid.x;
	mov.u32 %r8, %ntid.x;
	sub.u32 %r9, %r8, 1;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mov.u32 %r2, 7;
	mov.u32 %r3, 0;
FILL:
	mov.u32 %r4, tile;
	add.u32 %r4, %r4, %r3;
	st.shared.u32 [%r4], %r2;
	add.u32 %r2, %r2, 1;
	add.u32 %r3, %r3, 4;
	setp.lt.u32 %p3, %r3, 256;
	@%p3 bra FILL;
	fence.proxy.async.shared::cta;
SYNC:
	bar.sync 0;
	mov.b64 %rd2, dmap;
	cvta.param.u64 %rd3, %rd2;
	mov.u32 %r5, 0;
	mov.u32 %r6, 4;
	mov.u32 %r10, tile;
	add.u32 %r11, %r10, 128;
	{pick}
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd3, {{%r5, %r5}}], [%r10];
	cp.async.bulk.commit_group;
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd3, {{%r6, %r5}}], [%r11];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group.read 1;
	cp.async.bulk.wait_group 0;
	bar.sync 0;
	@%p1 bra DONE;
	ld.param.u64 %rd4, [d];
	ld.global.u32 %r7, [%rd4+16];
DONE:
	exit;
}}
"""
_TENSOR_MAP = {"encode": "tiled", "tensorDataType": "INT32", "tensorRank": 2, "globalAddress": "d",
               "globalDim": [8, 4], "globalStrides": [32], "boxDim": [4, 4], "elementStrides": [1, 1],
               "swizzle": "CU_TENSOR_MAP_SWIZZLE_NONE"}


def _mapped(tmp_path: Path, text: str, tensor_map: dict[str, object], grid: int, n: int, size: int,
            reductions: bool = True, runs: bool = True) -> CheckResult:
    """Check kernel `text` (params: the map `t`, the buffer `d` of `size` bytes) on `grid` CTAs of n."""
    module = load(tmp_path, text)
    path = tmp_path / "k.launch.json"
    path.write_text(json.dumps({"kernel": "k", "grid": grid, "block": n, "buffers": {"d": {"size": size}},
                                "tensor_maps": {"t": tensor_map},
                                "params": {"0": {"tensor_map": "t"}, "1": {"pointer": "d"}}}))
    m = sim.launch(module, spec=sim.read_launch(path))
    return check_machine(m, module, Options(reductions=reductions, max_findings=1000, walks=0, runs=runs))


def _tensor(tmp_path: Path, bug: str | None, n: int, reductions: bool = True,
            runs: bool = True) -> CheckResult:
    pick = "setp.eq.u32 %p2, %r1, %r9;\n\t@%p2 mov.u32 %r11, %r10;" if bug == "differ" else ""
    return _mapped(tmp_path, TENSOR.format(pick=pick), _TENSOR_MAP, 1, n, 128, reductions, runs)


@pytest.mark.parametrize(("bug", "n"), [(None, 2), (None, 3), ("differ", 2), ("differ", 3)])
def test_tensor_twins_same_outcomes_as_without_reductions(tmp_path: Path, bug: str | None, n: int) -> None:
    on, off = (_tensor(tmp_path, bug, n, red) for red in (True, False))
    assert off.verdict != "incomplete" and outcome(on) == outcome(off)
    assert on.stats.states <= off.stats.states
    assert outcome(on) == (("verified", frozenset()) if bug is None else ("finding", frozenset({"race"})))


def test_tensor_twins_commute_slice_by_slice(tmp_path: Path) -> None:
    # Each slice's twins commute, and the two slices' landings too: their elements' runs do not meet
    # (their spans do). Before: 264, 3,650 and incomplete after 28,928 states.
    states = [_tensor(tmp_path, None, n, runs=False).stats.states for n in (2, 3, 4)]
    assert states == [76, 81, 86], states  # 97, 123, 155 before ef4439d's seed order; 96, 120, 150
    # while a wait that would block was a step


# Two CTAs, each storing its own 4 x 8 half of a 4 x 16 int tensor as CUTLASS's persistent epilogue does:
# every thread of a CTA stores the first 4 x 4 slice at column 8 * ctaid, waits for its reads, meets the
# block at bar.sync, then stores the second slice at column 8 * ctaid + 4. While one CTA's first slices
# are in flight, the other CTA's second store lies in its threads' futures: its box at coordinates the
# futures now know (ctaid arithmetic) touches other bytes, so it no longer holds that CTA's threads in
# every set (before: anywhere in the tensor).
TILES = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 128 .b8 dmap[128], .param .u64 d)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 128 .b8 tile[256];
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mov.u32 %r2, %ctaid.x;
	st.shared.v4.u32 [tile], {{%r2, %r2, %r2, %r2}};
	st.shared.v4.u32 [tile+128], {{%r2, %r2, %r2, %r2}};
	fence.proxy.async.shared::cta;
SYNC:
	bar.sync 0;
	mov.b64 %rd2, dmap;
	cvta.param.u64 %rd3, %rd2;
	mov.u32 %r12, %ctaid.x;
	shl.b32 %r5, %r12, 3;
	mov.u32 %r6, 0;
	mov.u32 %r10, tile;
	add.u32 %r11, %r10, 128;
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd3, {{%r5, %r6}}], [%r10];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group.read 0;
	bar.sync 0;
	add.u32 %r7, %r5, 4;
	{bug}
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd3, {{%r7, %r6}}], [%r11];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 0;
	exit;
}}
"""
_TILES_MAP = {**_TENSOR_MAP, "globalDim": [16, 4], "globalStrides": [64]}


def _tiles(tmp_path: Path, n: int, bug: str = "", reductions: bool = True) -> CheckResult:
    return _mapped(tmp_path, TILES.format(bug=bug), _TILES_MAP, 2, n, 256, reductions)


# CTA 1 stores its second slice at column 4, where CTA 0's second slice lands, other values (each CTA's
# staging holds its ctaid): a race between the CTAs.
OVERLAP = "setp.eq.u32 %p4, %r12, 1;\n\t@%p4 sub.u32 %r7, %r7, 8;"
# The same, through a value loaded from shared memory (0): the futures do not know that coordinate, so
# the store touches the whole tensor there.
LOADED = "ld.shared.u32 %r13, [tile+64];\n\tadd.u32 %r7, %r7, %r13;\n\t" + OVERLAP


@pytest.mark.parametrize("bug", ["", OVERLAP, LOADED], ids=["apart", "overlap", "overlap-loaded"])
def test_tile_stores_of_two_ctas_same_outcomes_as_without_reductions(tmp_path: Path, bug: str) -> None:
    on, off = (_tiles(tmp_path, 1, bug, red) for red in (True, False))
    assert off.verdict != "incomplete" and outcome(on) == outcome(off)
    assert on.stats.states <= off.stats.states
    assert outcome(on) == (("verified", frozenset()) if not bug else ("finding", frozenset({"race"})))


def test_tile_stores_of_two_ctas_at_known_coordinates_commute(tmp_path: Path) -> None:
    # 12, 18, 34, 75 and 3,147 states for 1, 2, 3, 4 and 8 threads per CTA while a future tensor store
    # touched the whole tensor.
    assert [_tiles(tmp_path, n).stats.states for n in (1, 2, 4, 8)] == [8, 8, 8, 8]


# Each CTA's thread 0 loads its own 4 x 4 tile of a 4 x 16 int tensor (column 4 * ctaid) with a tensor
# load on an mbarrier, waits, and stores it back in place, as CCCL's TMA example does. A box's span in
# global memory covers the other CTAs' columns between its rows; its runs do not.
IN_PLACE = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 128 .b8 dmap[128], .param .u64 d)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 128 .b8 tile[128];
	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	mbarrier.init.shared.b64 [bar], 1;
	fence.proxy.async.shared::cta;
	mov.b64 %rd2, dmap;
	cvta.param.u64 %rd3, %rd2;
	mov.u32 %r12, %ctaid.x;
	shl.b32 %r5, %r12, 2;
	{bug}
	mov.u32 %r6, 0;
	mov.u32 %r10, tile;
	mov.u32 %r11, bar;
	mbarrier.arrive.expect_tx.shared.b64 %rd4, [bar], 64;
	{load} [%r10], [%rd3, {{%r5, %r6}}], [%r11];
WAIT:
	mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
	@!%p2 bra WAIT;
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd3, {{%r5, %r6}}], [%r10];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 0;
DONE:
	exit;
}}
"""
_IN_PLACE_MAP = {**_TENSOR_MAP, "globalDim": [16, 4], "globalStrides": [64]}


def _in_place(tmp_path: Path, ctas: int, bug: str = "", reductions: bool = True) -> CheckResult:
    load = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
    return _mapped(tmp_path, IN_PLACE.format(bug=bug, load=load), _IN_PLACE_MAP, ctas, 1, 256, reductions)


# CTA 1 loads and stores CTA 0's tile (column 0): its store races with CTA 0's load and store.
SAME_TILE = "setp.eq.u32 %p4, %r12, 1;\n\t@%p4 mov.u32 %r5, 0;"


@pytest.mark.parametrize("bug", ["", SAME_TILE], ids=["own-tiles", "same-tile"])
def test_tensor_copies_of_other_ctas_tiles_same_outcomes_as_without_reductions(tmp_path: Path,
                                                                                bug: str) -> None:
    on, off = (_in_place(tmp_path, 2, bug, red) for red in (True, False))
    assert off.verdict != "incomplete" and outcome(on) == outcome(off)
    assert on.stats.states <= off.stats.states
    assert outcome(on) == (("verified", frozenset()) if not bug else ("finding", frozenset({"race"})))


def test_tensor_copies_in_flight_touch_their_rows_not_their_span(tmp_path: Path) -> None:
    # 9, 26, 98 and 370 states while a copy in flight touched its box's span.
    assert [_in_place(tmp_path, n).stats.states for n in (1, 2, 3, 4)] == [9, 9, 9, 9]
