"""Warp-level matrix loads and stores: ldmatrix and stmatrix of 8x8 matrices of 16-bit elements.

PTX ISA, Warp Level Matrix Multiply-Accumulate Instructions: ldmatrix and stmatrix. A warp collective
(`.sync.aligned`: every thread of the warp executes the same instruction; one that has exited, or lanes
at different instructions, is undefined behaviour, a `kernel-fault` here). With `.num` = .x1/.x2/.x4 the
row addresses of matrix k come from threads 8k..8k+7 (row j from thread 8k+j), each the start of a 16-byte
row, 16-byte aligned. Thread n's register k holds row n/4, columns 2(n%4) and 2(n%4)+1 of matrix k (the
lower half the lower column); with `.trans` the matrix is column-major in memory: register k holds
elements (2(n%4), n/4) and (2(n%4)+1, n/4), each read from (written to) its own row address. The memory
accesses happen when the last lane arrives, each made by the thread whose register holds the data (for
the race tracker, a weak access of that thread). Addresses are `.shared::cta`, or generic ones in the
shared window (others are undefined behaviour). The sm_100 shapes (ldmatrix .m16n16 and .m8n16,
stmatrix .m16n8, the .b8 and packed 4/6-bit types), whose layouts the ISA gives only as figures, stop
the run naming the form.
"""

from __future__ import annotations

from typing import cast

from mbarrier.ptx import ast
from mbarrier.sim.address import SHARED_GENERIC, is_shared_generic
from mbarrier.sim.compile import Gen
from mbarrier.sim.errors import KernelFault, MemoryFault
from mbarrier.sim.isa.control import collective
from mbarrier.sim.machine import Machine, Thread
from mbarrier.sim.registry import Facts, Kind, instruction
from mbarrier.sim.types import TYPES

_NUM = {".x1": 1, ".x2": 2, ".x4": 4}
_KNOWN = frozenset({".sync", ".aligned", ".m8n8", ".trans", ".shared", ".shared::cta", ".b16", *_NUM})
ROW_BYTES = 16


def _facts(ins: ast.Instruction) -> Facts:
    # The 32 lanes' row addresses are known only at run time: for the checker, anything.
    return Facts(Kind.OPAQUE, ins.opcode, writes=ins.opcode == "ldmatrix")


def _form(g: Gen, ins: ast.Instruction, regs: ast.Operand) -> tuple[int, bool, bool, list[int]]:
    """(matrices, transposed, generic addressing, register slots) of a supported form."""
    q = ins.qualifiers
    nums = [_NUM[x] for x in q if x in _NUM]
    form = ins.opcode + "".join(q)
    if any(x not in _KNOWN for x in q) or ".m8n8" not in q or ".b16" not in q or len(nums) != 1 \
            or ".sync" not in q or ".aligned" not in q:
        raise g.unsupported(f"{form}: the simulator models .m8n8 .x1/.x2/.x4 {{.trans}} .b16 (the sm_100 "
                            "shapes and types are given by figures only)")
    items = regs.items if isinstance(regs, ast.Vector) else ()
    if len(items) != nums[0]:
        raise g.unsupported(f"{form} takes a vector of {nums[0]} registers")
    slots = []
    for item in items:
        reg = g.lookup(item.name) if isinstance(item, ast.Name) else None
        if reg is None or reg.type.bits != 32:
            raise g.unsupported(f"{form}: each register of the vector is a 32-bit register")
        slots.append(reg.slot)
    generic = not any(x.startswith(".shared") for x in q)
    return nums[0], ".trans" in q, generic, slots


def _element(k: int, n: int, half: int, trans: bool) -> tuple[int, int, int]:
    """(row-address lane, byte offset in the row, bytes) of half `half` (0: low) of register k of lane
    n; `half` -1: the whole register (both halves, contiguous when not transposed)."""
    if not trans:
        return 8 * k + n // 4, 4 * (n % 4) + (0 if half < 0 else 2 * half), 4 if half < 0 else 2
    return 8 * k + 2 * (n % 4) + half, 2 * (n // 4), 2


def _uniform(kind: str, parts: dict[int, tuple[object, object]]) -> dict[int, tuple[Thread, int]]:
    """Each lane's (thread, row address), after the `.aligned` checks."""
    if len(parts) != 32:
        raise KernelFault(f"{kind} with {32 - len(parts)} lane(s) of the warp exited: every thread of the "
                          "warp must execute it (PTX ISA: undefined otherwise)")
    pcs = {cast(tuple[int, int], arg)[0] for _, arg in parts.values()}
    if len(pcs) > 1:
        raise KernelFault(f"the lanes of the warp reached different {kind} instructions: all must execute "
                          "the same one (.aligned)")
    return {lane: (cast(Thread, t), cast(tuple[int, int], arg)[1]) for lane, (t, arg) in parts.items()}


def _row_address(kind: str, addr: int, generic: bool) -> tuple[str, int]:
    if addr % ROW_BYTES:
        raise MemoryFault(f"{kind}: row address {addr:#x} is not 16-byte aligned (a row of 8 16-bit "
                          "elements must be naturally aligned)")
    if not generic:
        return "cta", addr
    if not is_shared_generic(addr):
        raise KernelFault(f"{kind}: generic address {addr:#x} is not in the shared window (PTX ISA: "
                          "undefined)")
    return "cluster", addr - SHARED_GENERIC


def _load(m: Machine, t: Thread, space: str, addr: int, size: int) -> int:
    return m.ld_cta(t, addr, size) if space == "cta" else m.ld_cluster(t, addr, size)


def _store(m: Machine, t: Thread, space: str, addr: int, size: int, value: int) -> None:
    if space == "cta":
        m.st_cta(t, addr, size, value)
    else:
        m.st_cluster(t, addr, size, value)


@instruction("ldmatrix", facts=_facts)
def _ldmatrix(g: Gen, ins: ast.Instruction) -> None:
    """ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 {r...}, [p]."""
    if len(ins.operands) != 2:
        raise g.unsupported("ldmatrix takes {registers}, [address]")
    regs, a = ins.operands
    num, trans, generic, slots = _form(g, ins, regs)
    space = "generic" if generic else "cta"

    def finish(parts: dict[int, tuple[object, object]], m: Machine) -> None:
        lanes = _uniform("ldmatrix", parts)
        rows = {lane: _row_address("ldmatrix", addr, generic) for lane, (_, addr) in lanes.items()
                if lane < 8 * num}  # the other lanes' addresses are not used
        values: dict[int, list[int]] = {}
        for n, (t, _) in lanes.items():
            out = []
            for k in range(num):
                if not trans:
                    src, off, size = _element(k, n, -1, False)
                    sp, base = rows[src]
                    out.append(_load(m, t, sp, base + off, size))
                    continue
                word = 0
                for half in (0, 1):
                    src, off, size = _element(k, n, half, True)
                    sp, base = rows[src]
                    word |= _load(m, t, sp, base + off, size) << (16 * half)
                out.append(word)
            values[n] = out
        for n, (t, _) in lanes.items():  # every read first: a register may also hold an address
            for slot, v in zip(slots, values[n], strict=True):
                t.regs[slot] = v

    collective(g, "ldmatrix", "0xFFFFFFFF", f"({g.index}, {g.address(a, space)})", finish)


@instruction("stmatrix", facts=_facts)
def _stmatrix(g: Gen, ins: ast.Instruction) -> None:
    """stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 [p], {r...}."""
    if len(ins.operands) != 2:
        raise g.unsupported("stmatrix takes [address], {registers}")
    a, regs = ins.operands
    num, trans, generic, _ = _form(g, ins, regs)
    assert isinstance(regs, ast.Vector)
    b32 = TYPES[".b32"]
    data = ", ".join(g.src(x, b32) for x in regs.items)
    space = "generic" if generic else "cta"

    def finish(parts: dict[int, tuple[object, object]], m: Machine) -> None:
        lanes = _uniform("stmatrix", {lane: (t, cast(tuple[int, int, tuple[int, ...]], arg)[:2])
                                       for lane, (t, arg) in parts.items()})
        rows = {lane: _row_address("stmatrix", addr, generic) for lane, (_, addr) in lanes.items()
                if lane < 8 * num}
        for n, (t, _) in lanes.items():
            words = cast(tuple[int, int, tuple[int, ...]], parts[n][1])[2]
            for k in range(num):
                if not trans:
                    dst, off, size = _element(k, n, -1, False)
                    sp, base = rows[dst]
                    _store(m, t, sp, base + off, size, words[k])
                    continue
                for half in (0, 1):
                    dst, off, size = _element(k, n, half, True)
                    sp, base = rows[dst]
                    _store(m, t, sp, base + off, size, (words[k] >> (16 * half)) & 0xFFFF)

    collective(g, "stmatrix", "0xFFFFFFFF", f"({g.index}, {g.address(a, space)}, ({data},))", finish)
