"""wgmma.mma_async (PTX ISA 9.7.15.5.2) as ptxas 13.0 judges it: what the generic validator's tables
cannot say (three instruction types, a shape, operand lists chosen by both). The generic validator
(`ptx.validate`) judges the other modifier words, the guard and the gates; the facts come from
`spec.wgmma` (shapes, types, registers) and `spec.companions` (ptxas's names and lists, measured).

ptxas's order (measured): unknown words and a second shape at once; then the types (a wrong set is
"Unexpected instruction types" and ends the line), the shape (none: "Shape modifier required", which
ends the line), the boolean operations, the operands (a mismatch ends the line), the other words'
legality, the immediates and the gates, named by the kind of the multiplicand type.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mbarrier.ptx import ast
from mbarrier.ptx.validate_line import Line as _Line
from mbarrier.ptx.validate_scope import TYPE_SIZE, Scope
from mbarrier.spec import wgmma
from mbarrier.spec.companions import (
    OTHER_SHAPES,
    WGMMA_A_POLICY,
    WGMMA_KIND_SHAPES,
    WGMMA_KINDS,
    WGMMA_LISTS,
    WGMMA_MIXED,
    WGMMA_MMA,
    WGMMA_SPARSE,
    WGMMA_SPARSE_KIND_SHAPES,
    WGMMA_SPARSE_NAME,
    WGMMA_SPARSE_SELECTOR,
)
from mbarrier.spec.forms import MODIFIERS, RULE_IDS, TYPE_COMPATIBLE, VECTORS, ImmCheck
from mbarrier.spec.modifiers import WORD_MESSAGES

_SHAPE = re.compile(r"\.m\d+n\d+k\d+")
_SHAPES = frozenset().union(*WGMMA_KIND_SHAPES.values(), OTHER_SHAPES)
_OPERATIONS = (".and", ".popc")
#: The sparsity words: `.sp`, and mma.sp's `.sp::ordered_metadata`, which ptxas reads as one here
#: but refuses (measured).
_SPARSITY = (WGMMA_SPARSE, ".sp::ordered_metadata")
_OWN = (".satfinite", *_SPARSITY, *_OPERATIONS)
#: Words of other instructions ptxas takes silently here (measured): the layouts, `.pred`.
_SILENT = tuple(w for w, m in WORD_MESSAGES.items() if m == ("illegal:.alayout or .blayout",)) + (".pred",)

#: The register types of D's elements by .dtype (measured); a scalar of them is "Vector expected".
_D_TYPES: dict[str, tuple[str, ...]] = {
    ".f32": (".f32", ".b32"), ".f16": (".f16x2", ".b32"), ".s32": (".s32", ".b32", ".u32"),
}
#: A in registers (measured): .f16 takes these only; .bf16, .tf32 and the FP8 types take `_LOOSE`
#: too, but say "Unexpected instruction types" of a vector of them ("types" in WGMMA_A_POLICY);
#: the integer and boolean types take `_LOOSE` ("loose").
_A_TYPES: tuple[str, ...] = (".f16x2", ".b32")
_LOOSE: tuple[str, ...] = (*_A_TYPES, ".s32", ".u32", ".f32", ".pred")
_SIZES: dict[str, int] = {".f16x2": 4, ".bf16x2": 4}
#: The kinds of elements ptxas refuses to mix in a vector of a floating-point wgmma.mma_async: a
#: bit type goes with any (None); predicates, immediates and undeclared names count as integers
#: (measured).
_KIND: dict[str, str | None] = {".f32": "f32", ".f16x2": "f16x2", ".b32": None}


def _is_type(word: str) -> bool:
    # (.pred, an instruction type elsewhere, is taken silently here: measured)
    return word != ".pred" and (MODIFIERS.get(word) == "type" or WORD_MESSAGES.get(word) == ("type",))


def split(mods: tuple[str, ...], line: _Line) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words the generic validator judges, and this checker's own (shapes, types, .satfinite,
    the boolean operations), in order. Reports at once an unknown shape and a second one."""
    own = tuple(m for m in mods if _SHAPE.fullmatch(m) or _is_type(m) or m in _OWN or m in VECTORS
                or m in _SILENT)
    shapes = [m for m in own if _SHAPE.fullmatch(m)]
    for m in shapes:
        if m not in _SHAPES:
            line.add("unknown-modifier", mod=m)
    if sum(m in _SHAPES for m in shapes) > 1:
        line.add("shape-multiple")
    if sum(m in _SPARSITY for m in own) > 1:
        line.add("sparsity-multiple")
    return tuple(m for m in mods if m not in own), own


Legality = list[tuple[str, dict[str, object]]]


def finish(instr: ast.Instruction, own: tuple[str, ...], legality: Legality, scope: Scope, line: _Line,
           conclude: Callable[[tuple[str, ...], Legality | None], None]) -> None:
    """The rest of the line, once the generic words were judged (`split`'s `own`): `conclude` has
    the generic validator report the other words' `legality` (None: ptxas judges no words then)
    and the gates, given the facts they depend on (the kind ptxas names, the sparsity words)."""
    types = [m for m in own if _is_type(m)]
    ops = [m for m in own if m in _OPERATIONS]
    if not _types_ok(types) or (ops and types[1] != ".b1"):
        line.add("types", name=WGMMA_MMA)
        return
    dtype, atype, btype = types
    kind = WGMMA_KINDS[atype]
    sparsity = [m for m in own if m in _SPARSITY]  # (the last written is judged)
    sparse = bool(sparsity)
    prefix = WGMMA_SPARSE_NAME if sparse else ""
    named = prefix + (WGMMA_MIXED if atype != btype and kind == "integer types" else kind)  # (ptxas's name)
    name = f"{prefix}{WGMMA_MMA} with {named.removeprefix(prefix)}"
    facts = ("kind:" + named, *("word:" + m for m in sparsity))
    shape = next((m for m in reversed(own) if m in _SHAPES), None)  # (the last written is judged)
    refused = None if shape is None else (
        "shape-illegal" if shape not in (WGMMA_SPARSE_KIND_SHAPES if sparse else WGMMA_KIND_SHAPES)[kind]
        else "shape-types" if _k_of(shape) != (wgmma.SPARSE_K if sparse else wgmma.K)[atype] else None)
    # ptxas matches the operands first (against the lists of either sparsity): a mismatch hides
    # the shape and the words (measured)
    n = _n_of(shape) if shape is not None and refused is None else None
    fit = _match(instr, dtype, atype, n, name, sparse, scope, line)
    if fit == "none":
        line.add("operands", name=WGMMA_MMA)
        return
    if shape is None:
        line.add("shape-required", name=WGMMA_MMA)
    elif refused is not None:
        line.add(refused, mod=shape, name=name)
    if atype == ".b1" and ops != list(_OPERATIONS):  # (.and then .popc, each once: measured)
        line.add("bool-op-count" if len(ops) != 2 else "bool-op-order",
                 name=f"{prefix}{WGMMA_MMA} with {kind}", mod=shape or "")
        if ops[:1] != [".and"]:
            line.add("bool-op-required", name=WGMMA_MMA)
        if ops[:1] == [".popc"]:  # (first, ptxas reads it as a reduction: measured)
            line.add("illegal-reduction", name=WGMMA_MMA + dtype + atype)
    if ".satfinite" in own and atype not in (".s8", ".u8"):
        line.add("illegal-modifier", mod=".satfinite", name=name)
        line.add("illegal-modifier", mod=".satfinite", name=WGMMA_MMA)
    if sparse and (fit == "other" or sparsity[-1] != WGMMA_SPARSE):
        # (the dense operands, or `.sp::ordered_metadata`, mma.sp's: measured)
        line.add("illegal-modifier", mod=sparsity[-1], name=WGMMA_MMA)
    if fit == "other" or shape is None:
        # the operands of the other sparsity: a mismatch named by the kind, unless the shape was
        # refused; ptxas judges the gates only (measured)
        if fit == "other" and shape is not None and refused is None:
            line.add("operands", name=name)
        conclude(facts, None)
        return
    # (ptxas says no "Mismatch between instruction type and comparison qualifier" here, and names
    # the instruction with .dtype.atype in "Illegal reduction operation": measured)
    legality = [(k, {**f, "name": WGMMA_MMA + dtype + atype} if k == "illegal-reduction" else f)
                for k, f in legality if k != "comparison-type"]
    d = instr.operands[0] if instr.operands else None
    for m in own:
        if m in VECTORS and isinstance(d, ast.Vector) and len(d.items) != VECTORS[m]:  # (against D)
            line.add("vector-length", name=WGMMA_MMA)
    conclude(facts, legality)


def _types_ok(types: list[str]) -> bool:
    if len(types) != 3 or types[1] not in wgmma.DTYPES or types[0] not in wgmma.DTYPES[types[1]]:
        return False
    return types[1] == types[2] or any({types[1], types[2]} <= m for m in wgmma.MIXED)


def _n_of(shape: str) -> int:
    return int(shape[shape.index("n") + 1:shape.index("k")])


def _k_of(shape: str) -> int:
    return int(shape[shape.index("k") + 1:])


def _lists(atype: str, sparse: bool) -> list[tuple[str, tuple[ImmCheck, ...]]]:
    """The operand lists after D, A and B: sp-sel first in a sparse one (spec.companions)."""
    if not sparse:
        return list(WGMMA_LISTS[atype])
    if atype not in WGMMA_SPARSE_SELECTOR:
        return []
    return [(a_kind, (WGMMA_SPARSE_SELECTOR[atype], *checks)) for a_kind, checks in WGMMA_LISTS[atype]]


def _match(instr: ast.Instruction, dtype: str, atype: str, n: int | None, name: str, sparse: bool,
           scope: Scope, line: _Line) -> str:
    """Whether an operand list of the types and the sparsity written fits ("ok", reporting the
    errors ptxas goes on after), one of the other sparsity ("other"), or none ("none")."""
    ops = instr.operands
    for a_kind, checks in _lists(atype, sparse):
        if len(ops) != 3 + sparse + len(checks):
            continue
        quiet = _Line(instr, line.path)
        if not _fits(ops, a_kind, checks, dtype, atype, n, name, sparse, scope, quiet):
            continue
        _fits(ops, a_kind, checks, dtype, atype, n, name, sparse, scope, line)
        return "ok"
    for a_kind, checks in _lists(atype, not sparse):
        if len(ops) == 3 + (not sparse) + len(checks) and _fits(
                ops, a_kind, checks, dtype, atype, n, name, not sparse, scope, _Line(instr, line.path)):
            return "other"
    # a mismatch: ptxas still says "Incompatible elements" of a vector it read (measured)
    scratch = _Line(instr, line.path)
    for a_kind, checks in _lists(atype, sparse):
        if len(ops) == 3 + sparse + len(checks):
            _fits(ops, a_kind, checks, dtype, atype, n, name, sparse, scope, scratch)
    if any(d.rule == RULE_IDS["vector-elements"] for d in scratch.out):
        line.add("vector-elements", ops[0].pos)
    return "none"


def _fits(ops: tuple[ast.Operand, ...], a_kind: str, checks: tuple[ImmCheck, ...], dtype: str, atype: str,
          n: int | None, name: str, sparse: bool, scope: Scope, line: _Line) -> bool:
    length = None if n is None else wgmma.registers(dtype, n)  # (no N of a refused shape: no length)
    integer = dtype == ".s32"
    if not _vector_slot(ops[0], 0, length, _D_TYPES[dtype], _D_TYPES[dtype], "", integer, True, name, scope,
                        line):
        return False
    if a_kind == "regs":
        policy = WGMMA_A_POLICY[atype]
        loose = _A_TYPES if policy == "strict" else _LOOSE
        if not _vector_slot(ops[1], 1, wgmma.A_REGISTERS, _A_TYPES, loose, policy, policy == "loose", False,
                            name, scope, line):
            return False
        if isinstance(ops[1], ast.Vector) and len(ops[1].items) == 2:  # (measured: a mismatch too, and on)
            line.add("operands", name=name)
    elif not _descriptor(ops[1], 1, scope, line):
        return False
    if not _descriptor(ops[2], 2, scope, line):
        return False
    if sparse and not _metadata(ops[3], scope, line):
        return False
    first = 3 + sparse  # (sp-sel, an immediate only; then scale-d, an immediate or a predicate)
    for index, (op, check) in enumerate(zip(ops[first:], checks, strict=True), start=first):
        if not _immediate(op, check, index, index == first + sparse, name, scope, line):
            return False
    return True


def _register(op: ast.Operand, scope: Scope) -> str | None:
    """The type of a declared register (not a special one), else None."""
    sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
    return sym.type if sym is not None and sym.space == ".reg" and not sym.special else None


def _vector_slot(op: ast.Operand, index: int, length: int | None, strict: tuple[str, ...],
                 loose: tuple[str, ...], policy: str, integer: bool, dest: bool, name: str, scope: Scope,
                 line: _Line) -> bool:
    """D (`dest`) or A in registers: a vector of `length` registers of `strict` (of `loose`, with
    what `policy` says of them), measured. A scalar is "Vector expected"; an element of another size
    "Incompatible elements", of another type "Vector with elements of different types" (not with
    the integer types)."""
    if not isinstance(op, ast.Vector):
        return _scalar(op, index, loose, integer, dest, name, scope, line)
    types: list[str | None] = []  # (None: an immediate or an undeclared name)
    for item in op.items:
        if isinstance(item, ast.Name) and scope.lookup(item.name) is None and not scope.known(item.name):
            line.add("illegal-expression", item.pos, symbol=item.name)
            types.append(None)
        elif isinstance(item, ast.Imm | ast.FloatImm):
            if dest:
                line.add("result-register", item.pos, name=WGMMA_MMA)
            types.append(None)
        else:
            sym = scope.lookup(item.name) if isinstance(item, ast.Name) else None
            types.append(sym.type if sym is not None else None)
    sized = [t for t in types if t is not None and t != ".pred"]
    if len({_SIZES.get(t, TYPE_SIZE.get(t, 0)) for t in sized}) > 1:
        line.add("vector-elements", op.pos)  # (then the first element is judged)
        if types[0] == ".f16x2" and any(TYPE_SIZE.get(_register(i, scope) or "") == 8 for i in op.items):
            line.add("wgmma-mixed", op.pos)  # (a 64-bit register after .f16x2 is both: measured)
        if types[0] not in loose:
            return False
    elif len({_KIND.get(t or "", "int") for t in types} - {None}) > 1:
        line.add("wgmma-mixed", op.pos)
    elif not any(t in loose for t in types):
        return False
    elif not any(t in strict for t in types) and policy == "types":
        line.add("types", name=name)
    if length is not None and len(op.items) != length:
        line.add("vector-length", op.pos, name=name)
    return True


def _scalar(op: ast.Operand, index: int, types: tuple[str, ...], integer: bool, dest: bool, name: str,
            scope: Scope, line: _Line) -> bool:
    """A scalar where D or A goes (measured): "Vector expected" where it fits."""
    sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
    if sym is not None and sym.special:
        line.add("special-register", op.pos, name=WGMMA_MMA)
    elif isinstance(op, ast.Address):
        # (a register of the slot's types as its base; a variable only where A takes any 32-bit
        # register: measured)
        base = scope.lookup(op.base.name) if op.base is not None else None
        if (dest and integer) or base is None or base.special or (
                base.type not in types if base.space == ".reg" else dest or ".f32" not in types):
            return False
        line.add("must-be-register", op.pos, index=index, name=WGMMA_MMA)
    elif isinstance(op, ast.Imm | ast.FloatImm):
        if dest:  # (an immediate of the accumulator's kind: an integer for .s32, a float for .f32)
            if integer != isinstance(op, ast.Imm) or (not integer and ".f32" not in types):
                return False
            line.add("result-register", op.pos, name=WGMMA_MMA)
        elif isinstance(op, ast.Imm) or ".f32" not in types:
            return False
    elif _register(op, scope) not in types:
        return False
    line.add("vector-expected", op.pos, index=index)
    return True


def _descriptor(op: ast.Operand, index: int, scope: Scope, line: _Line) -> bool:
    """A 64-bit matrix descriptor: an integer register or an immediate; a variable is "must be
    register" (measured)."""
    if isinstance(op, ast.Imm):
        return True
    sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
    if sym is None or sym.special or sym.type not in TYPE_COMPATIBLE[".b64"]:
        return False
    if sym.space != ".reg":
        line.add("must-be-register", op.pos, index=index, name=WGMMA_MMA)
    return True


def _metadata(op: ast.Operand, scope: Scope, line: _Line) -> bool:
    """sp-meta (measured): a 32-bit register of any type, a vector of them, a 32-bit float
    immediate; a variable of such a type, or an address of a variable or a 32-bit register, is
    "must be register", a special register "not allowed"; an integer immediate or a register of
    another size a mismatch, a vector of registers of two sizes "Incompatible elements" besides."""
    if isinstance(op, ast.FloatImm):
        return op.bits == 32
    if isinstance(op, ast.Vector):
        types = [_register(i, scope) for i in op.items]
        if len({TYPE_SIZE.get(t or "", 0) for t in types if t is not None and t != ".pred"}) > 1:
            line.add("vector-elements", op.pos)
            return False
        return all(t in TYPE_COMPATIBLE["any32"] for t in types)
    if isinstance(op, ast.Address):
        base = scope.lookup(op.base.name) if op.base is not None else None
        register = base is not None and base.space == ".reg"
        if base is None or base.special or (register and base.type not in TYPE_COMPATIBLE["any32"]):
            return False
        line.add("must-be-register", op.pos, index=3, name=WGMMA_MMA)
        return True
    sym = scope.lookup(op.name) if isinstance(op, ast.Name) else None
    if sym is None:
        return False
    if sym.special:
        line.add("special-register", op.pos, name=WGMMA_MMA)
    elif sym.type not in TYPE_COMPATIBLE["any32"]:
        return False
    elif sym.space != ".reg":
        line.add("must-be-register", op.pos, index=3, name=WGMMA_MMA)
    return True


def _immediate(op: ast.Operand, check: ImmCheck, index: int, predicate: bool, name: str, scope: Scope,
               line: _Line) -> bool:
    """scale-d: an immediate or a predicate; the others an immediate only."""
    if predicate and _register(op, scope) == ".pred":
        return True
    if not isinstance(op, ast.Imm):
        return False
    allowed = {"parity": (0, 1), "exact": (check.lo,)}.get(check.kind, (check.lo, check.hi))
    if check.value(op.value) not in allowed:
        line.add(f"imm-{check.kind}", op.pos, index=index, name=name,
                 value=check.value(op.value, check.printed), lo=check.lo, hi=check.hi)
    return True
