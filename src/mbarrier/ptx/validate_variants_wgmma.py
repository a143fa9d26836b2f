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


def _shape(atype: str, n: int, sparse: bool = False) -> str:
    return f".m{wgmma.M}n{n}k{(wgmma.SPARSE_K if sparse else wgmma.K)[atype]}"


#: sp-meta and sp-sel of the sparse forms (PTX ISA 9.7.15.6), written apart from spec.companions.
_META_SEL = (_name("%r1"), _imm(0))


def _build(dtype: str, atype: str, btype: str, n: int, regs: bool = False, mods: str = "",
           pre: str = "", sparse: bool = False) -> ast.Instruction:
    ops = (".and.popc",) if atype == ".b1" else ()
    a: ast.Operand = _a_regs(atype) if regs else _name("%rd1")
    return _instr((*_PATH, ".sp" if sparse else "", pre, _SYNC, _shape(atype, n, sparse), dtype, atype, btype,
                   *ops, mods),
                  (_d(dtype, n), a, _name("%rd2"), *(_META_SEL if sparse else ()), *_tail(atype, regs)))


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
    yield from sparse_variants()


def sparse_variants() -> Iterator[tuple[str, ast.Instruction]]:
    """wgmma.mma_async.sp (PTX ISA 9.7.15.6): every type combination but .b1 on small, middle and
    large shapes with either A; `.sp` moved, doubled, with the dense lists and the dense shapes;
    the shapes, types, words; the metadata and the selector in every operand shape and value."""
    combos = [c for c in _combos() if c[1] in wgmma.SPARSE_K]
    for dtype, atype, btype in combos:
        ns = wgmma.N[atype]
        for n, regs in ((ns[0], False), (ns[0], True), (ns[-1], False)):
            yield f"sparse types {dtype}{atype}{btype} n{n}{' regs' if regs else ''}", _build(
                dtype, atype, btype, n, regs, sparse=True)
    f16 = (".f32", ".f16", ".f16", 8)
    base = _build(*f16, sparse=True)
    # 1. words after the opcode and late (those of the pools are judged as on the dense forms);
    # .sp moved and doubled, .sync missing
    for w in (".satfinite", ".sp", ".and", ".sp::ordered_metadata", ".row", ".rn", ".foo", ".v4", ".shared",
              ".release", ".m16n8k16"):
        yield f"sparse insert {w}", _build(*f16, pre=w, sparse=True)
        yield f"sparse insert {w} late", _build(*f16, mods=w, sparse=True)
    for sync in ("", ".sync", ".aligned", ".sync.aligned.sp", ".aligned.sync"):
        yield f"sparse sync {sync!r}", _instr((*_PATH, ".sp", sync, ".m64n8k32.f32.f16.f16"), base.operands)
    # 2. per kind: the sparse and the dense list with and without .sp, each shape
    kinds = ((".f32", ".f16", ".f16"), (".f32", ".tf32", ".tf32"), (".f16", ".e4m3", ".e5m2"),
             (".s32", ".s8", ".s8"), (".s32", ".u8", ".s8"), (".s32", ".b1", ".b1"))
    for dtype, atype, btype in kinds:
        ops = ".and.popc" if atype == ".b1" else ""
        k = wgmma.SPARSE_K.get(atype, 512)
        dense = _build(dtype, atype, btype, 8).operands
        sparse = (*dense[:3], *_META_SEL, *dense[3:])
        for shape in ("", f".m64n8k{k}", f".m64n8k{wgmma.K[atype]}", ".m64n8k16", ".m64n8k64", ".m64n24k64",
                      ".m64n8k512", f".m64n264k{k}"):
            for sp, tail in (("sparse", sparse), ("dense", dense)):
                yield f"sparse shape {shape!r} {sp} list {atype}", _instr(
                    (*_PATH, ".sp", _SYNC, shape, dtype, atype, btype, ops), tail)
                yield f"sparse shape {shape!r} {sp} list no .sp {atype}", _instr(
                    (*_PATH, _SYNC, shape, dtype, atype, btype, ops), tail)
        full = _build(dtype, atype, btype, 8, sparse=atype != ".b1")
        # 3. the types, .satfinite and the boolean operations
        for types in ((dtype, atype), (".f64", atype, btype), (dtype, atype, ".bf16"), (".s32", atype, btype),
                      (".f16", atype, btype)):
            yield f"sparse types {''.join(types)}", _instr(
                (*_PATH, ".sp", _SYNC, f".m64n8k{k}", *types, ops), full.operands)
        for extra in (".satfinite", ".and", ".popc", ".and.popc"):
            yield f"sparse ops {extra} {atype}", _instr(
                (*_PATH, ".sp", _SYNC, f".m64n8k{k}", dtype, atype, btype, extra), full.operands)
        # 4. operand counts
        yield f"sparse drop last operand {atype}", _with(full, full.operands[:-1])
        yield f"sparse extra operand {atype}", _with(full, (*full.operands, _imm(0)))
        yield f"sparse no selector {atype}", _with(full, (*full.operands[:4], *full.operands[5:]))
    # 5. every operand shape in every slot; the selector's and the others' values
    for dtype, atype, btype, regs in ((".f32", ".f16", ".f16", False), (".f32", ".bf16", ".bf16", True),
                                      (".s32", ".s8", ".u8", False), (".f32", ".e5m2", ".e4m3", True),
                                      (".f32", ".tf32", ".tf32", False)):
        full = _build(dtype, atype, btype, 8, regs, sparse=True)
        # (D, A and B are the dense forms' operands, generated there; sp-meta, sp-sel and scale-d
        # here, with two kinds)
        slots = range(3, 6) if atype == ".f16" else range(0)
        for i in slots:
            for op in (o for o in OPERAND_POOL if i or not isinstance(o, ast.Sink)):
                yield f"sparse operand {i} = {render_operand(op)} {atype}", _with(
                    full, (*full.operands[:i], op, *full.operands[i + 1:]))
        for meta in (_name("%wf9"), _name("%wh9"), _name("%fd1"), ast.Vector((_name("%r1"),), P0),
                     ast.Vector((_name("%r1"), _name("%r2")), P0), _addr_of("%r1")):
            yield f"sparse meta {render_operand(meta)} {atype}", _with(
                full, (*full.operands[:3], meta, *full.operands[4:]))
        for i in range(4, len(full.operands)):  # (sp-sel, scale-d: every view of the literal)
            for v in (1, -1, 2, 4294967295, 4294967296, 4294967297, -4294967298) if i < 6 else (2,):
                yield f"sparse imm {i} = {v} {atype}", _with(full, (*full.operands[:i], _imm(v),
                                                                    *full.operands[i + 1:]))
    for pred, negated in GUARD_POOL:
        yield f"sparse guard {pred}", _with(base, guard=ast.Guard(pred, negated, P0))


def _addr_of(reg: str) -> ast.Address:
    return ast.Address(_name(reg), 0, P0)

