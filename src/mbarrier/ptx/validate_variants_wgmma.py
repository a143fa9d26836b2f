"""Variants of wgmma.mma_async (PTX ISA 9.7.15.5.2) for the differential test against ptxas: every
type combination on small, middle and large shapes with either A, then one mutation at a time: the
modifier words, the shape, the types, the boolean operations, operand counts, every operand shape
in every slot, the vectors' lengths and elements, the immediates' values, guards.

Its mutation pools are those of `variant_pools` (chosen apart from the tables they test); the
type combinations and shapes come from `spec.wgmma`.
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
    _imm,
    _instr,
    _name,
    _with,
    render_operand,
)
from mbarrier.spec import wgmma

_PATH = ("wgmma", ".mma_async")
_SYNC = ".sync.aligned"
#: Register files of the generated kernels for the vectors (`variant_pools.DECLARATIONS`).
_FILES = {".f32": "%wf", ".b32": "%wr", ".f16x2": "%wh", ".f64": "%fd", ".b16": "%h", ".b64": "%rd",
          ".pred": "%p"}


_SMALL = (".f64", ".b16", ".b64", ".pred")  # (files of 4 or 8 registers: indices wrap)


def _vec(kind: str, n: int, start: int = 0) -> ast.Vector:
    return ast.Vector(tuple(_name(f"{_FILES[kind]}{(start + i) % 4 if kind in _SMALL else start + i}")
                            for i in range(n)), P0)


def _d(dtype: str, n: int, length: int | None = None, kind: str | None = None) -> ast.Vector:
    count = wgmma.registers(dtype, n) if length is None else length
    return _vec(kind or {".f32": ".f32", ".f16": ".f16x2", ".s32": ".b32"}[dtype], count)


def _a_regs(atype: str, length: int = wgmma.A_REGISTERS, kind: str | None = None) -> ast.Vector:
    return _vec(kind or (".f16x2" if atype in (".f16", ".bf16") else ".b32"), length, start=64)


def _tail(atype: str, regs: bool) -> tuple[ast.Operand, ...]:
    """scale-d and the immediates after it (spec.companions.WGMMA_LISTS's shape, written apart)."""
    if atype in (".f16", ".bf16"):
        return (_imm(1), _imm(1), _imm(1), *((_imm(0),) if regs else (_imm(0), _imm(0))))
    if atype in (".tf32", ".e4m3", ".e5m2"):
        return _imm(1), _imm(1), _imm(1)
    return (_imm(1),)


def _combos() -> list[tuple[str, str, str]]:
    """Every legal (dtype, atype, btype)."""
    out = []
    for atype, dtypes in wgmma.DTYPES.items():
        btypes = next((sorted(m) for m in wgmma.MIXED if atype in m), [atype])
        out += [(d, atype, b) for d in dtypes for b in btypes]
    return out


def _shape(atype: str, n: int) -> str:
    return f".m{wgmma.M}n{n}k{wgmma.K[atype]}"


def _build(dtype: str, atype: str, btype: str, n: int, regs: bool = False, mods: str = "",
           pre: str = "") -> ast.Instruction:
    ops = (".and.popc",) if atype == ".b1" else ()
    a: ast.Operand = _a_regs(atype) if regs else _name("%rd1")
    return _instr((*_PATH, pre, _SYNC, _shape(atype, n), dtype, atype, btype, *ops, mods),
                  (_d(dtype, n), a, _name("%rd2"), *_tail(atype, regs)))


def variants() -> Iterator[tuple[str, ast.Instruction]]:
    combos = _combos()
    # 1. every type combination x the first, a middle and the last N x either A
    for dtype, atype, btype in combos:
        ns = wgmma.N[atype]
        for n in (ns[0], ns[len(ns) // 2], ns[-1]):
            for regs in (False, True):
                yield f"types {dtype}{atype}{btype} n{n}{' regs' if regs else ''}", _build(
                    dtype, atype, btype, n, regs)
    f16 = (".f32", ".f16", ".f16", 8)
    base = _build(*f16)
    # 2. one word of the pools after the opcode and late
    for w in (*MODIFIER_POOL, *OTHER_WORDS, ".satfinite", ".and", ".popc", ".m16n8k16"):
        yield f"insert {w}", _build(*f16, pre=w)
        yield f"insert {w} late", _build(*f16, mods=w)
    # 3. .sync and .aligned missing or doubled
    for sync in ("", ".sync", ".aligned", ".sync.aligned.sync", ".sync.aligned.aligned", ".aligned.sync"):
        yield f"sync {sync!r}", _instr((*_PATH, sync, ".m64n8k16.f32.f16.f16"), base.operands)
    # 4. the shape: none, unknown, another instruction's, another kind's, another K, two
    for dtype, atype, btype in ((".f32", ".f16", ".f16"), (".f32", ".tf32", ".tf32"),
                                (".f16", ".e4m3", ".e4m3"), (".s32", ".s8", ".s8"), (".s32", ".b1", ".b1")):
        ops = ".and.popc" if atype == ".b1" else ""
        tail = _build(dtype, atype, btype, 8).operands
        for shape in ("", ".m64n12k16", ".m64n8k8", ".m64n8k16", ".m64n8k32", ".m64n8k256", ".m16n8k16",
                      ".m64n264k16", ".m64n16k16.m64n8k16", ".m64n8k16.m64n8k16"):
            yield f"shape {shape!r} {atype}", _instr((*_PATH, _SYNC, shape, dtype, atype, btype, ops), tail)
        # 5. the types: one missing, one more, another dtype, another btype
        for types in ((dtype, atype), (dtype, atype, btype, btype), (".f64", atype, btype),
                      (dtype, atype, ".bf16"), (dtype, atype, ".b32"), (atype, atype, btype),
                      (".f32", atype, btype), (".s32", atype, btype), (".f16", atype, btype)):
            yield f"types {''.join(types)}", _instr((*_PATH, _SYNC, _shape(atype, 8), *types, ops), tail)
        # 6. .satfinite, the boolean operations
        for extra in (".satfinite", ".and", ".popc", ".popc.and", ".and.popc", ".and.and.popc"):
            quals = (*_PATH, _SYNC, _shape(atype, 8), dtype, atype, btype, extra)
            yield f"ops {extra} {atype}", _instr(quals, tail)
    # 7. operand counts: each list shortened and lengthened
    for dtype, atype, btype in ((".f32", ".f16", ".f16"), (".f32", ".tf32", ".tf32"), (".s32", ".s8", ".s8")):
        for regs in (False, True):
            full = _build(dtype, atype, btype, 8, regs)
            yield f"drop last operand {atype}", _with(full, full.operands[:-1])
            yield f"extra operand {atype}", _with(full, (*full.operands, _imm(0)))
            yield f"extra register {atype}", _with(full, (*full.operands, _name("%r3")))
    # 8. every operand shape in every slot
    for dtype, atype, btype, regs in ((".f32", ".f16", ".f16", False), (".f32", ".f16", ".f16", True),
                                      (".s32", ".s8", ".s8", False), (".f32", ".e5m2", ".e4m3", True)):
        full = _build(dtype, atype, btype, 8, regs)
        for i in range(len(full.operands)):
            # (ptxas 13.0 dies of a segfault on `_` as D: no verdict to compare with)
            for op in (o for o in OPERAND_POOL if i or not isinstance(o, ast.Sink)):
                yield f"operand {i} = {render_operand(op)} {atype}", _with(
                    full, (*full.operands[:i], op, *full.operands[i + 1:]))
    # 9. the vectors: lengths and elements
    for dtype, atype, btype in ((".f32", ".f16", ".f16"), (".f16", ".f16", ".f16"),
                                (".s32", ".s8", ".s8"), (".f32", ".bf16", ".bf16"),
                                (".f32", ".tf32", ".tf32"), (".f32", ".e4m3", ".e4m3")):
        full = _build(dtype, atype, btype, 16, True)
        length = wgmma.registers(dtype, 16)
        for k in (1, 2, length - 1, length + 1):
            yield f"D of {k} {dtype}{atype}", _with(full, (_d(dtype, 16, k), *full.operands[1:]))
        for kind in _FILES:
            yield f"D of {kind} {dtype}{atype}", _with(full, (_d(dtype, 16, kind=kind), *full.operands[1:]))
            yield f"A of {kind} {dtype}{atype}", _with(full, (full.operands[0], _a_regs(atype, kind=kind),
                                                              *full.operands[2:]))
        for k in (1, 2, 3, 5, 8):
            yield f"A of {k} {dtype}{atype}", _with(full, (full.operands[0], _a_regs(atype, k),
                                                           *full.operands[2:]))
        d, a = full.operands[0], full.operands[1]
        assert isinstance(d, ast.Vector) and isinstance(a, ast.Vector)
        for label, other in (("f64", "%fd1"), ("b16", "%h1"), ("f32", "%f1"), ("b32", "%r1"), ("pred", "%p1"),
                             ("imm", "1"), ("sym", "bar"), ("undeclared", "%r99")):
            elem: ast.Operand = _imm(1) if other == "1" else _name(other)
            yield f"D first {label} {dtype}{atype}", _with(full, (d._replace(items=(elem, *d.items[1:])),
                                                                  *full.operands[1:]))
            yield f"D last {label} {dtype}{atype}", _with(full, (d._replace(items=(*d.items[:-1], elem)),
                                                                 *full.operands[1:]))
            yield f"A first {label} {dtype}{atype}", _with(full, (d, a._replace(items=(elem, *a.items[1:])),
                                                                  *full.operands[2:]))
        yield f"D scalar {dtype}{atype}", _with(full, (d.items[0], *full.operands[1:]))
        yield f"A scalar {dtype}{atype}", _with(full, (d, a.items[0], *full.operands[2:]))
    # 10. the immediates' values
    for dtype, atype, btype in ((".f32", ".f16", ".f16"), (".f32", ".tf32", ".tf32"), (".s32", ".s8", ".s8")):
        full = _build(dtype, atype, btype, 8)
        for i in range(3, len(full.operands)):
            for v in (0, 1, -1, 2, 4294967297):
                yield f"imm {i} = {v} {atype}", _with(full, (*full.operands[:i], _imm(v),
                                                             *full.operands[i + 1:]))
            yield f"imm {i} = %p1 {atype}", _with(full, (*full.operands[:i], _name("%p1"),
                                                         *full.operands[i + 1:]))
    # 11. a guard
    for pred, negated in GUARD_POOL:
        yield f"guard {pred}", _with(base, guard=ast.Guard(pred, negated, P0))

