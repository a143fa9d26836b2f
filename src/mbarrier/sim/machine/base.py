"""The machine's state and its agents' bookkeeping: which agents can run, blocking and releasing a thread,
one step, copies of the whole machine and its key. The operations build on it (`memory`, `mbarrier`,
`copies`, `control`)."""

from __future__ import annotations

import copy as _copy

from mbarrier.core.barrier import Barrier
from mbarrier.sim.compile import CompiledFunction
from mbarrier.sim.frames import Frame
from mbarrier.sim.machine.agents import BLOCKED, RUNNABLE, BarrierEvent, Cluster, Copy, Cta, Thread
from mbarrier.sim.memory import GlobalMemory, ParamMemory
from mbarrier.sim.waits import Wait


class MachineBase:
    """The state of a launched kernel: threads, CTAs, clusters, memories, copies in flight."""

    def __init__(self, gmem: GlobalMemory) -> None:
        self.gmem = gmem
        self.threads: list[Thread] = []
        self.ctas: list[Cta] = []
        self.clusters: list[Cluster] = []
        self.runnable: list[Thread | Copy] = []
        self.inflight: list[Copy] = []
        self.next_aid = 0
        # (cta, offset) -> ((valid, phase) when they parked, the parked threads)
        self.parked: dict[tuple[int, int], tuple[tuple[bool, int], list[Thread]]] = {}
        self.tracing = False
        self.events: list[BarrierEvent] = []
        self.buffers: dict[str, tuple[int, int]] = {}  # parameter/variable name -> (address, size)
        # Resolved mbarrier addresses: the checks only depend on the CTA and the address.
        self.resolved: dict[tuple[int, str, int, bool], tuple[Cta, int, Barrier]] = {}
        self.functions: dict[str, CompiledFunction] = {}  # every function with a body, by name
        self.frames: dict[str, Frame] = {}                # their regions of local memory
        self.code_names: list[str] = []                   # function i's opaque code address: CODE_BASE + i
        self.output: list[tuple[int, str]] = []           # what printf printed: (thread, text)
        self.params = ParamMemory(b"", {})                # the kernel's parameters (read-only)

    def _add(self, a: Thread | Copy) -> None:
        a.ridx = len(self.runnable)
        self.runnable.append(a)

    def _remove(self, a: Thread | Copy) -> None:
        i = a.ridx
        last = self.runnable.pop()
        if last is not a:
            self.runnable[i] = last
            last.ridx = i
        a.ridx = -1

    def block(self, t: Thread, why: Wait, status: int = BLOCKED) -> None:
        t.status = status
        t.wait = why
        self._remove(t)

    def unblock(self, t: Thread) -> None:
        t.status = RUNNABLE
        t.wait = None
        t.last_fail = None
        self._add(t)

    def step(self, a: Thread | Copy) -> None:
        a.code[a.pc](self, a)

    def agent(self, aid: int) -> Thread | Copy | None:
        if aid < len(self.threads):
            return self.threads[aid]
        for c in self.inflight:
            if c.aid == aid:
                return c
        return None

    def copy(self) -> MachineBase:
        """An independent machine in the same state (compiled code is shared, never copied)."""
        memo: dict[int, object] = {}
        for f in self.functions.values():
            memo[id(f)] = f
            memo[id(f.code)] = f.code
        return _copy.deepcopy(self, memo)

    def key(self) -> tuple[object, ...]:
        """A hashable snapshot of the whole state (threads, memories, barriers, engines)."""
        threads = tuple((t.func.name, t.pc, t.status, tuple(t.regs), bytes(t.local), t.cc,
                         tuple((f.name, tuple(r), pc) for f, r, pc, _ in t.frames), t.cl_arrived, t.cl_gen,
                         tuple(tuple(c.aid for c in g) for g in t.cp_groups), tuple(c.aid for c in t.cp_open),
                         t.wg.fenced, tuple(sorted(t.wg.touched)), t.wg.accs,
                         tuple(c.aid for c in t.wg.pending()), tuple((c.aid, v) for c, v in t.wg.results))
                        for t in self.threads)
        ctas = tuple((bytes(c.smem), tuple(sorted((o, b.key()) for o, b in c.barriers.items())),
                      tuple(sorted((i, tuple(x.aid for x in nb.arrived)) for i, nb in c.bars.items())))
                     for c in self.ctas)
        engines = tuple((c.aid, c.kind, c.status, c.deps, None if c.mma is None else c.mma.key())
                        for c in self.inflight)
        clusters = tuple((c.phase, c.count) for c in self.clusters)
        warps = tuple(t.warp.nreg for t in self.threads if t.lane == 0 and t.warp is not None)
        return threads, ctas, engines, clusters, warps, self.gmem.key()
