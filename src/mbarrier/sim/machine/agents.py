"""The machine's parts: its agents (threads, copies in flight), CTAs, clusters, warps and their barriers,
and the statuses an agent goes through. `sim.machine` puts them together."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mbarrier.core import violations
from mbarrier.core.barrier import Barrier
from mbarrier.core.token import Token
from mbarrier.sim.compile import CompiledFunction, Site
from mbarrier.sim.tensorcopy import Plan
from mbarrier.sim.waits import Wait
from mbarrier.sim.wgmmastate import NONE, MmaIssue
from mbarrier.spec.rules import rule

if TYPE_CHECKING:
    from mbarrier.sim.machine import Machine

RUNNABLE, BLOCKED, PARKED, EXITED, WAITING_DEPS, DONE = range(6)
#: The kinds of in-flight agents whose one step is an arrive-on (count 1) on their mbarrier.
ARRIVALS = frozenset({"cp.async.mbarrier.arrive", "tcgen05.commit"})


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
                 "cl_arrived", "cl_gen", "ridx", "local", "frames", "cc", "wg")

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
        self.wg = NONE  # warpgroup MMA in flight and the fence rule's bookkeeping (sim.wgmmastate)

    @property
    def site(self) -> Site:
        return self.func.sites[self.pc]

    @property
    def name(self) -> str:
        return f"thread {self.aid} (cta {self.cta.name}, tid {_dim(self.tid)})"

class Copy:
    """An in-flight asynchronous operation: a cp.async, a bulk copy, a pending arrive-on (`ARRIVALS`)."""

    __slots__ = ("aid", "code", "pc", "status", "ridx", "kind", "thread", "site", "dst_cta", "dst", "src",
                 "size", "src_size", "bar_cta", "bar_off", "deps", "watchers", "mma", "plan")

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
        self.plan: Plan | None = None      # a tensor copy's bytes (sim.tensorcopy); None for the others
        self.deps = 0
        self.watchers: list[Copy] = []
        self.mma: MmaIssue | None = None  # a wgmma.mma_async: what its engine computes

    @property
    def name(self) -> str:
        return f"{self.kind} c{self.aid} (issued by thread {self.thread.aid} at line {self.site.line})"

def _copy_step(m: Machine, a: Thread | Copy) -> None:
    assert isinstance(a, Copy)
    m.finish_async(a)


_COPY_CODE: tuple[Callable[..., None], ...] = (_copy_step,)


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


# A collective's completion: every lane's (thread, operand) and the machine (for what it reads or writes).
Finish = Callable[[dict[int, tuple[Thread, object]], "Machine"], None]


class Collective:
    """A warp collective in progress: each arrived lane's thread and operand, and how many must come."""

    __slots__ = ("finish", "need", "parts")

    def __init__(self, finish: Finish | None, need: int) -> None:
        self.finish = finish
        self.need = need
        self.parts: dict[int, tuple[Thread, object]] = {}

class Warp:
    __slots__ = ("threads", "pending", "nreg")

    def __init__(self) -> None:
        self.threads: list[Thread] = []
        self.pending: dict[tuple[str, int], Collective] = {}
        # The setmaxnreg the warp completed, in order: (pc, ".inc"/".dec", count) (sim.warpgroup).
        self.nreg: tuple[tuple[int, str, int], ...] = ()


def warp_gone(w: Warp) -> bool:
    """Every thread of the warp has exited."""
    return all(th.status == EXITED for th in w.threads)

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
