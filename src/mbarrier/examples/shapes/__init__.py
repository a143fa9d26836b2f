"""The shape corpus: the kernels people write around mbarriers, each correct and with a planted bug, and
how to launch them. nvcc-compiled PTX (`*.ptx`, from `cuda/*.cu` by `cuda/build.sh`: CUDA 13.0,
`-O3 -arch=sm_90a`); the trip counts are kernel parameters (the loops stay loops) unless the name says
`_ct` (compile-time count). `bench/shapes.py` checks each one and prints what the checker answered.

Each `Shape` names its file, its launch (grid, block, cluster, the integer parameters by position) and
what a check of that launch must answer: `None` for a correct kernel (verified), else the kind of the
finding the planted bug produces (its source's comment says why). `trips`: the positions of the
trip-count parameters, so a benchmark can vary them (`Shape.sized`); `warps`: whether the kernel takes its
consumer warps from the block (`blockDim.x / 32 - 1`, the last warp produces), so a benchmark can vary
them too (`Shape.with_consumers`); `even_tiles`: the kernel needs an even tile count, and a check of an
odd one must find its hang (`Shape.answers`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from mbarrier import sim

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Shape:
    """One launch of one kernel of the corpus, and what checking it must find."""

    name: str                                # the file's stem
    block: int
    args: tuple[tuple[int, int], ...]        # integer parameters: (position, value)
    bug: str | None = None                   # the expected finding's kind; None: correct (verified)
    grid: int = 1
    cluster: int | None = None
    trips: tuple[int, ...] = (2,)            # positions of the trip-count parameters
    warps: bool = False                      # consumer warps = blockDim.x / 32 - 1
    even_tiles: bool = False                 # correct for an even tile count (the first trip) only
    bug_from: int = 1                        # the planted bug needs at least this first trip count
    also: tuple[str, ...] = ()               # other kinds the planted bug's first finding may take

    def answers(self) -> tuple[str, ...]:
        """What a check of this launch must answer: ("verified",) for a correct kernel, else the kinds
        its first finding may have. Below `bug_from` trips the planted bug cannot happen: the kernel is
        correct there. A kernel that needs an even tile count hangs at an odd one in every schedule
        (`_tiles`: a real deadlock); with its planted bug as well, either may come first. `also`: one
        planted bug can show first as another kind in some schedules (below)."""
        first = dict(self.args)[self.trips[0]]
        odd = self.even_tiles and first % 2 == 1
        if self.bug is None or first < self.bug_from:
            return ("deadlock",) if odd else ("verified",)
        kinds = (self.bug, *self.also)
        return (*kinds, "deadlock") if odd and "deadlock" not in kinds else kinds

    @property
    def path(self) -> Path:
        return HERE / f"{self.name}.ptx"

    def words(self) -> list[str]:
        """The launch as `mbarrier run`/`check` options."""
        out = ["--grid", str(self.grid), "--block", str(self.block)]
        if self.cluster is not None:
            out += ["--cluster", str(self.cluster)]
        for pos, v in self.args:
            out += ["--arg", f"{pos}={v}"]
        return out

    def sized(self, *trips: int) -> Shape:
        """The same shape with its trip-count parameters set (in the order of `trips`)."""
        values = dict(self.args)
        values.update(zip(self.trips, trips, strict=True))
        return replace(self, args=tuple(sorted(values.items())))

    def with_consumers(self, n: int) -> Shape:
        """The same shape with n consumer warps (a block of n + 1 warps), where the kernel scales."""
        if not self.warps:
            raise ValueError(f"{self.name}: its consumers do not follow the block")
        return replace(self, block=32 * (n + 1))

    def consumers(self) -> int | None:
        """Consumer warps per CTA, where the kernel takes them from the block."""
        return self.block // 32 - 1 if self.warps else None

    def launch(self) -> sim.Machine:
        return sim.launch(sim.load(self.path), grid=self.grid, block=self.block, cluster=self.cluster,
                          args=dict(self.args))


def _ring(name: str, bug: str | None = None, grid: int = 1, cluster: int | None = None,
          bug_from: int = 1) -> Shape:
    """2 consumer warps and the producer's warp, 4 iterations."""
    return Shape(name, 96, ((2, 4),), bug, grid, cluster, warps=True, bug_from=bug_from)


def _warpgroups(name: str, bug: str | None = None, bug_from: int = 1) -> Shape:
    """3 warpgroups of 128 threads, 4 iterations."""
    return Shape(name, 384, ((2, 4),), bug, bug_from=bug_from)


def _tiles(name: str, block: int, bug: str | None = None, warps: bool = False, even: bool = False,
           bug_from: int = 1, also: tuple[str, ...] = ()) -> Shape:
    """2 tiles of 2 iterations. `pingpong` is correct for an even tile count only (`even`): with an odd
    one, warpgroup 1's last epilogue waits for a hand-over from warpgroup 2, which has no tile left (a
    real hang: a check answers deadlock, `mbarrier run` is stuck)."""
    return Shape(name, block, ((2, 2), (3, 2)), bug, trips=(2, 3), warps=warps, even_tiles=even,
                 bug_from=bug_from, also=also)


# `bug_from`: with two stages the producer first waits on `empty` at the third iteration, so a wrong
# count or a skipped release on `empty` needs three (checked: verified at 1 and 2 for ring_bug_count, at
# 2 for warpgroup_bug_count); a state reset at every tile needs two tiles (verified at 1 x 1). That reset
# puts the consumers a phase behind: a stale `full` wait passes, so they read a stage being refilled
# (race) and then arrive on `empty` in a phase they never waited for (violation, 9.7.13.15.4): which
# shows first depends on the schedule (the violation at 4 x 4 tiles, the race at 2 x 2).
SHAPES: dict[str, Shape] = {s.name: s for s in (
    _ring("ring"), _ring("ring_ct"), _ring("ring_rolled"), _ring("ring_elect"),
    _ring("ring_bug_parity", "race"), _ring("ring_bug_count", "deadlock", bug_from=3),
    _ring("ring_bug_bytes", "deadlock"),
    _warpgroups("warpgroup"), _warpgroups("warpgroup_ct"),
    _warpgroups("warpgroup_bug_count", "deadlock", bug_from=3),
    _tiles("pingpong", 384, even=True), _tiles("pingpong_bug_order", 384, "race", even=True),
    _tiles("persistent", 96, warps=True), _tiles("persistent_bug_reset", 96, "race", warps=True, bug_from=2,
                                           also=("violation",)),
    _ring("cluster", grid=2, cluster=2), _ring("cluster_bug_mask", "deadlock", grid=2, cluster=2),
    _ring("cpasync"), _ring("cpasync_bug_inc", "deadlock"),
    # Warp 0 skips its release at odd iterations k; a release happens only where k + 2 < trips.
    _ring("named"), _ring("named_bug_skip", "deadlock", bug_from=4),
    _ring("branch"), _ring("branch_bug_skip", "deadlock", bug_from=3),
)}
