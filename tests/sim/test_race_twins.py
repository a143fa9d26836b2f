"""Two unordered async-proxy writes of the same bytes with the same values are no race with each other
(docs/memory-model.md, "Decisions where the manual is silent": the pattern of CUTLASS's TMA-store
epilogue, issued by every lane of one warp); different values still race, and so does a read that
either write leaves unordered."""

from __future__ import annotations

import pytest

from mbarrier import explore, sim
from mbarrier.sim.hb import ASYNC, THREAD, WRITE, Conflict, Shadow
from mbarrier.sim.races import track

from .helpers import module

# Every lane of warp 0 writes its 4 bytes of each of 32 tiles of 128 bytes (tile j holds the words
# j + 1), fences, meets the warp at bar.sync, then issues its own bulk store of 128 bytes to out from
# the tile SRC selects. LOAD: what warp 1 does (with block 64).
_BODY = """
    .reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra READER;
    mov.u32 %r2, tile;
    shl.b32 %r3, %r1, 2;
    mov.u32 %r4, 0;
FILL:
    shl.b32 %r5, %r4, 7;
    add.u32 %r6, %r5, %r3;
    add.u32 %r6, %r6, %r2;
    add.u32 %r7, %r4, 1;
    st.shared.u32 [%r6], %r7;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, 32;
    @%p2 bra FILL;
    fence.proxy.async.shared::cta;
    bar.sync 1, 32;
    SRC
    add.u32 %r9, %r2, %r8;
    cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r9], 128;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
    bra DONE;
READER:
    LOAD
DONE:
    ret;
"""
_SAME = "mov.u32 %r8, 0;"                     # every lane stores tile 0: identical bytes
_DIFFERENT = "shl.b32 %r8, %r1, 7;"           # lane i stores tile i: different bytes per lane
_READ = "ld.global.u32 %r10, [%rd1];"         # warp 1's lane reads out, ordered with no store


def _run(src: str, read: bool, seed: int) -> explore.RunResult:
    body = _BODY.replace("SRC", src).replace("LOAD", _READ if read else "")
    mod = module(body, extra=".shared .align 128 .b8 tile[4096];")
    m = sim.launch(mod, grid=1, block=64 if read else 32)
    track(m)
    return explore.run(m, explore.RandomScheduler(seed))


@pytest.mark.parametrize("seed", range(4))
def test_a_warp_issuing_the_identical_store_from_every_lane_is_no_race(seed: int) -> None:
    r = _run(_SAME, False, seed)
    assert r.outcome == "exited", r.message


@pytest.mark.parametrize("seed", range(4))
def test_lanes_storing_different_bytes_to_the_same_place_race(seed: int) -> None:
    r = _run(_DIFFERENT, False, seed)
    assert r.outcome == "race" and r.rule == "data-race", r.message
    assert r.message.count("cp.async.bulk") >= 2


@pytest.mark.parametrize("seed", range(4))
def test_a_read_unordered_with_identical_stores_still_races(seed: int) -> None:
    r = _run(_SAME, True, seed)
    assert r.outcome == "race" and r.rule == "data-race", r.message
    assert "ld.global.u32" in r.message


def _async(agent: int) -> tuple[int, object, int, str, int, int, int, str]:
    return (agent, None, ASYNC | WRITE, "global", -1, 0, 4, "")


def test_a_read_ordered_after_one_twin_only_races_with_the_other() -> None:
    s = Shadow()
    s.access(0, 4, {10: 2}, 10, 2, _async(10), data=b"abcd")
    s.access(0, 4, {11: 2}, 11, 2, _async(11), data=b"abcd")     # the same bytes: twins
    with pytest.raises(Conflict) as e:
        s.access(0, 4, {3: 1, 11: 2}, 3, 1, (3, None, THREAD, "global", -1, 0, 4, ""))
    assert e.value.earlier[0] == 10 and e.value.rule == "data-race"
    s.access(0, 4, {3: 1, 10: 2, 11: 2}, 3, 1, (3, None, THREAD, "global", -1, 0, 4, ""))  # after both


def test_twins_compare_every_byte_they_share() -> None:
    s = Shadow()
    s.access(0, 8, {10: 2}, 10, 2, _async(10), data=b"abcdefgh")
    s.access(4, 4, {12: 2}, 12, 2, _async(12), data=b"efgh")     # its part of the same bytes: twins
    with pytest.raises(Conflict) as e:
        s.access(0, 8, {11: 2}, 11, 2, _async(11), data=b"abcdefgX")  # differs in the last byte
    assert e.value.addr == 7
    t = Shadow()
    t.access(0, 4, {10: 2}, 10, 2, (10, None, THREAD | WRITE, "global", -1, 0, 4, ""))
    with pytest.raises(Conflict):   # a generic store keeps no data: it races whatever it wrote
        t.access(0, 4, {11: 2}, 11, 2, _async(11), data=b"abcd")


def _landed(order: list[int], data: bytes = b"abcd") -> Shadow:
    s = Shadow()
    for a in order:
        s.access(0, 4, {a: 2}, a, 2, _async(a), data=data)
    return s


def test_twins_in_any_order_leave_the_same_history() -> None:
    # The key holds the set of the last write and its twins, whichever landed last (`hb._cell`): the
    # checker's search meets the orders of twin landings again (`explore.twins`).
    assert len({_landed(order).key() for order in ([10, 11, 12], [12, 10, 11], [11, 12, 10])}) == 1
    assert _landed([10, 11]).key() != _landed([10, 12]).key()


def test_a_twin_is_clean_only_over_writes_of_the_same_values_and_no_read() -> None:
    s = _landed([10])
    assert Shadow().twin_clean(0, b"abcd") and s.twin_clean(0, b"abcd") and s.twin_clean(2, b"cdxy")
    assert not s.twin_clean(0, b"abcX")
    s.access(0, 1, {3: 1, 10: 2}, 3, 1, (3, None, THREAD, "global", -1, 0, 1, ""))   # read after it
    assert not s.twin_clean(0, b"abcd") and s.twin_clean(1, b"bcd")
    t = Shadow()
    t.access(0, 4, {3: 1}, 3, 1, (3, None, THREAD | WRITE, "global", -1, 0, 4, ""))  # keeps no values
    assert not t.twin_clean(0, bytes(4))
