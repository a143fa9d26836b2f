"""Asynchronous copies: cp.async (with groups and cp.async.mbarrier.arrive), cp.async.bulk and the bulk
reduction into global memory (cp.reduce.async.bulk ... .bulk_group, integer operations).

Issuing a copy creates an engine agent that the scheduler runs later: it moves the bytes and then
performs its mbarrier side effect (complete-tx for bulk copies, 9.7.13.15.5.2; the arrive-on of a
cp.async.mbarrier.arrive once all earlier cp.async of the thread have landed, 9.7.13.15.15).
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim.compile import Gen
from mbarrier.sim.isa import tensor
from mbarrier.sim.isa.mbarrier import mbar_space
from mbarrier.sim.registry import SPACES, Access, CopyKind, CopyUse, Facts, Kind, Space, instruction, space_of
from mbarrier.sim.types import TYPES

U32 = TYPES[".u32"]
_CACHE = frozenset({".ca", ".cg", ".L2::64B", ".L2::128B", ".L2::256B"})


def cp_facts(ins: ast.Instruction) -> Facts:
    """Which copy a cp instruction issues, where it lands and reads, its size and its mbarrier; or the
    group bookkeeping and waits (the thread's own copies)."""
    q = ins.qualifiers
    name = "cp" + "".join(q)
    if tensor.is_tensor(q):
        return tensor.facts(ins)
    if q[:3] == (".reduce", ".async", ".bulk") and q[3:5] == (".global", ".shared::cta"):
        return Facts(Kind.COPY, name, copy=CopyUse(CopyKind.BULK_STORE, Access(0, Space.GLOBAL),
                                                   Access(1, Space.CTA), size=2))
    rest = q[1:] if q[:1] == (".async",) else None
    if rest is None or rest[:1] in ((".bulk",),) and rest[1:2] == (".prefetch",):
        return Facts(Kind.OPAQUE, name)  # not executed: the emitter refuses it
    if rest[:2] == (".mbarrier", ".arrive"):
        return Facts(Kind.COPY_ARRIVE, name, copy=CopyUse(CopyKind.CP_ASYNC, Access(0, space_of(rest), 8),
                                                          noinc=".noinc" in rest[2:]))
    if rest[-1:] == (".commit_group",):
        return Facts(Kind.COPY_COMMIT, name)
    if ".wait_group" in rest or ".wait_all" in rest:
        return Facts(Kind.COPY_WAIT, name, reads_only=".read" in rest)
    spaces = [SPACES[x] for x in rest if x in SPACES]
    if rest[:1] == (".bulk",) and spaces[:1] == [Space.GLOBAL]:
        return Facts(Kind.COPY, name, copy=CopyUse(CopyKind.BULK_STORE, Access(0, Space.GLOBAL),
                                                   Access(1, Space.CTA), size=2))
    if rest[:1] == (".bulk",):
        into = Space.CLUSTER if ".shared::cluster" in rest else Space.CTA
        source = spaces[1] if len(spaces) > 1 else Space.GLOBAL
        return Facts(Kind.COPY, name, copy=CopyUse(CopyKind.BULK, Access(0, into), Access(1, source), size=2,
                                                   barrier=Access(3, Space.CLUSTER, 8),
                                                   multicast=".multicast::cluster" in rest,
                                                   mask=4 if ".multicast::cluster" in rest else None))
    dst, src = Access(0, Space.CTA), Access(1, Space.GLOBAL)
    return Facts(Kind.COPY, name, copy=CopyUse(CopyKind.CP_ASYNC, dst, src, size=2))


@instruction("cp", facts=cp_facts)
def _cp(g: Gen, ins: ast.Instruction) -> None:
    q = ins.qualifiers
    if tensor.is_tensor(q):
        tensor.emit(g, ins)
        return
    if q[:3] == (".reduce", ".async", ".bulk"):
        _bulk_reduce(g, ins, q[3:])
        return
    if q[:1] != (".async",):
        raise g.unsupported()
    rest = q[1:]
    if rest[:2] == (".mbarrier", ".arrive"):
        tail = rest[2:]
        use = cp_facts(ins).copy
        noinc = use is not None and use.noinc
        if any(x not in (".noinc", ".b64") and not x.startswith(".shared") for x in tail):
            raise g.unsupported()
        space = mbar_space(g, tail)
        g.lines.append(f"m.cp_mb_arrive(t, {space!r}, {g.address(ins.operands[0], space)}, {noinc})")
        return
    if rest == (".commit_group",):
        g.lines.append("m.cp_commit(t)")
        return
    if rest in ((".wait_group",), (".wait_all",)):
        n = "0" if rest == (".wait_all",) else g.src(ins.operands[0], U32)
        if rest == (".wait_all",):
            g.lines.append("m.cp_commit(t)")
        g.lines.append(f"t.pc = {g.next_pc()}")
        g.lines.append(f"m.cp_wait(t, {n}, 'cp.async')")
        g.sets_pc = True
        return
    if rest[:1] == (".bulk",):
        _bulk(g, ins, rest[1:])
        return
    if rest[:1] in ((".ca",), (".cg",)):
        _cp_async(g, ins, rest)
        return
    raise g.unsupported()


def _cp_async(g: Gen, ins: ast.Instruction, rest: tuple[str, ...]) -> None:
    spaces = [x for x in rest if x not in _CACHE]
    if spaces not in ([".shared", ".global"], [".shared::cta", ".global"]):
        raise g.unsupported(f"qualifiers {''.join(spaces)}")
    ops = ins.operands
    if len(ops) not in (3, 4) or (len(ops) == 4 and not isinstance(ops[3], (ast.Imm, ast.Name))):
        raise g.unsupported("ignore-src or cache-policy operands")
    size = g.src(ops[2], U32)
    src_size = g.src(ops[3], U32) if len(ops) == 4 else size
    g.lines.append(f"m.cp_async(t, {g.address(ops[0], 'cta')}, {g.address(ops[1], 'global')}, {size}, "
                   f"{src_size})")


def _bulk(g: Gen, ins: ast.Instruction, rest: tuple[str, ...]) -> None:
    if rest == (".commit_group",):
        g.lines.append("m.bulk_commit(t)")
        return
    if rest in ((".wait_group",), (".wait_group", ".read")):
        g.lines.append(f"t.pc = {g.next_pc()}")
        g.lines.append(f"m.cp_wait(t, {g.src(ins.operands[0], U32)}, 'bulk')")
        g.sets_pc = True
        return
    ops = list(ins.operands)
    if rest[:1] == (".prefetch",):
        raise g.unsupported()
    if ".L2::cache_hint" in rest:  # the cache policy (last operand) changes nothing the simulator models
        rest = tuple(q for q in rest if q != ".L2::cache_hint")
        ops.pop()
    multicast = ".multicast::cluster" in rest
    rest = tuple(q for q in rest if q != ".multicast::cluster")
    if rest[2:] == (".mbarrier::complete_tx::bytes",) and rest[1] == ".global" and len(ops) == 4 + multicast:
        dst = "cluster" if rest[0] == ".shared::cluster" else "cta" if rest[0] == ".shared::cta" else None
        if dst is None or (multicast and dst != "cluster"):
            raise g.unsupported()
        mask = g.src(ops[4], TYPES[".u16"]) if multicast else "None"
        g.lines.append(f"m.bulk_copy(t, {dst!r}, 'global', {g.address(ops[0], dst)}, "
                       f"{g.address(ops[1], 'global')}, {g.src(ops[2], U32)}, {g.address(ops[3], dst)}, "
                       f"{mask})")
        return
    if multicast:
        raise g.unsupported()
    if rest == (".shared::cluster", ".shared::cta", ".mbarrier::complete_tx::bytes") and len(ops) == 4:
        g.lines.append(f"m.bulk_copy(t, 'cluster', 'cta', {g.address(ops[0], 'cluster')}, "
                       f"{g.address(ops[1], 'cta')}, {g.src(ops[2], U32)}, {g.address(ops[3], 'cluster')})")
        return
    if rest == (".global", ".shared::cta", ".bulk_group") and len(ops) == 3:
        g.lines.append(f"m.bulk_store(t, {g.address(ops[0], 'global')}, {g.address(ops[1], 'cta')}, "
                       f"{g.src(ops[2], U32)})")
        return
    raise g.unsupported()


#: cp.reduce.async.bulk into global memory (PTX ISA 9.7.9.25.4.2): the integer .redOp/.type pairs the
#: simulator performs, and the element type each reduces as (.b32/.b64 bitwise: unsigned). The float
#: forms (.add.f32/.f64, .noftz.f16/.bf16, .min/.max of halves) are refused by name.
_BULK_REDUCE: dict[tuple[str, str], str] = {
    **{(".add", t): t[1:] for t in (".u32", ".s32", ".u64")},
    **{(op, t): t[1:] for op in (".min", ".max") for t in (".u32", ".s32", ".u64", ".s64")},
    **{(op, t): "u" + t[2:] for op in (".and", ".or", ".xor") for t in (".b32", ".b64")},
    (".inc", ".u32"): "u32", (".dec", ".u32"): "u32",
}


def _bulk_reduce(g: Gen, ins: ast.Instruction, rest: tuple[str, ...]) -> None:
    """cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.redOp.type [dstMem], [srcMem],
    size: an engine reduces `size` bytes of shared memory into global memory, element by element."""
    ops = list(ins.operands)
    if ".L2::cache_hint" in rest:  # the cache policy (last operand) changes nothing the simulator models
        rest = tuple(q for q in rest if q != ".L2::cache_hint")
        ops.pop()
    if rest[:3] != (".global", ".shared::cta", ".bulk_group") or len(rest) != 5 or len(ops) != 3:
        raise g.unsupported()
    ty = _BULK_REDUCE.get((rest[3], rest[4]))
    if ty is None:
        raise g.unsupported(f"{rest[3]}{rest[4]}")
    g.lines.append(f"m.bulk_reduce(t, {g.address(ops[0], 'global')}, {g.address(ops[1], 'cta')}, "
                   f"{g.src(ops[2], U32)}, {rest[3][1:]!r}, {ty!r})")
