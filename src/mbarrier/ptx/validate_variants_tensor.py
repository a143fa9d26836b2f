"""Variants of the tensor copies that take no mbarrier (`spec.tensorcopies`: the tensor store, the
tensor reduction, the tensor prefetch) for the differential test against ptxas: every dimension x
load mode (theirs and the others'), the optional modifiers and operands, words of the pools inserted,
state spaces, vector lengths and elements, operand counts, and every operand shape in every slot.
"""

from __future__ import annotations

from collections.abc import Iterator

from mbarrier.ptx import ast
from mbarrier.ptx.validate import resolve
from mbarrier.ptx.variant_pools import (
    GUARD_POOL,
    MODIFIER_POOL,
    OPERAND_POOL,
    OTHER_WORDS,
    P0,
    SCOPE_POOL,
    SEM_POOL,
    SPACE_POOL,
    _addr,
    _instr,
    _name,
    _with,
    render_operand,
)
from mbarrier.spec.forms import Instr

#: What the labels of these variants start with (`tools/ptxas_sweep.py --filter no-mbarrier`).
LABEL = "no-mbarrier"
#: Every load mode of the tensor copies, the one written by none too.
MODES: tuple[str, ...] = ("", ".tile", ".tile::scatter4", ".im2col_no_offs", ".im2col", ".tile::gather4",
                          ".im2col::w", ".im2col::w::128")
#: Words of the tensor copies inserted into a legal line: dimensions, load modes, the other
#: completion mechanisms, the load's modifiers, the prefetch's cache levels.
WORDS: tuple[str, ...] = (".3d", ".im2col", ".tile::gather4", ".tile::scatter4", ".im2col_no_offs",
                          ".cta_group::1", ".multicast::cluster", ".bulk_group",
                          ".mbarrier::complete_tx::bytes",
                          ".L1", ".L2", ".add", ".exch")
#: Elements a coordinate or im2col vector is made of: registers of each type, a special register, a
#: symbol, integers, a float, an undeclared name, the sink.
ELEMENTS: tuple[ast.Operand, ...] = (
    _name("%r3"), _name("%sr3"), _name("%rd3"), _name("%h3"), _name("%f3"), _name("%p3"), _name("%tid.x"),
    _name("bar"), ast.Imm(7, "7", P0), ast.FloatImm(1.0, 0x3F800000, 32, "0f3F800000", P0), _name("nob"),
    ast.Sink(P0),
)
#: Bases of the tensorMap operand.
BASES: tuple[str, ...] = ("%rd3", "%r3", "%h3", "%f3", "%p3", "gbar", "bar", "nob")


def _regs(prefix: str, n: int) -> tuple[ast.Operand, ...]:
    return tuple(_name(f"{prefix}{i % (4 if prefix == '%h' else 8)}") for i in range(n))


def _tensor(base: str, coords: tuple[ast.Operand, ...]) -> ast.Address:
    return ast.Address(_name(base), 0, P0, (ast.Vector(coords, P0),))


def variants(form: Instr) -> Iterator[tuple[str, ast.Instruction]]:
    """The variants of one tensor copy whose first operand is `[tensorMap, {coords}]`, but those lint
    leaves alone (the store's `.bulk_group` with a load's state spaces: docs/lint.md, Limits)."""
    for label, instr in _all_variants(form):
        if resolve(instr)[0] is not None:
            yield label, instr


def _all_variants(form: Instr) -> Iterator[tuple[str, ast.Instruction]]:
    store = any(s.role == "srcMem" for s in form.operands[0])
    spaces = "".join(form.space_pairs[0]) if form.space_pairs else "".join(form.spaces)
    level = ".L2" if "cacheop" in dict(form.words).values() else ""
    op = next((w for w, cls in form.words if cls == "op"), "")
    mech = form.marker or (".bulk_group" if store else "")
    head = (*form.path, level, spaces, op)

    def build(dim: str = ".2d", mode: str = ".tile", hint: bool = False, n_coords: int | None = None,
              n_offsets: int | None = None, mods: str = "", head: tuple[str, ...] = head) -> ast.Instruction:
        d = int(dim[1]) if dim else 0
        rows = mode in (".tile::gather4", ".tile::scatter4")
        ops: list[ast.Operand] = [_tensor("%rd3", _regs("%r", n_coords if n_coords is not None else
                                                        (5 if rows else d)))]
        if store:
            ops.append(_addr("%rd2"))
        elif mode.startswith(".im2col") and mode != ".im2col_no_offs":
            k = n_offsets if n_offsets is not None else (2 if "::w" in mode else d - 2)
            ops.append(ast.Vector(_regs("%h", k), P0) if k > 0 else _name("%h1"))
        if hint:
            ops.append(_name("%rd4"))
        return _instr((*head, dim, mode, mech, ".L2::cache_hint" if hint else "", mods), tuple(ops))

    # 1. every dimension x load mode, with and without the cache hint
    for mode in MODES:
        for dim in form.dims:
            yield f"dims {dim}{mode}", build(dim, mode)
        dim = ".2d" if mode in (".tile::gather4", ".tile::scatter4") else ".3d"
        yield f"flags {mode}.L2::cache_hint", build(dim, mode, hint=True)
        yield f"no dim{mode}", build("", mode, n_coords=3, n_offsets=1)
    # 2. one word of the pools inserted early or late
    for w in (*MODIFIER_POOL, *WORDS):
        yield f"insert {w}", _instr((*form.path, w, *head[len(form.path):], ".2d", ".tile", mech),
                                    build().operands)
        yield f"insert {w} late", build(mods=w)
    for w in OTHER_WORDS:
        yield f"other word {w}", build(mods=w)
    for w in (".foo.cta_group::1", ".cta_group::1.b32", ".cta_group::1.sync", ".multicast::cluster.rn",
              ".cta_group::1.cta_group::2", ".bulk_group.bulk_group", ".tile.tile"):
        yield f"other words {w}", build(mods=w)
    # 3. .sem/.scope, which none takes
    for sem_scope in (*SEM_POOL, *SCOPE_POOL, ".release.gpu"):
        yield f"sem/scope {sem_scope}", build(mods=sem_scope)
    # 4. state spaces: pairs from the pool (single ones for the prefetch), with three addresses
    pool = ([a + b for a in SPACE_POOL for b in SPACE_POOL] if form.space_pairs
            else [*SPACE_POOL, ".global.global"])
    for sp in pool:
        for base in ("gbar", "bar", "%rd3"):
            plain = build(head=(*form.path, level, sp, op))
            tmap = _tensor(base, _regs("%r", 2))
            ops = (tmap, _addr("bar" if base == "gbar" else "gbar")) if store else (tmap,)
            yield f"space {sp} {base}", _with(plain, ops)
    # 5. a type; the completion mechanism left out, or the other one
    for t in (".b32", ".u32", ".f32"):
        yield f"type {t}", build(mods=t)
    if mech:
        # (the store's state spaces with the load's mechanism alone are the load's: docs/lint.md, Limits)
        yield "mechanism none", _instr((*head, ".2d", ".tile"), build().operands)
        for other in (".mbarrier::complete_tx::bytes",):
            yield f"mechanism {other} then", _instr((*head, ".2d", ".tile", other, mech), build().operands)
            yield f"mechanism {other} after", _instr((*head, ".2d", ".tile", mech, other), build().operands)
    # 5b. the operations: none, each, two (the reduction)
    ops_words = [w for w, cls in form.words if cls == "op"]
    for o in ("", *ops_words, ".add.min", ".cas"):
        if ops_words:
            yield f"op {o}", build(head=(*form.path, level, spaces, o))
    # 6. vector lengths against the dimension and the load mode
    for dim in form.dims:
        for n in range(1, 7):
            yield f"{n} coordinates {dim}", build(dim, ".tile", n_coords=n)
    for mode in (".tile::gather4", ".tile::scatter4"):
        for n in (2, 4, 6):
            yield f"{n} coordinates {mode}", build(".2d", mode, n_coords=n)
    if not store:
        for mode in (".im2col", ".im2col::w"):
            for dim in (".3d", ".5d"):
                for k in range(0, 5):
                    yield f"{k} im2col {dim}{mode}", build(dim, mode, n_offsets=k)
    # 7. operand count: every list shortened and lengthened
    for hint in (False, True):
        for mode in (".tile", ".im2col"):
            full = build(".3d", mode, hint)
            yield f"drop last operand{mode}{hint}", _with(full, full.operands[:-1])
            yield f"extra operand{mode}{hint}", _with(full, (*full.operands, _name("%rd4")))
    # 8. a guard
    for pred, negated in GUARD_POOL:
        yield f"guard {pred}", _with(build(), guard=ast.Guard(pred, negated, P0))
    # 9. every operand shape in every slot but the tensor operand, of the plain and the longest list
    for mode, hint in ((".tile", False), (".im2col", True)):
        full = build(".3d", mode, hint)
        for i in range(1, len(full.operands)):
            for shape in OPERAND_POOL:
                yield f"operand {i} = {render_operand(shape)}", _with(
                    full, (*full.operands[:i], shape, *full.operands[i + 1:]))
    # 10. the tensor operand: its base, other shapes, the coordinates' elements
    plain = build()
    rest = plain.operands[1:]
    for b in BASES:
        yield f"tensorMap {b}", _with(plain, (_tensor(b, _regs("%r", 2)), *rest))
    for shape in (_addr("%rd3"), ast.Address(_name("%rd3"), 0, P0, (_name("%r1"),)), _name("%rd3"),
                  _name("%r3"),
                  ast.Vector(_regs("%r", 2), P0), ast.Sink(P0)):
        yield f"tensor operand {render_operand(shape)}", _with(plain, (shape, *rest))
    for e in ELEMENTS:
        label = render_operand(e)
        yield f"coordinates last {label}", _with(plain, (_tensor("%rd3", (_name("%r0"), e)), *rest))
        yield f"coordinates first {label}", _with(plain, (_tensor("%rd3", (e, _name("%r1"))), *rest))
    # 11. the tensor map written apart from its coordinates (`[tmap], {x, y}, ...`): shapes of both
    coords = ast.Vector(_regs("%r", 2), P0)
    for shape in (_addr("gbar"), _addr("bar"), _addr("%f3"), _addr("nob"), _name("%rd3"), _name("%tid.x"),
                  ast.Imm(16, "16", P0)):
        yield f"apart {render_operand(shape)}", _with(plain, (shape, coords, *rest))
    for vec in (ast.Vector(_regs("%r", 3), P0), _name("%r1"), ast.Imm(1, "1", P0)):
        yield f"apart coordinates {render_operand(vec)}", _with(plain, (_addr("gbar"), vec, *rest))
    hinted = build(hint=True)
    yield "apart hint", _with(hinted, (_addr("gbar"), coords, *hinted.operands[1:]))
    yield "apart extra", _with(plain, (_addr("gbar"), coords, *rest, _name("%rd4")))
    yield "apart short", _with(plain, (_addr("gbar"), coords, *rest[:-1]))
    if not store:  # the im2col vector's elements
        full = build(".3d", ".im2col")
        for e in ELEMENTS:
            yield f"im2col {render_operand(e)}", _with(full, (full.operands[0], ast.Vector((e,), P0)))
