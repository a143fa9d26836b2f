"""A thread's bookkeeping of warpgroup MMA (PTX ISA 9.7.15): its wgmma.mma_async operations in flight, by
commit group, the registers they own, and what the fence rule needs. Values, replaced on every change,
so the checker's snapshots hold them as they are.

The model (docs/simulator.md, "Warpgroup MMA"): the warp's 32 lanes meet at wgmma.mma_async (a warp
collective); its register operands are read there; an engine agent (`Machine.wg_land`, scheduled like a
copy) reads the shared-memory matrices and computes; wgmma.wait_group writes the accumulators of the
groups it retires into the registers. Between the issue and that retirement the accumulator and A
registers belong to the operation (9.7.15.7.3) and the shared-memory operands may be read at any moment.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, field
from typing import TYPE_CHECKING

from mbarrier.sim.mma import Form

if TYPE_CHECKING:
    from mbarrier.sim.machine import Copy


@dataclass(frozen=True, slots=True)
class MmaOp:
    """What the syntax of one wgmma.mma_async fixes: its form, its immediates, the register slots of its
    accumulator and (register form) A fragment; for wgmma.mma_async.sp the slot of its metadata register
    (`meta_slots`, one) and its sparsity selector."""

    form: Form
    d_slots: tuple[int, ...]
    a_slots: tuple[int, ...]
    scale_a: int = 1
    scale_b: int = 1
    trans_a: bool = False
    trans_b: bool = False
    meta_slots: tuple[int, ...] = ()
    selector: int = 0

    @property
    def in_slots(self) -> tuple[int, ...]:
        """The input registers it reads and owns until retired, as 9.7.15.7 rules A's: the A fragment
        and the sparsity metadata."""
        return self.a_slots + self.meta_slots


@dataclass(frozen=True, slots=True, eq=False)
class MmaIssue:
    """One warp's issued wgmma.mma_async, as its engine needs it: the op, the descriptors and scale-d the
    lanes gave, the A fragments, sparsity metadata and accumulators read at the issue (lane order; None
    where there are none or they come later: the accumulator of a chained operation, `chain`, or none
    at all when scale-d is false), the warp's
    rows within the warpgroup's 64, the function whose registers the slots name."""

    op: MmaOp
    desc_a: int | None
    desc_b: int
    scale_d: bool
    a_regs: tuple[tuple[int, ...], ...] | None
    d_in: tuple[tuple[int, ...], ...] | None
    chain: Copy | None
    row0: int
    function: str
    lanes: tuple[int, ...] = field(default=())  # the lanes' thread ids
    seq: int = 0                                # the warp's count of wgmma.mma_async before this one
    reads: tuple[tuple[int, int], ...] = ()     # the shared-memory byte ranges its engine will read
    meta: tuple[int, ...] | None = None         # each lane's sparsity metadata (wgmma.mma_async.sp)
    ident: tuple[object, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ident", (
            astuple(self.op), -1 if self.desc_a is None else self.desc_a, self.desc_b, self.scale_d,
            self.chain is not None, self.row0, self.a_regs or (), self.d_in or (), self.meta or ()))

    def key(self) -> tuple[object, ...]:
        """What decides the result, for the checker's state keys (the chained operation is in the
        threads' own state): plain values, comparable with another operation's key."""
        return self.ident


@dataclass(frozen=True, slots=True)
class WgState:
    """A thread's warpgroup-MMA state. `fenced`: it executed wgmma.fence at least once; `touched`: the
    registers (slot, line) that ordinary instructions accessed since its latest wgmma.fence, among those
    its function's wgmma.mma_async name; `accs`: (slot, shape) used as accumulators by wgmma.mma_async since
    that fence; `open`: operations issued and not committed; `groups`: committed groups not yet retired by
    wgmma.wait_group; `results`: the accumulators (this lane's registers) of operations that completed and
    are not retired; `busy`: the register slots the operations not retired own; `lines`: where each slot
    of `touched` was first accessed (for messages); `issued`: the warp's wgmma.mma_async so far (the k-th
    of each warp of a warpgroup are one warpgroup operation, 9.7.15.5.2 .aligned)."""

    fenced: bool = False
    touched: frozenset[int] = frozenset()
    accs: tuple[tuple[int, str], ...] = ()
    open: tuple[Copy, ...] = ()
    groups: tuple[tuple[Copy, ...], ...] = ()
    results: tuple[tuple[Copy, tuple[int, ...]], ...] = ()
    busy: frozenset[int] = frozenset()
    lines: tuple[tuple[int, int], ...] = ()
    issued: int = 0

    def touch(self, slots: frozenset[int], line: int) -> WgState:
        """This state after an ordinary access to `slots` (none of them busy) at `line`."""
        new = slots - self.touched
        return WgState(self.fenced, self.touched | new, self.accs, self.open, self.groups, self.results,
                       self.busy, self.lines + tuple((s, line) for s in sorted(new)), self.issued)

    def pending(self) -> list[Copy]:
        """The operations not retired, oldest first."""
        return [c for g in self.groups for c in g] + list(self.open)


NONE = WgState()


def owned(ops: list[Copy]) -> frozenset[int]:
    """The register slots these operations own."""
    out: set[int] = set()
    for c in ops:
        assert c.mma is not None
        out.update(c.mma.op.d_slots)
        out.update(c.mma.op.in_slots)
    return frozenset(out)


def owned_a(ops: list[Copy]) -> frozenset[int]:
    """The register slots these operations read as inputs (A fragments, sparsity metadata)."""
    return frozenset(s for c in ops if c.mma is not None for s in c.mma.op.in_slots)
