"""The kernel's code as the checker sees it: for each instruction, what it may touch, where control may
go next, which registers it writes, and whether it is a spin-wait.

The simulator compiles each PTX instruction to a step function (`sim.compile`); the checker also needs
to reason about instructions a thread has not reached yet (partial-order reduction asks "can this
thread ever touch that barrier again?"). This module derives that from the syntax tree, with the
register slots the compiler assigned (same declaration order and block scopes as `compile_function`).

A register is *fixed* at an instruction when no instruction reachable from there writes it: its current
value is then its value for the rest of the thread's life, so guards and addresses that read only
fixed registers are known exactly (nvcc's unrolled code makes most of them so).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from mbarrier.explore.budget import pulse
from mbarrier.ptx import ast
from mbarrier.sim.address import SHARED_GENERIC, address_mask
from mbarrier.sim.compile import (
    SPECIAL_CONSTANTS,
    SPECIAL_DYNAMIC,
    SPECIAL_SLOT,
    CompiledFunction,
    declared_names,
    named_in,
)
from mbarrier.sim.isa.control import BUILTIN_CALLS, TRAP_CALLS
from mbarrier.sim.isa.wgmma import MmaReads, mma_reads
from mbarrier.sim.machine import Machine
from mbarrier.sim.registry import REGISTRY, Access, CopyKind, Kind, Space, facts_of
from mbarrier.sim.types import TYPES

# Kinds of instructions the checker distinguishes.
LOCAL, BRANCH, EXIT, MB, LOAD, STORE, ATOM, BAR, CLUSTER, WARP, CP_ASYNC, CP_WAIT, CP_MB, BULK, \
    BULK_STORE, WARP_READ, MMA, MATRIX = range(18)

# The checker's kind of each kind of the registry. What no other agent observes (`Facts.private`, and a
# commit of the thread's own copies) runs eagerly: LOCAL. What the checker cannot see into is ATOM with an
# opcode other than atom/red: it touches everything.
_KINDS: dict[Kind, int] = {
    Kind.COPY_COMMIT: LOCAL, Kind.EXIT: EXIT, Kind.CALL: ATOM, Kind.OPAQUE: ATOM, Kind.LOAD: LOAD,
    Kind.STORE: STORE, Kind.ATOMIC: ATOM, Kind.MBARRIER: MB, Kind.COLLECTIVE: WARP, Kind.WARP_READ: WARP_READ,
    Kind.COPY_ARRIVE: CP_MB, Kind.COPY_WAIT: CP_WAIT, Kind.MMA: MMA,
}
_COPIES = {CopyKind.CP_ASYNC: CP_ASYNC, CopyKind.BULK: BULK, CopyKind.BULK_STORE: BULK_STORE,
           CopyKind.STORE_ASYNC: BULK, CopyKind.TENSOR: BULK, CopyKind.TENSOR_STORE: BULK_STORE,
           CopyKind.LAUNCH_CONTROL: BULK}
# The warp-level matrix loads and stores, by opcode: whether it writes shared memory.
_MATRIX = {"ldmatrix": False, "stmatrix": True}
_ROWS = {".x1": 1, ".x2": 2, ".x4": 4}  # ldmatrix/stmatrix `.num`: matrices of 8 rows each
# Spaces of address operands as the footprints know them (a .local address is looked up as generic).
_SPACE = {Space.CTA: "cta", Space.CLUSTER: "cluster", Space.GLOBAL: "global", Space.PARAM: "param",
          Space.LOCAL: "generic", Space.GENERIC: "generic"}


@dataclass(frozen=True)
class Addr:
    """An address operand: `base` register slot (None for a constant) plus `offset`."""

    base: int | None
    offset: int
    space: str   # "cta", "cluster", "global", "generic"
    mask: int = (1 << 64) - 1  # base + offset wraps here, as the compiled code's (sim.address.address_mask)


@dataclass
class Ins:
    """One instruction as the checker sees it."""

    pc: int
    kind: int
    op: str                      # e.g. "mbarrier.try_wait", "ld", "bar.warp.sync"
    line: int
    guard: tuple[int, bool] | None = None          # (slot, negated)
    target: int | None = None                      # branch target pc
    defs: frozenset[int] = frozenset()
    addr: Addr | None = None                       # the memory or mbarrier operand
    addr2: Addr | None = None                      # a second one: bulk copy source / cp.async source
    bar: Addr | None = None                        # the mbarrier a bulk copy completes on
    mb_op: str = ""                                # init, inval, arrive, arrive_drop, expect_tx, ...
    mb_plain: bool = False                         # an arrive without .expect_tx and .noComplete
    wait_dst: int | None = None                    # the predicate a wait writes
    wait_arg: tuple[int | None, int] = (None, 0)   # the token or parity operand: (slot, constant)
    wait_parity: bool = False
    counted: bool = False                          # bar.sync/bar.arrive with an explicit thread count
    bar_id: tuple[int | None, int] | None = None   # bar.sync/bar.arrive: the barrier's id (slot, constant)
    bar_count: tuple[int | None, int] | None = None    # and its thread count, when counted
    bar_waits: bool = False                        # bar.sync (it waits), not bar.arrive
    sync_all: str | None = None                    # waits for every thread of its "cta", "warp", "cluster"
    size: int | None = None                        # bytes accessed, when constant
    spin: bool = False                             # a wait whose failure leads straight back to it
    spin_local: bool = False                       # or back to it through local code only (back-off)
    retry_at: int | None = None                    # a first try whose failure goes on to this spin-wait
    spin_load: bool = False                        # a load or atom local code may lead back to (a flag)
    reads: frozenset[int] = frozenset()            # register slots the instruction reads
    pure: bool = False                             # a function of its register operands (Facts.pure)
    mb_expect: bool = False                        # an arrive.expect_tx (it raises the tx-count too)
    count: tuple[int | None, int] | None = (None, 1)   # an arrive's count: (slot, 0) or (None, constant)
    tx_arg: tuple[int | None, int] | None = None       # expect_tx/complete_tx/arrive.expect_tx: its bytes
    size_arg: tuple[int | None, int] | None = None     # a copy's byte count, when not constant: (slot, 0)
    tmap: Addr | None = None                       # a tensor load's tensor map (its box gives the bytes)
    coords: tuple[tuple[int | None, int] | None, ...] | None = None  # a tiled tensor copy's coordinates
    reads_source: bool = True                      # a copy that reads memory (st.async takes a value)
    noinc: bool = False                            # no increment at issue: .noinc, tcgen05.commit
    multicast: bool = False                        # a .multicast::cluster copy
    mask_arg: tuple[int | None, int] | None = None     # its ctaMask: (slot, 0) or (None, constant)
    stores: bool = False                           # MATRIX: stmatrix (it writes the rows), not ldmatrix
    rows: int = 0                                  # MATRIX: the lanes whose addresses are rows (0: unknown)
    lanes_arg: int | None = None                   # a warp collective's membermask register slot
    opcode: str = ""                               # the full opcode with its qualifiers (`setp.eq.s32`)
    callee: str = ""                               # a call's target function ("": indirect, or no call)
    trap: bool = False                             # a call of a builtin that ends the launch (TRAP_CALLS)
    imms: tuple[int | None, ...] = ()              # each operand's integer immediate, None where not one
    mma: MmaReads | None = None                    # wgmma.mma_async: what its engine's reads depend on
    descs: tuple[tuple[int | None, int] | None, tuple[int | None, int] | None] = (None, None)  # A's, B's
    # ld.local/st.local (PTX ISA 5.1.5: the thread's own memory, which no other agent observes): LOCAL
    # steps; `addr` is the offset in the thread's local memory. A store's value operand as (slot,
    # constant) (None: an operand the checker does not take apart); `local_exact`: a scalar access of a
    # .b or .u type, whose bytes are the register's value as it is (no sign extension, no vector).
    local: bool = False
    local_value: tuple[int | None, int] | None = None
    local_exact: bool = False
    # shfl.sync: its mode (".idx", ".up", ".down", ".bfly"), the slot of its value destination (None:
    # `_` or an operand the checker does not take apart) and its a, b, c operands as (slot, constant)
    shfl: tuple[str, int | None, tuple[int | None, int] | None, tuple[int | None, int] | None,
                tuple[int | None, int] | None] | None = None


@dataclass
class Code:
    """The checker's view of one compiled function."""

    fn: CompiledFunction
    ins: list[Ins]
    succ: list[tuple[int, ...]] = field(default_factory=list)
    reach_defs: list[int] = field(default_factory=list)   # a bit mask of slots per pc (`_reach_defs`)
    token_slots: frozenset[int] = frozenset()
    # The instructions on the failure paths of the waits that loop back to themselves through local code
    # whose results may change from one try to the next (retry counters, timer back-off: `_varying`):
    # `explore.values` leaves what they compute unknown.
    backoff: frozenset[int] = frozenset()
    # bar.sync can cut futures short only when every bar instruction without a thread count is a
    # whole-CTA bar.sync; where some have a count, those without one must name immediate ids
    # (`whole_ids`), and the cut holds while no counted arrival can reach one of them (`explore.por`).
    cta_barriers_whole: bool = True
    whole_ids: frozenset[int] | None = None   # None: no counted bar.sync/bar.arrive in the function
    # Per shfl mode, the `a` operand of every shfl.sync of that mode: a lane takes its value from whichever
    # of them the source lane meets (the simulator pairs lanes by mode and mask, not by instruction).
    shfl_sources: dict[str, list[tuple[int | None, int] | None]] = field(default_factory=dict)
    # The functions it calls ("" for an indirect call); `calls`: some call may run PTX (not a built-in of
    # the simulator, `BUILTIN_CALLS`), whose collectives the shfl evaluation cannot see.
    callees: frozenset[str] = frozenset()
    calls: bool = False
    # Every byte count an expect_tx, complete_tx or arrive.expect_tx of the function may use (immediates,
    # and registers whose every write is a mov of one); None when one is not known so.
    tx_amounts: frozenset[int] | None = frozenset()
    live: list[set[int]] = field(default_factory=list)   # registers live at each pc (`live_registers`)
    reads_local: list[bool] = field(default_factory=list)   # a local load is reachable (`local_loads`)
    # Those of them whose values may reach what the futures evaluate (`relevant_registers`).
    relevant: list[set[int]] = field(default_factory=list)

    def fixed(self, pc: int, slot: int) -> bool:
        return not self.reach_defs[pc] >> slot & 1


def _slot_maps(fn: ast.Function) -> Iterator[tuple[ast.Instruction, dict[str, int]]]:
    """Each instruction with the register names in scope, resolved to the compiler's slots."""
    next_slot = len(SPECIAL_CONSTANTS)
    named = named_in(fn)
    scope: list[dict[str, int]] = [{}]
    for p in fn.params:
        if p.space == ".reg":
            scope[0][p.name] = next_slot
            next_slot += 1

    def walk(body: tuple[ast.Statement, ...]) -> Iterator[tuple[ast.Instruction, dict[str, int]]]:
        nonlocal next_slot
        for s in body:
            if isinstance(s, ast.Block):
                scope.append({})
                yield from walk(s.body)
                scope.pop()
            elif isinstance(s, ast.Declaration) and s.space == ".reg" and s.type in TYPES:
                for d in s.names:
                    for name in declared_names(d, named):
                        scope[-1][name] = next_slot
                        next_slot += 1
            elif isinstance(s, ast.Instruction):
                merged: dict[str, int] = {}
                for frame in scope:
                    merged.update(frame)
                yield s, merged

    yield from walk(fn.body or ())


def _names(op: ast.Operand) -> list[str]:
    if isinstance(op, ast.Name):
        return [op.name]
    if isinstance(op, ast.Not):
        return _names(op.operand)
    if isinstance(op, ast.Expr):
        return [n.strip().lstrip("!") for n in op.text.replace("|", " ").split()]
    if isinstance(op, (ast.Vector, ast.ParenList)):
        return [n for item in op.items for n in _names(item)]
    if isinstance(op, ast.Address):
        return ([op.base.name] if op.base else []) + [n for item in op.items for n in _names(item)]
    return []


def _addr(op: ast.Operand, regs: dict[str, int], symbols: dict[str, int], space: Space,
          reg_bits: list[int]) -> Addr | None:
    """The address as the compiled code forms it (`Gen.address`): wrapped at the narrower of the base
    register's and the state space's widths; a shared variable named in a generic instruction stands for
    its generic address."""
    if not isinstance(op, ast.Address) or op.items:
        return None
    view = _SPACE[space]
    if op.base is None:
        mask = address_mask(space)
        return Addr(None, op.offset & mask, view, mask)
    if op.base.name in regs:
        slot = regs[op.base.name]
        return Addr(slot, op.offset, view, address_mask(space, reg_bits[slot]))
    if op.base.name in symbols:
        mask = address_mask(space)
        window = SHARED_GENERIC if space == Space.GENERIC else 0
        return Addr(None, (window + symbols[op.base.name] + op.offset) & mask, view, mask)
    return None


def _access(s: ast.Instruction, a: Access | None, regs: dict[str, int], symbols: dict[str, int],
            reg_bits: list[int]) -> Addr | None:
    if a is None or a.operand >= len(s.operands):
        return None
    return _addr(s.operands[a.operand], regs, symbols, a.space, reg_bits)


def _imm(s: ast.Instruction, index: int | None) -> int | None:
    op = s.operands[index] if index is not None and index < len(s.operands) else None
    return op.value if isinstance(op, ast.Imm) else None


def _value(s: ast.Instruction, index: int | None, regs: dict[str, int],
           absent: tuple[int | None, int] | None) -> tuple[int | None, int] | None:
    """A value operand as (register slot, 0) or (None, constant); `absent` when the instruction has no
    such operand; None when it is neither (an expression the checker does not evaluate)."""
    if index is None or index >= len(s.operands):
        return absent
    op = s.operands[index]
    if isinstance(op, ast.Vector) and len(op.items) == 1:  # ptxas takes `{%r1}` for an arrive's count
        op = op.items[0]
    return _operand(op, regs)


def _operand(op: ast.Operand, regs: dict[str, int]) -> tuple[int | None, int] | None:
    """A value operand as (register slot, 0) or (None, constant); None for anything else."""
    if isinstance(op, ast.Imm):
        return None, op.value
    if isinstance(op, ast.Name) and op.name in regs:
        return regs[op.name], 0
    return None


def _callee(s: ast.Instruction) -> str:
    """A call's target function ("" when it is not named: an indirect call)."""
    ops = [o for o in s.operands if not isinstance(o, ast.ParenList)]
    return ops[0].name if ops and isinstance(ops[0], ast.Name) else ""


def _shfl(s: ast.Instruction, regs: dict[str, int]) -> tuple[
        str, int | None, tuple[int | None, int] | None, tuple[int | None, int] | None,
        tuple[int | None, int] | None]:
    """A shfl.sync's mode, value destination slot and a, b, c operands (`Ins.shfl`)."""
    modes = [q for q in s.qualifiers if q in (".up", ".down", ".bfly", ".idx")]
    dst = s.operands[0]
    name = dst.text.split("|")[0].strip() if isinstance(dst, ast.Expr) else \
        dst.name if isinstance(dst, ast.Name) else None
    return (modes[0] if len(modes) == 1 else "", regs.get(name) if name is not None else None,
            _value(s, 1, regs, None), _value(s, 2, regs, None), _value(s, 3, regs, None))


def _classify(i: int, s: ast.Instruction, regs: dict[str, int], symbols: dict[str, int],
              reg_bits: list[int], frame_base: int | None = None) -> Ins:
    """The checker's view of one instruction, from its facts in the registry. `reg_bits`: the width of
    each register slot (addresses wrap at it); `frame_base`: the local address of the frame variable a
    load's or store's address names (`CompiledFunction.frame_bases`)."""
    f = facts_of(s)
    guard = None
    if s.guard is not None and s.guard.predicate in regs:
        guard = (regs[s.guard.predicate], s.guard.negated)
    defs = frozenset(regs[n] for n in _names(s.operands[0]) if n in regs) if f.writes and s.operands \
        else frozenset()
    reads = frozenset(regs[n] for o in s.operands[(1 if f.writes else 0):] for n in _names(o) if n in regs)
    if guard is not None:
        reads |= {guard[0]}
    kind = BRANCH if f.kind == Kind.BRANCH else LOCAL if f.private else _KINDS.get(f.kind, ATOM)
    x = Ins(i, kind, f.name, s.pos.line, guard=guard, defs=defs, reads=reads, pure=f.pure, opcode=s.text,
            imms=tuple(o.value if isinstance(o, ast.Imm) else None for o in s.operands))
    if f.kind == Kind.BRANCH:
        x.target = -1  # resolved by the caller from the label
    elif f.kind == Kind.CALL:
        x.callee = _callee(s)
    elif f.kind in (Kind.LOAD, Kind.STORE, Kind.ATOMIC):
        assert f.access is not None
        x.size = f.access.size
        x.addr = _access(s, f.access, regs, symbols, reg_bits)
        # The thread's own local memory, which no other agent observes (PTX ISA 5.1.5): ld.local/st.local,
        # and ld.param/st.param of a variable of the frame (a call's argument or result, a .func's own
        # parameter: the simulator keeps the frame in local memory, `sim.frames`; PTX ISA 5.1.6.2 makes
        # device function parameters the thread's own).
        frame = frame_base is not None and f.access.space == Space.PARAM
        if (f.access.space == Space.LOCAL or frame) and f.kind != Kind.ATOMIC:
            x.kind, x.local = LOCAL, True
            op = s.operands[f.access.operand] if f.access.operand < len(s.operands) else None
            if frame_base is not None and isinstance(op, ast.Address) and not op.items:
                mask = address_mask(Space.LOCAL)
                x.addr = Addr(None, (frame_base + op.offset) & mask, "local", mask)
            types = [q for q in s.qualifiers if q in TYPES]
            x.local_exact = len(types) == 1 and types[0][1] in "bu" and \
                not any(q in (".v2", ".v4") for q in s.qualifiers)
            if f.kind == Kind.STORE and x.local_exact:
                x.local_value = _value(s, 1, regs, None)
        op = s.operands[f.access.operand] if f.access.operand < len(s.operands) else None
        if x.addr is None and isinstance(op, ast.Address) and op.items:
            # [tensorMap, {coordinates}]: the load reads the map (cp.async.bulk.prefetch.tensor)
            x.addr = _addr(ast.Address(op.base, op.offset, op.pos), regs, symbols, f.access.space, reg_bits)
    elif f.mbarrier is not None:
        mb = f.mbarrier
        x.mb_op, x.mb_plain, x.mb_expect = mb.op, mb.plain, mb.expect_tx
        if mb.op in ("arrive", "arrive_drop"):  # .expect_tx arrives with count 1: its operand is bytes
            x.count = (None, 1) if mb.expect_tx else _value(s, mb.count, regs, (None, 1))
        if mb.expect_tx or mb.op in ("expect_tx", "complete_tx"):
            x.tx_arg = _value(s, mb.count, regs, None)
        x.addr = _access(s, mb.address, regs, symbols, reg_bits)
        if mb.result is not None:
            dst = s.operands[mb.result]
            if isinstance(dst, ast.Name) and dst.name in regs:
                x.wait_dst = regs[dst.name]
        if mb.phase is not None:
            x.wait_parity = mb.parity
            arg = s.operands[mb.phase] if mb.phase < len(s.operands) else None
            if isinstance(arg, ast.Name) and arg.name in regs:
                x.wait_arg = (regs[arg.name], 0)
            elif isinstance(arg, ast.Imm):
                x.wait_arg = (None, arg.value)
            elif x.kind == MB:
                x.kind = ATOM  # an operand form the checker cannot evaluate: touches everything
    elif f.sync is not None:
        x.kind = {"cta": BAR, "cluster": CLUSTER}.get(f.sync.scope, WARP)
        x.counted = f.sync.counted
        x.sync_all = f.sync.scope if f.sync.whole else None
        if x.sync_all is None and f.sync.lanes is not None:  # a register mask: all lanes where it is ~0
            found = _value(s, f.sync.lanes, regs, None)
            x.lanes_arg = found[0] if found is not None else None
        if s.opcode == "shfl" and len(s.operands) == 5:
            x.shfl = _shfl(s, regs)
        if x.kind == BAR:
            x.bar_id = _value(s, 0, regs, None)
            x.bar_count = _value(s, 1, regs, None) if f.sync.counted else None
            x.bar_waits = f.sync.waits
    elif f.kind == Kind.MMA:
        x.sync_all = "warp"  # wgmma.mma_async and wait_group: every lane of the warp meets there
        x.mma = mma_reads(s) if f.name != "wgmma.wait_group" else None
        if x.mma is not None:  # its descriptors: the shared memory its engine will read
            x.descs = (_value(s, x.mma.desc_a, regs, None), _value(s, x.mma.desc_b, regs, None))
    elif f.kind == Kind.OPAQUE and f.name in _MATRIX:
        # ldmatrix/stmatrix (sim.isa.matrix): `.sync.aligned` warp collectives of every lane of the warp
        # at one instruction, whose last arrival reads (writes) the rows the lanes' addresses name, in the
        # CTA's own shared memory (a generic address outside its window faults): no mbarrier, no copy.
        x.kind, x.sync_all, x.stores = MATRIX, "warp", _MATRIX[f.name]
        # Its address operand (each lane's row address) and how many lanes give rows (8 per matrix).
        q = s.qualifiers
        space = Space.CTA if any(w.startswith(".shared") for w in q) else Space.GENERIC
        if len(s.operands) == 2:
            x.addr = _addr(s.operands[0 if x.stores else 1], regs, symbols, space, reg_bits)
        x.rows = 8 * next((n for w, n in _ROWS.items() if w in q), 0)
    elif f.copy is not None:
        c = f.copy
        if f.kind == Kind.COPY_ARRIVE:
            x.bar = x.addr = _access(s, c.dst, regs, symbols, reg_bits)
            x.noinc = c.noinc
            x.multicast = c.multicast  # tcgen05.commit's: an arrive-on in every CTA of its ctaMask
            if c.mask is not None:
                x.mask_arg = _value(s, c.mask, regs, None)
            return x
        x.kind = _COPIES[c.kind]
        x.addr = _access(s, c.dst, regs, symbols, reg_bits)
        x.addr2 = _access(s, c.src, regs, symbols, reg_bits)
        x.reads_source = c.src is not None
        x.bar = _access(s, c.barrier, regs, symbols, reg_bits)
        # A multicast writes, and completes tx, at these offsets in every CTA its mask names (the
        # footprints take every CTA of the cluster when the mask is not known).
        x.multicast = c.multicast
        if c.mask is not None:
            x.mask_arg = _value(s, c.mask, regs, None)
        x.size = c.dst.size if c.size is None else _imm(s, c.size)
        if x.size is None:
            x.size_arg = _value(s, c.size, regs, None)
        # A tensor copy's [tensorMap, {coordinates}] operand: the source of a load, the destination of a
        # store (or reduction): the map's address.
        tensor = c.src if c.kind == CopyKind.TENSOR else c.dst if c.kind == CopyKind.TENSOR_STORE else None
        if tensor is not None and tensor.operand < len(s.operands):
            op = s.operands[tensor.operand]
            if isinstance(op, ast.Address):
                x.tmap = _addr(ast.Address(op.base, op.offset, op.pos), regs, symbols, tensor.space, reg_bits)
                if ".im2col" not in s.opcode + "".join(s.qualifiers) and len(op.items) == 1 \
                        and isinstance(op.items[0], ast.Vector):
                    x.coords = tuple(_operand(c, regs) for c in op.items[0].items)
    return x


def _tx_facts(s: ast.Instruction, regs: dict[str, int], movs: dict[int, set[int | None]],
              amounts: list[tuple[int | None, int] | None]) -> None:
    """Collect what `Code.tx_amounts` needs from one instruction: the immediates each register is
    written, and the byte-count operand of an instruction that moves a tx-count (9.7.13.15.11-.13)."""
    f = facts_of(s)
    if f.writes and s.operands:
        imm = s.operands[1] if s.opcode == "mov" and len(s.operands) == 2 else None
        for n in _names(s.operands[0]):
            if n in regs:
                movs.setdefault(regs[n], set()).add(imm.value if isinstance(imm, ast.Imm) else None)
    mb = f.mbarrier
    if mb is not None and (mb.op in ("expect_tx", "complete_tx") or mb.expect_tx):
        amounts.append(_value(s, mb.count, regs, None))


def _tx_amounts(movs: dict[int, set[int | None]],
                amounts: list[tuple[int | None, int] | None]) -> frozenset[int] | None:
    out: set[int | None] = set()
    for a in amounts:
        if a is None:
            return None
        out |= {a[1]} if a[0] is None else movs.get(a[0], {None})
    return None if None in out else frozenset(v for v in out if v is not None)


def analyse(fn: ast.Function, compiled: CompiledFunction, shared_symbols: dict[str, int]) -> Code:
    """Build the checker's view of a kernel: instructions, control flow, reachable register writes."""
    ins: list[Ins] = []
    reg_bits = [ty.bits for ty in compiled.reg_types]
    owned: set[int] = set()  # registers asynchronous operations own (wgmma.mma_async's accumulators)
    movs: dict[int, set[int | None]] = {}   # register slot -> the immediates written to it (None: other)
    amounts: list[tuple[int | None, int] | None] = []
    for i, (s, regs) in enumerate(_slot_maps(fn)):
        _tx_facts(s, regs, movs, amounts)
        for k in facts_of(s).async_registers:
            owned.update(regs[n] for n in _names(s.operands[k]) if n in regs)
        if i in compiled.unsupported:
            # Its step stops the run: nothing to analyse (its operands may not even be complete), and
            # as a step that touches everything no reduction moves anything past it.
            ins.append(Ins(i, ATOM, s.opcode, s.pos.line))
            continue
        x = _classify(i, s, regs, shared_symbols, reg_bits, compiled.frame_bases.get(i))
        if x.kind == BRANCH:
            target = s.operands[0]
            x.target = compiled.targets.get(i, -1) if isinstance(target, ast.Name) else -1
        ins.append(x)
    for x in ins:
        if x.op == "wgmma.wait_group":
            x.defs = frozenset(owned)  # it writes the accumulators of the operations it retires
    n = len(ins)
    if n + 1 != len(compiled.code):
        raise RuntimeError(f"the checker's view of {fn.name} has {n} instructions, the compiled code "
                           f"{len(compiled.code) - 1}: the two front ends disagree")
    ins.append(Ins(n, EXIT, "ret", fn.pos.line))  # the implicit return at the end of the body
    succ: list[tuple[int, ...]] = []
    for x in ins:
        nxt: list[int] = []
        if x.kind == BRANCH:
            nxt.append(x.target if x.target is not None and x.target >= 0 else x.pc + 1)
            if x.guard is not None:
                nxt.append(x.pc + 1)
        elif x.kind == EXIT:
            if x.guard is not None:
                nxt.append(x.pc + 1)
        else:
            nxt.append(x.pc + 1)
        succ.append(tuple(p for p in nxt if p <= n))
    code = Code(compiled, ins, succ)
    code.reach_defs = _reach_defs(code)
    pulse()
    code.token_slots = frozenset(s for x in ins if x.mb_op in ("arrive", "arrive_drop") for s in x.defs)
    code.tx_amounts = _tx_amounts(movs, amounts)
    for x in ins:
        if x.shfl is not None:
            code.shfl_sources.setdefault(x.shfl[0], []).append(x.shfl[2])
    code.callees = frozenset(_callee(s) for s, _ in _slot_maps(fn) if s.opcode == "call")
    code.calls = not code.callees <= BUILTIN_CALLS
    code.live = live_registers(code)
    pulse()
    plain = [x for x in ins if x.kind == BAR and not x.counted]
    code.cta_barriers_whole = all(x.sync_all == "cta" for x in plain)
    if any(x.kind == BAR and x.counted for x in ins):
        ids = [None if x.bar_id is None else x.bar_id[1] if x.bar_id[0] is None else
               _constant(code, x.bar_id[0]) for x in plain]
        code.cta_barriers_whole = code.cta_barriers_whole and None not in ids
        code.whole_ids = frozenset(i for i in ids if i is not None)
    code.relevant = relevant_registers(code)
    code.reads_local = local_loads(code)
    for x in ins:
        if x.kind == MB and x.mb_op in ("test_wait", "try_wait"):
            x.spin = _is_spin(code, x)
            back = _loops_locally(code, x)
            x.spin_local = x.spin or back is not None
            if back is not None:
                code.backoff |= back
    code.backoff = _varying(code, code.backoff)
    for x in ins:
        if x.kind == MB and x.mb_op in ("test_wait", "try_wait") and not x.spin_local:
            x.retry_at = _first_try(code, x)
            x.spin_local = x.retry_at is not None
        elif x.kind == LOAD and not x.local or x.kind == ATOM and x.op == "atom":
            x.spin_load = _returns_locally(code, x.pc)
    return code


def _returns_locally(code: Code, pc: int) -> bool:
    """Whether some path from the instruction at `pc` comes back to it through local instructions and
    branches only (either way at every branch): the shape of a spin on a flag in memory, `ld` then
    `setp` and a branch back, or a lock's `atom.cas` (`explore.spin.Spins.flag`, which decides it for the
    value read)."""
    seen: set[int] = set()
    todo = list(code.succ[pc])
    while todo:
        n = todo.pop()
        if n == pc:
            return True
        if n in seen or n >= len(code.ins) or code.ins[n].kind not in (LOCAL, BRANCH):
            continue
        seen.add(n)
        todo.extend(code.succ[n])
    return False


def _reach_defs(code: Code) -> list[int]:
    """For each pc, the register slots written by some instruction reachable from it (itself included),
    as a bit mask (bit s: slot s). A kernel of 3,000 instructions and as many registers, most of them
    reachable from most pcs, took 362 MB as a frozenset per pc (FlashAttention-3), 2 MB as masks."""
    masks = []
    for x in code.ins:
        m = 0
        for d in x.defs:
            m |= 1 << d
        masks.append(m)
    return backward_union(code, masks)


def backward_union(code: Code, masks: list[int]) -> list[int]:
    """The least solution of X[pc] = masks[pc] | X[s] for every successor s of pc, bit masks (`masks` is
    updated in place and returned): what some path from pc meets."""
    # Strongly connected components would be exact and linear; a fixpoint is simple and fast enough.
    changed = True
    while changed:
        pulse()  # a sweep over a large kernel takes a tenth of a second
        changed = False
        for pc in range(len(code.ins) - 1, -1, -1):
            cur = new = masks[pc]
            for s in code.succ[pc]:
                new |= masks[s]
            if new != cur:
                masks[pc] = new
                changed = True
    return masks


def _is_spin(code: Code, w: Ins) -> bool:
    """Does a False result of wait `w` lead back to `w` through local instructions only, whatever the
    other registers hold? Tracks only values derived from the wait's result (selp/setp/not/mov on it)."""
    if w.wait_dst is None:
        return False
    # Abstract values: ("res", negated) for a predicate equal to the result, ("int", a, b) for an
    # integer that is a when the result is True and b when False.
    env: dict[int, tuple[object, ...]] = {w.wait_dst: ("res", False)}
    result = False  # we follow the failure path
    pc = w.pc + 1
    seen = 0
    while seen < 64:
        seen += 1
        if pc == w.pc:
            return True
        x = code.ins[pc]
        if x.kind not in (LOCAL, BRANCH):
            return False
        decided = guard_value(x, env, result)
        if x.kind == BRANCH:
            if x.guard is None or decided is True:
                pc = x.target if x.target is not None and x.target >= 0 else pc + 1
                continue
            if decided is False:
                pc += 1
                continue
            return False
        if decided is None and x.guard is not None:
            return False
        if decided is not False:
            abstract_step(code, x, env, result)
        pc += 1
    return False


def _loops_locally(code: Code, w: Ins) -> frozenset[int] | None:
    """The instructions of the paths from a False result of wait `w`, when every one of them stays in
    local instructions until it comes back to `w` (else None). Branches on registers not derived from the
    result (retry counters, `%globaltimer` back-off, libcu++'s `barrier::wait_parity`) go both ways. A
    thread there can do nothing visible before the wait returns True (a local cycle that never returns
    to it does nothing visible either)."""
    if w.wait_dst is None:
        return None
    found = _failure_paths(code, w)
    return found[2] if found is not None and found[0] <= {w.pc} else None


def _varying(code: Code, region: frozenset[int]) -> frozenset[int]:
    """The instructions of the waits' failure paths (`region`) whose results may differ from one try to
    the next: all but the pure ones (`Ins.pure`, no clock read) whose every read register is written in
    the region by no instruction, or only by such instructions (a least fixpoint: a retry counter, which
    reads what it wrote on the last try, stays varying). nvcc may compute a wait's address and parity
    after the loop head the failure path branches back to (a 16-bit `k % 3` of a compile-time trip count:
    `and.b16`, `mul.wide.u16` and `add` between the label and the `try_wait`); those give the same value
    on every try, so `explore.values` may evaluate them without a node per try."""
    written: dict[int, list[int]] = {}
    for pc in region:
        for d in code.ins[pc].defs:
            written.setdefault(d, []).append(pc)
    same: set[int] = set()
    grew = True
    while grew:
        grew = False
        for pc in region:
            x = code.ins[pc]
            if pc in same or not x.pure or any(n in code.fn.sites[pc].text for n in SPECIAL_DYNAMIC):
                continue
            if all(p in same for r in x.reads for p in written.get(r, ())):
                same.add(pc)
                grew = True
    return region - same


def _first_try(code: Code, w: Ins) -> int | None:
    """The spin-wait a first try `w` hands over to, when it is one: every path from a False result of `w`
    reaches, through local instructions, one spin-wait (`Ins.spin_local`) on the same operands (address
    and token or parity, registers none of those paths writes), and after a success both go on, through
    local instructions, to one instruction where nothing either way wrote is live. Then a thread blocked
    at `w` until it would succeed (`explore.spin`) does what it does when it fails there first and
    succeeds at that spin-wait: libcu++'s `barrier::wait` tries once before its back-off loop."""
    if w.wait_dst is None or w.addr is None:
        return None
    found = _failure_paths(code, w)
    if found is None or len(found[0]) != 1:
        return None
    target, written = next(iter(found[0])), found[1]
    t = code.ins[target]
    if (target == w.pc or not t.spin_local or t.addr != w.addr or t.wait_arg != w.wait_arg
            or t.wait_parity != w.wait_parity or t.guard is not None):
        return None
    if {r for r in (w.addr.base, w.wait_arg[0]) if r is not None} & written:
        return None
    loop = _failure_paths(code, t)
    mine, theirs = _success_writes(code, w), _success_writes(code, t)
    if loop is None or loop[0] != {target} or mine is None or theirs is None:
        return None
    # Where the two success paths join (the first instruction of w's on t's), and what each wrote before.
    on_theirs = [pc for pc, _ in theirs]
    join = next((k for k, (pc, _) in enumerate(mine) if pc in on_theirs), None)
    if join is None:
        return None
    here = mine[join][0]
    # Local memory is not compared: a store of it on either way before the join, on the failure path or
    # in the spin's own loop, and the two ways may differ there.
    ways = found[2] | loop[2] | {pc for pc, _ in mine[:join]} | set(on_theirs[:on_theirs.index(here)])
    if any(code.ins[pc].local and not code.ins[pc].defs for pc in ways):
        return None
    before = {d for _, defs in mine[:join] for d in defs}
    before |= {d for _, defs in theirs[:on_theirs.index(here)] for d in defs}
    if (written | loop[1] | before | {w.wait_dst, t.wait_dst}) & code.live[here]:
        return None
    return target


def _failure_paths(code: Code, w: Ins, limit: int = 512
                   ) -> tuple[set[int], set[int], frozenset[int]] | None:
    """The waits every path from a False result of wait `w` reaches through local instructions (`w`
    itself for a spin), the registers written on the way (its result among them) and the instructions
    on the way; None when a path meets anything else."""
    assert w.wait_dst is not None
    todo: list[tuple[int, dict[int, tuple[object, ...]]]] = [(w.pc + 1, {w.wait_dst: ("res", False)})]
    seen: set[tuple[int, tuple[tuple[int, tuple[object, ...]], ...]]] = set()
    written: set[int] = {w.wait_dst}
    waits: set[int] = set()
    while todo:
        pc, env = todo.pop()
        key = (pc, tuple(sorted(env.items())))
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > limit or pc >= len(code.ins):
            return None
        x = code.ins[pc]
        if x.kind == MB and x.mb_op in ("test_wait", "try_wait"):
            waits.add(pc)
            continue
        if x.kind not in (LOCAL, BRANCH):
            return None
        decided = guard_value(x, env, False)
        if x.kind == BRANCH:
            taken = x.target if x.target is not None and x.target >= 0 else None
            if taken is None:
                return None
            if x.guard is None or decided is True:
                todo.append((taken, env))
            elif decided is False:
                todo.append((pc + 1, env))
            else:
                todo += [(taken, env), (pc + 1, env)]
            continue
        if decided is not False:
            written |= x.defs
        env = dict(env)
        if decided is None and x.guard is not None:
            for d in x.defs:
                env.pop(d, None)
        elif decided is not False:
            abstract_step(code, x, env, False)
        todo.append((pc + 1, env))
    return waits, written, frozenset(pc for pc, _ in seen if pc not in waits)


def _success_path(code: Code, w: Ins) -> tuple[list[tuple[int, bool | None]], int, bool]:
    """The success path of wait `w` while its instructions are local and the result decides its branches:
    each instruction run with whether its guard holds (None: unknown), the pc where it stops, and
    whether it stopped there by leaving local instructions (not at the end of the code or after 64)."""
    env: dict[int, tuple[object, ...]] = {w.wait_dst: ("res", False)} if w.wait_dst is not None else {}
    out: list[tuple[int, bool | None]] = []
    pc = w.pc + 1
    for _ in range(64):
        if pc >= len(code.ins):
            return out, pc, False
        x = code.ins[pc]
        decided = guard_value(x, env, True)
        if x.kind not in (LOCAL, BRANCH) or (x.kind == BRANCH and x.guard is not None and decided is None):
            return out, pc, True
        out.append((pc, decided))
        if x.kind == BRANCH:
            if x.guard is None or decided is True:
                pc = x.target if x.target is not None and x.target >= 0 else pc + 1
            else:
                pc += 1
            continue
        if decided is not False:
            env = dict(env)
            if decided is None:
                for d in x.defs:
                    env.pop(d, None)
            else:
                abstract_step(code, x, env, True)
        pc += 1
    return out, pc, False


def _success_writes(code: Code, w: Ins) -> list[tuple[int, frozenset[int]]] | None:
    """`_success_path` as the pcs it passes, each with what it may write, its stop last (None: it did not
    leave local instructions)."""
    path, end, left = _success_path(code, w)
    if not left:
        return None
    writes = [(pc, code.ins[pc].defs if d is not False else frozenset()) for pc, d in path]
    return writes + [(end, frozenset())]


def live_registers(code: Code) -> list[set[int]]:
    """For each pc, the registers some path from it may read before writing them (guards, addresses
    and operands; a guarded write may not happen, so it does not end a register's life)."""
    n = len(code.ins)
    live: list[set[int]] = [set(x.reads) for x in code.ins]
    changed = True
    while changed:
        changed = False
        for pc in range(n - 1, -1, -1):
            x = code.ins[pc]
            cur = live[pc]
            before = len(cur)
            for s in code.succ[pc]:
                cur |= live[s] if x.guard is not None else live[s] - x.defs
            if len(cur) != before:
                changed = True
    return live


def _constant(code: Code, slot: int) -> int | None:
    """The one value register `slot` holds wherever it is read, when every write of it is an unguarded
    `mov` of one immediate and no path from the function's entry reads it before such a write (inline
    asm's `mov.u32 %r501, 15; bar.sync %r501;`); None otherwise."""
    if slot in code.live[0]:
        return None
    found = {x.imms[1] if x.op == "mov" and x.guard is None and len(x.imms) == 2 else None
             for x in code.ins if slot in x.defs}
    return found.pop() if len(found) == 1 and None not in found else None


def operand_slots(x: Ins) -> set[int]:
    """The registers of x whose values the futures read (`explore.footprints`, `explore.frozen`,
    `explore.tally`, `explore.quiet`, `explore.values`): its guard, addresses (a tensor map's too), wait
    operand, counts, byte counts, ctaMask, membermask, a tensor copy's coordinates, shfl operands and wgmma
    descriptors. Data operands (stored values, matrix fragments, accumulators) are none of these."""
    out: set[int] = set()
    if x.guard is not None:
        out.add(x.guard[0])
    for a in (x.addr, x.addr2, x.bar, x.tmap):
        if a is not None and a.base is not None:
            out.add(a.base)
    for o in (x.wait_arg, x.count, x.bar_id, x.bar_count, x.size_arg, x.mask_arg, x.tx_arg,
              *(x.coords or ())):
        if o is not None and o[0] is not None:
            out.add(o[0])
    if x.lanes_arg is not None:
        out.add(x.lanes_arg)
    for d in x.descs:  # a wgmma's descriptors name the shared memory it reads
        if d is not None and d[0] is not None:
            out.add(d[0])
    if x.shfl is not None:
        out.update(o[0] for o in x.shfl[2:] if o is not None and o[0] is not None)
    return out


def relevant_registers(code: Code) -> list[set[int]]:
    """For each pc, the live registers (`live_registers`) whose values may reach an operand the futures
    read (`operand_slots`) before they are written: directly, or through instructions whose results reach
    one (all their reads count then). A thread's future depends on nothing else of its register file:
    the other registers hold data (loaded values, fragments, accumulators) that no address, guard,
    parity or count computed on any path from pc reads, so `explore.values` need not carry them."""
    n = len(code.ins)
    uses = [operand_slots(x) for x in code.ins]
    rel: list[set[int]] = [set(u) for u in uses]
    changed = True
    while changed:
        changed = False
        for pc in range(n - 1, -1, -1):
            x = code.ins[pc]
            cur = rel[pc]
            before = len(cur)
            out: set[int] = set()
            for s in code.succ[pc]:
                out |= rel[s]
            if x.defs & out:
                cur |= x.reads
                if x.local:
                    cur.add(_MEMORY)   # a load of local memory: what stores put there counts
            if x.local and not x.defs and _MEMORY in out:
                cur |= x.reads         # a store of local memory a relevant load may read
            cur |= out if x.guard is not None else out - x.defs
            if len(cur) != before:
                changed = True
    for r in rel:
        r.discard(_MEMORY)
    return rel


# `relevant_registers`' pseudo register: the thread's local memory (no instruction kills it).
_MEMORY = -1


def local_loads(code: Code) -> list[bool]:
    """For each pc, whether a load of local memory (`Ins.local`) is reachable from it: the futures carry
    the thread's local memory there (`explore.values`), and their keys hold its bytes."""
    found = backward_union(code, [int(x.local and bool(x.defs)) for x in code.ins])
    return [bool(b) for b in found]


def success_reads(code: Code, w: Ins) -> frozenset[int]:
    """The registers a thread may read after wait `w` returns True before it writes them: along the
    success path while the wait's result decides it, then whatever is live where that path leaves local
    instructions (`live_registers`). A spin-wait's failed tries are not run by the checker
    (`explore.spin`), so what they write must be none of these."""
    path, end, _ = _success_path(code, w)
    reads: set[int] = set()
    done: set[int] = set()
    for pc, decided in path:
        x = code.ins[pc]
        if decided is not False:
            reads |= x.reads - done
        if decided is True and x.kind != BRANCH:
            done |= x.defs
    live = code.live[end] - done if end < len(code.ins) else set()
    return frozenset(reads | live)


def guard_value(x: Ins, env: dict[int, tuple[object, ...]], result: bool) -> bool | None:
    """Whether x's guard holds when the wait's result is `result`, by the result-derived values of `env`
    (`abstract_step`'s); None where it does not follow from them."""
    if x.guard is None:
        return True
    v = env.get(x.guard[0])
    if v is None or v[0] != "res":
        return None
    value = result != v[1]
    return value != x.guard[1]


def abstract_step(code: Code, x: Ins, env: dict[int, tuple[object, ...]], result: bool) -> None:
    """Propagate result-derived values through the few instructions nvcc uses around a wait. Operands
    come from the parsed instruction (a source line may hold several: `{ test_wait ...; selp ...; }`)."""
    for d in x.defs:
        env.pop(d, None)
    derived = [env[r] for r in x.reads if r in env]
    if not derived or len(x.defs) != 1:
        return
    d = next(iter(x.defs))
    v = derived[0]
    imms = x.imms
    if x.op == "selp" and v[0] == "res" and len(imms) >= 4:
        a, b = imms[1], imms[2]
        if a is None or b is None:
            return
        env[d] = ("int", b, a) if v[1] else ("int", a, b)
    elif x.op == "setp" and v[0] == "int" and len(imms) == 3:
        quals = x.opcode.split(".")[1:]
        cmp = "eq" if "eq" in quals else "ne" if "ne" in quals else None
        k = imms[2]
        if cmp is None or k is None:
            return
        t_val, f_val = (v[1] == k, v[2] == k) if cmp == "eq" else (v[1] != k, v[2] != k)
        if t_val != f_val:
            env[d] = ("res", not t_val)
    elif x.op in ("mov", "not") and v[0] == "res" and x.opcode.endswith(".pred"):
        env[d] = ("res", v[1] != (x.op == "not"))


# -- register data flow (for liveness, `explore.liveness`) ------------------------------------------------
# From the registry: a declared instruction reads its operands only and writes its first operand in full
# when its facts say it writes (`Facts.writes`). An opcode the simulator does not execute is assumed to
# read every register and to kill none (the conservative answers).
_IDENT = re.compile(r"[%$_A-Za-z][\w$.]*")


@dataclass(frozen=True)
class RegisterFlow:
    """What one instruction does to the registers: the slots it may read (`uses`, special registers
    included), the slots it surely overwrites when its guard holds (`kills`), and `everything` when what
    it reads cannot be told (then it reads every slot). `clocked`: it reads a clock or timer register,
    whose value is the thread's clock, not a register."""

    uses: frozenset[int]
    kills: frozenset[int]
    everything: bool = False
    clocked: bool = False


def _identifiers(op: ast.Operand) -> list[str]:
    texts = [op.text] if isinstance(op, ast.Expr) else _names(op)
    return [n for text in texts for n in _IDENT.findall(text)]


def _operand_slots(op: ast.Operand, regs: dict[str, int]) -> set[int]:
    """The register slots an operand names, special registers included; a name that looks like a special
    register the compiler keeps in a slot but is not one of them counts as all of them."""
    out: set[int] = set()
    for n in _identifiers(op):
        if n in regs:
            out.add(regs[n])
        elif n in SPECIAL_SLOT:
            out.add(SPECIAL_SLOT[n])
        elif n + ".x" in SPECIAL_SLOT:
            out.update(SPECIAL_SLOT[n + c] for c in (".x", ".y", ".z"))  # %tid and the like
        elif n.startswith("%") and n not in SPECIAL_DYNAMIC:
            out.update(SPECIAL_SLOT.values())
    return out


def register_flow(fn: ast.Function) -> list[RegisterFlow]:
    """Each instruction's register reads and writes, in the order of `analyse`'s `ins`."""
    out: list[RegisterFlow] = []
    for s, regs in _slot_maps(fn):
        op = s.opcode
        writes = facts_of(s).writes
        kills: set[int] = set()
        if writes and s.operands:
            kills = {slot for slot in _operand_slots(s.operands[0], regs) if slot >= len(SPECIAL_CONSTANTS)}
        uses: set[int] = set()
        for o in s.operands[(1 if writes else 0):]:
            uses |= _operand_slots(o, regs)
        if s.guard is not None:
            uses |= _operand_slots(ast.Name(s.guard.predicate, s.guard.pos), regs)
        if op == "call":
            uses.update(SPECIAL_SLOT.values())  # the callee starts with the caller's special registers
        known = op in REGISTRY
        clocked = any(n in SPECIAL_DYNAMIC for o in s.operands for n in _identifiers(o))
        out.append(RegisterFlow(frozenset(uses), frozenset(kills), not known, clocked))
    return out


def shared_symbols(m: Machine) -> dict[str, int]:
    """Shared variable name -> offset, recovered from the CTA's symbol lookup."""
    out: dict[str, int] = {}
    if not m.ctas:
        return out
    cta = m.ctas[0]
    for off in range(cta.size):
        name = cta.symbols(off)
        if "+" not in name and not name.startswith("shared[") and name not in out:
            out[name] = off
    return out


def analyse_module(module: ast.Module, m: Machine) -> dict[str, Code]:
    """Each function of the module the machine runs, as the checker sees it."""
    symbols = shared_symbols(m)
    codes = {f.name: analyse(f, m.functions[f.name], symbols) for f in module.functions
             if f.body is not None and f.name in m.functions}
    for c in codes.values():  # a module's own function of a built-in's name runs its PTX
        c.calls = c.calls or any(name in codes for name in c.callees)
        for x in c.ins:
            x.trap = x.callee in TRAP_CALLS and x.callee not in codes
    return codes
