"""The generator of instruction variants for differential testing against ptxas: every form of the
family x legal and illegal modifier sets x operand shapes x immediates, each as a syntax tree with its
PTX text, all against one fixed set of declarations (`variant_pools.DECLARATIONS`), from the
mutation pools of `variant_pools`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import combinations
from random import Random

from mbarrier.ptx import ast, validate_variants_tensor, validate_variants_tensormap, validate_variants_wgmma
from mbarrier.ptx.validate import resolve
from mbarrier.ptx.variant_pools import (
    GATED_POOL,
    GUARD_POOL,
    MANY_FLAGS,
    MODIFIER_POOL,
    OPERAND_POOL,
    OTHER_MIX,
    OTHER_RARE,
    OTHER_WORDS,
    P0,
    SAME_CLASS,
    SCOPE_POOL,
    SEM_POOL,
    SPACE_POOL,
    SPACE_WORDS,
    TWICE_POOL,
    Case,
    _addr,
    _imm,
    _instr,
    _name,
    _with,
    render_operand,
)
from mbarrier.spec.forms import FLAG_GROUPS, Instr, Slot, unchecked
from mbarrier.spec.instructions import INSTRUCTIONS


def canonical(slot: Slot) -> list[ast.Operand]:
    """Legal operands for a slot (the first is the one mutations start from)."""
    if slot.kind == "addr":
        # a register address is legal in any state space; copies check variables against theirs
        return [_addr("%rd2"), _addr("bar")] if slot.governed_by is not None else [_addr("bar"),
                                                                                   _addr("%rd2")]
    if slot.kind == "tensor":  # a 2d tensor map: [tensorMap, {x, y}]
        return [_tensor_addr("%rd3", _regs("%r", 2))]
    if slot.kind == "vector":
        return [ast.Vector(_regs("%h", 1), P0)]
    if slot.kind == "pair":
        return [ast.Expr("%r1|%p1", None, P0), ast.Expr("_|%p1", None, P0)]
    if slot.length or slot.sized_message:  # a vector of values (st.async's .v2/.v4, stmatrix's)
        return [ast.Vector(_regs("%r", slot.length or 4), P0)]
    if slot.kind == "dest":
        reg = {".b64": "%rd1", ".b32": "%r1", ".pred": "%p1", ".u32": "%r1", ".u64": "%rd1"}[slot.type]
        return [_name(reg), ast.Sink(P0)] if slot.sink_from else [_name(reg)]
    reg = {".b64": "%rd2", ".b32": "%r2", ".b16": "%h2"}[slot.type]
    imm = next((c.lo for c in slot.checks if c.kind in ("multiple", "exact")), 1)
    if slot.typed and slot.symbol_ok:  # an address (mapa's a): a register first
        return [_name(reg), _imm(imm)]
    return [_imm(imm), _name(reg)] if slot.imm else [_name(reg)]


#: Forms the generator leaves out: `cp.async` is ours only as a misspelt `cp.async.mbarrier.WORD`
#: (spec.forms._cp_async_typo), checked on the lines of tests/ptx/test_validate_module.py; the
#: copy's own operand values and modifier classes are not modelled. `tcgen05.commit` is modelled
#: for its well-formed lines, gates and required modifiers only (a second operand without
#: `.multicast::cluster` and the order of its checks are not), checked on the lines of
#: tests/ptx/test_family_ptxas.py.
UNGENERATED: tuple[str, ...] = ("cp.async", "tcgen05.commit")
GENERATED: tuple[Instr, ...] = tuple(f for f in INSTRUCTIONS if f.name not in UNGENERATED)


def cases(forms: tuple[Instr, ...] = GENERATED) -> list[Case]:
    """All variants of all forms, deduplicated by text, in a stable order."""
    out: dict[str, Case] = {}
    for form in forms:
        for label, instr in _variants(form):
            if unchecked((instr.opcode, *instr.qualifiers), own=form.flags):
                continue  # (a line lint leaves alone: nothing to compare)
            c = Case(f"{form.name}: {label}", instr)
            out.setdefault(c.text, c)
    return list(out.values())


#: The variants also generated without the marker, for a form that is ours without it too (a copy
#: with no completion mechanism, `Instr.marker_implied`): by the start of their labels.
UNMARKED_LABELS: tuple[str, ...] = ("combination", "dims", "flags", "insert", "space", "drop", "extra",
                                    "type", "sem/scope")


def _variants(form: Instr) -> Iterator[tuple[str, ast.Instruction]]:
    for label, instr in _marked_variants(form):
        yield label, instr
        if form.marker_implied and label.startswith(UNMARKED_LABELS) and form.marker in instr.qualifiers:
            rest = tuple(q for q in instr.qualifiers if q != form.marker)
            spaces = tuple(q for q in rest if q.partition("::")[0] in SPACE_WORDS)
            # (not with another completion mechanism, nor the store's state spaces: not ours then)
            if ".bulk_group" not in rest and spaces[:2] not in form.other_pairs:
                yield f"no {form.marker}, {label}", instr._replace(qualifiers=rest)


def _marked_variants(form: Instr) -> Iterator[tuple[str, ast.Instruction]]:
    if form.checker:  # (wgmma.mma_async: the generator of its own checker's lines)
        yield from validate_variants_wgmma.variants()
        return
    if form.name == "tensormap.replace":  # (fields of two kinds of operands: variants of its own)
        yield from validate_variants_tensormap.variants()
        return
    if form.dims and form.operands[0][0].kind == "tensor":  # (no mbarrier: the store, reduction, prefetch)
        yield from ((f"{validate_variants_tensor.LABEL} {label}", i) for label, i in
                    validate_variants_tensor.variants(form))
        return
    if form.dims:
        yield from _tensor_variants(form)
        return
    # (with its first operation, where it takes one: red.async's .add)
    first_op = next((w for w, cls in form.words if cls == "op"), None)
    path = (*form.path, *((form.marker,) if form.marker else ()), *((first_op,) if first_op else ()))
    ty = form.types[0] if form.types else ""
    spaces = ["".join(p) for p in form.space_pairs] or list(form.spaces)
    base_space = "".join((*form.canonical, spaces[0] if spaces else ""))
    semscopes = [""] + [s + c for s in form.sems for c in form.scopes]
    if form.canonical:
        semscopes = ["".join(form.canonical)]
    optional = [f for f in form.flags if f != form.marker]
    # (of many optional modifiers, up to two at a time; the operand shapes with one at a time)
    most = len(optional) if len(optional) <= MANY_FLAGS else 2
    flag_sets = ["".join(c) for n in range(most + 1) for c in combinations(optional, n)]
    shape_flags = flag_sets if len(optional) <= MANY_FLAGS else ["", *optional]
    # 1. every modifier combination x every operand list x canonical operands (with the words of
    # the instruction's own that bring an operand: st.async's .v2)
    for space in ("", *spaces):
        for ss in semscopes:
            for flag in flag_sets:
                for slots in form.operands:
                    own = "".join(s.flag for s in slots if s.flag and s.flag not in form.flags)
                    for ops in _canonical_lists(slots):
                        yield "combination", _instr((*path, flag, own, ss, space, ty), ops)
    base_ops = tuple(canonical(s)[0] for s in form.operands[-1])
    # 2. one word from the pool, after the opcode or before the type
    for w in MODIFIER_POOL:
        yield f"insert {w}", _instr((*path, w, base_space, ty), base_ops)
        yield f"insert {w} late", _instr((*path, base_space, w, ty), base_ops)
    yield from _other_word_variants(form, path, base_space, ty, base_ops)
    # 2b. a word with gates of its own; a word twice; a word of the opcode twice, where it stands
    for w in GATED_POOL:
        yield f"gated word {w}", _instr((*path, w, base_space, ty), base_ops)
    for w in TWICE_POOL:
        yield f"twice {w}", _instr((*path, w, w, base_space, ty), base_ops)
    for k in range(1, len(path)):
        twice = _instr((*path[:k + 1], *path[k:], base_space, ty), base_ops)
        if resolve(twice)[0] is not None:  # (an instruction lint judges: cp.async.async.mbarrier.arrive)
            yield f"opcode word twice {path[k]}", twice
    # 3. every .sem/.scope pairing, including either alone
    for s in ("", *SEM_POOL):
        for c in ("", *SCOPE_POOL):
            yield f"sem/scope {s}{c}", _instr((*path, s, c, base_space, ty), base_ops)
    # 3b. a marked form with a canonical .sem/.scope (the unidirectional proxy fences): every .sem,
    # optional word and scope without the canonical ones; and without the marker where that is
    # another form of ours (the bidirectional proxy fence)
    unmarked = any(f.path == form.path and f.marker is None for f in INSTRUCTIONS)
    if form.canonical and form.marker and form.sems:
        for s in ("", *form.sems, ".acq_rel"):
            for f in ("", *optional):
                for c in ("", *form.scopes):
                    for ops in {(), base_ops}:
                        yield f"sem/word/scope {s}{f}{c}", _instr((*path, s, f, c, ty), ops)
                        if unmarked:
                            yield (f"no marker, sem/word/scope {s}{f}{c}",
                                   _instr((*form.path, s, f, c, ty), ops))
    # 4. state spaces (pairs of them for copies), with a shared, a global and a register address
    pool = [a + b for a in SPACE_POOL for b in SPACE_POOL] if form.space_pairs else SPACE_POOL
    for space in pool:
        for addr in (_addr("bar"), _addr("gbar"), _addr("%rd2")):
            ops = tuple(addr if s.kind == "addr" else o for s, o in zip(form.operands[-1], base_ops,
                                                                       strict=True))
            yield f"space {space} {render_operand(addr)}", _instr((*path, space, ty), ops)
    # 4b. the proxy kinds of fence.proxy, each and two of them, with each state space
    kinds = [w for w, cls in form.words if cls == "proxykind"] if form.canonical[:1] == (".async",) else []
    for w in kinds:
        for space in ("", *spaces, ".shared"):
            yield f"proxykind {w}{space}", _instr((*form.path, w, *form.canonical[1:], space, ty), base_ops)
        for w2 in kinds:
            yield f"proxykind {w}{w2}", _instr((*path, w, w2, base_space, ty), base_ops)
    # 5. the type: missing, wrong, doubled
    for t in ("", ".b32", ".u64", ".b64", ".b64.b64"):
        yield f"type {t!r}", _instr((*path, base_space, t), base_ops)
    # 5b. every operation with every type, none, two (red.async, cp.reduce.async.bulk)
    op_words = [w for w, cls in form.words if cls == "op"]
    if op_words:
        bare = tuple(w for w in path if w not in op_words)
        for o in ("", *op_words, op_words[0] + op_words[-1]):
            for t in form.types:
                yield f"op/type {o}{t}", _instr((*bare, o, base_space, t), base_ops)
    # 5c. cache operations and eviction priorities (prefetch.tensormap's): each before the marker
    # with each state space, late, and two of them
    cache = [w for w, cls in form.words if cls in ("cacheop", "evict") and w != form.marker]
    for w in cache:
        for space in ("", *form.spaces, ".shared::cta"):
            yield f"cache word {w}{space}", _instr((*form.path, space, w, *path[len(form.path):], ty),
                                                   base_ops)
        yield f"cache word {w} late", _instr((*path, w, ty), base_ops)
        yield f"cache word {w} operands", _instr((*form.path, w, *path[len(form.path):], ty),
                                                 (*base_ops, _imm(1)))
        yield f"cache word {w} type", _instr((*form.path, w, *path[len(form.path):], ".b32"), base_ops)
        for w2 in cache[::3]:
            yield f"cache words {w}{w2}", _instr((*form.path, w, w2, *path[len(form.path):], ty), base_ops)
    # 5d. format conversions (ldmatrix's): each pair and word alone, in either order, on each shape
    # with and without .trans, a type; each shape and .num with 1, 2 and 4 registers
    fmts = [w for w, cls in form.words if cls == "format"]
    if fmts:
        sync = tuple(w for w in (".sync", ".aligned") if w in form.flags)
        shapes = [f for f in form.flags if FLAG_GROUPS.get(f) == "shape"]
        nums = [f for f in form.flags if FLAG_GROUPS.get(f) == "num"]
        pairs = [(a, b) for a in fmts for b in fmts] + [(a,) for a in fmts]
        for shape in ("", *shapes):
            for fmt in pairs:
                for extra in ("", ".trans", ".trans.b8", ".b16"):
                    yield f"format {shape}{''.join(fmt)}{extra}", _instr(
                        (*path, *sync, shape, nums[0], extra, *fmt), base_ops)
        for shape in shapes:
            for num in nums:
                for k in (1, 2, 4):
                    ops = tuple(ast.Vector(_regs("%r", k), P0) if s.kind == "value" else o
                                for s, o in zip(form.operands[-1], base_ops, strict=True))
                    trans = ".trans" if shape == ".m16n16" else ""
                    yield f"format {shape}{num} {k} registers", _instr(
                        (*path, *sync, shape, num, trans, fmts[0], fmts[1]), ops)
    # 6. operand count: every legal list shortened and lengthened
    for slots in form.operands:
        ops = tuple(canonical(s)[0] for s in slots)
        yield "drop last operand", _instr((*path, base_space, ty), ops[:-1])
        yield "extra operand", _instr((*path, base_space, ty), (*ops, _name("%r3")))
    # 8. a guard, declared or not, of the right type or not
    for pred, negated in GUARD_POOL:
        plain = _instr((*path, base_space, ty), base_ops)
        yield f"guard {pred}", ast.Instruction(plain.opcode, plain.qualifiers, plain.operands,
                                               ast.Guard(pred, negated, P0), P0)
    # 7. every operand shape in every slot of every list, with each flag
    for slots in form.operands:
        ops = tuple(canonical(s)[0] for s in slots)
        own = "".join(s.flag for s in slots if s.flag and s.flag not in form.flags)
        for flag in shape_flags:
            for i in range(len(slots)):
                for op in OPERAND_POOL:
                    new = (*ops[:i], op, *ops[i + 1:])
                    yield f"operand {i} = {render_operand(op)}", _instr((*path, flag, own, base_space, ty),
                                                                         new)


#: The forms the mixes and the rare words of `_other_word_variants` are tried on.
MIX_FORMS: tuple[str, ...] = ("mbarrier.arrive", "mbarrier.try_wait.parity", "mbarrier.init",
                              "cp.async.mbarrier.arrive", "fence", "cp.async.bulk", "cp.async.bulk.tensor")


def _other_word_variants(form: Instr, path: tuple[str, ...], space: str, ty: str,
                         ops: tuple[ast.Operand, ...]) -> Iterator[tuple[str, ast.Instruction]]:
    """A word of another instruction (OTHER_WORDS) after the opcode; on MIX_FORMS also late, two of
    a class, and with a wrong type, state space or operand count, an unknown or a terminal word."""
    for w in OTHER_WORDS:
        yield f"other word {w}", _instr((*path, w, space, ty), ops)
    if form.name not in MIX_FORMS:
        return
    wrong_space = ".global.global" if form.space_pairs else ".global"
    for w in (*OTHER_WORDS, *OTHER_RARE):
        if w == ".cc" and not form.types:
            continue  # ptxas 13.0 crashes on .cc without an instruction type (fence, the copies)
        yield f"other word {w} late", _instr((*path, space, w, ty), ops)
    for w, again in SAME_CLASS.items():
        yield f"other words {w}{again}", _instr((*path, w, again, space, ty), ops)
    for w in OTHER_MIX:
        yield f"other word {w} type", _instr((*path, w, space, ".b32"), ops)
        yield f"other word {w} space", _instr((*path, w, wrong_space, ty), ops)
        yield f"other word {w} extra operand", _instr((*path, w, space, ty), (*ops, _name("%r3")))
        yield f"other word {w} unknown", _instr((*path, ".foo", w, space, ty), ops)
        yield f"other word {w} terminal", _instr((*path, w, ".sync", space, ty), ops)
        yield f"other word {w} illegal", _instr((*path, ".uni", w, space, ty), ops)
    # what ptxas says at once of the words before one it cannot parse (each a fatal error: one)
    yield "other word .reg after", _instr((*path, ".foo", ".rn", ".rz", ".reg", space, ty), ops)


def _canonical_lists(slots: tuple[Slot, ...]) -> Iterator[tuple[ast.Operand, ...]]:
    """The first canonical operand everywhere, then each slot's alternatives one at a time."""
    first = tuple(canonical(s)[0] for s in slots)
    yield first
    for i, s in enumerate(slots):
        for alt in canonical(s)[1:]:
            yield (*first[:i], alt, *first[i + 1:])


def random_cases(n: int, seed: int, forms: tuple[Instr, ...] = GENERATED) -> list[Case]:
    """`n` variants with several mutations at once (modifiers inserted anywhere, operands swapped,
    dropped or added), for the interplay of checks that single mutations never meet. Seeded."""
    rng = Random(seed)
    out: dict[str, Case] = {}
    while len(out) < n:
        form = rng.choice(forms)
        path = (*form.path, form.marker) if form.marker else form.path
        spaces = ["".join(p) for p in form.space_pairs] or list(form.spaces) or [""]
        mods = [*re.findall(r"\.[^.]+", rng.choice(spaces)), *form.canonical,
                *((".2d", ".tile") if form.dims else ())]
        if form.types:
            mods.append(form.types[0])
        slots = rng.choice(form.operands)
        ops = [rng.choice(canonical(s)) for s in slots]
        for _ in range(rng.randint(2, 4)):
            what = rng.randrange(4)
            if what == 0:
                mods.insert(rng.randint(0, len(mods)), rng.choice(MODIFIER_POOL))
            elif what == 1 and mods:
                mods.pop(rng.randrange(len(mods)))
            elif what == 2 and ops:
                ops[rng.randrange(len(ops))] = rng.choice(OPERAND_POOL)
            else:
                if ops and rng.random() < 0.5:
                    ops.pop()
                else:
                    ops.append(rng.choice(OPERAND_POOL))
        c = Case(f"{form.name}: random", _instr((*path, *mods), tuple(ops)))
        out.setdefault(c.text, c)
    return list(out.values())


# -- the tensor copy -------------------------------------------------------------------------------

#: Words of the tensor copies inserted into an otherwise legal tensor load: dimensions, load modes
#: (the store's too), the optional modifiers, the other completion mechanism.
TENSOR_WORDS: tuple[str, ...] = (
    ".3d", ".im2col", ".tile::gather4", ".im2col::w", ".im2col::w::128",
    ".tile::scatter4", ".im2col_no_offs", ".cta_group::1", ".cta_group::2", ".multicast::cluster",
    ".bulk_group", ".mbarrier::complete_tx::bytes",
)

#: Registers of each type and the other element shapes a coordinate or im2col vector is built from.
ELEMENT_POOL: tuple[ast.Operand, ...] = (
    _name("%r3"), _name("%sr3"), _name("%rd3"), _name("%ud3"), _name("%h3"), _name("%f3"), _name("%fd3"),
    _name("%p3"), _name("%tid.x"), _name("bar"), _imm(7), _imm(-1), _imm(1 << 32),
    ast.FloatImm(1.0, 0x3F800000, 32, "0f3F800000", P0), _name("nob"), _name("%r99"), ast.Sink(P0),
)

#: Bases of the tensorMap operand: registers of every type, variables of each state space, names
#: nothing declares.
TENSOR_BASES: tuple[str, ...] = ("%rd3", "%r3", "%ud3", "%h3", "%f3", "%fd3", "%p3", "gbar", "bar", "sb32",
                                 "nob", "%rd99")


def _tensor_addr(base: str, coords: tuple[ast.Operand, ...]) -> ast.Address:
    return ast.Address(_name(base), 0, P0, (ast.Vector(coords, P0),))


def _regs(prefix: str, n: int) -> tuple[ast.Operand, ...]:
    """n declared registers (DECLARATIONS: 8 `%r`, 4 `%h`)."""
    return tuple(_name(f"{prefix}{i % (4 if prefix == '%h' else 8)}") for i in range(n))


def _rebase(a: ast.Address, base: str | None = None,
            items: tuple[ast.Operand, ...] | None = None) -> ast.Address:
    return ast.Address(_name(base) if base else a.base, a.offset, a.pos, a.items if items is None else items)


def _tensor_variants(form: Instr) -> Iterator[tuple[str, ast.Instruction]]:
    """The tensor load (cp.async.bulk.tensor ... .mbarrier::complete_tx::bytes): every dimension x load
    mode x optional modifier, each word of the pools inserted, state spaces, vector lengths, and
    every operand shape in every slot."""
    marker = form.marker or ""
    pairs = ["".join(p) for p in form.space_pairs]
    optional = [f for f in form.flags if f != marker]

    def build(dim: str, mode: str, flags: str, pair: str, n_coords: int | None = None,
              n_offsets: int | None = None, mods: str = "") -> ast.Instruction:
        d = int(dim[1]) if dim else 0
        coords = n_coords if n_coords is not None else (5 if mode == ".tile::gather4" else d)
        ops: list[ast.Operand] = [_addr("%rd2"), _tensor_addr("%rd3", _regs("%r", coords)), _addr("bar")]
        if mode.startswith(".im2col"):
            k = n_offsets if n_offsets is not None else (2 if "::w" in mode else d - 2)
            ops.append(ast.Vector(_regs("%h", k), P0) if k > 0 else _name("%h1"))
        if ".multicast::cluster" in flags:
            ops.append(_name("%h2"))
        if ".L2::cache_hint" in flags:
            ops.append(_name("%rd4"))
        return _instr((*form.path, dim, pair, mode, marker, flags, mods), tuple(ops))

    modes = ("", *form.load_modes[:5])
    # 1. every dimension x load mode x state-space pair; every optional modifier set on each mode
    for pair in pairs:
        for mode in modes:
            for dim in form.dims:
                yield f"dims {dim}{mode}", build(dim, mode, "", pair)
            dim = ".2d" if mode == ".tile::gather4" else ".3d"
            for n in range(1, len(optional) + 1):
                for combo in combinations(optional, n):
                    yield f"flags {''.join(combo)}", build(dim, mode, "".join(combo), pair)
    base = (".2d", ".tile", "", pairs[0])
    # 2. one word of the pools inserted early or late
    for w in (*MODIFIER_POOL, *TENSOR_WORDS):
        yield f"insert {w}", _instr((*form.path, w, *base[:2], base[3], marker), build(*base).operands)
        yield f"insert {w} late", build(*base, mods=w)
    # (words of other instructions)
    path = (*form.path, *base[:2], base[3], marker)
    yield from _other_word_variants(form, path, "", "", build(*base).operands)
    # 3. .sem/.scope, which the copy does not take
    for sem_scope in (*SEM_POOL, *SCOPE_POOL, ".release.cta", ".relaxed.cluster"):
        yield f"sem/scope {sem_scope}", build(*base, mods=sem_scope)
    # 4. state spaces: every pair from the pool, with a shared, a global and a register address
    for a in SPACE_POOL:
        for b in SPACE_POOL:
            for addr in (_addr("bar"), _addr("gbar"), _addr("%rd2")):
                plain = build(".2d", ".tile", "", a + b)
                ops = (addr, plain.operands[1], addr)
                yield f"space {a}{b} {render_operand(addr)}", _instr(
                    (*form.path, ".2d", a, b, ".tile", marker), ops)
    # 5. an instruction type; 6. the dimension missing or doubled
    for t in (".b32", ".b64", ".b64.b64"):
        yield f"type {t}", build(*base, mods=t)
    for mode in modes:
        yield f"no dim{mode}", build("", mode, "", pairs[0], n_coords=3, n_offsets=1)
    # 7. vector lengths against the dimension and the load mode
    for dim in form.dims:
        for mode in ("", ".im2col", ".tile::gather4", ".im2col::w"):
            for n in range(1, 7):
                yield f"{n} coordinates {dim}{mode}", build(dim, mode, "", pairs[0], n_coords=n)
            if mode.startswith(".im2col"):
                for k in range(0, 5):
                    yield f"{k} im2col {dim}{mode}", build(dim, mode, "", pairs[0], n_offsets=k)
    # 8. operand count: every list shortened and lengthened
    for flags in ("", ".multicast::cluster", ".L2::cache_hint", ".multicast::cluster.L2::cache_hint"):
        for mode in (".tile", ".im2col"):
            full = build(".3d", mode, flags, pairs[0])
            yield f"drop last operand{mode}{flags}", _with(full, full.operands[:-1])
            yield f"extra operand{mode}{flags}", _with(full, (*full.operands, _name("%r3")))
    # 9. a guard
    for pred, negated in GUARD_POOL:
        yield f"guard {pred}", _with(build(*base), guard=ast.Guard(pred, negated, P0))
    # 10. every operand shape in every slot: of the plain list and of the longest one
    for mode, flags in ((".tile", ""), (".im2col", ".multicast::cluster.L2::cache_hint")):
        full = build(".3d", mode, flags, pairs[0])
        for i, orig in enumerate(full.operands):
            if i == 1:
                continue
            for op in OPERAND_POOL:
                yield f"operand {i} = {render_operand(op)}", _with(
                    full, (*full.operands[:i], op, *full.operands[i + 1:]))
            if isinstance(orig, ast.Vector):
                yield from _vector_shapes(full, i, orig, f"im2col{mode}")
        coords = full.operands[1]
        assert isinstance(coords, ast.Address)
        for b in TENSOR_BASES:
            yield f"tensorMap {b}", _with(
                full, (full.operands[0], _rebase(coords, base=b), *full.operands[2:]))
        for shape in (_addr("%rd3"), ast.Address(_name("%rd3"), 0, P0, (_name("%r1"),)), _name("%rd3")):
            yield f"tensor operand {render_operand(shape)}", _with(
                full, (full.operands[0], shape, *full.operands[2:]))
        vec = coords.items[0]
        assert isinstance(vec, ast.Vector)
        for label, new in _element_shapes(vec):
            yield f"coordinates {label}", _with(
                full, (full.operands[0], _rebase(coords, items=(new,)), *full.operands[2:]))
    # 11. vectors after the tensor operand: each length in each operand (.b16 elements: where
    # ctaMask goes, "Vector is not expected"), and the offsets of `.im2col` kept without it
    for mode, flags in ((".tile", ".multicast::cluster"), (".im2col", ".multicast::cluster"),
                        (".tile", ".multicast::cluster.L2::cache_hint")):
        full = build(".3d", mode, flags, pairs[0])
        for i in range(2, len(full.operands)):
            for n in (1, 2, 3, 6):
                vec = ast.Vector(_regs("%h", n), P0)
                yield f"vector of {n} in operand {i}{mode}{flags}", _with(
                    full, (*full.operands[:i], vec, *full.operands[i + 1:]))
    for flags in ("", ".multicast::cluster", ".L2::cache_hint", ".multicast::cluster.L2::cache_hint"):
        kept = build(".3d", ".im2col", flags, pairs[0])
        yield f"im2col dropped{flags}", _instr((*form.path, ".3d", pairs[0], marker, flags), kept.operands)
        # 12. the plain bulk copy's name with the tensor load's words and operands
        for mode in ("", ".im2col"):
            line = build(".5d", mode, flags, pairs[0])
            for what, path in (("tensor dropped", form.path[:3]),
                               ("bulk doubled", (*form.path[:3], *form.path[2:]))):
                yield f"{what}{mode}{flags}", _instr((*path, ".5d", pairs[0], mode, marker, flags),
                                                     line.operands)
    yield from _unaddressed_variants(build)


#: What the generator writes where the tensor operand goes, apart from `[tensorMap, {...}]`: the
#: operand pool but its vector (a one-element vector there is judged as the coordinates, below).
UNADDRESSED_POOL: tuple[ast.Operand, ...] = tuple(op for op in OPERAND_POOL if not isinstance(op, ast.Vector))
#: Tails of a list whose tensor operand is no address: cache-policy shapes, an im2col vector, none.
TAIL_POOL: tuple[ast.Operand, ...] = (
    _name("%rd4"), _name("%ud3"), _name("%r4"), _name("%h2"), _name("%fd3"), _imm(5), _addr("bar"),
    ast.Vector((_name("%h1"),), P0),
)


def _unaddressed_variants(build: Callable[..., ast.Instruction]) -> Iterator[tuple[str, ast.Instruction]]:
    """A tensor operand that is no `[tensorMap, {...}]` address (docs/lint.md): every operand shape
    there; 32-bit scalars and vectors with every shape of dstMem and mbar, each optional modifier and
    tail; and the tensorMap address and its vector written apart, with their shapes and the lists."""
    plain = build(".2d", ".tile", "", ".shared::cluster.global")
    dst, coords, mbar = plain.operands
    assert isinstance(coords, ast.Address)
    vec = coords.items[0]
    for op in UNADDRESSED_POOL:
        yield f"unaddressed {render_operand(op)}", _with(plain, (dst, op, mbar))
    for spaces in ("", ".global", ".shared::cluster", ".global.global", ".shared::cluster.shared::cta",
                   ".shared::cta.global", ".shared::cluster.global.global"):
        head = build(".2d", ".tile", "", spaces)
        yield f"unaddressed spaces {spaces}", _with(head, (dst, _name("%r3"), mbar))
    mixed = ast.Vector((_name("%r3"), _name("%h1")), P0)
    for x in (_name("%r3"), vec, mixed):
        for i in (0, 2):
            for op in UNADDRESSED_POOL:
                if i == 2 and isinstance(op, ast.Sink) and x is mixed:
                    continue  # a sink after a vector's elements: not modelled (docs/lint.md, Limits)
                ops = [dst, x, mbar]
                ops[i] = op
                label = f"unaddressed {render_operand(x)} operand {i} = {render_operand(op)}"
                yield label, _with(plain, tuple(ops))
    for mode, flags in ((".tile", ""), (".tile", ".L2::cache_hint"), (".tile", ".multicast::cluster"),
                        (".tile", ".cta_group::1"), (".im2col", ""), (".tile::gather4", ""),
                        (".tile", ".L2::cache_hint.cta_group::1")):
        head = build(".3d" if mode == ".im2col" else ".2d", mode, flags, ".shared::cluster.global")
        yield f"unaddressed {mode}{flags}", _with(head, (dst, _name("%r3"), mbar))
        for tail in TAIL_POOL:
            yield f"unaddressed {mode}{flags} tail {render_operand(tail)}", _with(
                head, (dst, _name("%r3"), mbar, tail))
    # the tensorMap address apart from its vector: [dst], tmap, {coords}, [mbar], ...
    for mode, flags in ((".tile", ""), (".tile", ".L2::cache_hint"), (".tile", ".multicast::cluster"),
                        (".tile", ".cta_group::1"), (".im2col", ""),
                        (".im2col", ".multicast::cluster.L2::cache_hint")):
        full = build(".3d", mode, flags, ".shared::cluster.global")
        d, t, m, *rest = full.operands
        assert isinstance(t, ast.Address)
        apart = (d, _addr("gbar"), t.items[0], m, *rest)
        yield f"apart {mode}{flags}", _with(full, apart)
        yield f"apart {mode}{flags} short", _with(full, apart[:-1])
        yield f"apart {mode}{flags} long", _with(full, (*apart, _name("%rd4")))
    # a tensorMap of 32 bits in `[tensorMap, {...}]`: read as `tensorMap, {...}` too, by the lists
    # above (validate_tensor_flat), with each shape of the operand after it, or none
    for mode, flags in ((".tile", ""), (".tile", ".L2::cache_hint"), (".tile", ".multicast::cluster"),
                        (".tile", ".cta_group::1"), (".im2col", ""), (".tile::gather4", "")):
        full = build(".3d" if mode == ".im2col" else ".2d", mode, flags, ".shared::cluster.global")
        d, t, *_ = full.operands
        assert isinstance(t, ast.Address)
        tails: tuple[tuple[ast.Operand, ...], ...] = (
            (), (_name("%rd4"),), (_imm(16),), (_name("bar"),), (_addr("bar"),), (_name("%r4"),))
        for base, dst in (("%r3", d), ("sb32", d), ("%r3", _imm(16)), ("%rd3", d)):
            for after in tails:
                shown = ", ".join(render_operand(x) for x in after)
                yield f"tensorMap {base}{mode}{flags} tail ({shown})", _with(
                    full, (dst, _rebase(t, base), *after))
    # a variable's bare name as dstMem or mbar: an address whose state space is judged
    for spaces in (".shared::cluster.global", ".shared::cta.global", ".global.shared::cta", ".global"):
        full = build(".2d", ".tile", "", spaces)
        d, t, m = full.operands
        for name in ("gbar", "bar", "sb32"):
            yield f"bare {name} as dstMem {spaces}", _with(full, (_name(name), t, m))
            yield f"bare {name} as mbar {spaces}", _with(full, (d, t, _name(name)))
    full = build(".3d", ".tile", "", ".shared::cluster.global")
    d, t, m = full.operands
    assert isinstance(t, ast.Address)
    apart = (d, _addr("gbar"), t.items[0], m)
    for i in range(4):
        for op in (*UNADDRESSED_POOL, ast.Vector(_regs("%r", 3), P0), ast.Vector(_regs("%r", 2), P0)):
            if i == 1 and isinstance(op, ast.Vector | ast.FloatImm):
                continue  # a vector or a float as tensorMap: not modelled (docs/lint.md, Limits)
            ops = list(apart)
            ops[i] = op
            yield f"apart operand {i} = {render_operand(op)}", _with(full, tuple(ops))


def _element_shapes(vec: ast.Vector) -> Iterator[tuple[str, ast.Vector]]:
    """The vector made of one element shape throughout, and with one element replaced by it."""
    n = len(vec.items)
    for op in ELEMENT_POOL:
        yield f"all {render_operand(op)}", ast.Vector((op,) * n, P0)
        yield f"last {render_operand(op)}", ast.Vector((*vec.items[:-1], op), P0)
        yield f"first {render_operand(op)}", ast.Vector((op, *vec.items[1:]), P0)


def _vector_shapes(full: ast.Instruction, i: int, vec: ast.Vector,
                   label: str) -> Iterator[tuple[str, ast.Instruction]]:
    for what, new in _element_shapes(vec):
        yield f"{label} {what}", _with(full, (*full.operands[:i], new, *full.operands[i + 1:]))
