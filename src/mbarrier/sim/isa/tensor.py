"""Tensor copies: cp.async.bulk.tensor (loads into shared memory, stores to global memory),
cp.reduce.async.bulk.tensor and cp.async.bulk.prefetch.tensor (PTX ISA 9.7.9.25.5.2-9.7.9.25.5.4).

The instruction reads the tensor map when issued and an engine moves the box when it lands
(`Machine.tensor_load` / `tensor_store`, the bytes from `sim.tensorcopy`): a load completes the box's
bytes of tx on its mbarrier (every destination CTA's with `.multicast::cluster`), a store or reduction
belongs to the thread's bulk group. Forms of sm_100 (`.cta_group`, `.tile::gather4`/`.scatter4`,
`.im2col::w*`, `.im2col_no_offs*`, overrides, report mechanisms) stop the run naming the form; the
cache policy is a hint (accepted, no effect); a prefetch moves nothing a thread can observe but
faults where a copy of its box would.
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim.compile import Gen
from mbarrier.sim.registry import Access, CopyKind, CopyUse, Facts, Kind, Space
from mbarrier.sim.types import TYPES
from mbarrier.spec.tensormap import TENSOR_MAP_SIZE

S32 = TYPES[".s32"]
U16 = TYPES[".u16"]
_DIMS = {f".{n}d": n for n in range(1, 6)}
_DST = {".shared::cluster": "cluster", ".shared::cta": "cta"}
_REDOPS = frozenset({".add", ".min", ".max", ".inc", ".dec", ".and", ".or", ".xor"})
_HINTS = frozenset({".L2::cache_hint"})


def _base(q: tuple[str, ...]) -> tuple[str, ...]:
    """The qualifiers after cp{.reduce}.async.bulk{.prefetch}.tensor."""
    return tuple(x for x in q if x not in (".reduce", ".async", ".bulk", ".prefetch", ".tensor"))


def is_tensor(q: tuple[str, ...]) -> bool:
    return ".tensor" in q and ".bulk" in q


def _is_store(q: tuple[str, ...]) -> bool:
    """global <- shared::cta: `.global` comes before the shared state space."""
    return ".global" in q and q.index(".global") < min((q.index(x) for x in _DST if x in q), default=len(q))


def facts(ins: ast.Instruction) -> Facts:
    """A load issues a copy into shared memory that completes tx on operand 2's mbarrier; a store or reduction
    one that reads shared memory (operand 1) into the tensor's global memory (its addresses follow from the
    tensor map: for the checker, anywhere); a prefetch reads its tensor map only: a load of the map's 128
    bytes (operand 0's address, before its coordinates). A multicast load lands, and completes tx, in every
    CTA of its mask (`CopyUse.multicast`)."""
    q = ins.qualifiers
    name = "cp" + "".join(q)
    if ".prefetch" in q:  # moves nothing, but reads its tensor map (and faults as a copy of its box would)
        return Facts(Kind.LOAD, name, access=Access(0, Space.GENERIC, TENSOR_MAP_SIZE))
    if _is_store(q):
        # global <- shared::cta: the tensor map (operand 0) names global memory anywhere in the tensor
        return Facts(Kind.COPY, name, copy=CopyUse(CopyKind.TENSOR_STORE, Access(0, Space.GENERIC),
                                                   Access(1, Space.CTA)))
    into = Space.CLUSTER if ".shared::cluster" in q else Space.CTA
    return Facts(Kind.COPY, name, copy=CopyUse(CopyKind.TENSOR, Access(0, into), Access(1, Space.GENERIC),
                                               barrier=Access(2, Space.CLUSTER, 8),
                                               multicast=".multicast::cluster" in q))


def _coords(g: Gen, op: ast.Operand, rank: int, form: str) -> tuple[str, str]:
    """(tensor map address, tuple of signed coordinates) of `[tensorMap, {c0, ...}]`."""
    if not isinstance(op, ast.Address) or len(op.items) != 1 or not isinstance(op.items[0], ast.Vector):
        raise g.unsupported(f"{form}: its tensor operand is [tensorMap, {{coordinates}}]")
    coords = op.items[0].items
    if len(coords) != rank:
        raise g.unsupported(f"{form}: {len(coords)} coordinates for .{rank}d")
    tmap = g.address(ast.Address(op.base, op.offset, op.pos), "generic")
    return tmap, "(" + "".join(f"{g.ssrc(c, S32)}, " for c in coords) + ")"


def emit(g: Gen, ins: ast.Instruction) -> None:
    q = ins.qualifiers
    form = "cp" + "".join(q)
    rest = _base(q)
    dims = [_DIMS[x] for x in rest if x in _DIMS]
    if len(dims) != 1:
        raise g.unsupported(f"{form}: one of .1d ... .5d")
    rank = dims[0]
    ops = list(ins.operands)
    if ".L2::cache_hint" in rest:  # the cache policy (the last operand) changes nothing modelled
        ops.pop()
    rest = tuple(x for x in rest if x not in _DIMS and x not in _HINTS)
    if ".prefetch" in q:
        _prefetch(g, rest, ops, rank, form)
    elif _is_store(q):
        _store(g, ins, tuple(x for x in rest if x != ".global"), ops, rank, form)
    else:
        _load(g, rest, ops, rank, form)


def _prefetch(g: Gen, rest: tuple[str, ...], ops: list[ast.Operand], rank: int, form: str) -> None:
    """cp.async.bulk.prefetch.tensor.dim.L2.global{.tile,.im2col} [tensorMap, coords]{, offsets}: a hint
    to fill the L2 cache that moves nothing a thread sees; it reads the tensor map and faults where a
    copy of the same box would (the H100 records: a box starting off 16 bytes)."""
    mode = [x for x in rest if x not in (".L2", ".global")]
    im2col = mode == [".im2col"]
    if mode not in ([], [".tile"], [".im2col"]) or len(ops) != 1 + im2col:
        raise g.unsupported(f"{form}: not a prefetch form of sm_90")
    tmap, coords = _coords(g, ops[0], rank, form)
    offsets = _offsets(g, ops[1], rank, form) if im2col else "None"
    g.lines.append(f"m.tensor_prefetch(t, {tmap}, {coords}, {offsets})")


def _offsets(g: Gen, off: ast.Operand, rank: int, form: str) -> str:
    """The im2col offsets `{o, ...}` (rank - 2 of them, 16-bit) as a tuple expression."""
    items = off.items if isinstance(off, ast.Vector) else ()
    if len(items) != rank - 2:
        raise g.unsupported(f"{form}: {rank - 2} im2col offsets in braces")
    return "(" + "".join(f"{g.src(x, U16)}, " for x in items) + ")"


def _load(g: Gen, rest: tuple[str, ...], ops: list[ast.Operand], rank: int, form: str) -> None:
    """cp.async.bulk.tensor.dim.dst.global{.tile,.im2col}.mbarrier::complete_tx::bytes
    {.multicast::cluster} [dstMem], [tensorMap, coords], [mbar]{, im2colOffsets}{, ctaMask}."""
    multicast = ".multicast::cluster" in rest
    im2col = ".im2col" in rest
    known = {".global", ".tile", ".im2col", ".mbarrier::complete_tx::bytes", ".multicast::cluster", *_DST}
    spaces = [x for x in rest if x in _DST]
    extra = [x for x in rest if x not in known]
    if extra or len(spaces) != 1 or ".global" not in rest or ".mbarrier::complete_tx::bytes" not in rest \
            or (".tile" in rest and im2col):
        why = f"qualifier {extra[0]}" if extra else "a load takes .shared::{cta,cluster}.global and " \
              ".mbarrier::complete_tx::bytes"
        raise g.unsupported(f"{form}: {why} (the sm_90 forms are modelled)")
    dst = _DST[spaces[0]]
    if multicast and dst != "cluster":
        raise g.unsupported(f"{form}: .multicast::cluster takes .shared::cluster")
    if im2col and rank < 3:
        raise g.unsupported(f"{form}: .im2col needs .3d to .5d")
    want = 3 + im2col + multicast
    if len(ops) != want:
        raise g.unsupported(f"{form} takes {want} operands here, got {len(ops)}")
    tmap, coords = _coords(g, ops[1], rank, form)
    offsets = _offsets(g, ops[3], rank, form) if im2col else "None"
    mask = g.src(ops[-1], U16) if multicast else "None"
    space = "cluster" if dst == "cluster" else "cta"
    g.lines.append(f"m.tensor_load(t, {dst!r}, {g.address(ops[0], space)}, {tmap}, {coords}, {offsets}, "
                   f"{g.address(ops[2], 'cluster')}, {mask})")


def _store(g: Gen, ins: ast.Instruction, rest: tuple[str, ...], ops: list[ast.Operand], rank: int,
           form: str) -> None:
    """cp.async.bulk.tensor.dim.global.shared::cta{.tile}.bulk_group [tensorMap, coords], [srcMem] and
    cp.reduce.async.bulk.tensor.dim.global.shared::cta.redOp{.tile}.bulk_group (the same operands)."""
    reds = [x for x in rest if x in _REDOPS]
    reduce = ins.qualifiers[:1] == (".reduce",)
    extra = [x for x in rest if x not in (".shared::cta", ".tile", ".bulk_group", *_REDOPS)]
    if extra or ".shared::cta" not in rest or ".bulk_group" not in rest or len(reds) != int(reduce):
        why = f"qualifier {extra[0]}" if extra else "a store takes .global.shared::cta and .bulk_group"
        raise g.unsupported(f"{form}: {why} (the tile forms of sm_90 are modelled)")
    if len(ops) != 2:
        raise g.unsupported(f"{form} takes [tensorMap, coordinates], [srcMem]")
    tmap, coords = _coords(g, ops[0], rank, form)
    red = repr(reds[0][1:]) if reds else "None"
    g.lines.append(f"m.tensor_store(t, {tmap}, {coords}, {g.address(ops[1], 'cta')}, {red})")
