"""Warpgroup matrix multiply-accumulate (PTX ISA 9.7.15): wgmma.mma_async (9.7.15.5.2) and its sparse
form wgmma.mma_async.sp (9.7.15.6.3), wgmma.fence,
wgmma.commit_group, wgmma.wait_group (9.7.15.7). The machine's side is `Machine.wgmma` and the `wg_*`
methods; the arithmetic `sim.mma`; the model `sim.wgmmastate`."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.ptx import ast
from mbarrier.sim.compile import Gen
from mbarrier.sim.mma import Form, FormError, parse_form
from mbarrier.sim.registry import Facts, Kind, instruction
from mbarrier.sim.types import TYPES
from mbarrier.sim.wgmmastate import MmaOp
from mbarrier.spec import wgmma as spec

_ALIGNED = (".sync", ".aligned")


def wgmma_facts(ins: ast.Instruction) -> Facts:
    """What each wgmma instruction touches: mma_async is a warp collective issuing an operation that owns
    its accumulator (and register A fragment, and the sparse form's metadata register) until retired;
    wait_group a warp collective retiring the lanes' groups; fence and commit_group are the thread's own
    bookkeeping. Every form belongs to a warpgroup's work (its warps compute different rows)."""
    what = ins.qualifiers[:1]
    if what == (".mma_async",):
        regs = (0, 1) if len(ins.operands) > 1 and isinstance(ins.operands[1], ast.Vector) else (0,)
        if ins.qualifiers[1:2] == (".sp",):
            return Facts(Kind.MMA, "wgmma.mma_async.sp", async_registers=regs + (3,), warpgroup=True)
        return Facts(Kind.MMA, "wgmma.mma_async", async_registers=regs, warpgroup=True)
    if what in ((".fence",), (".commit_group",)):
        return Facts(Kind.COPY_COMMIT, "wgmma" + what[0], warpgroup=True)
    if what == (".wait_group",):
        return Facts(Kind.MMA, "wgmma.wait_group", warpgroup=True)
    return Facts(Kind.OPAQUE, "wgmma" + "".join(ins.qualifiers), warpgroup=True)


@instruction("wgmma", facts=wgmma_facts)
def _wgmma(g: Gen, ins: ast.Instruction) -> None:
    q = ins.qualifiers
    if q[:1] == (".mma_async",):
        _mma(g, ins)
        return
    if q[1:] != _ALIGNED:
        raise g.unsupported("wgmma.fence, commit_group and wait_group take .sync.aligned")
    if q[0] == ".fence" and not ins.operands:
        g.lines.append("m.wg_fence(t)")
    elif q[0] == ".commit_group" and not ins.operands:
        g.lines.append("m.wg_commit(t)")
    elif q[0] == ".wait_group" and len(ins.operands) == 1 and isinstance(ins.operands[0], ast.Imm):
        g.lines.append(f"m.wg_wait(t, {ins.operands[0].value}, {g.index})")
        g.sets_pc = True
    else:
        raise g.unsupported()


def _mma(g: Gen, ins: ast.Instruction) -> None:
    ops = ins.operands
    a_in_registers = len(ops) > 1 and isinstance(ops[1], ast.Vector)
    try:
        form = parse_form(ins.qualifiers, a_in_registers)
    except FormError as e:
        raise g.unsupported(str(e)) from None
    section = spec.SPARSE_MMA_SECTION if form.sparse else spec.MMA_SECTION
    if len(ops) != form.operands():
        raise g.unsupported(f"{len(ops)} operands; {form.atype} takes {form.operands()} ({section})")
    d_slots = _vector(g, ops[0], form.d_registers, "the accumulator")
    a_slots = _vector(g, ops[1], spec.A_REGISTERS, "matrix A") if a_in_registers else ()
    meta_slots: tuple[int, ...] = ()
    selector = 0
    if form.sparse:  # d, a, b-desc, sp-meta, sp-sel, scale-d, ...
        meta = g.lookup(ops[3].name) if isinstance(ops[3], ast.Name) else None
        if meta is None or meta.type.bits != spec.METADATA_BITS:
            raise g.unsupported(f"sp-meta must be a 32-bit register ({section})")
        meta_slots = (meta.slot,)
        selector = _imm(g, ops[4])
        if selector not in spec.SPARSE_SELECTORS[form.atype]:
            raise g.unsupported(f"sp-sel {selector}: {form.atype} takes "
                                f"{' or '.join(map(str, spec.SPARSE_SELECTORS[form.atype]))} ({section})")
        ops = ops[:3] + ops[5:]
    imms = [_imm(g, x) for x in ops[4:]]
    scale_a = scale_b = 1
    if form.floating:
        scale_a, scale_b = imms[0], imms[1]
    trans_a, trans_b = _transposes(form, imms)
    if scale_a not in spec.SCALE_VALUES or scale_b not in spec.SCALE_VALUES:
        raise g.unsupported(f"imm-scale-a/b must be -1 or 1 ({section})")
    if trans_a not in spec.TRANS_VALUES or trans_b not in spec.TRANS_VALUES:
        raise g.unsupported(f"imm-trans-a/b must be 0 or 1 ({section})")
    op = MmaOp(form, d_slots, a_slots, scale_a, scale_b, bool(trans_a), bool(trans_b), meta_slots, selector)
    b64 = TYPES[".b64"]
    desc_a = "None" if a_in_registers else g.src(ops[1], b64)
    scale_d = g.src(ops[3], TYPES[".pred"])
    g.lines.append(f"t.pc = {g.next_pc()}")
    g.lines.append(f"m.wgmma(t, {g.const(op)}, {desc_a}, {g.src(ops[2], b64)}, {scale_d})")
    g.sets_pc = True


def _transposes(form: Form, imms: list[int]) -> tuple[int, int]:
    """imm-trans-a and imm-trans-b among the immediates after scale-d (0 where the form has none)."""
    if not (form.floating and form.atype in spec.TRANSPOSABLE):
        return 0, 0
    return (0, imms[2]) if form.a_in_registers else (imms[2], imms[3])


@dataclass(frozen=True)
class MmaReads:
    """What one wgmma.mma_async's engine reads of shared memory depends on, as its syntax fixes it: the
    form, the transposes, and the operand indices of its matrix descriptors (`desc_a` None where A comes
    from registers). With the descriptors' values, `sim.mma.engine_chunks` names the bytes."""

    form: Form
    trans_a: bool
    trans_b: bool
    desc_a: int | None
    desc_b: int


def mma_reads(ins: ast.Instruction) -> MmaReads | None:
    """The MmaReads of a wgmma.mma_async (dense or .sp) the simulator runs; None for anything else (the
    checker then takes the CTA's whole shared memory)."""
    ops = ins.operands
    a_in_registers = len(ops) > 1 and isinstance(ops[1], ast.Vector)
    try:
        form = parse_form(ins.qualifiers, a_in_registers)
    except FormError:
        return None
    if len(ops) != form.operands():
        return None
    rest = ops[:3] + ops[5:] if form.sparse else ops  # the sparse form's sp-meta and sp-sel
    if not all(isinstance(x, ast.Imm) for x in rest[4:]):
        return None
    trans_a, trans_b = _transposes(form, [x.value for x in rest[4:] if isinstance(x, ast.Imm)])
    return MmaReads(form, bool(trans_a), bool(trans_b), None if a_in_registers else 1, 2)


def _vector(g: Gen, op: ast.Operand, count: int, what: str) -> tuple[int, ...]:
    if not isinstance(op, ast.Vector) or len(op.items) != count:
        raise g.unsupported(f"{what} must be a vector of {count} registers ({spec.FRAGMENTS_SECTION})")
    slots = []
    for item in op.items:
        reg = g.dst(item)
        if reg is None or reg.type.bits != 32:
            raise g.unsupported(f"{what}: 32-bit registers ({spec.FRAGMENTS_SECTION})")
        slots.append(reg.slot)
    if len(set(slots)) != len(slots):
        raise g.unsupported(f"{what} names a register twice")
    return tuple(slots)


def _imm(g: Gen, op: ast.Operand) -> int:
    if not isinstance(op, ast.Imm):
        raise g.unsupported(f"imm-scale and imm-trans are integer constants ({spec.MMA_SECTION})")
    return op.value
