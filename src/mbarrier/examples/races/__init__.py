"""The race corpus: correct kernels and planted race bugs, with how to launch them and what they must
report (`mbarrier run` and `mbarrier check` with race tracking on). Hand-written PTX (`*.ptx`) and
nvcc-compiled PTX (`nvcc_*.ptx`, from `cuda/*.cu` by `cuda/build.sh`: CUDA 13.0, sm_90, -O3); the
nvcc-compiled kernels of `mbarrier.examples` (all correct) join them in the tests.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from mbarrier import sim

HERE = Path(__file__).parent


@dataclass(frozen=True)
class RaceCase:
    """A launch and its expected verdict: `rule` None for a correct kernel, else the race rule and a
    phrase the missing-edge explanation must contain."""

    file: str
    grid: int
    block: int
    cluster: int | None = None
    inputs: dict[int, tuple[int, ...]] = field(default_factory=dict)
    outputs: dict[int, int] = field(default_factory=dict)   # param position -> bytes
    rule: str | None = None
    edge: str = ""
    expect: tuple[int, ...] = ()   # a correct kernel: the first words of its first output buffer

    @property
    def path(self) -> Path:
        return HERE / self.file

    def launch(self) -> sim.Machine:
        args: dict[str | int, sim.Buffer | int] = {i: sim.Buffer.of_ints(v) for i, v in self.inputs.items()}
        args.update({i: sim.Buffer(n) for i, n in self.outputs.items()})
        return sim.launch(sim.load(self.path), grid=self.grid, block=self.block, cluster=self.cluster,
                          args=args)

    def output(self, m: sim.Machine) -> list[int]:
        """The first len(expect) 32-bit words of the first output buffer."""
        base, _ = list(m.buffers.values())[min(self.outputs)]
        return [m.gmem.load(base + 4 * i, 4) for i in range(len(self.expect))]


_TILES = tuple(range(100, 116))
_PIPE = dict(grid=1, block=3, inputs={0: _TILES}, outputs={1: 32})
_CLUSTER = dict(grid=2, block=2, cluster=2, outputs={0: 8})
_STORE = dict(grid=1, block=4, outputs={0: 64})
_CP = dict(grid=1, block=4, inputs={0: tuple(range(8))}, outputs={1: 8})
_RING = dict(grid=1, block=96, inputs={0: tuple(range(128))}, outputs={1: 512})
_NSTORE = dict(grid=1, block=32, outputs={0: 256})
_NCLUSTER = dict(grid=2, block=32, outputs={0: 128})
_NCP = dict(grid=1, block=64, inputs={0: tuple(range(32))}, outputs={1: 128})


def _f16_words(values: list[int]) -> tuple[int, ...]:
    """Small integers as f16, two to a 32-bit word (little-endian)."""
    raw = struct.pack(f"<{len(values)}e", *values)
    return tuple(int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw), 4))


# wgmma_gemm: A 64 x 32 and B 16 x 32 (N rows of K) of small integers, so C = A * B^T is exact in f32.
_A = [[(3 * r + 5 * k) % 7 - 3 for k in range(32)] for r in range(64)]
_B = [[(5 * n + 3 * k) % 7 - 3 for k in range(32)] for n in range(16)]
_C0 = tuple(int.from_bytes(struct.pack("<f", sum(a * b for a, b in zip(_A[0], _B[n], strict=True))), "little")
            for n in range(16))
_GEMM = dict(grid=1, block=160, inputs={0: _f16_words([v for row in _A for v in row]),
                                        1: _f16_words([v for row in _B for v in row])}, outputs={2: 4096})
_WGREL = dict(grid=1, block=128, outputs={0: 2048})
_SIXTEEN = 0x41800000  # 16.0f: K = 16 products of 1.0

CASES: dict[str, RaceCase] = {
    "tma_pipeline": RaceCase("tma_pipeline.ptx", **_PIPE, expect=(101, 102, 105, 106, 109, 110, 113, 114)),  # type: ignore[arg-type]
    "tma_pipeline_bug_read_before_wait": RaceCase(
        "tma_pipeline_bug_read_before_wait.ptx", **_PIPE, rule="data-race", edge="wait on full"),  # type: ignore
    "tma_pipeline_bug_refill_before_release": RaceCase(
        "tma_pipeline_bug_refill_before_release.ptx", **_PIPE, rule="data-race",  # type: ignore[arg-type]
        edge="precedes the issue of cp.async.bulk"),
    "tma_pipeline_bug_relaxed_wait": RaceCase(
        "tma_pipeline_bug_relaxed_wait.ptx", **_PIPE, rule="data-race", edge="is .relaxed"),  # type: ignore
    "cluster_exchange": RaceCase("cluster_exchange.ptx", **_CLUSTER, expect=(41, 42)),  # type: ignore[arg-type]
    "cluster_exchange_bug_cta_scope": RaceCase(
        "cluster_exchange_bug_cta_scope.ptx", **_CLUSTER, rule="data-race",  # type: ignore[arg-type]
        edge="has .cta scope but the waiter is in CTA 0"),
    "bulk_store": RaceCase("bulk_store.ptx", **_STORE, expect=tuple(10 * (i // 4) for i in range(16))),  # type: ignore[arg-type]
    "bulk_store_bug_no_proxy_fence": RaceCase(
        "bulk_store_bug_no_proxy_fence.ptx", **_STORE, rule="proxy-fence",  # type: ignore[arg-type]
        edge="fence.proxy.async"),
    "cp_async_tracked": RaceCase("cp_async_tracked.ptx", **_CP, expect=(1, 5)),  # type: ignore[arg-type]
    "cp_async_tracked_bug_untracked": RaceCase(
        "cp_async_tracked_bug_untracked.ptx", **_CP, rule="data-race",  # type: ignore[arg-type]
        edge="tracked by no cp.async.mbarrier.arrive"),
    "nvcc_tma_ring": RaceCase("nvcc_tma_ring.ptx", **_RING, expect=tuple(i + i // 32 for i in range(128))),  # type: ignore[arg-type]
    "nvcc_tma_ring_bug_read_early": RaceCase(
        "nvcc_tma_ring_bug_read_early.ptx", **_RING, rule="data-race", edge="no wait on"),  # type: ignore
    "nvcc_tma_ring_bug_relaxed": RaceCase(
        "nvcc_tma_ring_bug_relaxed.ptx", **_RING, rule="data-race", edge="is .relaxed"),  # type: ignore
    "nvcc_tma_ring_bug_early_release": RaceCase(
        "nvcc_tma_ring_bug_early_release.ptx", **_RING, rule="data-race",  # type: ignore[arg-type]
        edge="precedes the issue of cp.async.bulk"),
    "nvcc_tma_store": RaceCase("nvcc_tma_store.ptx", **_NSTORE, expect=tuple(i * 5 + 1 for i in range(64))),  # type: ignore[arg-type]
    "nvcc_tma_store_bug_no_fence": RaceCase(
        "nvcc_tma_store_bug_no_fence.ptx", **_NSTORE, rule="proxy-fence",  # type: ignore[arg-type]
        edge="fence.proxy.async"),
    "nvcc_cluster_scope": RaceCase("nvcc_cluster_scope.ptx", **_NCLUSTER, expect=tuple(range(1000, 1032))),  # type: ignore[arg-type]
    "nvcc_cluster_scope_bug_cta_scope": RaceCase(
        "nvcc_cluster_scope_bug_cta_scope.ptx", **_NCLUSTER, rule="data-race",  # type: ignore[arg-type]
        edge="has .cta scope but the waiter is in CTA 0"),
    "nvcc_cp_async_arrive": RaceCase("nvcc_cp_async_arrive.ptx", **_NCP, expect=tuple(range(0, 64, 2))),  # type: ignore[arg-type]
    "nvcc_cp_async_arrive_bug_untracked": RaceCase(
        "nvcc_cp_async_arrive_bug_untracked.ptx", **_NCP, rule="data-race",  # type: ignore[arg-type]
        edge="tracked by no cp.async.mbarrier.arrive"),
    "wgmma_release": RaceCase("wgmma_release.ptx", **_WGREL, expect=(_SIXTEEN,) * 8),  # type: ignore[arg-type]
    "wgmma_release_bug_early": RaceCase(
        "wgmma_release_bug_early.ptx", **_WGREL, rule="wgmma-operand-inflight",  # type: ignore[arg-type]
        edge="retires its group"),
    "nvcc_wgmma_gemm": RaceCase("nvcc_wgmma_gemm.ptx", **_GEMM, expect=_C0),  # type: ignore[arg-type]
    "nvcc_wgmma_gemm_bug_early_release": RaceCase(
        "nvcc_wgmma_gemm_bug_early_release.ptx", **_GEMM, rule="wgmma-operand-inflight",  # type: ignore
        edge="released them by the arrive on"),
}
