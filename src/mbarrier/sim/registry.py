"""The instruction registry: every instruction the simulator executes, declared once.

A declaration (`instruction`) binds opcodes to their executor, the code emitter `sim.compile` runs once
per launch, and to their facts: what the checker (`explore.code`, `explore.por`, `explore.frozen`) and
the race tracker must know of an instruction without running it. Facts are read from the syntax alone
(opcode, qualifiers, operand positions): whether it touches only the executing thread's registers, which
state space and operand it reads or writes and how many bytes, which mbarrier operation (its operand
roles from `spec.forms`), whether it is a barrier or a warp collective, an asynchronous copy's issue, a
wait for copies, control flow. Nothing else classifies instructions, so the simulator and the checker
cannot drift apart: an opcode with an executor has facts, or it cannot be declared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import IntEnum, StrEnum
from typing import TYPE_CHECKING

from mbarrier.ptx import ast
from mbarrier.spec.forms import MODIFIERS

if TYPE_CHECKING:
    from mbarrier.sim.compile import Gen


class Kind(IntEnum):
    """What an instruction may touch besides the executing thread's registers."""

    REGISTERS = 0      # nothing else: registers, the carry flag CC.CF, the thread's clock
    BRANCH = 1         # control flow inside the function
    FENCE = 2          # orders memory accesses; changes no value (race tracking gives it its meaning)
    NOP = 3            # a step with no effect the simulator models (nanosleep, prefetch, ...)
    EXIT = 4           # exit, ret, trap: ends the function or the thread
    CALL = 5           # the callee may do anything
    LOAD = 6
    STORE = 7
    ATOMIC = 8         # read-modify-write
    MBARRIER = 9       # an operation on an mbarrier object
    BARRIER = 10       # bar.sync/bar.arrive (the CTA) or barrier.cluster.arrive/wait (the cluster)
    COLLECTIVE = 11    # a warp collective: bar.warp.sync, elect, vote, shfl, redux
    WARP_READ = 12     # reads which lanes of its warp are live (activemask)
    COPY = 13          # issues an asynchronous copy, landed later by an engine
    COPY_ARRIVE = 14   # cp.async.mbarrier.arrive, tcgen05.commit: an arrive-on once what they track lands
    COPY_COMMIT = 15   # closes the thread's open group of copies (its own bookkeeping only)
    COPY_WAIT = 16     # waits until the thread's copy groups complete
    OPAQUE = 17        # what it touches is not modelled here: anything
    MMA = 18           # wgmma.mma_async, wait_group: warp collectives of warpgroup MMA (operations in flight)


class Space(StrEnum):
    """A state space as an address operand means it (`.const` data lives in global buffers)."""

    CTA = "cta"
    CLUSTER = "cluster"
    GLOBAL = "global"
    PARAM = "param"
    LOCAL = "local"
    GENERIC = "generic"


#: State-space qualifiers and the space an address operand then names.
SPACES: dict[str, Space] = {
    ".shared": Space.CTA, ".shared::cta": Space.CTA, ".shared::cluster": Space.CLUSTER,
    ".global": Space.GLOBAL, ".const": Space.GLOBAL, ".param": Space.PARAM, ".param::entry": Space.PARAM,
    ".local": Space.LOCAL,
}


def spaces_of(quals: tuple[str, ...]) -> list[Space]:
    """The state spaces the qualifiers name, in order (an executor refuses more than one)."""
    return [SPACES[q] for q in quals if q in SPACES]


def space_of(quals: tuple[str, ...]) -> Space:
    """The state space the qualifiers name (the first one), generic when none."""
    found = spaces_of(quals)
    return found[0] if found else Space.GENERIC


class Sem(StrEnum):
    """A memory-ordering qualifier as written (PTX ISA 8; `.volatile` orders like `.relaxed`)."""

    RELAXED = ".relaxed"
    ACQUIRE = ".acquire"
    RELEASE = ".release"
    ACQ_REL = ".acq_rel"
    SC = ".sc"
    VOLATILE = ".volatile"


class Scope(StrEnum):
    CTA = ".cta"
    CLUSTER = ".cluster"
    GPU = ".gpu"
    SYS = ".sys"


# The words of each class, as spec.forms knows them (`.volatile` is a flag there).
_SEMS = {w: Sem(w) for w, c in MODIFIERS.items() if c == "sem"} | {".volatile": Sem.VOLATILE}
_SCOPES = {w: Scope(w) for w, c in MODIFIERS.items() if c == "scope"}


@dataclass(frozen=True, slots=True)
class Order:
    """The ordering an instruction asks for: its `.sem` and `.scope` as written (None: none written)."""

    sem: Sem | None = None
    scope: Scope | None = None

    @property
    def strong(self) -> bool:
        """A strong access (volatile, relaxed, acquire, release): not a plain (weak) one."""
        return self.sem in (Sem.RELAXED, Sem.ACQUIRE, Sem.RELEASE, Sem.ACQ_REL, Sem.VOLATILE)

    @property
    def acquires(self) -> bool:
        return self.sem in (Sem.ACQUIRE, Sem.ACQ_REL)

    @property
    def releases(self) -> bool:
        return self.sem in (Sem.RELEASE, Sem.ACQ_REL)


UNORDERED = Order()


def order_of(quals: tuple[str, ...]) -> Order:
    """The first `.sem` and the first `.scope` among the qualifiers."""
    sem = next((_SEMS[q] for q in quals if q in _SEMS), None)
    scope = next((_SCOPES[q] for q in quals if q in _SCOPES), None)
    return UNORDERED if sem is None and scope is None else Order(sem, scope)


class FenceKind(StrEnum):
    ORDER = "order"                  # fence.sc/.acq_rel/.acquire/.release, membar: the two (or one) halves
    PROXY_ASYNC = "proxy.async"      # fence.proxy.async: generic-proxy writes reach the async proxy
    PROXY_ASYNC_SHARED = "proxy.async.shared"  # ... of shared memory only (.shared::cta, ::cluster)
    PROXY_ASYNC_GLOBAL = "proxy.async.global"  # ... of global memory only (.global)
    PROXY_OTHER = "proxy"            # another proxy fence (tensormap, alias): nothing the model tracks
    MBARRIER_INIT = "mbarrier_init"  # fence.mbarrier_init: a release of the mbarrier inits before it


class CopyKind(StrEnum):
    CP_ASYNC = "cp.async"            # 4-16 bytes global -> shared::cta (9.7.9.25)
    BULK = "cp.async.bulk"           # -> shared, complete-tx on an mbarrier
    BULK_STORE = "cp.async.bulk.store"  # shared::cta -> global, bulk_group completion
    STORE_ASYNC = "st.async"         # st.async/red.async: a value into shared::cluster, complete-tx
    TENSOR = "cp.async.bulk.tensor"  # a tensor map's box -> shared, complete-tx (sizes from the map)
    TENSOR_STORE = "cp.async.bulk.tensor.store"  # shared::cta -> the tensor (or reduced into), bulk_group
    TC_COMMIT = "tcgen05.commit"     # an arrive-on (count 1) once the thread's tcgen05 operations complete
    LAUNCH_CONTROL = "clusterlaunchcontrol.try_cancel"  # a 16-byte response into shared::cta, complete-tx


@dataclass(frozen=True, slots=True)
class Access:
    """A memory operand: the index of its address operand, the space it names, the bytes (None: not
    fixed by the syntax)."""

    operand: int
    space: Space
    size: int | None = None


@dataclass(frozen=True, slots=True)
class MbarrierUse:
    """An mbarrier operation (9.7.13.15) with its operands' positions, from `spec.forms`: the object's
    address, the count or txCount operand, the state or phaseParity operand a wait reads, the predicate it
    writes."""

    op: str                   # init, inval, expect_tx, complete_tx, arrive, arrive_drop, test_wait, ...
    address: Access | None
    plain: bool = False       # an arrive without .expect_tx and .noComplete
    expect_tx: bool = False   # an arrive.expect_tx
    no_complete: bool = False  # an arrive.noComplete
    parity: bool = False      # a wait with .parity
    count: int | None = None  # operand index of count / txCount
    phase: int | None = None  # operand index of a wait's state or phaseParity
    result: int | None = None  # operand index of a wait's waitComplete


@dataclass(frozen=True, slots=True)
class CopyUse:
    """An asynchronous copy's issue: where it writes and reads when it lands, its size, its mbarrier."""

    kind: CopyKind
    dst: Access
    src: Access | None = None      # None: the value comes from registers at the issue
    size: int | None = None        # operand index of the byte count (None: `dst.size`)
    barrier: Access | None = None  # the mbarrier it completes tx on
    multicast: bool = False        # .multicast::cluster: it lands (and completes tx) in every CTA of its mask
    mask: int | None = None        # a multicast's ctaMask operand index (None: not known to the checker)
    noinc: bool = False            # cp.async.mbarrier.arrive.noinc: no pending-count increment at the issue


@dataclass(frozen=True, slots=True)
class SyncUse:
    """A barrier or warp synchronization: whose threads (`scope` "cta", "cluster" or "warp"), whether the
    thread waits there, whether it takes an explicit thread count, whether it waits for every thread of
    its scope (a whole-CTA bar.sync, a full-mask bar.warp.sync, barrier.cluster.wait)."""

    scope: str
    waits: bool
    counted: bool = False
    whole: bool = False
    uniform: bool = False     # every lane gets the same result (bar.warp.sync, vote.all/.any/.uni)
    lanes: int | None = None  # a warp collective's membermask operand (a register: whole where all ones)


@dataclass(frozen=True, slots=True)
class Facts:
    """What one instruction does, as far as the checker and the race tracker must know before it runs.
    `name`: the operation as reports name it (`mbarrier.try_wait`, `bar.sync`, the opcode otherwise).
    `writes`: its first operand is a register destination, written in full when the guard holds.
    `reads_carry`: it reads CC.CF (addc, subc, madc), thread state beyond its register operands.
    `order`: its `.sem` and `.scope` (filled in for every instruction by `facts_of`).
    `async_registers`: operands whose registers an asynchronous operation it issues owns until a later
    instruction retires it (wgmma.mma_async's accumulator and A fragment, until wgmma.wait_group).
    `total`: its step never raises, whatever its operands' values (the checker's state key need not
    keep what they were computed from). `warpgroup`: it relates the warps of a warpgroup (setmaxnreg,
    wgmma), so a warp cannot stand in for a warp of another warpgroup."""

    kind: Kind
    name: str
    writes: bool = False
    reads_carry: bool = False
    access: Access | None = None
    mbarrier: MbarrierUse | None = None
    copy: CopyUse | None = None
    sync: SyncUse | None = None
    order: Order = UNORDERED
    fence: FenceKind | None = None
    reads_only: bool = False     # a cp.async.bulk.wait_group.read: waits for the copies' reads only
    async_registers: tuple[int, ...] = ()
    total: bool = False
    warpgroup: bool = False

    @property
    def private(self) -> bool:
        """No other agent can observe its step: it touches the thread's registers, control flow or
        parameters only, or orders memory without changing it."""
        if self.kind in (Kind.REGISTERS, Kind.BRANCH, Kind.FENCE, Kind.NOP):
            return True
        return self.kind == Kind.LOAD and self.access is not None and self.access.space == Space.PARAM

    @property
    def pure(self) -> bool:
        """Its step is a function of its register operands alone (evaluable on a scratch thread)."""
        return self.kind == Kind.REGISTERS and not self.reads_carry


Emitter = Callable[["Gen", ast.Instruction], None]
FactsOf = Callable[[ast.Instruction], Facts]


@dataclass(frozen=True, slots=True)
class Declaration:
    opcode: str
    emit: Emitter
    facts: FactsOf


#: Every instruction the simulator executes, by opcode.
REGISTRY: dict[str, Declaration] = {}


def instruction(*opcodes: str, facts: Kind | FactsOf, writes: bool = False, reads_carry: bool = False,
                total: bool = False, warpgroup: bool = False) -> Callable[[Emitter], Emitter]:
    """Declare opcodes: the decorated function is their executor; `facts` what they touch, either a kind
    (the same for every form; `writes`, `reads_carry`, `total`, `warpgroup` complete it) or a function of
    the instruction."""
    def deco(fn: Emitter) -> Emitter:
        for op in opcodes:
            if op in REGISTRY:
                raise ValueError(f"{op} is declared twice")
            of = _constant(Facts(facts, op, writes, reads_carry, total=total, warpgroup=warpgroup)) \
                if isinstance(facts, Kind) else facts
            REGISTRY[op] = Declaration(op, fn, of)
        return fn
    return deco


def _constant(f: Facts) -> FactsOf:
    return lambda _ins: f


def undeclared(ins: ast.Instruction) -> Facts:
    """What an opcode the simulator does not execute touches, for the checker: anything (it stops the run
    when reached; until then the search must not assume it harmless)."""
    return Facts(Kind.OPAQUE, ins.opcode)


def facts_of(ins: ast.Instruction) -> Facts:
    """The facts of one instruction (those of `undeclared` for an opcode with no declaration), with the
    ordering its qualifiers ask for."""
    d = REGISTRY.get(ins.opcode)
    f = undeclared(ins) if d is None else d.facts(ins)
    order = order_of(ins.qualifiers)
    return f if order is UNORDERED else replace(f, order=order)
