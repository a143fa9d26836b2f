"""Floating-point functions: rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh (PTX ISA 9.7.3.13-22).

The IEEE-rounded forms (`.rn`, `.rz`, `.rm`, `.rp`) are exact: the correctly rounded result in that
mode (`sim.floatops`). The `.approx` forms are only bounded by the error the ISA states for each; the
simulator gives the correctly rounded (round-to-nearest) value, which lies within every such bound but
need not be the hardware's bits. `.ftz` flushes subnormal inputs and results to the zero of their sign.
Forms the ISA has that are not modelled (rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64, which compute
from the upper word only, and the .f16/.bf16 forms of ex2 and tanh) stop the run naming the instruction.
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim import floatops
from mbarrier.sim.compile import Gen
from mbarrier.sim.registry import Kind, instruction
from mbarrier.sim.types import TYPES

_ROUND = (".rn", ".rz", ".rm", ".rp")
_SECTION = {"rcp": "9.7.3.13", "sqrt": "9.7.3.15", "rsqrt": "9.7.3.16", "sin": "9.7.3.18",
            "cos": "9.7.3.19", "lg2": "9.7.3.20", "ex2": "9.7.3.21", "tanh": "9.7.3.22"}


def _forms(g: Gen, ins: ast.Instruction) -> tuple[int, str, bool]:
    """(bits, rounding mode or 'approx', ftz) of a supported form, or unsupported with the reason."""
    op = ins.opcode
    section = _SECTION[op]
    quals = list(ins.qualifiers)
    types = [q for q in quals if q in (".f32", ".f64")]
    rnd = [q for q in quals if q in _ROUND + (".approx",)]
    ftz = ".ftz" in quals
    extra = [q for q in quals if q not in (".f32", ".f64", ".ftz", ".approx") + _ROUND]
    form = "".join(quals)
    if extra or len(types) != 1 or len(rnd) != 1 or quals.count(".ftz") > 1:
        modes = ".approx, .rn, .rz, .rm, .rp" if op in ("rcp", "sqrt") else ".approx"
        raise g.unsupported(f"{op}{form}: not a form of PTX ISA {section} the simulator models "
                            f"(it needs one type .f32/.f64 and one of {modes})")
    bits = 32 if types[0] == ".f32" else 64
    mode = rnd[0][1:]
    if op in ("rcp", "sqrt"):
        if bits == 64 and ftz and mode != "approx":
            raise g.unsupported(f"{op}{form}: .ftz applies to .f32 only (PTX ISA {section})")
        if bits == 64 and mode == "approx":
            if op == "rcp":
                raise g.unsupported(f"{op}{form}: rcp.approx.ftz.f64 (PTX ISA 9.7.3.14) is not modelled")
            raise g.unsupported(f"{op}{form}: sqrt.approx exists for .f32 only (PTX ISA {section})")
        return bits, mode, ftz
    if mode != "approx":
        raise g.unsupported(f"{op}{form}: only .approx exists (PTX ISA {section})")
    if op == "rsqrt":
        if bits == 64 and ftz:
            raise g.unsupported(f"{op}{form}: rsqrt.approx.ftz.f64 (PTX ISA 9.7.3.17, the upper word "
                                "only) is not modelled")
        return bits, mode, ftz
    if bits != 32:
        raise g.unsupported(f"{op}{form}: {op} exists for .f32 only (PTX ISA {section})")
    if op == "tanh" and ftz:
        raise g.unsupported(f"{op}{form}: tanh takes no .ftz (PTX ISA {section})")
    return bits, mode, ftz


@instruction("rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", facts=Kind.REGISTERS,
             writes=True)
def _float_fn(g: Gen, ins: ast.Instruction) -> None:
    bits, mode, ftz = _forms(g, ins)
    d, a = ins.operands
    bty = TYPES[f".b{bits}"]
    x = g.src(a, bty)
    op = ins.opcode
    if op in ("rcp", "sqrt"):
        fn = g.const(floatops.rcp if op == "rcp" else floatops.sqrt)
        # .approx: the correctly rounded value (within the ISA's bound, not necessarily the hardware's)
        rounding = "rn" if mode == "approx" else mode
        expr = f"{fn}({x}, {bits}, {rounding!r}, {ftz})"
    elif op == "rsqrt":
        fn = g.const(floatops.rsqrt)
        expr = f"{fn}({x}, {bits}, {ftz})"
    else:
        fn = g.const(floatops.transcendental)
        expr = f"{fn}({op!r}, {x}, {ftz})"
    g.assign(d, expr, bty, masked=True)
