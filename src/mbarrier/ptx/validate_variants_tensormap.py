"""Variants of tensormap.replace (PTX ISA, "tensormap.replace") for the differential test against
ptxas: every field with each type and state space, the words in another order, missing, doubled
and of other instructions, the load modes, every operand shape in every slot of three fields, the
ordinals' and the enumerations' values, operand counts, guards.

Left out (docs/lint.md, Limits): a register, a variable or an address where ptxas wants the ordinal
or an enumeration's immediate, of which ptxas prints an uninitialized value ("value '461705840'
expected to be in range ...") that no model can repeat; a float there (ptxas judges its bits).
"""

from __future__ import annotations

from collections.abc import Iterator

from mbarrier.ptx import ast
from mbarrier.ptx.variant_pools import (
    GUARD_POOL,
    MODIFIER_POOL,
    OPERAND_POOL,
    OTHER_WORDS,
    P0,
    _addr,
    _imm,
    _instr,
    _name,
    _with,
    render_operand,
)

_PATH = ("tensormap", ".replace")
#: The fields by the operands they take (written apart from spec.companions): (type, ordinal?,
#: immediate value?).
_FIELDS: dict[str, tuple[str, bool, bool]] = {
    ".global_address": (".b64", False, False), ".rank": (".b32", False, False),
    ".box_dim": (".b32", True, False), ".global_dim": (".b32", True, False),
    ".global_stride": (".b64", True, False), ".element_stride": (".b32", True, False),
    ".elemtype": (".b32", False, True), ".interleave_layout": (".b32", False, True),
    ".swizzle_mode": (".b32", False, True), ".swizzle_atomicity": (".b32", False, True),
    ".fill_mode": (".b32", False, True),
}


def _ops(field: str, value: int = 1) -> tuple[ast.Operand, ...]:
    ty, ordinal, imm = _FIELDS[field]
    new: ast.Operand = _imm(value) if imm else _name("%rd2" if ty == ".b64" else "%r2")
    return (_addr("%rd1"), *((_imm(1),) if ordinal else ()), new)


def _build(field: str, space: str = ".global", words: tuple[str, ...] | None = None,
           value: int = 1) -> ast.Instruction:
    ty = _FIELDS[field][0]
    return _instr((*_PATH, *(words if words is not None else (".tile", field, space, ".b1024", ty))),
                  _ops(field, value))


def _settled(op: ast.Operand) -> bool:
    """An operand of which ptxas prints no uninitialized value where an immediate goes."""
    return isinstance(op, ast.Imm | ast.Sink)


def variants() -> Iterator[tuple[str, ast.Instruction]]:
    # 1. every field with each type, with no, each and another state space
    for field, (ty, _, _) in _FIELDS.items():
        for space in ("", ".global", ".shared::cta", ".shared", ".shared::cluster", ".local"):
            yield f"field {field}{space}", _build(field, space)
        other = ".b32" if ty == ".b64" else ".b64"
        yield f"field {field} type {other}", _build(field, words=(".tile", field, ".global", ".b1024", other))
        if _FIELDS[field][2]:
            continue  # (a register where the enumeration's immediate goes: module docstring)
        yield f"field {field} type {other} operand", _instr(
            (*_PATH, ".tile", field, ".global", ".b1024", other),
            (*_ops(field)[:-1], _name("%rd2" if other == ".b64" else "%r2")))
    # 2. the words in another order, each missing, doubled; no field with either type
    base = (".tile", ".global_address", ".global", ".b1024", ".b64")
    orders = (base[::-1], (".b1024", ".b64", ".global", ".tile", ".global_address"),
              (".global_address", ".tile", ".b64", ".global", ".b1024"))
    for words in orders:
        yield f"order {''.join(words)}", _build(".global_address", words=words)
    for i, w in enumerate(base):
        rest = base[:i] + base[i + 1:]
        yield f"without {w}", _build(".global_address", words=rest)
        yield f"twice {w}", _build(".global_address", words=(*base[:i + 1], w, *base[i + 1:]))
    for i in range(len(base)):
        for j in range(i + 1, len(base)):
            yield f"without {base[i]}{base[j]}", _build(
                ".global_address", words=tuple(w for k, w in enumerate(base) if k not in (i, j)))
    for ty in (".b32", ".b64", ".b128", ".u32", ".b32.b64", ""):
        for ops in ((_addr("%rd1"), _name("%r2")), (_addr("%rd1"), _imm(1), _imm(1)), (_addr("%rd1"),)):
            yield f"no field {ty} {len(ops)}", _instr((*_PATH, ".tile", ".global", ".b1024", ty), ops)
    for f1, f2 in ((".global_address", ".rank"), (".rank", ".global_address"), (".box_dim", ".elemtype"),
                   (".elemtype", ".box_dim"), (".global_stride", ".global_address")):
        yield f"two fields {f1}{f2}", _instr((*_PATH, ".tile", f1, f2, ".global", ".b1024", _FIELDS[f2][0]),
                                             _ops(f2))
    # 3. the load modes and the words of the pools, early and late
    for mode in (".im2col", ".tile::gather4", ".im2col::w", ".tile::scatter4", ".im2col_no_offs",
                 ".tile.tile", ".im2col.tile", ".tile.im2col"):
        yield f"mode {mode}", _build(".global_address", words=(mode, ".global_address", ".global", ".b1024",
                                                                ".b64"))
    for w in (*MODIFIER_POOL, *OTHER_WORDS, ".b512", ".b2048", ".sync.aligned", ".mode"):
        yield f"insert {w}", _build(".rank", words=(w, ".tile", ".rank", ".global", ".b1024", ".b32"))
        if w in MODIFIER_POOL:
            yield f"insert {w} late", _build(".box_dim",
                                             words=(".tile", ".box_dim", ".global", ".b1024", ".b32", w))
    # 4. operand counts: each field's list shortened and lengthened, the ordinal left out
    for field in _FIELDS:
        full = _build(field)
        yield f"drop last operand {field}", _with(full, full.operands[:-1])
        yield f"extra operand {field}", _with(full, (*full.operands, _imm(1)))
        yield f"extra register {field}", _with(full, (*full.operands, _name("%r3")))
        for space in ("", ".shared::cta", ".local"):
            yield f"drop last operand {field}{space}", _with(_build(field, space), full.operands[:-1])
    # 5. every operand shape in every slot (but the uninitialized values: module docstring)
    # (with no state space, on three fields: the generator of 1,273 variants that also swept .rank,
    # .global_stride and each state space x 47 pairs found the same rules there, docs/lint.md; left
    # out to keep CI short)
    for field, spaces in ((".global_address", ("",)), (".box_dim", ("",)), (".elemtype", ("",))):
        for space in spaces:
            full = _build(field, space)
            immediate = {1} if _FIELDS[field][1] else {1} if _FIELDS[field][2] else set()
            for i in range(len(full.operands)):
                for op in OPERAND_POOL:
                    if (i in immediate and not _settled(op)) or (i and space):
                        continue
                    yield f"operand {i} = {render_operand(op)} {field}{space}", _with(
                        full, (*full.operands[:i], op, *full.operands[i + 1:]))
    # 6. the values: every ordinal, each enumeration's range and the values gated by version
    values = (-1, 0, 1, 2, 3, 4, 5, 12, 13, 15, 16, 4294967297, 4294967295)
    for field, (_, ordinal, imm) in _FIELDS.items():
        if ordinal:
            for v in values[:8]:
                full = _build(field)
                yield f"ordinal {v} {field}", _with(full, (full.operands[0], _imm(v), full.operands[2]))
        elif imm:
            for v in values:
                yield f"value {v} {field}", _build(field, value=v)
    # 7. a guard
    for pred, negated in GUARD_POOL:
        yield f"guard {pred}", _with(_build(".box_dim"), guard=ast.Guard(pred, negated, P0))
