"""Arrivals that only join a meeting (`check.Explorer.is_local` runs them eagerly): which arrival at a
warp's full-mask collective or at the cluster barrier is not the last one it waits for; and the rows the
last arrival at a warp's ldmatrix or stmatrix reads or writes."""

from __future__ import annotations

from collections.abc import Callable

from mbarrier.explore.code import CLUSTER, Ins
from mbarrier.sim.isa.matrix import ROW_BYTES as ROW_BYTES  # a row of a matrix, for `footprints`
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
    if entry is None:
        return 1 >= sum(1 for th in w.threads if th.status != EXITED)
    if t.lane in entry.parts:
        return False  # already inside (its future starts there, `values.future_start`): it arrives no more
    return len(entry.parts) + 1 >= sum(1 for th in w.threads if th.status != EXITED)


def inside(t: Thread, op: str) -> bool:
    """Whether t's lane has arrived at its warp's full-mask collective `op` and waits inside it."""
    w = t.warp
    entry = None if w is None else w.pending.get((op, 0xFFFFFFFF))
    return entry is not None and t.lane in entry.parts


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


def matrix_rows(t: Thread, x: Ins, own: int | None, space: str,
                where: Callable[[Thread, str, int], tuple[int | None, int | None] | None]
                ) -> list[tuple[int, int]] | None:
    """The rows, (cta, offset) by `where` (of t, `space` and an address), that the ldmatrix/stmatrix x
    t's arrival completes reads (writes): lanes 0..rows-1 give their addresses, the others as they
    arrived (their arguments wait in the warp's collective, `Machine.coll`), t its own now (`own`;
    `sim.isa.matrix`: PTX ISA, ldmatrix and stmatrix). None where one is not known or not a row's
    (16-byte aligned): the step then faults."""
    w = t.warp
    if w is None or not x.rows:
        return None
    entry = w.pending.get((x.op, 0xFFFFFFFF))
    given: dict[int, object] = {} if entry is None else {
        lane: arg[1] for lane, (_, arg) in entry.parts.items() if isinstance(arg, tuple)}
    given[t.lane] = own
    out: set[tuple[int, int]] = set()
    for lane in range(x.rows):
        v = given.get(lane)
        found = where(t, space, v) if isinstance(v, int) and v % ROW_BYTES == 0 else None
        if found is None or found[0] is None or found[1] is None:
            return None
        out.add((found[0], found[1]))
    return sorted(out)


def own_row(t: Thread, x: Ins, v: int | None, space: str,
            where: Callable[[Thread, str, int], tuple[int | None, int | None] | None]
            ) -> list[tuple[int, int]] | None:
    """The row (cta, offset) thread t gives at the ldmatrix/stmatrix x of its future, from its address
    there (`v`): none where its lane gives no address (lanes rows..31), None where it is not known or
    not a row (16-byte aligned: the completion then faults)."""
    if not x.rows:
        return None
    if t.lane >= x.rows:
        return []
    found = where(t, space, v) if isinstance(v, int) and v % ROW_BYTES == 0 else None
    if found is None or found[0] is None or found[1] is None:
        return None
    return [(found[0], found[1])]
