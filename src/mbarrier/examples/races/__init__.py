"""The race corpus: correct kernels and planted race bugs, with how to launch them and what they must
report (`mbarrier run` and `mbarrier check` with race tracking on). Hand-written PTX here; the
nvcc-compiled kernels of `mbarrier.examples` (all correct) join them in the tests.
"""

from __future__ import annotations

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

    @property
    def path(self) -> Path:
        return HERE / self.file

    def launch(self) -> sim.Machine:
        args: dict[str | int, sim.Buffer | int] = {i: sim.Buffer.of_ints(v) for i, v in self.inputs.items()}
        args.update({i: sim.Buffer(n) for i, n in self.outputs.items()})
        return sim.launch(sim.load(self.path), grid=self.grid, block=self.block, cluster=self.cluster,
                          args=args)


_TILES = tuple(range(100, 116))
_PIPE = dict(grid=1, block=3, inputs={0: _TILES}, outputs={1: 32})
_CLUSTER = dict(grid=2, block=2, cluster=2, outputs={0: 8})
_STORE = dict(grid=1, block=4, outputs={0: 64})
_CP = dict(grid=1, block=4, inputs={0: tuple(range(8))}, outputs={1: 8})

CASES: dict[str, RaceCase] = {
    "tma_pipeline": RaceCase("tma_pipeline.ptx", **_PIPE),  # type: ignore[arg-type]
    "tma_pipeline_bug_read_before_wait": RaceCase(
        "tma_pipeline_bug_read_before_wait.ptx", **_PIPE, rule="data-race", edge="wait on full"),  # type: ignore
    "tma_pipeline_bug_refill_before_release": RaceCase(
        "tma_pipeline_bug_refill_before_release.ptx", **_PIPE, rule="data-race",  # type: ignore[arg-type]
        edge="precedes the issue of cp.async.bulk"),
    "tma_pipeline_bug_relaxed_wait": RaceCase(
        "tma_pipeline_bug_relaxed_wait.ptx", **_PIPE, rule="data-race", edge="is .relaxed"),  # type: ignore
    "cluster_exchange": RaceCase("cluster_exchange.ptx", **_CLUSTER),  # type: ignore[arg-type]
    "cluster_exchange_bug_cta_scope": RaceCase(
        "cluster_exchange_bug_cta_scope.ptx", **_CLUSTER, rule="data-race",  # type: ignore[arg-type]
        edge="has .cta scope but the waiter is in CTA 0"),
    "bulk_store": RaceCase("bulk_store.ptx", **_STORE),  # type: ignore[arg-type]
    "bulk_store_bug_no_proxy_fence": RaceCase(
        "bulk_store_bug_no_proxy_fence.ptx", **_STORE, rule="proxy-fence",  # type: ignore[arg-type]
        edge="fence.proxy.async"),
    "cp_async_tracked": RaceCase("cp_async_tracked.ptx", **_CP),  # type: ignore[arg-type]
    "cp_async_tracked_bug_untracked": RaceCase(
        "cp_async_tracked_bug_untracked.ptx", **_CP, rule="data-race",  # type: ignore[arg-type]
        edge="tracked by no cp.async.mbarrier.arrive"),
}
