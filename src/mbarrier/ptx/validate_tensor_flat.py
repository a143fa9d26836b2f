"""ptxas's second reading of a tensor load's `[tensorMap, x]`: the tensor map and `x` as two
operands of their own, matched against the lists of a tensor operand that is no address
(`Instr.unaddressed`, PTX ISA 9.7.9.25.5.2 has neither). Measured with ptxas 13.0 (7.0/sm_80,
7.8/sm_90, 8.0/sm_90a, 8.6/sm_100a, 8.7/sm_120a): where such a list fits, ptxas judges the
operands by it ("Vector operand is not allowed" of the coordinate vector, now in an address slot;
"must be register" of a variable) and no longer judges the mbar or the tensor map as addresses;
the usual list still counts the operands and judges the coordinate vector."""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.ptx.validate_line import Line
from mbarrier.ptx.validate_scope import Scope
from mbarrier.spec.forms import TYPE_COMPATIBLE, Instr, Slot


def flattened(instr: ast.Instruction, t: int) -> tuple[ast.Operand, ...] | None:
    """The operands with `[tensorMap, x]` (operand `t`) written as `tensorMap, x`; None where it
    is no such address of a named tensor map."""
    ops = instr.operands
    head = ops[t] if len(ops) > t else None
    if not isinstance(head, ast.Address) or len(head.items) != 1 or head.base is None or head.offset:
        return None
    return (*ops[:t], head.base, head.items[0], *ops[t + 1:])


def fit(form: Instr, ops: tuple[ast.Operand, ...], words: frozenset[str], scope: Scope
        ) -> tuple[Slot, ...] | None:
    """The first unaddressed list whose modifiers are written and which the flattened operands fit."""
    return next((slots for when, slots in form.unaddressed if when.holds(words, frozenset(), False)
                 and len(slots) == len(ops)
                 and all(_fits(s, op, scope) for s, op in zip(slots, ops, strict=True))), None)


def _fits(slot: Slot, op: ast.Operand, scope: Scope) -> bool:
    """An address slot takes anything (a vector: "Vector operand is not allowed"); another slot a
    register, or a variable, of its type, or an integer immediate (measured: a float register or
    immediate, a 16-bit or 32-bit value for cache-policy, an address, fit no list)."""
    if slot.kind == "addr":
        return True
    if isinstance(op, ast.Imm):
        return slot.kind != "vector"  # (`[16, {...}]` is a syntax error to ptxas)
    sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
    return sym is not None and not sym.special and sym.type in TYPE_COMPATIBLE[slot.type]


def judge(form: Instr, ops: tuple[ast.Operand, ...], slots: tuple[Slot, ...], scope: Scope,
          line: Line) -> None:
    """What ptxas says of the flattened operands (numbered from 0, the destination's)."""
    for k, (slot, op) in enumerate(zip(slots, ops, strict=True)):
        if slot.kind == "addr":
            if isinstance(op, ast.Vector):
                line.add("vector-operand", op.pos, name=form.name)
            continue
        sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
        if sym is not None and sym.space != ".reg":
            line.add("must-be-register", op.pos, index=k, name=form.name)


def unflattened(slots: tuple[Slot, ...], t: int) -> tuple[Slot, ...]:
    """The list's slots for the operands as written (the tensor operand takes the tensor map's), so
    that the later checks judge no address but the destination's."""
    return (*slots[:t + 1], *slots[t + 2:])
