"""Arrivals that only join a meeting (`check.Explorer.is_local` runs them eagerly): which arrival at a
warp's full-mask collective or at the cluster barrier is not the last one it waits for."""

from __future__ import annotations

from mbarrier.explore.code import CLUSTER, Ins
from mbarrier.sim.machine import EXITED, Thread
from mbarrier.spec.wgmma import WARPS_PER_GROUP


def completes(t: Thread, op: str) -> bool:
    """Whether t's arrival at the full-mask collective `op` of its warp (wgmma.mma_async, wait_group,
    ldmatrix, stmatrix) would be the last one it waits for: every other live lane has arrived."""
    w = t.warp
    if w is None:
        return True
    # The sparse form meets under the dense one's name (`sim.machine.wgmma`).
    entry = w.pending.get(("wgmma.mma_async" if op.startswith("wgmma.mma_async") else op, 0xFFFFFFFF))
    arrived = len(entry.parts) if entry is not None else 0
    return arrived + 1 >= sum(1 for th in w.threads if th.status != EXITED)


def warpgroup_lanes(t: Thread) -> list[Thread]:
    """The threads of t's warpgroup (four contiguous warps of its CTA, 9.7.15.1)."""
    threads = t.cta.threads
    first = threads.index(t) // (32 * WARPS_PER_GROUP) * 32 * WARPS_PER_GROUP
    return threads[first:first + 32 * WARPS_PER_GROUP]


def joins_only(t: Thread, x: Ins) -> bool:
    """Whether t's step at x (ldmatrix, stmatrix or a cluster barrier) only joins a meeting that cannot
    complete without a step of another thread, or waits at barrier.cluster.wait. Then, as for a warp
    collective's arrival (`check.Explorer.is_local`), it is never disabled and commutes with every other
    agent's step: an arrival at ldmatrix or stmatrix (the warp-level matrix load and store,
    `.sync.aligned`: every lane of the warp) that is not the last of its warp's live lanes, or at
    barrier.cluster.arrive that is not the last of its cluster's live threads (9.7.13.2), adds itself to
    the arrived set and nothing else. The last arrival, which alone reads or writes the rows or completes
    the phase, comes later in every order; an exit only lowers the count that arrival must reach, and
    cannot complete the meeting before this arrival (arrived + 1 < live before the exit, so arrived <
    live after it): either order ends in the same state. barrier.cluster.wait commutes with every step
    (`footprints.Footprints.of_ins`: it blocks until its thread's phase completes, or passes because it
    has). An arrival that faults (barrier.cluster.arrive twice) faults in every order."""
    if x.kind == CLUSTER:
        if x.sync_all == "cluster":
            return True
        cl = t.cta.cluster
        return cl.count + 1 < cl.live
    return not completes(t, x.op)
