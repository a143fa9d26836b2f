"""One warp's wgmma.wait_group retires the whole warpgroup's operation (docs/memory-model.md): a stage
released by one thread after its own warp's wait_group and refilled by another warp does not race with
the other warps' shares of the MMA; released before any wait_group it still races. The rule rests on
the H200's timing record (tests/sim/gpu/wgmma_issue_timing_h200.json), checked here for what it shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.sim.races import track

from .helpers import module, words

RECORD = Path(__file__).parent / "gpu" / "wgmma_issue_timing_h200.json"

# Warpgroup 0 (threads 0-127) fills a tile with f16 1.0, runs one wgmma.mma_async.m64n8k16 on it; warp 0
# waits (wgmma.wait_group 0) and thread 0 hands the tile back on `empty` (count 1); thread 128 (warp 4,
# the producer) waits on `empty` and rewrites the tile. Warps 1-3 wait for their share afterwards.
# RELEASE_EARLY: thread 0 hands it back before its warp's wait_group instead.
_BODY = """
    .reg .pred %p<5>; .reg .b32 %r<8>; .reg .f32 %d<4>; .reg .b64 %rd<8>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    setp.ge.u32 %p4, %r1, 128;
    @%p1 bra FILL;
    mbarrier.init.shared::cta.b64 [empty], 1;
FILL:
    mov.u32 %r3, tile;
    mov.b32 %r5, 0x3c003c00;
    @%p4 bra SYNC;
    shl.b32 %r4, %r1, 5;
    add.u32 %r4, %r3, %r4;
    st.shared.v4.u32 [%r4], {%r5, %r5, %r5, %r5};
    st.shared.v4.u32 [%r4+16], {%r5, %r5, %r5, %r5};
    fence.proxy.async.shared::cta;
SYNC:
    bar.sync 0;
    @%p4 bra PRODUCER;
    cvt.u64.u32 %rd1, %r3;
    shr.u64 %rd1, %rd1, 4;
    or.b64 %rd1, %rd1, 0x1000080000;
    mov.f32 %d0, 0f00000000; mov.f32 %d1, 0f00000000; mov.f32 %d2, 0f00000000; mov.f32 %d3, 0f00000000;
    wgmma.fence.sync.aligned;
    wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d0, %d1, %d2, %d3}, %rd1, %rd1, 1, 1, 1, 0, 0;
    wgmma.commit_group.sync.aligned;
    EARLY
    wgmma.wait_group.sync.aligned 0;
    LATE
    ld.param.u64 %rd3, [out];
    cvta.to.global.u64 %rd3, %rd3;
    mul.wide.u32 %rd4, %r1, 16;
    add.u64 %rd3, %rd3, %rd4;
    st.global.v4.f32 [%rd3], {%d0, %d1, %d2, %d3};
    bra DONE;
PRODUCER:
    setp.ne.u32 %p2, %r1, 128;
    @%p2 bra DONE;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [empty], 0;
    @!%p3 bra WAIT;
    st.shared.v4.u32 [tile+1024], {%r1, %r1, %r1, %r1};
DONE:
    ret;
"""
_RELEASE = "@%p1 bra RELEASED{0};\n    mbarrier.arrive.shared::cta.b64 %rd2, [empty];\nRELEASED{0}:"
_SIXTEEN = 0x41800000  # 16.0f: K = 16 products of 1.0


def _run(early: bool, seed: int, burst: int) -> tuple[explore.RunResult, sim.Machine]:
    body = _BODY.replace("EARLY", _RELEASE.format(0) if early else "")
    body = body.replace("LATE", "" if early else _RELEASE.format(1))
    mod = module(body, extra=".shared .align 1024 .b8 tile[4096];\n.shared .align 8 .b64 empty;")
    m = sim.launch(mod, grid=1, block=160)
    track(m)
    return explore.run(m, explore.RandomScheduler(seed, burst=burst)), m


def test_the_h200_starts_a_warpgroup_mma_once_and_completes_it_as_one_event() -> None:
    runs = json.loads(RECORD.read_text())["runs"]
    for run in runs:
        w0, *others = run["warps"]
        issues = [w[0] for w in others if w[0] is not None]
        # warp 0 leaves mma_async/commit_group only after the last warp of its warpgroup issued it
        assert w0[1] > max(issues)
        dones = [w[2] for w in run["warps"] if w[2] is not None]
        assert max(dones) - min(dones) <= 14   # the four wait_group return together
    assert runs[-1]["warps"][0][1] - runs[-1]["warps"][0][0] > 1_000_000


@pytest.mark.parametrize("seed", range(6))
def test_a_release_after_one_warps_wait_group_orders_the_other_warps_shares(seed: int) -> None:
    r, m = _run(False, seed, 1 + seed % 2 * 7)
    assert r.outcome == "exited", r.message
    assert words(m, "out", 512) == [_SIXTEEN] * 512


@pytest.mark.parametrize("seed", range(6))
def test_a_release_before_any_wait_group_still_races(seed: int) -> None:
    r, _ = _run(True, seed, 1 + seed % 2 * 7)
    # data-race when the share read belongs to another warp than the releasing one (the
    # wgmma-operand-inflight wording names a release by the share's own warp)
    assert r.outcome == "race" and r.rule in ("data-race", "wgmma-operand-inflight"), r.message
    assert "wgmma.mma_async" in r.message and "st.shared.v4.u32" in r.message
