"""Integer, bit, predicate and (as far as real mbarrier kernels need it) floating-point instructions.

Registers hold unsigned integers of their width (bools for predicates); signed forms sign-extend their
inputs and truncate their result. Rounding and flush-to-zero qualifiers of the float instructions here
(add, sub, mul, fma, div, min, max, cvt) do not change what is computed (Python float arithmetic,
rounded to f32 on the way back); rcp, sqrt, rsqrt and the other float functions are in `floats.py`,
exactly rounded. The extended-precision instructions keep the carry flag CC.CF in `Thread.cc`.
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim import floatops, halfops
from mbarrier.sim.compile import SPECIAL_SLOT, Gen, is_literal, sext
from mbarrier.sim.registry import Kind, instruction
from mbarrier.sim.types import TYPES, Scalar


def _fval(g: Gen, op: ast.Operand, ty: Scalar) -> str:
    return f"_F{ty.bits}({g.src(op, ty)})"


def _fbits(expr: str, ty: Scalar) -> str:
    return f"_B{ty.bits}({expr})"


def _float_ok(g: Gen, ty: Scalar) -> None:
    if ty.bits not in (16, 32, 64):
        raise g.unsupported(f"{ty.name} arithmetic")


_CARRY_TYPES = (".u32", ".s32", ".u64", ".s64")


def _carry_type(g: Gen, ins: ast.Instruction, allowed: tuple[str, ...]) -> Scalar:
    """The type of an extended-precision instruction (PTX ISA 9.7.2), every qualifier checked."""
    extra = [q for q in ins.qualifiers if q not in allowed + _CARRY_TYPES]
    types = [q for q in ins.qualifiers if q in _CARRY_TYPES]
    if extra or len(types) != 1:
        raise g.unsupported(f"{ins.opcode} takes {'/'.join(allowed)} and one of {', '.join(_CARRY_TYPES)} "
                            f"(PTX ISA 9.7.2); got {''.join(ins.qualifiers)}")
    return TYPES[types[0]]


def _with_carry(g: Gen, d: ast.Operand, total: str, ty: Scalar, writes_cc: bool) -> None:
    """d = total mod 2^n and, for .cc, CC.CF = the carry (or borrow) out, kept per thread in `t.cc`."""
    if not writes_cc:
        g.assign(d, total, ty)
        return
    g.lines.append(f"_s = {total}")
    g.assign(d, "_s", ty)
    g.lines.append(f"t.cc = (_s >> {ty.bits}) & 1")


@instruction("addc", "subc", facts=Kind.REGISTERS, writes=True, reads_carry=True)
def _addc(g: Gen, ins: ast.Instruction) -> None:
    """addc{.cc}: d = a + b + CC.CF; subc{.cc}: d = a - (b + CC.CF), the borrow out in CC.CF
    (PTX ISA 9.7.2.2, 9.7.2.4)."""
    ty = _carry_type(g, ins, (".cc",))
    d, a, b = ins.operands
    sym = "+" if ins.opcode == "addc" else "-"
    # A borrow makes the unsigned difference negative: bit n of its two's complement is then 1.
    _with_carry(g, d, f"{g.src(a, ty)} {sym} {g.src(b, ty)} {sym} m.carry(t)", ty, g.has(".cc"))


@instruction("add", "sub", facts=Kind.REGISTERS, writes=True, total=True)
def _add(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b = ins.operands
    sym = "+" if ins.opcode == "add" else "-"
    if ty.float:
        _float_ok(g, ty)
        g.assign(d, _fbits(f"{_fval(g, a, ty)} {sym} {_fval(g, b, ty)}", ty), ty, masked=True)
        return
    if g.has(".cc"):
        # add.cc / sub.cc (PTX ISA 9.7.2.1, 9.7.2.3): the carry (borrow) out goes to CC.CF.
        ty = _carry_type(g, ins, (".cc",))
        _with_carry(g, d, f"{g.src(a, ty)} {sym} {g.src(b, ty)}", ty, True)
        return
    if g.has(".sat"):
        lo, hi = -(1 << (ty.bits - 1)), (1 << (ty.bits - 1)) - 1
        g.assign(d, f"min({hi}, max({lo}, {g.ssrc(a, ty)} {sym} {g.ssrc(b, ty)}))", ty)
        return
    g.assign(d, f"{g.src(a, ty)} {sym} {g.src(b, ty)}", ty)


def _wide(g: Gen, ty: Scalar) -> Scalar:
    """The result type of .wide: twice the operands' width, which the ISA defines for 16- and 32-bit
    integers only (there is no 128-bit register)."""
    if ty.bits not in (16, 32):
        raise g.unsupported(f".wide of {ty.bits}-bit operands")
    return TYPES[f".{'s' if ty.signed else 'u'}{ty.bits * 2}"]


def _product(g: Gen, a: ast.Operand, b: ast.Operand, ty: Scalar) -> str:
    if ty.signed:
        return f"{g.ssrc(a, ty)} * {g.ssrc(b, ty)}"
    return f"{g.src(a, ty)} * {g.src(b, ty)}"


@instruction("mul", facts=Kind.REGISTERS, writes=True, total=True)
def _mul(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b = ins.operands
    if ty.float:
        _float_ok(g, ty)
        g.assign(d, _fbits(f"{_fval(g, a, ty)} * {_fval(g, b, ty)}", ty), ty, masked=True)
    elif g.has(".wide"):
        g.assign(d, _product(g, a, b, ty), _wide(g, ty))
    elif g.has(".hi"):
        g.assign(d, f"({_product(g, a, b, ty)}) >> {ty.bits}", ty)
    else:
        g.assign(d, f"{g.src(a, ty)} * {g.src(b, ty)}", ty)


@instruction("mad", facts=Kind.REGISTERS, writes=True, total=True)
@instruction("fma", facts=Kind.REGISTERS, writes=True)
def _mad(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b, c = ins.operands
    if ty.float:
        _float_ok(g, ty)
        g.assign(d, _fbits(f"{_fval(g, a, ty)} * {_fval(g, b, ty)} + {_fval(g, c, ty)}", ty), ty,
                 masked=True)
    elif g.has(".cc") and ins.opcode == "mad":
        _madc(g, ins)
    elif g.has(".wide"):
        w = _wide(g, ty)
        g.assign(d, f"{_product(g, a, b, ty)} + {g.src(c, w)}", w)
    elif g.has(".hi"):
        g.assign(d, f"(({_product(g, a, b, ty)}) >> {ty.bits}) + {g.src(c, ty)}", ty)
    elif ins.opcode == "fma":
        raise g.unsupported()
    else:
        g.assign(d, f"{g.src(a, ty)} * {g.src(b, ty)} + {g.src(c, ty)}", ty)


@instruction("madc", facts=Kind.REGISTERS, writes=True, reads_carry=True)
def _madc(g: Gen, ins: ast.Instruction) -> None:
    """mad{.hi,.lo}.cc and madc{.hi,.lo}{.cc} (PTX ISA 9.7.2.5, 9.7.2.6): the high or low half of a*b,
    plus c (plus CC.CF for madc); .cc writes the carry out of the addition to CC.CF."""
    ty = _carry_type(g, ins, (".hi", ".lo", ".cc"))
    if g.has(".hi") == g.has(".lo"):
        raise g.unsupported(f"{ins.opcode} needs exactly one of .hi and .lo (PTX ISA 9.7.2)")
    d, a, b, c = ins.operands
    half = f"(({_product(g, a, b, ty)}) >> {ty.bits}) & {ty.mask:#x}" if g.has(".hi") else \
        f"({_product(g, a, b, ty)}) & {ty.mask:#x}"
    carry_in = " + m.carry(t)" if ins.opcode == "madc" else ""
    _with_carry(g, d, f"({half}) + {g.src(c, ty)}{carry_in}", ty, g.has(".cc"))


@instruction("div", "rem", facts=Kind.REGISTERS, writes=True)
def _div(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b = ins.operands
    if ty.float:
        _float_ok(g, ty)
        if ins.opcode == "rem":
            raise g.unsupported()
        g.assign(d, _fbits(f"m.fdiv({_fval(g, a, ty)}, {_fval(g, b, ty)})", ty), ty, masked=True)
        return
    x, y = (g.ssrc(a, ty), g.ssrc(b, ty)) if ty.signed else (g.src(a, ty), g.src(b, ty))
    g.assign(d, f"m.{ins.opcode}({x}, {y}, {ty.mask:#x})", ty)


@instruction("abs", "neg", facts=Kind.REGISTERS, writes=True, total=True)
def _abs(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a = ins.operands
    if ty.float:
        _float_ok(g, ty)
        sign = 1 << (ty.bits - 1)
        op = f"& {sign - 1:#x}" if ins.opcode == "abs" else f"^ {sign:#x}"
        g.assign(d, f"{g.src(a, ty)} {op}", ty, masked=True)
        return
    fn = "abs" if ins.opcode == "abs" else "-"
    g.assign(d, f"{fn}({g.ssrc(a, ty)})", ty)


@instruction("min", "max", facts=Kind.REGISTERS, writes=True, total=True)
def _minmax(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b = ins.operands[:3]
    if len(ins.operands) != 3 or g.has(".relu"):
        raise g.unsupported()
    if ty.float:
        _float_ok(g, ty)
        g.assign(d, _fbits(f"{ins.opcode}({_fval(g, a, ty)}, {_fval(g, b, ty)})", ty), ty, masked=True)
    elif ty.signed:
        g.assign(d, f"{ins.opcode}({g.ssrc(a, ty)}, {g.ssrc(b, ty)})", ty)
    else:
        g.assign(d, f"{ins.opcode}({g.src(a, ty)}, {g.src(b, ty)})", ty, masked=True)


@instruction("and", "or", "xor", facts=Kind.REGISTERS, writes=True, total=True)
def _logic(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b = ins.operands
    sym = {"and": "&", "or": "|", "xor": "^"}[ins.opcode]
    if ty.pred:
        g.assign(d, f"bool({g.src(a, ty)}) {sym} bool({g.src(b, ty)})", ty)
    else:
        g.assign(d, f"{g.src(a, ty)} {sym} {g.src(b, ty)}", ty, masked=True)


@instruction("not", "cnot", facts=Kind.REGISTERS, writes=True, total=True)
def _not(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a = ins.operands
    if ty.pred:
        g.assign(d, f"not {g.src(a, ty)}", ty)
    elif ins.opcode == "cnot":
        g.assign(d, f"1 if {g.src(a, ty)} == 0 else 0", ty, masked=True)
    else:
        g.assign(d, f"{g.src(a, ty)} ^ {ty.mask:#x}", ty, masked=True)


@instruction("shl", "shr", facts=Kind.REGISTERS, writes=True, total=True)
def _shift(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b = ins.operands
    n = g.src(b, TYPES[".u32"])
    n = f"min({n}, {ty.bits})" if not is_literal(n) else f"{min(int(n, 0), ty.bits)}"
    if ins.opcode == "shl":
        g.assign(d, f"{g.src(a, ty)} << {n}", ty)
    elif ty.signed:
        g.assign(d, f"{g.ssrc(a, ty)} >> {n}", ty)
    else:
        g.assign(d, f"{g.src(a, ty)} >> {n}", ty, masked=True)


@instruction("popc", "clz", "brev", facts=Kind.REGISTERS, writes=True, total=True)
def _bits(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a = ins.operands
    v = g.src(a, ty)
    if ins.opcode == "popc":
        g.assign(d, f"({v}).bit_count()", TYPES[".u32"])
    elif ins.opcode == "clz":
        g.assign(d, f"{ty.bits} - ({v}).bit_length()", TYPES[".u32"])
    else:
        g.assign(d, f"int(format({v}, '0{ty.bits}b')[::-1], 2)", ty, masked=True)


@instruction("bfe", facts=Kind.REGISTERS, writes=True, total=True)
def _bfe(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b, c = ins.operands
    u32 = TYPES[".u32"]
    fn = "m.bfe_s" if ty.signed else "m.bfe_u"
    g.assign(d, f"{fn}({g.src(a, ty)}, {g.src(b, u32)} & 0xff, {g.src(c, u32)} & 0xff, {ty.bits})", ty)


@instruction("bfi", facts=Kind.REGISTERS, writes=True, total=True)
def _bfi(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, f, b, c, n = ins.operands
    u32 = TYPES[".u32"]
    g.assign(d, f"m.bfi({g.src(f, ty)}, {g.src(b, ty)}, {g.src(c, u32)} & 0xff, {g.src(n, u32)} & 0xff, "
             f"{ty.bits})", ty)


@instruction("prmt", facts=Kind.REGISTERS, writes=True, total=True)
def _prmt(g: Gen, ins: ast.Instruction) -> None:
    ty = TYPES[".b32"]
    if len([q for q in ins.qualifiers if q != ".b32"]):
        raise g.unsupported("prmt modes")
    d, a, b, c = ins.operands
    g.assign(d, f"m.prmt({g.src(a, ty)}, {g.src(b, ty)}, {g.src(c, ty)})", ty, masked=True)


@instruction("selp", facts=Kind.REGISTERS, writes=True, total=True)
def _selp(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b, c = ins.operands
    g.assign(d, f"{g.src(a, ty)} if {g.src(c, TYPES['.pred'])} else {g.src(b, ty)}", ty, masked=True)


_INT_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
            "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_FLOAT_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _compare(g: Gen, ins: ast.Instruction, a: ast.Operand, b: ast.Operand, ty: Scalar) -> str:
    cmps = [q[1:] for q in ins.qualifiers if q[1:] in _INT_CMP or q[1:].rstrip("u") in _FLOAT_CMP
            or q[1:] in ("num", "nan")]
    if not cmps:
        raise g.unsupported("no comparison")
    cmp = cmps[0]
    if ty.float:
        _float_ok(g, ty)
        x, y = _fval(g, a, ty), _fval(g, b, ty)
        if cmp == "num":
            return f"m.fnum({x}, {y})"
        if cmp == "nan":
            return f"not m.fnum({x}, {y})"
        unordered = cmp.endswith("u") and cmp[:-1] in _FLOAT_CMP
        base = cmp[:-1] if unordered else cmp
        if unordered:
            return f"(({x}) {_FLOAT_CMP[base]} ({y}) or not m.fnum({x}, {y}))"
        return f"(({x}) {_FLOAT_CMP[base]} ({y}))"
    if cmp not in _INT_CMP:
        raise g.unsupported(f"comparison .{cmp} on integers")
    if ty.signed and cmp not in ("lo", "ls", "hi", "hs", "eq", "ne"):
        return f"{g.ssrc(a, ty)} {_INT_CMP[cmp]} {g.ssrc(b, ty)}"
    return f"{g.src(a, ty)} {_INT_CMP[cmp]} {g.src(b, ty)}"


@instruction("setp", facts=Kind.REGISTERS, writes=True, total=True)
def _setp(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    dst, a, b = ins.operands[:3]
    pred = TYPES[".pred"]
    cond = _compare(g, ins, a, b, ty)
    combine = [q for q in ins.qualifiers if q in (".and", ".or", ".xor")]
    if combine:
        c = g.src(ins.operands[3], pred)
        op = combine[0][1:]
        if op == "xor":
            cond, ncond = f"bool({cond}) ^ bool({c})", f"(not ({cond})) ^ bool({c})"
        else:
            cond, ncond = f"({cond}) {op} bool({c})", f"(not ({cond})) {op} bool({c})"
    else:
        ncond = f"not ({cond})"
    if isinstance(dst, ast.Expr) and "|" in dst.text:
        # `p|q`: p gets the comparison, q its complement, both computed before either is written (c may
        # be p or q); either may be the sink `_` (not both: the parser refuses `_|_` as ptxas does)
        targets, values = [], []
        for name, value in zip((s.strip() for s in dst.text.split("|")), (cond, ncond), strict=True):
            if name == "_":
                continue
            reg = g.lookup(name)
            if reg is None:
                raise g.unsupported(f"predicate pair {dst.text!r}")
            targets.append(f"r[{reg.slot}]")
            values.append(f"({value})")
        g.lines.append(f"{', '.join(targets)} = {', '.join(values)}")
        return
    g.assign(dst, cond, pred)


@instruction("mov", facts=Kind.REGISTERS, writes=True, total=True)
def _mov(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a = ins.operands
    if isinstance(a, ast.Vector):  # pack {lo, hi, ...} into one register
        part = ty.bits // len(a.items)
        pty = TYPES[f".b{part}"]
        terms = [f"({g.src(x, pty)} << {i * part})" for i, x in enumerate(a.items)]
        g.assign(d, " | ".join(terms), ty, masked=True)
        return
    if isinstance(d, ast.Vector):  # unpack one register into {lo, hi, ...}
        part = ty.bits // len(d.items)
        v = g.src(a, ty)
        for i, x in enumerate(d.items):
            g.assign(x, f"({v} >> {i * part})", TYPES[f".b{part}"])
        return
    reg = g.dst(d)
    special = SPECIAL_SLOT.get(a.name) if isinstance(a, ast.Name) and g.lookup(a.name) is None else None
    if reg is not None and special is not None and reg.type.bits >= 32:
        g.lines.append(f"r[{reg.slot}] = r[{special}]")  # special registers hold 32-bit values
        return
    if reg is not None and isinstance(a, ast.Name) and g.lookup(a.name) is not None:
        src = g.lookup(a.name)
        assert src is not None
        if src.type.bits == reg.type.bits or src.type.pred:
            # A plain copy keeps what the value carries (an arrive's token provenance).
            g.lines.append(f"r[{reg.slot}] = r[{src.slot}]")
            return
    g.assign(d, g.src(a, ty), ty)


_HALVES = {".f16": halfops.F16, ".bf16": halfops.BF16}
_PACKED = {".f16x2": halfops.F16, ".bf16x2": halfops.BF16}
_FRND = (".rn", ".rz", ".rm", ".rp")
_CVT_TYPES = frozenset(TYPES) | frozenset(_HALVES) | frozenset(_PACKED)


def _cvt_half(g: Gen, ins: ast.Instruction, names: list[str]) -> None:
    """cvt between .f32 and .f16/.bf16, and two .f32 into a packed .f16x2/.bf16x2 (`a` into the upper
    half, `b` into the lower), bit-exact through `sim.halfops`, with `.relu` and `.satfinite` as the PTX
    ISA defines them (Data Movement and Conversion Instructions: cvt). Other conversions of the 16-bit
    formats stop the run."""
    q = ins.qualifiers
    rnd = [x for x in q if x in _FRND]
    extra = [x for x in q if x not in _CVT_TYPES and x not in _FRND
             and x not in (".relu", ".satfinite", ".ftz")]
    form = "cvt" + "".join(q)
    dname, aname = names
    if extra:
        raise g.unsupported(f"{form}: qualifier {extra[0]} (not modelled)")
    if aname == ".f32" and (dname in _PACKED or dname in _HALVES):
        fmt = _PACKED.get(dname) or _HALVES[dname]
        allowed = (".rn", ".rz") if dname in _PACKED or g.has(".relu", ".satfinite") else _FRND
        if len(rnd) != 1 or rnd[0] not in allowed or g.has(".ftz"):
            raise g.unsupported(f"{form}: a conversion to {dname} takes one rounding modifier of "
                                f"{', '.join(allowed)} (PTX ISA, cvt)")
        conv = g.const(halfops.from_f32)
        how = f"{g.const(fmt)}, {rnd[0][1:]!r}, {g.has('.relu')}, {g.has('.satfinite')}"
        f32 = TYPES[".f32"]
        if dname in _PACKED:
            if len(ins.operands) != 3:
                raise g.unsupported(f"{form} takes d, a, b")
            d, a, b = ins.operands
            g.assign(d, f"({conv}({g.src(a, f32)}, {how}) << 16) | {conv}({g.src(b, f32)}, {how})",
                     TYPES[".b32"], masked=True)
            return
        d, a = ins.operands
        g.assign(d, f"{conv}({g.src(a, f32)}, {how})", TYPES[".b16"], masked=True)
        return
    if dname == ".f32" and aname in _HALVES and not rnd and not g.has(".relu", ".satfinite"):
        d, a = ins.operands
        widen = f"{g.const(halfops.to_f32)}({g.src(a, TYPES['.b16'])}, {g.const(_HALVES[aname])})"
        if g.has(".ftz"):  # only a .bf16 subnormal widens to an .f32 subnormal
            widen = f"{g.const(floatops.flush)}({widen}, 32)"
        g.assign(d, widen, TYPES[".f32"], masked=True)
        return
    raise g.unsupported(f"{form}: of the 16-bit float conversions the simulator models .f32 to and from "
                        ".f16/.bf16 and two .f32 to .f16x2/.bf16x2")


@instruction("cvt", facts=Kind.REGISTERS, writes=True)
def _cvt(g: Gen, ins: ast.Instruction) -> None:
    names = [q for q in ins.qualifiers if q in _CVT_TYPES]
    if len(names) != 2:
        raise g.unsupported(f"cvt{''.join(ins.qualifiers)}: cvt takes a destination and a source type "
                            "(PTX ISA, cvt)")
    if any(n in _PACKED or n == ".bf16" for n in names) or g.has(".relu", ".satfinite") or (
            ".f16" in names and ".f32" in names):
        _cvt_half(g, ins, names)
        return
    dty, aty = TYPES[names[0]], TYPES[names[1]]
    d, a = ins.operands
    if not dty.float and not aty.float:
        v = g.ssrc(a, aty) if aty.signed else g.src(a, aty)
        if g.has(".sat"):
            lo = -(1 << (dty.bits - 1)) if dty.signed else 0
            hi = (1 << (dty.bits - 1)) - 1 if dty.signed else dty.mask
            v = f"min({hi}, max({lo}, {v}))"
        reg = g.dst(d)
        if dty.signed and reg is not None and reg.type.bits > dty.bits:
            # A destination register wider than the type gets the value sign-extended.
            g.assign(d, sext(f"({v}) & {dty.mask:#x}", dty.bits), reg.type)
        else:
            g.assign(d, v, dty)
        return
    if dty.float and aty.float:
        _float_ok(g, dty)
        _float_ok(g, aty)
        g.assign(d, _fbits(_fval(g, a, aty), dty), dty, masked=True)
        return
    if dty.float:
        _float_ok(g, dty)
        v = g.ssrc(a, aty) if aty.signed else g.src(a, aty)
        g.assign(d, _fbits(f"float({v})", dty), dty, masked=True)
        return
    _float_ok(g, aty)
    rnd = next((q for q in ins.qualifiers if q in (".rni", ".rzi", ".rmi", ".rpi")), ".rzi")
    lo = -(1 << (dty.bits - 1)) if dty.signed else 0
    hi = (1 << (dty.bits - 1)) - 1 if dty.signed else dty.mask
    g.assign(d, f"m.f2i({_fval(g, a, aty)}, {rnd[1:]!r}, {lo}, {hi})", dty)
