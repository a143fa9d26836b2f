"""Bit, integer and selection instructions beyond the basic arithmetic of `arith.py`: lop3, shf, bfind,
fns, bmsk, szext, sad, mul24, mad24, dp4a, dp2a (PTX ISA 9.7.1, 9.7.8), slct, copysign and testp
(9.7.6.4, 9.7.3.1-2). Each form the ISA defines is computed exactly; any other qualifier combination
compiles to a step that stops the run naming the instruction."""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim import floatops, intops
from mbarrier.sim.compile import Gen, is_literal, sext
from mbarrier.sim.errors import KernelFault
from mbarrier.sim.registry import Kind, instruction
from mbarrier.sim.types import TYPES, Scalar

U32 = TYPES[".u32"]
PRED = TYPES[".pred"]


def _check(g: Gen, ins: ast.Instruction, section: str, *groups: tuple[str, ...],
           optional: tuple[str, ...] = ()) -> list[str]:
    """Exactly one qualifier of each group (in order) plus any of `optional`, nothing else: the
    qualifiers found, one per group."""
    found = []
    rest = list(ins.qualifiers)
    for group in groups:
        hit = [q for q in rest if q in group]
        if len(hit) != 1:
            raise g.unsupported(f"{ins.opcode} needs one of {', '.join(group)} (PTX ISA {section}); "
                                f"got {''.join(ins.qualifiers) or 'no qualifier'}")
        found.append(hit[0])
        rest.remove(hit[0])
    extra = [q for q in rest if q not in optional]
    if extra or len(rest) != len(set(rest)):
        raise g.unsupported(f"qualifier {''.join(extra or rest)} of {ins.opcode} (PTX ISA {section})")
    return found


def _pair(g: Gen, op: ast.Operand) -> tuple[str | None, str]:
    """`d|p` (d may be the sink `_`): the register slots' sources for d (None: sink) and p."""
    if not isinstance(op, ast.Expr) or op.text.count("|") != 1:
        raise g.unsupported("the .BoolOp form needs a d|p destination")
    d_name, p_name = (s.strip() for s in op.text.split("|"))
    p = g.lookup(p_name)
    if p is None or not p.type.pred:
        raise g.unsupported(f"predicate destination {p_name!r}")
    if d_name == "_":
        return None, f"r[{p.slot}]"
    d = g.lookup(d_name)
    if d is None:
        raise g.unsupported(f"destination {d_name!r} is not a register")
    return f"r[{d.slot}]", f"r[{p.slot}]"


@instruction("lop3", facts=Kind.REGISTERS, writes=True)
def _lop3(g: Gen, ins: ast.Instruction) -> None:
    """lop3.b32 d, a, b, c, immLut and lop3.{or,and}.b32 d|p, a, b, c, immLut, q (PTX ISA 9.7.8.6,
    .BoolOp since PTX ISA 8.2): d = F(a, b, c) bitwise; p = (d != 0) BoolOp q."""
    ty = TYPES[".b32"]
    boolop = [q for q in ins.qualifiers if q in (".or", ".and")]
    _check(g, ins, "9.7.8.6", (".b32",), optional=(".or", ".and"))
    if len(boolop) > 1:
        raise g.unsupported("lop3 takes one .BoolOp")
    ops = ins.operands
    if len(ops) != (6 if boolop else 5):
        raise g.unsupported(f"lop3 operands (PTX ISA 9.7.8.6): {len(ops)}")
    lut = ops[4]
    if not isinstance(lut, ast.Imm):
        raise g.unsupported("immLut must be an integer constant (PTX ISA 9.7.8.6)")
    if not 0 <= lut.value <= 255:
        raise g.unsupported(f"immLut {lut.value} is outside 0..255 (PTX ISA 9.7.8.6)")
    a, b, c = (g.src(x, ty) for x in ops[1:4])
    expr = intops.lop3_expr("_a", "_b", "_c", lut.value, ty.mask)
    g.lines.append(f"_a, _b, _c = {a}, {b}, {c}")
    if not boolop:
        g.assign(ops[0], expr, ty, masked=True)
        return
    d, p = _pair(g, ops[0])
    q = g.src(ops[5], PRED)
    g.lines.append(f"_d = {expr}")
    if d is not None:
        g.lines.append(f"{d} = _d")
    g.lines.append(f"{p} = (_d != 0) {boolop[0][1:]} bool({q})")


@instruction("shf", facts=Kind.REGISTERS, writes=True)
def _shf(g: Gen, ins: ast.Instruction) -> None:
    """shf.{l,r}.{wrap,clamp}.b32 d, a, b, c (PTX ISA 9.7.8.7): shift the 64-bit [b, a] by
    n = min(c, 32) (.clamp) or c & 31 (.wrap); .l keeps the upper 32 bits, .r the lower."""
    direction, mode, _ = _check(g, ins, "9.7.8.7", (".l", ".r"), (".wrap", ".clamp"), (".b32",))
    ty = TYPES[".b32"]
    d, a, b, c = ins.operands
    n = g.src(c, U32)
    if is_literal(n):
        v = int(n, 0)
        n = str(min(v, 32) if mode == ".clamp" else v & 31)
    else:
        n = f"min({n}, 32)" if mode == ".clamp" else f"({n} & 31)"
    pair = f"(({g.src(b, ty)} << 32) | {g.src(a, ty)})"
    if direction == ".l":
        g.assign(d, f"({pair} << {n}) >> 32", ty)
    else:
        g.assign(d, f"{pair} >> {n}", ty)


@instruction("bfind", facts=Kind.REGISTERS, writes=True)
def _bfind(g: Gen, ins: ast.Instruction) -> None:
    """bfind{.shiftamt}.{u32,u64,s32,s64} d, a (PTX ISA 9.7.1.16)."""
    (tname,) = _check(g, ins, "9.7.1.16", (".u32", ".u64", ".s32", ".s64"), optional=(".shiftamt",))
    ty = TYPES[tname]
    d, a = ins.operands
    fn = g.const(intops.bfind)
    g.assign(d, f"{fn}({g.src(a, ty)}, {ty.bits}, {ty.signed}, {g.has('.shiftamt')})", U32, masked=True)


def _fns(mask: int, base: int, offset: int) -> int:
    if base > 31:
        raise KernelFault(f"fns with base {base}: a base above 31 is undefined behaviour (PTX ISA 9.7.1.17)")
    return intops.fns(mask, base, offset)


@instruction("fns", facts=Kind.REGISTERS, writes=True)
def _fns_emit(g: Gen, ins: ast.Instruction) -> None:
    """fns.b32 d, mask, base, offset (PTX ISA 9.7.1.17): the offset-th set bit from base."""
    _check(g, ins, "9.7.1.17", (".b32",))
    d, mask, base, offset = ins.operands
    fn = g.const(_fns)
    g.assign(d, f"{fn}({g.src(mask, U32)}, {g.src(base, U32)}, {g.ssrc(offset, U32)})", U32, masked=True)


@instruction("bmsk", facts=Kind.REGISTERS, writes=True)
def _bmsk(g: Gen, ins: ast.Instruction) -> None:
    """bmsk.{clamp,wrap}.b32 d, a, b (PTX ISA 9.7.1.22)."""
    (mode, _) = _check(g, ins, "9.7.1.22", (".clamp", ".wrap"), (".b32",))
    d, a, b = ins.operands
    fn = g.const(intops.bmsk)
    g.assign(d, f"{fn}({g.src(a, U32)}, {g.src(b, U32)}, {mode == '.clamp'})", U32, masked=True)


@instruction("szext", facts=Kind.REGISTERS, writes=True)
def _szext(g: Gen, ins: ast.Instruction) -> None:
    """szext.{clamp,wrap}.{u32,s32} d, a, b (PTX ISA 9.7.1.21)."""
    mode, tname = _check(g, ins, "9.7.1.21", (".clamp", ".wrap"), (".u32", ".s32"))
    d, a, b = ins.operands
    fn = g.const(intops.szext)
    g.assign(d, f"{fn}({g.src(a, U32)}, {g.src(b, U32)}, {tname == '.s32'}, {mode == '.clamp'})", U32,
             masked=True)


_INT_TYPES = (".u16", ".u32", ".u64", ".s16", ".s32", ".s64")


@instruction("sad", facts=Kind.REGISTERS, writes=True)
def _sad(g: Gen, ins: ast.Instruction) -> None:
    """sad.type d, a, b, c (PTX ISA 9.7.1.7): d = c + |a - b|, the difference taken in the type's
    signedness."""
    (tname,) = _check(g, ins, "9.7.1.7", _INT_TYPES)
    ty = TYPES[tname]
    d, a, b, c = ins.operands
    x, y = (g.ssrc(a, ty), g.ssrc(b, ty)) if ty.signed else (g.src(a, ty), g.src(b, ty))
    g.assign(d, f"{g.src(c, ty)} + abs({x} - {y})", ty)


def _product24(g: Gen, a: ast.Operand, b: ast.Operand, ty: Scalar) -> str:
    """The 48-bit product of the low 24 bits of a and b, signed for .s32 (PTX ISA 9.7.1.5)."""
    if ty.signed:
        return f"{sext(f'({g.src(a, ty)} & 0xffffff)', 24)} * {sext(f'({g.src(b, ty)} & 0xffffff)', 24)}"
    return f"({g.src(a, ty)} & 0xffffff) * ({g.src(b, ty)} & 0xffffff)"


@instruction("mul24", "mad24", facts=Kind.REGISTERS, writes=True)
def _mul24(g: Gen, ins: ast.Instruction) -> None:
    """mul24.{hi,lo}.{u32,s32} d, a, b and mad24.{hi,lo}{.sat}.{u32,s32} d, a, b, c (PTX ISA 9.7.1.5,
    9.7.1.6): t = a * b of 24-bit values; .hi takes t<47..16>, .lo t<31..0>; mad24 adds c; .sat (only
    mad24.hi.sat.s32) clamps the signed sum to the s32 range."""
    section = "9.7.1.5" if ins.opcode == "mul24" else "9.7.1.6"
    optional = (".sat",) if ins.opcode == "mad24" else ()
    mode, tname = _check(g, ins, section, (".hi", ".lo"), (".u32", ".s32"), optional=optional)
    ty = TYPES[tname]
    sat = g.has(".sat")
    if sat and (mode != ".hi" or tname != ".s32"):
        raise g.unsupported("mad24 takes .sat only as mad24.hi.sat.s32 (PTX ISA 9.7.1.6)")
    t = _product24(g, ins.operands[1], ins.operands[2], ty)
    part = f"(({t}) >> 16)" if mode == ".hi" else f"({t})"
    if ins.opcode == "mul24":
        g.assign(ins.operands[0], part, ty)
        return
    c = ins.operands[3]
    if sat:
        g.assign(ins.operands[0], f"min(0x7fffffff, max(-0x80000000, {part} + {g.ssrc(c, ty)}))", ty)
    else:
        g.assign(ins.operands[0], f"({part} & 0xffffffff) + {g.src(c, ty)}", ty)


@instruction("dp4a", "dp2a", facts=Kind.REGISTERS, writes=True)
def _dp(g: Gen, ins: ast.Instruction) -> None:
    """dp4a.atype.btype d, a, b, c and dp2a.{lo,hi}.atype.btype d, a, b, c (PTX ISA 9.7.1.23-24)."""
    signs = (".u32", ".s32")
    if ins.opcode == "dp4a":
        quals = [q for q in ins.qualifiers if q in signs]
        extra = [q for q in ins.qualifiers if q not in signs]
        hi = False
        section = "9.7.1.23"
    else:
        quals = [q for q in ins.qualifiers if q in signs]
        modes = [q for q in ins.qualifiers if q in (".lo", ".hi")]
        extra = [q for q in ins.qualifiers if q not in signs + (".lo", ".hi")]
        if len(modes) != 1:
            raise g.unsupported("dp2a needs one of .lo, .hi (PTX ISA 9.7.1.24)")
        hi = modes[0] == ".hi"
        section = "9.7.1.24"
    if extra or len(quals) != 2:
        raise g.unsupported(f"{ins.opcode} needs .atype.btype from .u32/.s32 (PTX ISA {section}); "
                            f"got {''.join(ins.qualifiers)}")
    d, a, b, c = ins.operands
    sa, sb = quals[0] == ".s32", quals[1] == ".s32"
    if ins.opcode == "dp4a":
        fn = g.const(intops.dp4a)
        g.assign(d, f"{fn}({g.src(a, U32)}, {g.src(b, U32)}, {g.src(c, U32)}, {sa}, {sb})", U32, masked=True)
    else:
        fn = g.const(intops.dp2a)
        g.assign(d, f"{fn}({g.src(a, U32)}, {g.src(b, U32)}, {g.src(c, U32)}, {sa}, {sb}, {hi})", U32,
                 masked=True)


_SLCT_TYPES = (".b16", ".b32", ".b64", ".u16", ".u32", ".u64", ".s16", ".s32", ".s64", ".f32", ".f64")


@instruction("slct", facts=Kind.REGISTERS, writes=True)
def _slct(g: Gen, ins: ast.Instruction) -> None:
    """slct.dtype.s32 d, a, b, c and slct{.ftz}.dtype.f32 d, a, b, c (PTX ISA 9.7.6.4):
    d = (c >= 0) ? a : b, a and b copied bit for bit. For .f32, -0 counts as 0 and NaN selects b;
    .ftz flushes a subnormal c to the zero of its sign, so a is selected."""
    types = [q for q in ins.qualifiers if q in _SLCT_TYPES]
    extra = [q for q in ins.qualifiers if q not in _SLCT_TYPES + (".ftz",)]
    if extra or len(types) != 2 or types[1] not in (".s32", ".f32") or (g.has(".ftz") and types[1] != ".f32"):
        raise g.unsupported(f"slct needs .dtype then .s32 or {{.ftz}}.f32 (PTX ISA 9.7.6.4); "
                            f"got {''.join(ins.qualifiers)}")
    dty = TYPES[types[0]]
    bty = TYPES[f".b{dty.bits}"]
    d, a, b, c = ins.operands
    if types[1] == ".s32":
        cond = f"{g.ssrc(c, U32)} >= 0"
    else:
        cv = g.src(c, TYPES[".f32"])
        cond = f"_F32({cv}) >= 0.0"
        if g.has(".ftz"):
            cond = f"({cond} or ({cv} & 0x7fffffff) < 0x800000)"
    g.assign(d, f"{g.src(a, bty)} if {cond} else {g.src(b, bty)}", bty, masked=True)


@instruction("copysign", facts=Kind.REGISTERS, writes=True)
def _copysign(g: Gen, ins: ast.Instruction) -> None:
    """copysign.{f32,f64} d, a, b (PTX ISA 9.7.3.2): b with the sign bit of a."""
    (tname,) = _check(g, ins, "9.7.3.2", (".f32", ".f64"))
    ty = TYPES[tname]
    bty = TYPES[f".b{ty.bits}"]
    d, a, b = ins.operands
    sign = 1 << (ty.bits - 1)
    g.assign(d, f"({g.src(a, bty)} & {sign:#x}) | ({g.src(b, bty)} & {sign - 1:#x})", bty, masked=True)


_TESTP = (".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal")


def _testp(op: str, x: int, bits: int) -> bool:
    nan = floatops.is_nan(x, bits)
    frac = 23 if bits == 32 else 52
    mag = x & ((1 << (bits - 1)) - 1)
    inf = mag == ((1 << (bits - 1)) - 1) ^ ((1 << frac) - 1)
    if op == "finite":
        return not nan and not inf
    if op == "infinite":
        return inf
    if op == "number":
        return not nan
    if op == "notanumber":
        return nan
    subnormal = 0 < mag < (1 << frac)
    if op == "subnormal":
        return subnormal
    return not nan and not inf and not subnormal   # normal: zeros count as normal


@instruction("testp", facts=Kind.REGISTERS, writes=True)
def _testp_emit(g: Gen, ins: ast.Instruction) -> None:
    """testp.op.{f32,f64} p, a (PTX ISA 9.7.3.1); +0 and -0 count as normal."""
    op, tname = _check(g, ins, "9.7.3.1", _TESTP, (".f32", ".f64"))
    ty = TYPES[tname]
    p, a = ins.operands
    fn = g.const(_testp)
    g.assign(p, f"{fn}({op[1:]!r}, {g.src(a, TYPES[f'.b{ty.bits}'])}, {ty.bits})", PRED)
