"""Why a thread cannot move: one explanation for `mbarrier run` (a stuck run, a run stopped by its limit
or an interrupt) and for `mbarrier check` (the waiters of a deadlock)."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.core.barrier import Barrier
from mbarrier.sim.compile import Site
from mbarrier.sim.machine import EXITED, Machine, Thread
from mbarrier.sim.waits import AtBar, AtCluster, ForCopies, InCollective, OnMbarrier, Wait, wants


@dataclass(frozen=True)
class Blocked:
    """A thread that waits: the instruction it waits at, what for (`what`: "mbarrier", "bar", "cluster",
    "warp", "cp.wait"; "running" for a thread that can still step), the reason in words, and for an
    mbarrier the object (its symbol, shared offset, the index of its CTA), the phase awaited and the
    object's state."""

    site: Site
    what: str
    reason: str
    barrier: str | None = None
    address: str | None = None
    cta: int | None = None
    wants: str | None = None
    state: Barrier | None = None


def blocked(m: Machine, t: Thread, wait: Wait | None = None) -> Blocked:
    """Why `t` waits: `wait`, or the reason the machine blocked it for (`Thread.wait`). The checker passes
    an `OnMbarrier` for a thread it found spinning, which the machine has not parked."""
    assert t.status != EXITED
    w = wait if wait is not None else t.wait
    if isinstance(w, OnMbarrier):
        cta = m.ctas[w.cta]
        b = cta.barriers.get(w.off)
        sym = cta.symbols(w.off)
        awaited = wants(w.parity, w.value, word=False)
        return Blocked(t.func.sites[w.pc], "mbarrier",
                       f"waits for {awaited} of mbarrier {sym} (shared {w.off:#x}, CTA {cta.name})",
                       sym, f"{w.off:#x}", cta.index, wants(w.parity, w.value),
                       None if b is None else b.copy())
    site = t.func.sites[max(t.pc - 1, 0)]  # the blocking instructions move pc past themselves first
    if isinstance(w, AtBar):
        nb = t.cta.bars.get(w.ident)
        n = len(nb.arrived) if nb else 0
        need = nb.count if nb and nb.count is not None else t.cta.live
        return Blocked(site, "bar", f"waits at bar.sync {w.ident}: {n} of {need} threads arrived")
    if isinstance(w, AtCluster):
        cl = t.cta.cluster
        return Blocked(site, "cluster", f"waits at barrier.cluster.wait: {cl.count} of {cl.live} threads of "
                                        "the cluster arrived")
    if isinstance(w, InCollective):
        return Blocked(site, "warp", f"waits in {w.kind} (membermask {w.mask:#010x}) for the other lanes")
    if isinstance(w, ForCopies):
        if w.which == "wgmma.mma_async":  # wgmma.wait_group keeps its pc: it retires when it steps again
            site = t.func.sites[t.pc]
        return Blocked(site, "cp.wait", f"waits for its {w.which} groups ({w.pending} may stay pending)")
    return Blocked(t.func.sites[t.pc], "running", "still runnable")
