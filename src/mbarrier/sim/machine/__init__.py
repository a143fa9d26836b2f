"""The machine: threads, CTAs, clusters, their memories, and the asynchronous copy engines.

Its parts, each building on the one before: `agents` (threads, copies, CTAs, clusters, warps), `base`
(the state and the agents' bookkeeping), `memory` (loads, stores, atomics, address conversions),
`mbarrier` (the object's operations), `copies` (asynchronous copies as agents), `control` (exits, calls,
barriers, collectives, fences, clocks), `wgmma` (warpgroup MMA); `Machine` is the whole.

Everything that can run is an *agent* with `code`, `pc` and an id `aid`: a thread runs its compiled
instructions; an in-flight copy or a pending cp.async arrive-on is an agent with a single step. `runnable`
holds the agents a scheduler may pick now; `step(agent)` runs one step. All state lives in plain
attributes (no hidden globals), so a machine can be copied and hashed (`copy()`, `key()`).

Blocking: a thread waiting at `bar.sync`, `barrier.cluster.wait`, a warp collective or
`cp.async.wait_group` leaves `runnable` until released. A thread spinning on an mbarrier (a
test_wait/try_wait that returned False, then the same wait failing again with the barrier unchanged
and nothing else observed or done in between) is *parked* on that barrier until its phase or validity
changes, the only changes that can change a wait's answer: skipping such spins is a legal schedule, and
a machine with no runnable agent but live threads is stuck.
"""

from __future__ import annotations

from mbarrier.sim import intops
from mbarrier.sim.machine.agents import (
    ARRIVALS,
    BLOCKED,
    DONE,
    EXITED,
    PARKED,
    RUNNABLE,
    WAITING_DEPS,
    BarrierEvent,
    Cluster,
    Collective,
    Copy,
    Cta,
    NamedBarrier,
    Thread,
    TokenWord,
    Warp,
    short_state,
)
from mbarrier.sim.machine.wgmma import WgmmaOps


class Machine(WgmmaOps):
    """A launched kernel. Build one with `mbarrier.sim.launch`."""

    div = staticmethod(intops.div)
    rem = staticmethod(intops.rem)
    bfe_u = staticmethod(intops.bfe_u)
    bfe_s = staticmethod(intops.bfe_s)
    bfi = staticmethod(intops.bfi)
    prmt = staticmethod(intops.prmt)
    fdiv = staticmethod(intops.fdiv)
    fnum = staticmethod(intops.fnum)
    f2i = staticmethod(intops.f2i)


__all__ = ["ARRIVALS", "BLOCKED", "DONE", "EXITED", "PARKED", "RUNNABLE", "WAITING_DEPS", "BarrierEvent",
           "Cluster", "Collective", "Copy", "Cta", "Machine", "NamedBarrier", "Thread", "TokenWord", "Warp",
           "short_state"]
