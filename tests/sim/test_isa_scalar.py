"""Scalar instructions beyond the basics: carry arithmetic (PTX ISA 9.7.2), bit and integer instructions
(9.7.1, 9.7.8), selection and float tests (9.7.6.4, 9.7.3.1-2) and the float functions (9.7.3.13-22).

Each instruction runs in a loop over many inputs (read from memory, so nothing folds at compile time)
and its results are compared, bit for bit, with a reference written here from the ISA text, without
calling the simulator's helpers. Exact forms (the IEEE-rounded .rn/.rz/.rm/.rp and every integer
instruction) have exact references: the correctly rounded float is found by bisection over the ordered
bit patterns with exact rational comparisons. The .approx forms are compared with the correctly
rounded value (the C library's double result rounded once to f32), which is what the simulator gives.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable, Sequence
from fractions import Fraction

import pytest

from mbarrier import sim

from .helpers import module, run, words

M32, M64 = (1 << 32) - 1, (1 << 64) - 1

LOOP = """
.reg .pred %p<8>;
.reg .b32 %r<32>;
.reg .b64 %rd<32>;
.reg .f32 %f<32>;
.reg .f64 %fd<32>;
ld.param.u64 %rd0, [out];  ld.param.u64 %rd1, [inp];  ld.param.u32 %r0, [n];
mov.u32 %r30, 0;
LOOP:
setp.ge.u32 %p7, %r30, %r0;
@%p7 bra DONE;
mul.wide.u32 %rd2, %r30, 24;  add.s64 %rd3, %rd1, %rd2;
ld.global.u64 %rd10, [%rd3];  ld.global.u64 %rd11, [%rd3+8];  ld.global.u64 %rd12, [%rd3+16];
cvt.u32.u64 %r10, %rd10;  cvt.u32.u64 %r11, %rd11;  cvt.u32.u64 %r12, %rd12;
mov.b32 %f10, %r10;  mov.b32 %f11, %r11;  mov.b32 %f12, %r12;
mov.b64 %fd10, %rd10;  mov.b64 %fd11, %rd11;  mov.b64 %fd12, %rd12;
setp.ne.u32 %p2, %r12, 0;
mov.u64 %rd13, 0;  mov.u32 %r13, 0;
{body}
{store}
mul.wide.u32 %rd4, %r30, 8;  add.s64 %rd5, %rd0, %rd4;  st.global.u64 [%rd5], %rd13;
add.u32 %r30, %r30, 1;
bra LOOP;
DONE:
ret;
"""

# How each destination kind reaches %rd13 (the stored 64-bit result).
STORE = {"r": "cvt.u64.u32 %rd13, %r13;", "rd": "", "f": "mov.b32 %r13, %f13; cvt.u64.u32 %rd13, %r13;",
         "fd": "mov.b64 %rd13, %fd13;", "p": "selp.u64 %rd13, 1, 0, %p1;"}
# Operand register names by kind.
REG = {"r": ("%r10", "%r11", "%r12", "%r13"), "rd": ("%rd10", "%rd11", "%rd12", "%rd13"),
       "f": ("%f10", "%f11", "%f12", "%f13"), "fd": ("%fd10", "%fd11", "%fd12", "%fd13")}


def run_each(template: str, inputs: Sequence[Sequence[int]], src: str = "r", dst: str = "r") -> list[int]:
    """Run `template` ({a}, {b}, {c}: the inputs; {d}: the destination; %p2: c != 0; %p1 a predicate
    destination) once per input tuple; the results as unsigned integers."""
    a, b, c, _ = REG[src]
    d = REG[dst][3] if dst != "p" else "%p1"
    body = template.format(a=a, b=b, c=c, d=d)
    mod = module(LOOP.format(body=body, store=STORE[dst]),
                 params=".param .u64 out, .param .u64 inp, .param .u32 n")
    flat = []
    for t in inputs:
        t = list(t) + [0] * (3 - len(t))
        flat += [v & M64 for v in t]
    args = {"out": sim.Buffer(8 * len(inputs)), "inp": sim.Buffer.of_ints(flat, width=8), "n": len(inputs)}
    r = run(mod, args=args)
    assert r.outcome == "exited", (r.outcome, r.message)
    return words(r.machine, "out", len(inputs), width=8)


def sx(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


EDGE32 = [0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFF, 0x800000,
          0xFFFFFF, 0x1000000, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF, 0x12345678,
          0xDEADBEEF, 31, 32, 33, 63, 64, 65, 255, 256]
EDGE64 = EDGE32 + [1 << 32, (1 << 32) + 1, 0x7FFFFFFFFFFFFFFF, 1 << 63, (1 << 63) + 1, M64, M64 - 1,
                   0x123456789ABCDEF0, 0xFFFFFFFF00000000]


def rng_values(seed: int, n: int, bits: int) -> list[int]:
    rnd = random.Random(seed)
    return [rnd.getrandbits(bits) >> rnd.randrange(bits) for _ in range(n)]


def pairs(values: Sequence[int], seed: int, n: int = 150) -> list[tuple[int, int, int]]:
    rnd = random.Random(seed)
    return [(rnd.choice(values), rnd.choice(values), rnd.choice(values)) for _ in range(n)]


# -- 9.7.2 extended-precision arithmetic: the carry flag ---------------------------------------------

@pytest.mark.parametrize("bits", [32, 64])
def test_add_cc_addc_chain_adds_128_bit_values(bits: int) -> None:
    """PTX ISA 9.7.2.1-2: add.cc writes the carry out to CC.CF; addc adds it back; the manual's example
    of an extended-precision addition, on pairs of words."""
    kind = "r" if bits == 32 else "rd"
    m = (1 << bits) - 1
    values = EDGE32 if bits == 32 else EDGE64
    cases = pairs(values, 1) + [(m, 1, 0), (m, m, m), (0, 0, 0), (m, 0, 1)]
    # {a}+{b}: low word; then addc of {c}+{a}: second word; then the final carry by addc 0, 0.
    t = "s" if bits == 32 else "s"
    body = (f"add.cc.u{bits} {{d}}, {{a}}, {{b}};  addc.cc.{t}{bits} %{kind}14, {{c}}, {{a}};"
            f"  addc.u{bits} %{kind}15, 0, 0;  xor.b{bits} {{d}}, {{d}}, %{kind}14;  shl.b{bits} %{kind}15, "
            f"%{kind}15, 7;  xor.b{bits} {{d}}, {{d}}, %{kind}15;")
    got = run_each(body, cases, kind, kind)
    for (a, b, c), r in zip(cases, got, strict=True):
        lo = a + b
        hi = c + a + (lo >> bits)
        want = (lo & m) ^ (hi & m) ^ (((hi >> bits) << 7) & m)
        assert r == want, (hex(a), hex(b), hex(c))


@pytest.mark.parametrize("bits", [32, 64])
def test_sub_cc_subc_borrow(bits: int) -> None:
    """PTX ISA 9.7.2.3-4: sub.cc writes the borrow out; subc computes a - (b + CC.CF)."""
    kind = "r" if bits == 32 else "rd"
    m = (1 << bits) - 1
    cases = pairs(EDGE32 if bits == 32 else EDGE64, 2) + [(0, 1, 0), (0, 0, 0), (5, 5, 0), (0, m, m)]
    body = (f"sub.cc.s{bits} %{kind}14, {{a}}, {{b}};  subc.cc.u{bits} {{d}}, {{c}}, {{b}};"
            f"  subc.u{bits} %{kind}15, 100, 0;  xor.b{bits} {{d}}, {{d}}, %{kind}14;"
            f"  shl.b{bits} %{kind}15, %{kind}15, 9;  xor.b{bits} {{d}}, {{d}}, %{kind}15;")
    got = run_each(body, cases, kind, kind)
    for (a, b, c), r in zip(cases, got, strict=True):
        borrow1 = int(a < b)
        second = c - (b + borrow1)
        borrow2 = int(second < 0)
        third = 100 - borrow2
        want = (a - b) & m ^ (second & m) ^ ((third << 9) & m)
        assert r == want, (hex(a), hex(b), hex(c))


@pytest.mark.parametrize("ty", [".u32", ".s32", ".u64", ".s64"])
def test_mad_cc_madc_multiword_multiply(ty: str) -> None:
    """PTX ISA 9.7.2.5-6: mad.lo.cc / madc.hi{.cc}: a half of a*b plus c (plus CC.CF), the carry out of
    the addition to CC.CF; the .hi half of a signed product is its bits 2n-1..n."""
    bits = int(ty[2:])
    signed = ty[1] == "s"
    kind = "r" if bits == 32 else "rd"
    m = (1 << bits) - 1
    cases = pairs(EDGE32 if bits == 32 else EDGE64, 3)
    body = (f"mad.lo.cc{ty} %{kind}14, {{a}}, {{b}}, {{c}};  madc.hi.cc{ty} {{d}}, {{a}}, {{b}}, {{c}};"
            f"  madc.lo{ty} %{kind}15, {{b}}, {{c}}, 0;  xor.b{bits} {{d}}, {{d}}, %{kind}14;"
            f"  add.u{bits} {{d}}, {{d}}, %{kind}15;  add.u{bits} {{d}}, {{d}}, %{kind}15;")
    got = run_each(body, cases, kind, kind)
    for (a, b, c), r in zip(cases, got, strict=True):
        x, y = (sx(a, bits), sx(b, bits)) if signed else (a, b)
        p = x * y
        s1 = (p & m) + c
        s2 = ((p >> bits) & m) + c + (s1 >> bits)
        y2, c2 = (sx(b, bits), sx(c, bits)) if signed else (b, c)
        s3 = ((y2 * c2) & m) + (s2 >> bits)
        want = ((s1 & m) ^ (s2 & m)) + 2 * (s3 & m)
        assert r == want & m, (ty, hex(a), hex(b), hex(c))


def test_the_manuals_extended_precision_multiply() -> None:
    """PTX ISA 9.7.2.6 example: [r3,r2,r1,r0] = [r5,r4] * [r7,r6] with mul/mad.cc/madc/addc (here in
    %r20-%r27)."""
    body = """
        mov.b64 {{%r24, %r25}}, {a};  mov.b64 {{%r26, %r27}}, {b};
        mul.lo.u32     %r20,%r24,%r26;
        mul.hi.u32     %r21,%r24,%r26;
        mad.lo.cc.u32  %r21,%r25,%r26,%r21;
        madc.hi.u32    %r22,%r25,%r26,0;
        mad.lo.cc.u32   %r21,%r24,%r27,%r21;
        madc.hi.cc.u32  %r22,%r24,%r27,%r22;
        addc.u32        %r23,0,0;
        mad.lo.cc.u32   %r22,%r25,%r27,%r22;
        madc.hi.u32     %r23,%r25,%r27,%r23;
        mov.b64 {d}, {{%r20, %r21}};  mov.b64 %rd14, {{%r22, %r23}};  xor.b64 {d}, {d}, %rd14;
    """
    cases = pairs(EDGE64, 4, 80) + [(M64, M64, 0)]
    got = run_each(body, cases, "rd", "rd")
    for (a, b, _), r in zip(cases, got, strict=True):
        p = a * b
        assert r == (p & M64) ^ (p >> 64), (hex(a), hex(b))


def test_reading_an_undefined_carry_flag_stops_the_run() -> None:
    """PTX ISA 9.7.2: CC is not preserved across calls; nothing defines it before a .cc instruction."""
    mod = module(".reg .b32 %r<4>;\naddc.u32 %r1, 1, 2;\nret;")
    r = run(mod, args={"out": sim.Buffer(8)})
    assert r.outcome == "violation" and r.rule == "kernel-fault"  # the kernel's bug, not the tool's limit
    assert "CC.CF" in r.message and "9.7.2" in r.message
    body = """
        .reg .b32 %r<4>;
        add.cc.u32 %r1, -1, 1;
        call f;
        addc.u32 %r2, 0, 0;
        ret;
    """
    r = run(module(body, extra=".func f()\n{\nret;\n}\n"), args={"out": sim.Buffer(8)})
    assert r.outcome == "violation" and "CC.CF" in r.message


def test_a_guarded_off_cc_instruction_leaves_the_flag() -> None:
    out = run_each("add.cc.u32 %r14, -1, 1;  @%p2 add.cc.u32 %r14, 1, 1;  addc.u32 {d}, 0, 0;",
                   [(0, 0, 0), (0, 0, 1)])
    assert out == [1, 0]


@pytest.mark.parametrize("text", ["add.cc.u16 %r1, %r2, %r3;", "add.cc.sat.s32 %r1, %r2, %r3;",
                                  "addc.cc.b32 %r1, %r2, %r3;", "mad.cc.u32 %r1, %r2, %r3, %r4;",
                                  "madc.wide.u32 %rd1, %r2, %r3, %rd4;", "subc.f32 %r1, %r2, %r3;"])
def test_carry_forms_outside_the_isa_are_unsupported(text: str) -> None:
    mod = module(".reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n" + text + "\nret;")
    r = run(mod, args={"out": sim.Buffer(8)})
    assert r.outcome == "unsupported" and "is not supported" in r.message and text.split()[0] in r.message


# -- 9.7.8 logic and shift: lop3, shf ---------------------------------------------------------------

def ref_lop3(a: int, b: int, c: int, lut: int) -> int:
    out = 0
    for i in range(32):
        idx = ((a >> i & 1) << 2) | ((b >> i & 1) << 1) | (c >> i & 1)
        out |= (lut >> idx & 1) << i
    return out


@pytest.mark.parametrize("lut", [0x00, 0x80, 0xFE, 0x40, 0x1A, 0xFF, 0x96, 0xE8, 0xCA, 0x3F, 0x01, 0x6A])
def test_lop3_every_bit_follows_the_table(lut: int) -> None:
    """PTX ISA 9.7.8.6: immLut = F(0xF0, 0xCC, 0xAA); each result bit is F of the three input bits."""
    cases = pairs(EDGE32, lut, 60) + [(0xF0, 0xCC, 0xAA)]
    got = run_each(f"lop3.b32 {{d}}, {{a}}, {{b}}, {{c}}, {lut:#x};", cases)
    assert got == [ref_lop3(a, b, c, lut) for a, b, c in cases]
    assert got[-1] & 0xFF == lut


@pytest.mark.parametrize("boolop", ["or", "and"])
def test_lop3_predicate_output(boolop: str) -> None:
    """PTX ISA 9.7.8.6 (PTX ISA 8.2): p = (d != 0) BoolOp q; d is written too."""
    cases = [(a, b, q) for a in (0, 1, 0xF0) for b in (0, 0xCC) for q in (0, 1)]
    got = run_each(f"lop3.{boolop}.b32 %r14|%p1, {{a}}, {{b}}, 0, 0xC0, %p2;  selp.u32 {{d}}, 0x100, 0, %p1;"
                   f"  add.u32 {{d}}, {{d}}, %r14;", cases)
    for (a, b, q), r in zip(cases, got, strict=True):
        d = a & b
        p = (d != 0) or bool(q) if boolop == "or" else (d != 0) and bool(q)
        assert r == d + 0x100 * p


def test_lop3_forms_outside_the_isa_are_unsupported() -> None:
    for text in ("lop3.b32 %r1, %r2, %r3, %r4, %r5;", "lop3.b64 %rd1, %rd2, %rd3, %rd4, 0x80;",
                 "lop3.xor.b32 %r1|%p1, %r2, %r3, %r4, 0x80, %p2;", "lop3.b32 %r1, %r2, %r3, %r4, 256;"):
        mod = module(".reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n" + text + "\nret;")
        r = run(mod, args={"out": sim.Buffer(8)})
        assert r.outcome == "unsupported" and "is not supported" in r.message, text


@pytest.mark.parametrize("form", ["l.wrap", "l.clamp", "r.wrap", "r.clamp"])
def test_shf_funnel_shifts(form: str) -> None:
    """PTX ISA 9.7.8.7: n = min(c, 32) (.clamp) or c & 0x1f (.wrap); [b, a] shifted; .l keeps the upper
    word, .r the lower."""
    shifts = [0, 1, 4, 16, 31, 32, 33, 63, 64, 100, 0xFFFFFFFF, 0x80000000]
    rnd = random.Random(5)
    cases = [(rnd.choice(EDGE32), rnd.choice(EDGE32), s) for s in shifts for _ in range(6)]
    got = run_each(f"shf.{form}.b32 {{d}}, {{a}}, {{b}}, {{c}};", cases)
    for (a, b, c), r in zip(cases, got, strict=True):
        n = min(c, 32) if form.endswith("clamp") else c % 32
        whole = b * 2**32 + a
        want = (whole * 2**n // 2**32) % 2**32 if form[0] == "l" else (whole // 2**n) % 2**32
        assert r == want, (form, hex(a), hex(b), c)


# -- 9.7.1 integer instructions --------------------------------------------------------------------

@pytest.mark.parametrize("ty", [".u32", ".s32", ".u64", ".s64"])
@pytest.mark.parametrize("shiftamt", [False, True])
def test_bfind(ty: str, shiftamt: bool) -> None:
    """PTX ISA 9.7.1.16: the most significant non-sign bit; 0xffffffff if none; .shiftamt: msb - pos."""
    bits = int(ty[2:])
    kind = "r" if bits == 32 else "rd"
    values = (EDGE32 if bits == 32 else EDGE64) + rng_values(6, 40, bits)
    q = ".shiftamt" if shiftamt else ""
    got = run_each(f"bfind{q}{ty} %r13, {{a}};", [(v,) for v in values], kind, "r")
    for v, r in zip(values, got, strict=True):
        x = v & ((1 << bits) - 1)
        if ty[1] == "s" and sx(x, bits) < 0:
            x = (1 << bits) - 1 - x
        pos = -1
        for i in range(bits):
            if x >> i & 1:
                pos = i
        want = 0xFFFFFFFF if pos < 0 else (bits - 1 - pos if shiftamt else pos)
        assert r == want, (ty, hex(v))


def test_fns_finds_the_nth_set_bit() -> None:
    """PTX ISA 9.7.1.17, with the manual's four examples first."""
    cases = [(0xAAAAAAAA, 3, 1), (0xAAAAAAAA, 3, -1 & M32), (0xAAAAAAAA, 2, 1), (0xAAAAAAAA, 2, -1 & M32)]
    rnd = random.Random(7)
    for _ in range(150):
        cases.append((rnd.choice(EDGE32 + rng_values(8, 20, 32)), rnd.randrange(32),
                      rnd.choice([0, 1, 2, 3, 5, 17, 31, 32, 33, -1, -2, -7, -32, -33]) & M32))
    got = run_each("fns.b32 {d}, {a}, {b}, {c};", cases)
    assert got[:4] == [3, 3, 3, 1]
    for (mask, base, off), r in zip(cases, got, strict=True):
        o = sx(off, 32)
        bits = [i for i in range(32) if mask >> i & 1]
        if o == 0:
            want = base if base in bits else 0xFFFFFFFF
        elif o > 0:
            up = [i for i in bits if i >= base]
            want = up[o - 1] if len(up) >= o else 0xFFFFFFFF
        else:
            down = [i for i in reversed(bits) if i <= base]
            want = down[-o - 1] if len(down) >= -o else 0xFFFFFFFF
        assert r == want, (hex(mask), base, o)


def test_fns_with_a_base_above_31_is_undefined_and_stops_the_run() -> None:
    mod = module(".reg .b32 %r<4>;\nmov.u32 %r2, 32;\nfns.b32 %r1, -1, %r2, 1;\nret;")
    r = run(mod, args={"out": sim.Buffer(8)})
    assert r.outcome == "violation" and r.rule == "kernel-fault" and "9.7.1.17" in r.message


@pytest.mark.parametrize("mode", ["clamp", "wrap"])
def test_bmsk(mode: str) -> None:
    """PTX ISA 9.7.1.22: b bits from position a; 0 when a >= 32 under .clamp; width wrapped by .wrap."""
    sizes = [0, 1, 2, 5, 16, 31, 32, 33, 40, 64, 0xFFFFFFFF]
    cases = [(a, b) for a in sizes for b in sizes] + [(1, 2)]
    got = run_each(f"bmsk.{mode}.b32 {{d}}, {{a}}, {{b}};", cases)
    for (a, b), r in zip(cases, got, strict=True):
        if mode == "clamp":
            start, width = a, min(b, 32)
        else:
            start, width = a % 32, b % 32
        want = 0 if start >= 32 else sum(1 << i for i in range(start, min(start + width, 32)))
        assert r == want, (mode, a, b)
    assert got[-1] == 6  # the manual's example: bmsk.wrap.b32 rd, 1, 2 is 0x00000006


@pytest.mark.parametrize("ty", [".u32", ".s32"])
@pytest.mark.parametrize("mode", ["clamp", "wrap"])
def test_szext(ty: str, mode: str) -> None:
    """PTX ISA 9.7.1.21: extend the low N = b bits of a; N = 0 gives 0; N >= 32 gives a (.clamp) or
    uses N mod 32 (.wrap)."""
    rnd = random.Random(9)
    cases = [(rnd.choice(EDGE32), n) for n in (0, 1, 7, 8, 15, 16, 24, 31, 32, 33, 40, 0xFFFFFFFF)
             for _ in range(8)]
    got = run_each(f"szext.{mode}{ty} {{d}}, {{a}}, {{b}};", cases)
    for (a, n), r in zip(cases, got, strict=True):
        if n >= 32:
            if mode == "clamp":
                assert r == a
                continue
            n %= 32
        if n == 0:
            assert r == 0
            continue
        low = a % 2**n
        if ty == ".s32" and low >= 2 ** (n - 1):
            low -= 2**n
        assert r == low % 2**32, (ty, mode, hex(a), n)


@pytest.mark.parametrize("ty", [".u16", ".s16", ".u32", ".s32", ".u64", ".s64"])
def test_sad(ty: str) -> None:
    """PTX ISA 9.7.1.7: d = c + |a - b|."""
    bits = int(ty[2:])
    kind = "rd" if bits == 64 else "r"
    if bits == 16:
        body = f"cvt.u16.u32 %rs1, {{a}}; cvt.u16.u32 %rs2, {{b}}; cvt.u16.u32 %rs3, {{c}};" \
               f" sad{ty} %rs4, %rs1, %rs2, %rs3; cvt.u32.u16 {{d}}, %rs4;"
        body = ".reg .b16 %rs<8>;\n" + body
    else:
        body = f"sad{ty} {{d}}, {{a}}, {{b}}, {{c}};"
    cases = pairs(EDGE32 if bits < 64 else EDGE64, 10)
    got = run_each(body, cases, kind, kind)
    m = (1 << bits) - 1
    for (a, b, c), r in zip(cases, got, strict=True):
        x, y = (sx(a, bits), sx(b, bits)) if ty[1] == "s" else (a & m, b & m)
        assert r == (c + abs(x - y)) & m, (ty, hex(a), hex(b), hex(c))


@pytest.mark.parametrize("ty", [".u32", ".s32"])
def test_mul24_and_mad24(ty: str) -> None:
    """PTX ISA 9.7.1.5-6: the 48-bit product of the low 24 bits; .hi: bits 47..16, .lo: bits 31..0;
    mad24 adds c; mad24.hi.sat.s32 clamps the signed sum."""
    cases = pairs(EDGE32 + rng_values(11, 20, 32), 11, 120)
    got_hi = run_each(f"mul24.hi{ty} {{d}}, {{a}}, {{b}};", cases)
    got_lo = run_each(f"mul24.lo{ty} {{d}}, {{a}}, {{b}};", cases)
    got_mad = run_each(f"mad24.hi{ty} {{d}}, {{a}}, {{b}}, {{c}};", cases)
    got_madlo = run_each(f"mad24.lo{ty} {{d}}, {{a}}, {{b}}, {{c}};", cases)
    for i, (a, b, c) in enumerate(cases):
        x, y = (sx(a, 24), sx(b, 24)) if ty == ".s32" else (a % 2**24, b % 2**24)
        t = x * y
        assert got_hi[i] == (t >> 16) % 2**32
        assert got_lo[i] == t % 2**32
        assert got_mad[i] == ((t >> 16) + c) % 2**32
        assert got_madlo[i] == (t + c) % 2**32
    if ty == ".s32":
        sat = run_each("mad24.hi.sat.s32 {d}, {a}, {b}, {c};", cases)
        for (a, b, c), r in zip(cases, sat, strict=True):
            s = (sx(a, 24) * sx(b, 24) >> 16) + sx(c, 32)
            assert r == min(2**31 - 1, max(-(2**31), s)) % 2**32


@pytest.mark.parametrize("types", [".u32.u32", ".u32.s32", ".s32.u32", ".s32.s32"])
def test_dp4a_and_dp2a(types: str) -> None:
    """PTX ISA 9.7.1.23-24: byte (and half-word) dot products accumulated into c, mod 2^32."""
    cases = pairs(EDGE32 + rng_values(12, 30, 32), 12, 120)
    sa, sb = types[1] == "s", types[5] == "s"

    def part(v: int, width: int, i: int, signed: bool) -> int:
        x = v >> (width * i) & ((1 << width) - 1)
        return sx(x, width) if signed else x

    got4 = run_each(f"dp4a{types} {{d}}, {{a}}, {{b}}, {{c}};", cases)
    for (a, b, c), r in zip(cases, got4, strict=True):
        assert r == (c + sum(part(a, 8, i, sa) * part(b, 8, i, sb) for i in range(4))) % 2**32
    for mode, sel in (("lo", 0), ("hi", 2)):
        got2 = run_each(f"dp2a.{mode}{types} {{d}}, {{a}}, {{b}}, {{c}};", cases)
        for (a, b, c), r in zip(cases, got2, strict=True):
            want = c + sum(part(a, 16, i, sa) * part(b, 8, sel + i, sb) for i in range(2))
            assert r == want % 2**32


def test_cnot_popc_clz_on_each_width() -> None:
    """PTX ISA 9.7.8.5 (cnot), 9.7.1.14 (popc), 9.7.1.15 (clz) on .b64 as well as .b32."""
    values = EDGE64 + rng_values(13, 30, 64)
    got = run_each("popc.b64 %r14, {a};  clz.b64 %r15, {a};  cnot.b64 %rd16, {a};  cvt.u32.u64 %r16, %rd16;"
                   "  shl.b32 %r15, %r15, 8;  shl.b32 %r16, %r16, 16;  add.u32 {d}, %r14, %r15;"
                   "  add.u32 {d}, {d}, %r16;", [(v,) for v in values], "rd", "r")
    for v, r in zip(values, got, strict=True):
        assert r == bin(v).count("1") + ((64 - len(bin(v)) + 2 if v else 64) << 8) + (int(v == 0) << 16)
    values32 = EDGE32
    got = run_each("popc.b32 %r14, {a};  clz.b32 %r15, {a};  cnot.b32 %r16, {a};"
                   "  shl.b32 %r15, %r15, 8;  shl.b32 %r16, %r16, 16;  add.u32 {d}, %r14, %r15;"
                   "  add.u32 {d}, {d}, %r16;", [(v,) for v in values32])
    for v, r in zip(values32, got, strict=True):
        assert r == bin(v).count("1") + ((32 - v.bit_length()) << 8) + (int(v == 0) << 16)


# -- selection, sign, tests ---------------------------------------------------------------------------

F32_SPECIALS = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
                0x80800000, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
                0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0x40490FDB, 0x3EAAAAAB, 0x00400000]
F64_SPECIALS = [0, 1 << 63, 1, (1 << 63) | 1, (1 << 52) - 1, 1 << 52, 0x3FF0000000000000, 0xBFF0000000000000,
                0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
                0x7FF0000000000001, 0xFFFFFFFFFFFFFFFF, 0x400921FB54442D18]


def f32(bits: int) -> float:
    return float(struct.unpack("<f", (bits & M32).to_bytes(4, "little"))[0])


def f64(bits: int) -> float:
    return float(struct.unpack("<d", (bits & M64).to_bytes(8, "little"))[0])


@pytest.mark.parametrize("ctype", [".s32", ".f32", ".ftz.f32"])
def test_slct(ctype: str) -> None:
    """PTX ISA 9.7.6.4: d = (c >= 0) ? a : b; for .f32, -0 selects a and NaN selects b; .ftz flushes a
    subnormal c to zero, which selects a."""
    cs = F32_SPECIALS + EDGE32
    cases = [(0x1111, 0x2222, c) for c in cs]
    got = run_each(f"slct.b32{ctype} {{d}}, {{a}}, {{b}}, {{c}};", cases)
    for (_, _, c), r in zip(cases, got, strict=True):
        if ctype == ".s32":
            take_a = sx(c, 32) >= 0
        else:
            v = f32(c)
            subnormal = c & 0x7F800000 == 0 and c & 0x7FFFFF != 0
            take_a = (v >= 0) or (ctype.startswith(".ftz") and subnormal)
        assert r == (0x1111 if take_a else 0x2222), (ctype, hex(c))
    got64 = run_each("slct.f64.s32 {d}, {a}, {b}, %r12;", [(F64_SPECIALS[i], 5, c) for i, c in
                                                            enumerate([1, M32, 0, 0x80000000])], "fd", "fd")
    assert got64 == [F64_SPECIALS[0], 5, F64_SPECIALS[2], 5]


def test_copysign() -> None:
    """PTX ISA 9.7.3.2: the sign bit of a on the value of b (NaNs too)."""
    cases = [(a, b) for a in F32_SPECIALS[:6] for b in F32_SPECIALS]
    got = run_each("copysign.f32 {d}, {a}, {b};", cases, "f", "f")
    assert got == [(a & 0x80000000) | (b & 0x7FFFFFFF) for a, b in cases]
    cases64 = [(a, b) for a in F64_SPECIALS[:4] for b in F64_SPECIALS]
    got = run_each("copysign.f64 {d}, {a}, {b};", cases64, "fd", "fd")
    assert got == [(a & (1 << 63)) | (b & ((1 << 63) - 1)) for a, b in cases64]


@pytest.mark.parametrize("op", ["finite", "infinite", "number", "notanumber", "normal", "subnormal"])
def test_testp(op: str) -> None:
    """PTX ISA 9.7.3.1: the six properties; zeros count as normal."""
    def classify(v: float, subnormal: bool) -> bool:
        return {"finite": math.isfinite(v), "infinite": math.isinf(v), "number": not math.isnan(v),
                "notanumber": math.isnan(v), "normal": math.isfinite(v) and not subnormal,
                "subnormal": subnormal}[op]
    got = run_each(f"testp.{op}.f32 %p1, {{a}};", [(b,) for b in F32_SPECIALS], "f", "p")
    for b, r in zip(F32_SPECIALS, got, strict=True):
        assert r == classify(f32(b), b & 0x7F800000 == 0 and b & 0x7FFFFF != 0), hex(b)
    got = run_each(f"testp.{op}.f64 %p1, {{a}};", [(b,) for b in F64_SPECIALS], "fd", "p")
    for b, r in zip(F64_SPECIALS, got, strict=True):
        sub = (b >> 52) & 0x7FF == 0 and b & ((1 << 52) - 1) != 0
        assert r == classify(f64(b), sub), hex(b)


# -- 9.7.3 float functions ----------------------------------------------------------------------------

def exact(bits: int, width: int) -> Fraction:
    return Fraction(f32(bits) if width == 32 else f64(bits))


def correctly_rounded(cmp: Callable[[Fraction], int], width: int, mode: str, negative: bool) -> int:
    """The correctly rounded result of a positive true value v, given cmp(y) = the sign of y - v for
    an exact y: bisection over the ordered positive bit patterns (finite ones, then +inf) for the
    largest value <= v, then the mode chooses between it and the next one."""
    top = 0x7F800000 if width == 32 else 0x7FF0000000000000

    def val(b: int) -> Fraction:
        return Fraction(f32(b) if width == 32 else f64(b))

    lo, hi = 0, top - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cmp(val(mid)) <= 0:
            lo = mid
        else:
            hi = mid - 1
    down, up = lo, lo + 1
    if cmp(val(down)) == 0:
        r = down
    elif mode == "rz" or (mode == "rm" and not negative) or (mode == "rp" and negative):
        r = down
    elif mode in ("rp", "rm"):
        r = up
    else:
        half = (val(down) - val(down - 1)) / 2 if up == top else (val(up) - val(down)) / 2
        c = cmp(val(down) + half)
        r = up if c < 0 else down if c > 0 else (down if down % 2 == 0 else up)
    return ((1 << (width - 1)) if negative else 0) | r


def sign(v: Fraction) -> int:
    return (v > 0) - (v < 0)


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_sqrt_and_rcp_are_correctly_rounded(width: int, mode: str) -> None:
    """PTX ISA 9.7.3.13, 9.7.3.15: the IEEE-rounded forms give the correctly rounded result in their
    mode; zeros, infinities, negatives and NaN follow the ISA's tables."""
    kind = "f" if width == 32 else "fd"
    rnd = random.Random(width * 10 + len(mode))
    specials = F32_SPECIALS if width == 32 else F64_SPECIALS
    randoms = [rnd.getrandbits(width - 1) for _ in range(60)]
    values = specials + randoms + [0x40800000, 0x3E800000, 0x4F800000] * (width == 32)
    got_s = run_each(f"sqrt.{mode}.f{width} {{d}}, {{a}};", [(v,) for v in values], kind, kind)
    got_r = run_each(f"rcp.{mode}.f{width} {{d}}, {{a}};", [(v,) for v in values], kind, kind)
    sbit = 1 << (width - 1)
    expo = (0xFF << 23) if width == 32 else (0x7FF << 52)
    for v, s, r in zip(values, got_s, got_r, strict=True):
        is_nan = v & (sbit - 1) > expo
        neg = bool(v & sbit)
        if is_nan:
            assert s & (sbit - 1) > expo and r & (sbit - 1) > expo
            continue
        x = exact(v, width) if v & (sbit - 1) != expo else None
        # sqrt: -0 -> -0, +0 -> +0, negatives -> NaN, +inf -> +inf
        if x == 0:
            assert s == v
        elif neg:
            assert s & (sbit - 1) > expo
        elif x is None:
            assert s == v
        else:
            assert s == correctly_rounded(lambda y, x=x: sign(y * y - x), width, mode, False), hex(v)
        # rcp: 1/±0 = ±inf, 1/±inf = ±0
        if x == 0:
            assert r == (v & sbit) | expo
        elif x is None:
            assert r == v & sbit
        else:
            ax = abs(x)
            assert r == correctly_rounded(lambda y, ax=ax: sign(y * ax - 1), width, mode, neg), (mode, hex(v))


def nearest_f32(v: float) -> int:
    """Round a double to the nearest f32 (ties to even), overflow to infinity."""
    try:
        return int.from_bytes(struct.pack("<f", v), "little")
    except OverflowError:
        return 0x7F800000 if v > 0 else 0xFF800000


@pytest.mark.parametrize("fn", ["sin", "cos", "ex2", "lg2", "tanh", "rsqrt", "sqrt", "rcp"])
def test_approx_functions_give_the_correctly_rounded_value(fn: str) -> None:
    """PTX ISA 9.7.3.13-22: .approx forms are bounded by the ISA's error; the simulator gives the
    correctly rounded value (docs/simulator.md), and the corner cases of each function's table."""
    rnd = random.Random(len(fn))
    randoms = [nearest_f32(rnd.uniform(-20, 20)) for _ in range(60)] + \
              [nearest_f32(rnd.uniform(-1e6, 1e6)) for _ in range(20)] + \
              [rnd.getrandbits(32) for _ in range(40)]
    values = F32_SPECIALS + randoms + [0x43000000, 0xC3160000, 0xC3150000, 0x42FE0000, 0x41100000]
    got = run_each(f"{fn}.approx.f32 {{d}}, {{a}};", [(v,) for v in values], "f", "f")
    ref = {"sin": math.sin, "cos": math.cos, "ex2": lambda x: 2.0**x if x < 1024 else math.inf,
           "lg2": math.log2, "tanh": math.tanh, "rsqrt": lambda x: 1 / math.sqrt(x),
           "sqrt": math.sqrt, "rcp": lambda x: 1 / x}[fn]
    for v, r in zip(values, got, strict=True):
        x = f32(v)
        if math.isnan(x):
            assert r & 0x7FFFFFFF > 0x7F800000
            continue
        table = {  # the ISA's corner-case tables
            "sin": {math.inf: math.nan, -math.inf: math.nan},
            "cos": {math.inf: math.nan, -math.inf: math.nan, 0.0: 1.0},
            "ex2": {-math.inf: 0.0, math.inf: math.inf, 0.0: 1.0},
            "lg2": {0.0: -math.inf, math.inf: math.inf, -math.inf: math.nan},
            "tanh": {math.inf: 1.0, -math.inf: -1.0},
            "rsqrt": {0.0: math.copysign(math.inf, x), math.inf: 0.0, -math.inf: math.nan},
            "sqrt": {math.inf: math.inf, -math.inf: math.nan, 0.0: x},
            "rcp": {0.0: math.copysign(math.inf, x), math.inf: 0.0, -math.inf: -0.0},
        }[fn]
        if x in table:
            want = table[x]
        elif fn in ("lg2", "rsqrt", "sqrt") and x < 0:
            want = math.nan
        elif fn == "sin" and x == 0 or fn == "tanh" and x == 0:
            want = x
        else:
            want = ref(x)
        if math.isnan(want):
            assert r & 0x7FFFFFFF > 0x7F800000, (fn, hex(v))
        else:
            assert r == nearest_f32(want), (fn, hex(v), x, f32(r), want)


@pytest.mark.parametrize("fn", ["sin", "ex2", "lg2", "rsqrt", "rcp", "sqrt"])
def test_ftz_flushes_subnormal_inputs_and_results(fn: str) -> None:
    """PTX ISA 9.7.3: .ftz flushes subnormal inputs and results to the zero of their sign."""
    sub, nsub = 0x00000001, 0x807FFFFF
    got = run_each(f"{fn}.approx.ftz.f32 {{d}}, {{a}};", [(sub,), (nsub,), (0xC2FE0000,)], "f", "f")
    flushed = {"sin": [0, 0x80000000], "ex2": [0x3F800000, 0x3F800000], "lg2": [0xFF800000, 0xFF800000],
               "rsqrt": [0x7F800000, 0xFF800000], "rcp": [0x7F800000, 0xFF800000], "sqrt": [0, 0x80000000]}
    assert got[:2] == flushed[fn]
    if fn == "ex2":
        assert got[2] == 0  # 2^-127 is subnormal: flushed to +0


def test_f64_rsqrt_and_nan_payloads() -> None:
    """rsqrt.approx.f64 (PTX ISA 9.7.3.16) correctly rounded; f64 instructions keep NaN payloads."""
    rnd = random.Random(3)
    values = [rnd.getrandbits(62) for _ in range(50)] + [0x3FF0000000000000, 0x4010000000000000, 1]
    got = run_each("rsqrt.approx.f64 {d}, {a};", [(v,) for v in values], "fd", "fd")
    for v, r in zip(values, got, strict=True):
        x = exact(v, 64)
        assert r == correctly_rounded(lambda y, x=x: sign(y * y * x - 1), 64, "rn", False), hex(v)
    nan = 0x7FF0000000000123
    got = run_each("sqrt.rn.f64 {d}, {a};", [(nan,)], "fd", "fd")
    assert got == [nan | 1 << 51]


@pytest.mark.parametrize("text", [
    "sqrt.f32 %f1, %f2;", "sqrt.approx.f64 %fd1, %fd2;", "rcp.approx.ftz.f64 %fd1, %fd2;",
    "rsqrt.approx.ftz.f64 %fd1, %fd2;", "sin.approx.f64 %fd1, %fd2;", "sin.rn.f32 %f1, %f2;",
    "ex2.approx.ftz.bf16 %h1, %h2;", "ex2.approx.f16 %h1, %h2;", "tanh.approx.ftz.f32 %f1, %f2;",
    "sqrt.rn.ftz.f64 %fd1, %fd2;", "rcp.rn.rz.f32 %f1, %f2;", "lg2.approx.sat.f32 %f1, %f2;",
    "testp.normal.f16 %p1, %h1;", "copysign.b32 %r1, %r2, %r3;", "bmsk.b32 %r1, %r2, %r3;",
    "shf.l.b32 %r1, %r2, %r3, %r4;", "szext.wrap.b32 %r1, %r2, %r3;", "mul24.u32 %r1, %r2, %r3;",
    "mad24.lo.sat.s32 %r1, %r2, %r3, %r4;", "dp4a.u32 %r1, %r2, %r3, %r4;",
    "dp2a.u32.u32 %r1, %r2, %r3, %r4;",
    "bfind.b32 %r1, %r2;", "slct.u32.u32 %r1, %r2, %r3, %r4;", "slct.ftz.u32.s32 %r1, %r2, %r3, %r4;",
])
def test_forms_outside_the_isa_or_the_model_stop_the_run_with_their_name(text: str) -> None:
    regs = ".reg .pred %p<4>;\n.reg .b16 %h<4>;\n.reg .b32 %r<8>;\n.reg .f32 %f<4>;\n.reg .f64 %fd<4>;\n"
    mod = module(regs + text + "\nret;")
    r = run(mod, args={"out": sim.Buffer(8)})
    assert r.outcome == "unsupported", text
    assert f"`{text.split()[0]}` is not supported (" in r.message, r.message
