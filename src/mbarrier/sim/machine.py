"""The machine: threads, CTAs, clusters, their memories, and the asynchronous copy engines.

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

import copy as _copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from mbarrier.core import violations
from mbarrier.core.barrier import Barrier, pending_count
from mbarrier.core.token import Token
from mbarrier.sim import intops
from mbarrier.sim.address import (
    CODE_BASE,
    CTA_BITS,
    CTA_MASK,
    LOCAL_GENERIC,
    OWN,
    PARAM_GENERIC,
    SHARED_GENERIC,
    cluster_address,
    is_local_generic,
    is_param_generic,
    is_shared_generic,
    shared_address,
)
from mbarrier.sim.compile import SPECIAL_CONSTANTS, CompiledFunction, Frame, Site
from mbarrier.sim.errors import KernelFault, MemoryFault, Unsupported
from mbarrier.sim.memory import GlobalMemory, ParamMemory
from mbarrier.sim.printf import format_printf
from mbarrier.sim.waits import AtBar, AtCluster, ForCopies, InCollective, OnMbarrier, Wait
from mbarrier.spec.checks import EXIT_INFLIGHT, REMOTE_EXITED, TRAP
from mbarrier.spec.rules import rule

RUNNABLE, BLOCKED, PARKED, EXITED, WAITING_DEPS, DONE = range(6)
NSPECIAL = len(SPECIAL_CONSTANTS)


class TokenWord(int):
    """A register value returned by mbarrier.arrive: the 64-bit word, carrying the core Token so a
    later wait can tell a stale or foreign token (9.7.13.15.16). Arithmetic on it gives a plain int."""

    token: Token


def _word(value: int, token: Token) -> TokenWord:
    w = TokenWord(value)
    w.token = token
    return w


class Thread:
    __slots__ = ("aid", "code", "pc", "regs", "status", "func", "cta", "warp", "lane", "tid", "time",
                 "effects", "last_fail", "wait", "cp_open", "cp_groups", "bulk_open", "bulk_groups",
                 "cl_arrived", "cl_gen", "ridx", "local", "frames", "cc")

    def __init__(self, aid: int, func: CompiledFunction, regs: list[object], cta: Cta, tid: tuple[int, ...],
                 lane: int, local_size: int = 0) -> None:
        self.aid = aid
        self.func = func
        self.code = func.code
        self.pc = 0
        self.regs = regs
        self.status = RUNNABLE
        self.cta = cta
        self.warp: Warp | None = None
        self.lane = lane
        self.tid = tid
        self.time = 0            # the deterministic clock: advances on each read of a timer register
        self.effects = 0         # interactions with shared state: tells a pure spin from progress
        self.last_fail: tuple[object, ...] | None = None
        self.wait: Wait | None = None
        self.cp_open: list[Copy] = []
        self.cp_groups: list[list[Copy]] = []
        self.bulk_open: list[Copy] = []
        self.bulk_groups: list[list[Copy]] = []
        self.cl_arrived = False
        self.cl_gen = 0
        self.ridx = -1
        self.local = bytearray(local_size)  # the thread's .local memory (every function's frame)
        # Callers of the running function: (function, registers, return pc, result copies).
        self.frames: list[tuple[CompiledFunction, list[object], int, list[tuple[int, int, int]]]] = []
        # The condition code's carry flag CC.CF (PTX ISA 9.7.2): written by add.cc, addc.cc, sub.cc,
        # subc.cc, mad.cc, madc.cc; read by addc, subc, madc. None: undefined (not yet written, or a
        # call or return came since: the ISA says it is not preserved across calls).
        self.cc: int | None = None

    @property
    def site(self) -> Site:
        return self.func.sites[self.pc]

    @property
    def name(self) -> str:
        return f"thread {self.aid} (cta {self.cta.name}, tid {_dim(self.tid)})"


class Copy:
    """An in-flight asynchronous operation: a cp.async, a bulk copy, or a pending cp.async arrive-on."""

    __slots__ = ("aid", "code", "pc", "status", "ridx", "kind", "thread", "site", "dst_cta", "dst", "src",
                 "size", "src_size", "bar_cta", "bar_off", "deps", "watchers")

    def __init__(self, aid: int, kind: str, thread: Thread) -> None:
        self.aid = aid
        self.code = _COPY_CODE
        self.pc = 0
        self.status = RUNNABLE
        self.ridx = -1
        self.kind = kind
        self.thread = thread
        self.site = thread.site
        self.dst_cta: Cta | None = None
        self.dst = 0
        self.src: tuple[str, Cta | None, int] = ("global", None, 0)
        self.size = 0
        self.src_size = 0
        self.bar_cta: Cta | None = None
        self.bar_off = 0
        self.deps = 0
        self.watchers: list[Copy] = []

    @property
    def name(self) -> str:
        return f"{self.kind} c{self.aid} (issued by thread {self.thread.aid} at line {self.site.line})"


def _copy_step(m: Machine, a: Thread | Copy) -> None:
    assert isinstance(a, Copy)
    m.finish_async(a)


_COPY_CODE = (_copy_step,)


class NamedBarrier:
    __slots__ = ("arrived", "count")

    def __init__(self) -> None:
        self.arrived: list[Thread] = []
        self.count: int | None = None


class Cta:
    __slots__ = ("index", "ctaid", "rank", "cluster", "smem", "size", "barriers", "words", "bars", "threads",
                 "live", "symbols")

    def __init__(self, index: int, ctaid: tuple[int, int, int], rank: int, cluster: Cluster, size: int,
                 symbols: Callable[[int], str]) -> None:
        self.index = index
        self.ctaid = ctaid
        self.rank = rank
        self.cluster = cluster
        self.smem = bytearray(size)
        self.size = size
        self.barriers: dict[int, Barrier] = {}   # shared offset -> the object living there
        self.words: set[int] = set()             # offsets of the valid objects (8 bytes each)
        self.bars: dict[int, NamedBarrier] = {}  # bar.sync barriers 0..15
        self.threads: list[Thread] = []
        self.live = 0
        self.symbols = symbols

    @property
    def name(self) -> str:
        return _dim(self.ctaid)


class Cluster:
    __slots__ = ("index", "ctas", "live", "phase", "count")

    def __init__(self, index: int) -> None:
        self.index = index
        self.ctas: list[Cta] = []
        self.live = 0
        self.phase = 0
        self.count = 0


Finish = Callable[[dict[int, tuple[Thread, object]]], None]


class Collective:
    """A warp collective in progress: each arrived lane's thread and operand, and how many must come."""

    __slots__ = ("finish", "need", "parts")

    def __init__(self, finish: Finish | None, need: int) -> None:
        self.finish = finish
        self.need = need
        self.parts: dict[int, tuple[Thread, object]] = {}


class Warp:
    __slots__ = ("threads", "pending")

    def __init__(self) -> None:
        self.threads: list[Thread] = []
        self.pending: dict[tuple[str, int], Collective] = {}


def _live_lanes(w: Warp, mask: int) -> int:
    return sum(1 for th in w.threads if mask >> th.lane & 1 and th.status != EXITED)


@dataclass(frozen=True)
class BarrierEvent:
    """A change of an mbarrier's state, for traces."""

    barrier: str
    before: str
    after: str


def _dim(v: tuple[int, ...]) -> str:
    return f"({','.join(map(str, v))})" if any(v[1:]) else str(v[0])


def _violation(cls: type[violations.Violation], what: str) -> violations.Violation:
    return cls(f"{what} ({rule(cls.rule).section})")


def short_state(b: Barrier) -> str:
    if not b.valid:
        return "invalid"
    tx = f" tx={b.tx}" if b.tx else ""
    return f"phase={b.phase} pending={b.pending}/{b.expected}{tx}"


class Machine:
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

    # -- agents --------------------------------------------------------------------------------------
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

    def copy(self) -> Machine:
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
                         tuple(tuple(c.aid for c in g) for g in t.cp_groups), tuple(c.aid for c in t.cp_open))
                        for t in self.threads)
        ctas = tuple((bytes(c.smem), tuple(sorted((o, b.key()) for o, b in c.barriers.items())),
                      tuple(sorted((i, tuple(x.aid for x in nb.arrived)) for i, nb in c.bars.items())))
                     for c in self.ctas)
        engines = tuple((c.aid, c.kind, c.status, c.deps) for c in self.inflight)
        clusters = tuple((c.phase, c.count) for c in self.clusters)
        return threads, ctas, engines, clusters, self.gmem.key()

    # -- the condition code (PTX ISA 9.7.2) ------------------------------------------------------------
    def carry(self, t: Thread) -> int:
        """CC.CF for addc/subc/madc: an error where no .cc instruction of this thread has written it
        since it started or since its latest call or return (the ISA leaves it undefined there)."""
        if t.cc is None:
            raise KernelFault("the instruction reads the carry flag CC.CF, which no add.cc/sub.cc/mad.cc (or "
                           "addc/subc/madc with .cc) of this thread has written since it started or since "
                           "its latest call or return: its value is undefined (PTX ISA 9.7.2)")
        return t.cc

    # -- special registers ---------------------------------------------------------------------------
    def clock(self, t: Thread, bits: int) -> int:
        t.time += 1
        return (t.time * 16) & ((1 << bits) - 1)

    def timer(self, t: Thread, bits: int) -> int:
        t.time += 1
        return (t.time * 1000) & ((1 << bits) - 1)

    def activemask(self, t: Thread) -> int:
        assert t.warp is not None
        return sum(1 << th.lane for th in t.warp.threads if th.status != EXITED)

    # -- shared memory -------------------------------------------------------------------------------
    def _cta_of(self, t: Thread, addr: int, space: str = "cluster") -> tuple[Cta, int]:
        """The CTA and offset a shared address names (`.shared::cluster` unless `space` says; a generic
        one must be in the shared window)."""
        found = shared_address(space, addr)
        if found is None:
            raise MemoryFault(f"generic address {addr:#x} is not in the shared window")
        rank, off = found
        if rank == OWN:
            return t.cta, off
        ctas = t.cta.cluster.ctas
        if rank >= len(ctas):
            raise MemoryFault(f"shared::cluster address {addr:#x} names CTA rank {rank}, but the cluster "
                              f"has {len(ctas)} CTAs")
        cta = ctas[rank]
        if cta.live == 0 and cta is not t.cta:
            _gone(cta, addr)
        return cta, off

    def _guard(self, cta: Cta, off: int, size: int, what: str) -> None:
        if off + size > cta.size:
            raise MemoryFault(f"{what} of {size} bytes at shared offset {off:#x} is outside the "
                              f"{cta.size} bytes of shared memory of CTA {cta.name}")
        if cta.words:
            w = off & ~7
            while w < off + size:
                if w in cta.words:
                    b = cta.barriers[w]
                    raise _violation(violations.NonMbarrierAccess,
                                     f"{what} of {size} bytes at shared offset {off:#x} touches the valid "
                                     f"mbarrier object at {w:#x}: {b.describe()}; only mbarrier "
                                     "instructions may access it until mbarrier.inval")
                w += 8

    def _sload(self, cta: Cta, off: int, size: int) -> int:
        self._guard(cta, off, size, "a load")
        return int.from_bytes(cta.smem[off:off + size], "little")

    def _sstore(self, cta: Cta, off: int, size: int, value: int) -> None:
        self._guard(cta, off, size, "a store")
        cta.smem[off:off + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def ld_cta(self, t: Thread, addr: int, size: int) -> int:
        t.effects += 1
        cta = t.cta
        words = cta.words
        # The common case inline: in bounds, touching no valid mbarrier (accesses are at most 16 bytes).
        if addr + size > cta.size or (words and ((addr & ~7) in words or ((addr + size - 1) & ~7) in words
                                                 or (addr & ~7) + 8 in words)):
            self._guard(cta, addr, size, "a load")
        return int.from_bytes(cta.smem[addr:addr + size], "little")

    def st_cta(self, t: Thread, addr: int, size: int, value: int) -> None:
        t.effects += 1
        cta = t.cta
        words = cta.words
        if addr + size > cta.size or (words and ((addr & ~7) in words or ((addr + size - 1) & ~7) in words
                                                 or (addr & ~7) + 8 in words)):
            self._guard(cta, addr, size, "a store")
        cta.smem[addr:addr + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def ld_cluster(self, t: Thread, addr: int, size: int) -> int:
        t.effects += 1
        cta, off = self._cta_of(t, addr)
        return self._sload(cta, off, size)

    def st_cluster(self, t: Thread, addr: int, size: int, value: int) -> None:
        t.effects += 1
        cta, off = self._cta_of(t, addr)
        self._sstore(cta, off, size, value)

    def ld_global(self, t: Thread, addr: int, size: int) -> int:
        return self.gmem.load(addr, size)

    def st_global(self, t: Thread, addr: int, size: int, value: int) -> None:
        t.effects += 1
        self.gmem.store(addr, size, value)

    def ld_local(self, t: Thread, addr: int, size: int) -> int:
        if addr + size > len(t.local):
            raise MemoryFault(f"a load of {size} bytes at local address {addr:#x} is outside the "
                              f"{len(t.local)} bytes of the thread's local memory")
        return int.from_bytes(t.local[addr:addr + size], "little")

    def st_local(self, t: Thread, addr: int, size: int, value: int) -> None:
        if addr + size > len(t.local):
            raise MemoryFault(f"a store of {size} bytes at local address {addr:#x} is outside the "
                              f"{len(t.local)} bytes of the thread's local memory")
        t.local[addr:addr + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def ld_param(self, t: Thread, addr: int, size: int) -> int:
        """A kernel parameter through its .param address: read-only memory, so no effect to count."""
        return self.params.load(addr, size)

    def st_param(self, t: Thread, addr: int, size: int, value: int) -> None:
        self.params.store(addr, size)

    def ld_gen(self, t: Thread, addr: int, size: int) -> int:
        if is_shared_generic(addr):
            return self.ld_cluster(t, addr - SHARED_GENERIC, size)
        if is_local_generic(addr):
            return self.ld_local(t, addr - LOCAL_GENERIC, size)
        if is_param_generic(addr):
            return self.params.load(addr - PARAM_GENERIC, size)
        t.effects += 1
        return self.gmem.load(addr, size)

    def st_gen(self, t: Thread, addr: int, size: int, value: int) -> None:
        if is_shared_generic(addr):
            self.st_cluster(t, addr - SHARED_GENERIC, size, value)
        elif is_local_generic(addr):
            self.st_local(t, addr - LOCAL_GENERIC, size, value)
        elif is_param_generic(addr):
            self.params.store(addr - PARAM_GENERIC, size)
        else:
            self.st_global(t, addr, size, value)

    def atom(self, t: Thread, space: str, addr: int, size: int, op: str, kind: str, b: int, c: int) -> int:
        """atom/red: read-modify-write in one step; returns the old value."""
        load: Callable[[int, int], int]
        store: Callable[[int, int, int], None]
        if space == "generic" and is_param_generic(addr):
            self.params.store(addr - PARAM_GENERIC, size, "an atomic")
        if space in ("cta", "cluster") or space == "generic" and is_shared_generic(addr):
            cta, off = self._cta_of(t, addr, space)
            load = lambda a, n: self._sload(cta, a, n)  # noqa: E731
            store = lambda a, n, v: self._sstore(cta, a, n, v)  # noqa: E731
            addr = off
        else:
            load, store = self.gmem.load, self.gmem.store
        t.effects += 1
        bits = 8 * size
        mask = (1 << bits) - 1
        old = load(addr, size)
        new = _atom_value(op, kind, old, b, c, bits)
        store(addr, size, new & mask)
        return old

    def cvta_to(self, t: Thread, space: str, addr: int) -> int:
        """cvta.to.shared / .local / .param: the generic address's offset in its window. The PTX ISA
        leaves the result undefined for an address outside the window: a fault here, where the kernel
        made it, rather than an access that would land anywhere."""
        name, inside, base = {"local": ("local", is_local_generic, LOCAL_GENERIC),
                              "param": ("param", is_param_generic, PARAM_GENERIC)}.get(
                                  space, ("shared", is_shared_generic, SHARED_GENERIC))
        if not inside(addr):
            raise KernelFault(f"cvta.to.{name} of generic address {addr:#x}, which is not in the {name} "
                              "window: the result is undefined (PTX ISA, cvta)")
        return addr - base

    def mapa(self, t: Thread, addr: int, rank: int, generic: bool) -> int:
        n = len(t.cta.cluster.ctas)
        if rank >= n:
            raise MemoryFault(f"mapa to CTA rank {rank}, but the cluster has {n} CTAs")
        if generic:
            if not is_shared_generic(addr):
                raise MemoryFault(f"mapa of generic address {addr:#x}, which is not in the shared window")
            return SHARED_GENERIC + cluster_address(rank, (addr - SHARED_GENERIC) & CTA_MASK)
        return cluster_address(rank, addr & CTA_MASK)

    # -- mbarrier ------------------------------------------------------------------------------------
    def _mbar(self, t: Thread, space: str, addr: int, op: str, local: bool) -> tuple[Cta, int, Barrier]:
        """Resolve an mbarrier address (9.7.13.15.1 alignment, .8 shared::cluster, .9 window)."""
        key = (t.cta.index, space, addr, local)
        hit = self.resolved.get(key)
        if hit is None:
            hit = self.resolved[key] = self._resolve(t, space, addr, op, local)
        if hit[0].live == 0 and hit[0] is not t.cta:
            _gone(hit[0], addr)
        return hit

    def _resolve(self, t: Thread, space: str, addr: int, op: str, local: bool) -> tuple[Cta, int, Barrier]:
        found = shared_address(space, addr)
        if found is None:
            raise _violation(violations.AddressWindow,
                             f"{op} at generic address {addr:#x}, which is not in the shared window")
        rank, off = found
        if off >> CTA_BITS:
            raise _violation(violations.AddressWindow,
                             f"{op}.shared::cta at {addr:#x}, which is outside the shared::cta window")
        ctas = t.cta.cluster.ctas
        if rank >= len(ctas):
            raise _violation(violations.AddressWindow,
                             f"{op} at shared::cluster address {addr & 0xFFFFFFFF:#x}: no CTA of rank {rank} "
                             f"in the cluster of {len(ctas)}")
        cta = t.cta if rank == OWN else ctas[rank]
        if local and cta is not t.cta:
            raise _violation(violations.ClusterOperation,
                             f"{op} on the mbarrier at offset {off:#x} of CTA {cta.name}, another CTA of the "
                             "cluster: only arrive, expect_tx and complete_tx may act on a remote object")
        if off % 8:
            raise _violation(violations.Alignment, f"{op} at shared offset {off:#x}, not 8-byte aligned")
        if off + 8 > cta.size:
            raise _violation(violations.AddressWindow,
                             f"{op} at shared offset {off:#x}, outside the {cta.size} bytes of shared "
                             f"memory of CTA {cta.name}")
        return cta, off, self.barrier_at(cta, off)

    def barrier_at(self, cta: Cta, off: int) -> Barrier:
        """The mbarrier object at this shared offset (uninitialized memory until mbarrier.init)."""
        b = cta.barriers.get(off)
        if b is None:
            where = f"@cta{cta.name}" if len(self.ctas) > 1 else ""
            b = cta.barriers[off] = Barrier(cta.symbols(off) + where)
        return b

    def _changed(self, cta: Cta, off: int, b: Barrier, before: str | None) -> None:
        if before is not None:
            self.events.append(BarrierEvent(b.name or f"{off:#x}", before, short_state(b)))
        entry = self.parked.get((cta.index, off))
        if entry is not None and entry[0] != (b.valid, b.phase):
            del self.parked[(cta.index, off)]
            for w in entry[1]:
                if w.status == PARKED:
                    self.unblock(w)

    def mb_init(self, t: Thread, space: str, addr: int, count: int) -> None:
        cta, off, b = self._mbar(t, space, addr, "mbarrier.init", True)
        before = short_state(b) if self.tracing else None
        b.init(count)
        t.effects += 1
        cta.words.add(off)
        cta.smem[off:off + 8] = b.word.to_bytes(8, "little")
        self._changed(cta, off, b, before)

    def mb_inval(self, t: Thread, space: str, addr: int) -> None:
        cta, off, b = self._mbar(t, space, addr, "mbarrier.inval", True)
        before = short_state(b) if self.tracing else None
        b.inval()
        t.effects += 1
        cta.words.discard(off)
        cta.smem[off:off + 8] = b.word.to_bytes(8, "little")  # sm_90 writes the object back on inval
        self._changed(cta, off, b, before)

    def mb_tx(self, t: Thread, space: str, addr: int, count: int, expect: bool) -> None:
        name = "mbarrier.expect_tx" if expect else "mbarrier.complete_tx"
        cta, off, b = self._mbar(t, space, addr, name, False)
        before = short_state(b) if self.tracing else None
        if expect:
            b.expect_tx(count)
        else:
            b.complete_tx(count)
        t.effects += 1
        self._changed(cta, off, b, before)

    def mb_arrive(self, t: Thread, space: str, addr: int, count: int | None, tx: int | None,
                  no_complete: bool, drop: bool, want: bool) -> int:
        name = "mbarrier.arrive_drop" if drop else "mbarrier.arrive"
        cta, off, b = self._mbar(t, space, addr, name, False)
        if want and cta is not t.cta:
            raise _violation(violations.ClusterArriveResult,
                             f"{name} on the mbarrier of CTA {cta.name} returns a state, but an object in "
                             "another CTA of the cluster cannot return one (the destination must be `_`)")
        before = short_state(b) if self.tracing else None
        fn = b.arrive_drop if drop else b.arrive
        if tx is not None:
            token = fn(expect_tx=tx)
        else:
            token = fn(count, no_complete=no_complete)
        t.effects += 1
        self._changed(cta, off, b, before)
        return _word(token.word, token)

    def mb_wait(self, t: Thread, space: str, addr: int, value: int, parity: bool, is_try: bool) -> bool:
        name = "mbarrier.try_wait" if is_try else "mbarrier.test_wait"
        cta, off, b = self._mbar(t, space, addr, name, True)
        fn = b.try_wait if is_try else b.test_wait
        if parity:
            ok = fn(parity=value)
        elif isinstance(value, TokenWord):
            ok = fn(value.token)
        else:
            ok = fn(int(value))
        if ok:
            t.last_fail = None
            return True
        # A wait's answer depends only on the barrier's phase and validity (and the operand).
        key = (t.func.name, t.pc, cta.index, off, int(value), b.phase, b.valid, t.effects)
        if t.last_fail == key:
            self.parked.setdefault((cta.index, off), ((b.valid, b.phase), []))[1].append(t)
            self.block(t, OnMbarrier(t.pc, cta.index, off, parity, value), PARKED)
        else:
            t.last_fail = key
        return False

    def mb_pending_count(self, t: Thread, value: int) -> int:
        return pending_count(value.token if isinstance(value, TokenWord) else int(value))

    def fence(self, t: Thread) -> None:
        """fence/membar: memory here is sequentially consistent; `sim.races` gives fences their meaning."""

    # -- control -------------------------------------------------------------------------------------
    def exit(self, t: Thread) -> None:
        t.status = EXITED
        t.wait = None
        self._remove(t)
        cta = t.cta
        cta.live -= 1
        cta.cluster.live -= 1
        for ident in list(cta.bars):
            self._bar_check(cta, ident)
        self._cluster_check(cta.cluster)
        w = t.warp
        if w is not None:
            for key, entry in list(w.pending.items()):
                entry.need = _live_lanes(w, key[1])
                if len(entry.parts) >= entry.need:
                    self._coll_done(w, key, entry)

    def call(self, t: Thread, name: str, moves_in: list[tuple[int, int, int]],
             moves_out: list[tuple[int, int, int]]) -> None:
        """Enter a .func: copy the arguments into its parameters, give it fresh registers (the special
        registers stay), and remember where to return."""
        callee = self.functions[name]
        if any(f.name == name for f, _, _, _ in t.frames) or t.func.name == name:
            raise Unsupported(f"recursive call to {name}: its frame in local memory is already in use")
        mem = t.local
        for src, dst, n in moves_in:
            mem[dst:dst + n] = mem[src:src + n]
        t.frames.append((t.func, t.regs, t.pc, moves_out))
        t.cc = None  # CC is not preserved across calls (PTX ISA 9.7.2)
        regs: list[object] = [0] * callee.nregs
        regs[:NSPECIAL] = t.regs[:NSPECIAL]
        t.func, t.code, t.regs, t.pc = callee, callee.code, regs, 0

    def call_indirect(self, t: Thread, addr: int, args: list[tuple[int, int]],
                      rets: list[tuple[int, int]]) -> None:
        """A call through a function pointer: the address names the function (see launch.CODE_BASE)."""
        i = addr - CODE_BASE
        name = self.code_names[i] if 0 <= i < len(self.code_names) else None
        if name is None or name not in self.functions:
            raise KernelFault(f"indirect call to {addr:#x}, which is not the address of a function with a "
                              "body")
        frame = self.frames[name]
        if len(args) != len(frame.params) or len(rets) != len(frame.returns):
            raise KernelFault(f"indirect call to {name} with {len(args)} arguments and {len(rets)} results; "
                           f"it takes {len(frame.params)} and returns {len(frame.returns)}")
        moves_in = [(a[0], p[1], min(a[1], p[2])) for a, p in zip(args, frame.params, strict=True)]
        moves_out = [(p[1], x[0], min(x[1], p[2])) for x, p in zip(rets, frame.returns, strict=True)]
        self.call(t, name, moves_in, moves_out)

    def vprintf(self, t: Thread, args: list[tuple[int, int]], rets: list[tuple[int, int]]) -> None:
        """printf: the text goes to `output` as (thread, text); the call returns the arguments used."""
        fmt_addr = self.ld_local(t, args[0][0], 8)
        buf = self.ld_local(t, args[1][0], 8)
        text, used = format_printf(_cstring_at(self, t, fmt_addr), lambda a, n: self.ld_gen(t, a, n), buf)
        self.output.append((t.aid, text))
        for address, size in rets:
            self.st_local(t, address, min(size, 4), used)

    def ctarank(self, t: Thread, addr: int, generic: bool) -> int:
        if generic and not is_shared_generic(addr):
            raise MemoryFault(f"getctarank of generic address {addr:#x}: not in the shared window")
        cta, _ = self._cta_of(t, addr if generic else addr & 0xFFFFFFFF, "generic" if generic else "cluster")
        return cta.rank

    def isspace(self, t: Thread, addr: int, space: str) -> bool:
        if space in ("cta", "cluster"):
            found = shared_address("generic", addr)
            if found is None:
                return False
            return found[0] == OWN or (space == "cluster" and found[0] < len(t.cta.cluster.ctas))
        if space == "local":
            return is_local_generic(addr)
        if space == "param":
            return is_param_generic(addr) and addr - PARAM_GENERIC < len(self.params.data)
        try:
            self.gmem.region(addr, 1)
        except MemoryFault:
            return False
        return True

    def ret(self, t: Thread) -> None:
        if not t.frames:
            self.exit(t)
            return
        func, regs, pc, moves_out = t.frames.pop()
        mem = t.local
        for src, dst, n in moves_out:
            mem[dst:dst + n] = mem[src:src + n]
        t.cc = None
        t.func, t.code, t.regs, t.pc = func, func.code, regs, pc

    def trap(self, t: Thread) -> None:
        raise KernelFault("trap: the kernel aborted", TRAP)

    def bar(self, t: Thread, ident: int, count: int | None, wait: bool) -> None:
        """bar.sync / bar.arrive: threads count one each; without a count, every live thread of the CTA."""
        if ident > 15:
            raise KernelFault(f"barrier {ident}: bar.sync takes barriers 0..15")
        cta = t.cta
        nb = cta.bars.get(ident)
        if nb is None:
            nb = cta.bars[ident] = NamedBarrier()
        if count is not None:
            nb.count = count
        t.effects += 1
        nb.arrived.append(t)
        if wait:
            self.block(t, AtBar(ident))
        self._bar_check(cta, ident)

    def _bar_check(self, cta: Cta, ident: int) -> None:
        nb = cta.bars[ident]
        need = nb.count if nb.count is not None else cta.live
        if nb.arrived and len(nb.arrived) >= need:
            del cta.bars[ident]
            here = AtBar(ident)
            for th in nb.arrived:
                if th.status == BLOCKED and th.wait == here:
                    self.unblock(th)

    def cluster_arrive(self, t: Thread) -> None:
        if t.cl_arrived:
            raise KernelFault("barrier.cluster.arrive twice without a barrier.cluster.wait between")
        cl = t.cta.cluster
        t.cl_arrived = True
        t.cl_gen = cl.phase
        t.effects += 1
        cl.count += 1
        self._cluster_check(cl)

    def cluster_wait(self, t: Thread) -> None:
        if not t.cl_arrived:
            raise KernelFault("barrier.cluster.wait without a barrier.cluster.arrive before it")
        cl = t.cta.cluster
        if cl.phase > t.cl_gen:
            t.cl_arrived = False
            return
        self.block(t, AtCluster(cl.index))

    def _cluster_check(self, cl: Cluster) -> None:
        if cl.count and cl.count >= cl.live:
            cl.phase += 1
            cl.count = 0
            here = AtCluster(cl.index)
            for cta in cl.ctas:
                for th in cta.threads:
                    if th.status == BLOCKED and th.wait == here:
                        th.cl_arrived = False
                        self.unblock(th)

    def coll(self, t: Thread, kind: str, mask: int, arg: object, finish: Finish | None) -> None:
        """A warp collective: it completes when every live lane of `mask` has reached it."""
        w = t.warp
        assert w is not None
        if not mask >> t.lane & 1:
            raise KernelFault(f"{kind}: the executing lane {t.lane} is not in membermask {mask:#x}")
        key = (kind, mask)
        entry = w.pending.get(key)
        if entry is None:
            entry = w.pending[key] = Collective(finish, _live_lanes(w, mask))
        entry.parts[t.lane] = (t, arg)
        t.effects += 1
        if len(entry.parts) < entry.need:
            self.block(t, InCollective(kind, mask))
        else:
            self._coll_done(w, key, entry)

    def _coll_done(self, w: Warp, key: tuple[str, int], entry: Collective) -> None:
        del w.pending[key]
        if entry.finish is not None:
            entry.finish(entry.parts)
        for th, _ in entry.parts.values():
            if th.status == BLOCKED:
                self.unblock(th)

    # -- asynchronous copies ---------------------------------------------------------------------------
    def _new_copy(self, kind: str, t: Thread) -> Copy:
        c = Copy(self.next_aid, kind, t)
        self.next_aid += 1
        self.inflight.append(c)
        t.effects += 1
        return c

    def cp_async(self, t: Thread, dst: int, src: int, size: int, src_size: int) -> None:
        if size not in (4, 8, 16) or src_size > size:
            raise KernelFault(f"cp.async of {size} bytes (source {src_size}): cp-size must be 4, 8 or 16 and "
                           "src-size at most cp-size")
        if dst % size or src % size:
            raise MemoryFault(f"cp.async of {size} bytes from {src:#x} to shared {dst:#x}: addresses must be "
                              f"aligned to {size}")
        c = self._new_copy("cp.async", t)
        c.dst_cta, c.dst = t.cta, dst
        c.src = ("global", None, src)
        c.size, c.src_size = size, src_size
        self._guard(t.cta, dst, size, "cp.async")
        t.cp_open.append(c)
        self._add(c)

    def cp_commit(self, t: Thread) -> None:
        t.cp_groups.append(t.cp_open)
        t.cp_open = []

    def bulk_commit(self, t: Thread) -> None:
        t.bulk_groups.append(t.bulk_open)
        t.bulk_open = []

    def cp_wait(self, t: Thread, n: int, which: str) -> None:
        """cp.async.wait_group / cp.async.bulk.wait_group: block until at most n recent groups pend."""
        groups = t.cp_groups if which == "cp.async" else t.bulk_groups
        while groups and all(c.status == DONE for c in groups[0]):
            groups.pop(0)
        if len(groups) > n:
            self.block(t, ForCopies(which, n))

    def cp_mb_arrive(self, t: Thread, space: str, addr: int, noinc: bool) -> None:
        cta, off, b = self._mbar(t, space, addr, "cp.async.mbarrier.arrive", True)
        before = short_state(b) if self.tracing else None
        b.cp_async_arrive(noinc=noinc)
        self._changed(cta, off, b, before)
        a = self._new_copy("cp.async.mbarrier.arrive", t)
        a.bar_cta, a.bar_off = cta, off
        t.cp_open = [c for c in t.cp_open if c.status != DONE]
        for c in [c for g in t.cp_groups for c in g] + t.cp_open:
            if c.status != DONE:
                c.watchers.append(a)
                a.deps += 1
        if a.deps:
            a.status = WAITING_DEPS
        else:
            self._add(a)

    def bulk_copy(self, t: Thread, dst_space: str, src_space: str, dst: int, src: int, size: int,
                  bar: int, cta_mask: int | None = None) -> None:
        """cp.async.bulk into shared memory, completing `size` bytes of tx on the mbarrier; with
        `.multicast::cluster`, into the same offsets of every CTA of `cta_mask` (one engine each)."""
        if size % 16 or dst % 16 or src % 16:
            raise MemoryFault(f"cp.async.bulk of {size} bytes from {src:#x} to {dst:#x}: size and addresses "
                              "must be multiples of 16")
        if cta_mask is not None:
            ctas = t.cta.cluster.ctas
            for rank in range(16):
                if cta_mask >> rank & 1:
                    if rank >= len(ctas):
                        raise KernelFault(f"cp.async.bulk multicast to CTA rank {rank}, but the cluster has "
                                       f"{len(ctas)} CTAs")
                    self.bulk_copy(t, "cluster", src_space, cluster_address(rank, dst & CTA_MASK), src, size,
                                   cluster_address(rank, bar & CTA_MASK))
            return
        c = self._new_copy("cp.async.bulk", t)
        c.dst_cta, c.dst = (t.cta, dst) if dst_space == "cta" else self._cta_of(t, dst)
        c.src = ("global", None, src) if src_space == "global" else ("shared", t.cta, src)
        c.size = c.src_size = size
        bar_cta, bar_off = self._cta_of(t, bar)
        if bar_cta is not c.dst_cta:
            raise KernelFault(f"cp.async.bulk: the mbarrier (CTA {bar_cta.name}) must be in the CTA of the "
                           f"destination (CTA {c.dst_cta.name})")
        c.bar_cta, c.bar_off = bar_cta, bar_off
        self._add(c)

    def st_async(self, t: Thread, dst: int, value: int, size: int, bar: int, op: str | None,
                 kind: str) -> None:
        """st.async / red.async (.shared::cluster, .mbarrier::complete_tx::bytes): the value is taken now;
        an engine writes (or reduces) it later and completes `size` bytes of tx on the mbarrier."""
        c = self._new_copy("st.async" if op is None else f"red.async.{op}.{kind}", t)
        c.dst_cta, c.dst = self._cta_of(t, dst)
        c.src = ("value", None, value)
        c.size = c.src_size = size
        c.bar_cta, c.bar_off = self._cta_of(t, bar)
        if c.bar_cta is not c.dst_cta:
            raise KernelFault(f"{c.kind}: the mbarrier (CTA {c.bar_cta.name}) must be in the CTA of the "
                           f"destination (CTA {c.dst_cta.name})")
        self._add(c)

    def bulk_store(self, t: Thread, dst: int, src: int, size: int) -> None:
        if size % 16 or dst % 16 or src % 16:
            raise MemoryFault(f"cp.async.bulk of {size} bytes from shared {src:#x} to {dst:#x}: size and "
                              "addresses must be multiples of 16")
        c = self._new_copy("cp.async.bulk.store", t)
        c.src = ("shared", t.cta, src)
        c.dst = dst
        c.size = c.src_size = size
        t.bulk_open.append(c)
        self._add(c)

    def finish_async(self, c: Copy) -> None:
        """One engine step: the copy lands (and signals), or the pending arrive-on happens."""
        for cta in (c.dst_cta, c.bar_cta, c.src[1]):
            if cta is not None and cta.live == 0:
                raise MemoryFault(f"{c.name} completes in CTA {cta.name}, whose threads have all exited: its "
                                  "shared memory is gone (wait for the copy before the CTA exits)",
                                  EXIT_INFLIGHT)
        if c.kind == "cp.async.mbarrier.arrive":
            assert c.bar_cta is not None
            b = c.bar_cta.barriers[c.bar_off]
            before = short_state(b) if self.tracing else None
            b.async_arrive()
            self._changed(c.bar_cta, c.bar_off, b, before)
        else:
            kind, scta, saddr = c.src
            if kind == "global":
                data = self.gmem.read(saddr, c.src_size) + bytes(c.size - c.src_size)
            elif kind == "value":
                value = saddr
                if c.kind.startswith("red.async."):
                    assert c.dst_cta is not None
                    _, _, op, sign = c.kind.split(".")
                    old = self._sload(c.dst_cta, c.dst, c.size)
                    value = _atom_value(op, sign, old, value, 0, 8 * c.size)
                data = (value & ((1 << (8 * c.size)) - 1)).to_bytes(c.size, "little")
            else:
                assert scta is not None
                self._guard(scta, saddr, c.size, c.kind + " source")
                data = bytes(scta.smem[saddr:saddr + c.size])
            if c.dst_cta is None:
                self.gmem.write(c.dst, data)
            else:
                self._guard(c.dst_cta, c.dst, c.size, c.kind)
                c.dst_cta.smem[c.dst:c.dst + c.size] = data
            if c.bar_cta is not None:
                cta, off = c.bar_cta, c.bar_off
                b = self.barrier_at(cta, off)
                before = short_state(b) if self.tracing else None
                b.complete_tx(c.size)
                self._changed(cta, off, b, before)
        c.status = DONE
        self._remove(c)
        self.inflight.remove(c)
        for w in c.watchers:
            w.deps -= 1
            if w.deps == 0:
                w.status = RUNNABLE
                self._add(w)
        t = c.thread
        why = t.wait
        if t.status == BLOCKED and isinstance(why, ForCopies):
            groups = t.cp_groups if why.which == "cp.async" else t.bulk_groups
            while groups and all(x.status == DONE for x in groups[0]):
                groups.pop(0)
            if len(groups) <= why.pending:
                self.unblock(t)


def _gone(cta: Cta, addr: int) -> NoReturn:
    raise MemoryFault(f"access to shared::cluster address {addr:#x} in CTA {cta.name}, whose threads have "
                      "all exited: its shared memory is gone (a CTA must outlive the remote accesses to it, "
                      "e.g. by a cluster barrier before it exits)", REMOTE_EXITED)


def _cstring_at(m: Machine, t: Thread, addr: int, limit: int = 4096) -> str:
    data = bytearray()
    while len(data) < limit:
        byte = m.ld_gen(t, addr + len(data), 1)
        if byte == 0:
            break
        data.append(byte)
    return data.decode("utf-8", errors="replace")


def _atom_value(op: str, kind: str, old: int, b: int, c: int, bits: int) -> int:
    from mbarrier.sim.compile import f32_bits, f32_value, f64_bits, f64_value
    if kind == "f":
        fv, fb = (f32_value, f32_bits) if bits == 32 else (f64_value, f64_bits)
        return fb(fv(old) + fv(b)) if op == "add" else b
    sign = 1 << (bits - 1)
    if kind == "s":
        so, sb = (old ^ sign) - sign, (b ^ sign) - sign
    else:
        so, sb = old, b
    mask = (1 << bits) - 1
    match op:
        case "add":
            return old + b
        case "min":
            return min(so, sb)
        case "max":
            return max(so, sb)
        case "and":
            return old & b
        case "or":
            return old | b
        case "xor":
            return old ^ b
        case "exch":
            return b
        case "cas":
            return c if old == b else old
        case "inc":
            return 0 if old >= b else old + 1
        case "dec":
            return b if old == 0 or old > b else old - 1
    return old & mask
