"""Exact floating-point helpers for the generated code of rcp, sqrt, rsqrt, ex2, lg2, sin, cos, tanh.

Values travel as bit patterns (the register contents). Every result is computed exactly or to a
precision far beyond the target and then rounded once, so there is no double rounding:

- `round_fraction` rounds an exact rational to f32/f64 in each IEEE 754 mode (`rn`, `rz`, `rm`,
  `rp`), subnormals and overflow included.
- `sqrt`, `rcp` and `rsqrt` use integer arithmetic only: the reciprocal is an exact rational; a square
  root is bracketed by an integer square root carrying at least p+3 bits, and an inexact remainder is
  replaced by a half unit, which lies on the same side of every rounding boundary as the true value.
- The transcendental functions (only `.approx` forms exist in PTX) return the correctly rounded f32
  result: the C library's double result is used when it lies well clear of every f32 rounding
  boundary, otherwise the value is recomputed with `decimal` at 60+ significant digits.

NaN results: PTX ISA 9.7.3 says single-precision instructions return an unspecified NaN, and that
double-precision instructions keep NaN payloads. The simulator writes `F32_NAN` for every f32 NaN
result, passes an input f64 NaN through quieted, and writes `F64_NAN` for an f64 NaN it creates.
"""

from __future__ import annotations

import decimal
import math
import struct
from fractions import Fraction

F32_NAN = 0x7FFFFFFF
F64_NAN = 0x7FFFFFFFFFFFFFFF

# bits -> (precision p with the hidden bit, exponent bias, fraction bits)
_FORMATS = {32: (24, 127, 23), 64: (53, 1023, 52)}


def _fmt(bits: int) -> tuple[int, int, int, int]:
    p, bias, frac = _FORMATS[bits]
    return p, bias, frac, 1 << (bits - 1)


def to_float(x: int, bits: int) -> float:
    if bits == 32:
        return float(struct.unpack("<f", (x & 0xFFFFFFFF).to_bytes(4, "little"))[0])
    return float(struct.unpack("<d", (x & (1 << 64) - 1).to_bytes(8, "little"))[0])


def from_double(v: float) -> int:
    return int.from_bytes(struct.pack("<d", v), "little")


def is_nan(x: int, bits: int) -> bool:
    _, _, frac, sign = _fmt(bits)
    return (x & (sign - 1)) > (sign - 1) ^ ((1 << frac) - 1)


def is_subnormal(x: int, bits: int) -> bool:
    _, _, frac, sign = _fmt(bits)
    mag = x & (sign - 1)
    return 0 < mag < (1 << frac)


def flush(x: int, bits: int) -> int:
    """`.ftz`: a subnormal becomes the zero of its sign."""
    sign = 1 << (bits - 1)
    return x & sign if is_subnormal(x, bits) else x


def round_fraction(v: Fraction, bits: int, mode: str = "rn", negative: bool = False) -> int:
    """The bit pattern of `v` rounded to f32/f64 (`negative`: the sign of a zero `v`)."""
    p, bias, frac, sign_bit = _fmt(bits)
    sign = sign_bit if (v < 0 or (v == 0 and negative)) else 0
    a = abs(v)
    if a == 0:
        return sign
    n, d = a.numerator, a.denominator
    e = n.bit_length() - d.bit_length()          # 2^e <= a < 2^(e+2)
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1
    emin = 1 - bias
    qe = max(e, emin) - (p - 1)                   # the exponent of one unit in the last place
    num, den = (n, d << qe) if qe >= 0 else (n << -qe, d)
    m, rem = divmod(num, den)
    if rem:
        if mode == "rn":
            up = 2 * rem > den or (2 * rem == den and m & 1 == 1)
        elif mode == "rz":
            up = False
        elif mode == "rp":
            up = not sign
        elif mode == "rm":
            up = bool(sign)
        else:
            raise ValueError(mode)
        m += up
    if m == 1 << p:
        m >>= 1
        qe += 1
    if qe + p - 1 > bias:                         # beyond the largest finite exponent
        to_inf = mode == "rn" or (mode == "rp" and not sign) or (mode == "rm" and sign)
        mag = (((1 << (bits - 1 - frac)) - 1) << frac) if to_inf else (((1 << (bits - 1 - frac)) - 2) << frac
                                                                        | ((1 << frac) - 1))
        return sign | mag
    if m < 1 << (p - 1):                          # subnormal (or rounded down to zero)
        return sign | m
    return sign | ((qe + p - 1 + bias) << frac) | (m - (1 << (p - 1)))


def _nan_result(x: int, bits: int) -> int:
    """An input NaN as the result: f64 keeps its payload (quieted), f32 gives the canonical NaN."""
    if bits == 32:
        return F32_NAN
    return x | (1 << 51)


def _operand(x: int, bits: int, ftz: bool) -> tuple[int, bool, bool, bool, bool]:
    """The input as the instruction sees it (a subnormal flushed under .ftz) and its (nan, infinite,
    zero, negative) classes."""
    if ftz:
        x = flush(x, bits)
    _, _, frac, sign = _fmt(bits)
    mag = x & (sign - 1)
    inf = (sign - 1) ^ ((1 << frac) - 1)
    return x, mag > inf, mag == inf, mag == 0, bool(x & sign)


def _inf(bits: int, negative: bool) -> int:
    _, _, frac, sign = _fmt(bits)
    return (sign if negative else 0) | ((sign - 1) ^ ((1 << frac) - 1))


def _exact(x: int, bits: int) -> Fraction:
    return Fraction(to_float(x, bits))


def rcp(x: int, bits: int, mode: str, ftz: bool) -> int:
    """rcp (PTX ISA 9.7.3.13): 1/x rounded in `mode`."""
    x, nan, inf, zero, neg = _operand(x, bits, ftz)
    if nan:
        return _nan_result(x, bits)
    if inf:
        return (1 << (bits - 1)) if neg else 0
    if zero:
        return _inf(bits, neg)
    r = round_fraction(1 / _exact(x, bits), bits, mode)
    return flush(r, bits) if ftz else r


def _mant_exp(v: Fraction) -> tuple[int, int]:
    """v = mant * 2^exp with an integer mant (v a positive dyadic rational)."""
    d = v.denominator
    return v.numerator, -(d.bit_length() - 1)


def sqrt(x: int, bits: int, mode: str, ftz: bool) -> int:
    """sqrt (PTX ISA 9.7.3.15): correctly rounded in `mode`; sqrt(-0) = -0, negatives give NaN."""
    x, nan, inf, zero, neg = _operand(x, bits, ftz)
    if nan:
        return _nan_result(x, bits)
    if zero:
        return x
    if neg:
        return F32_NAN if bits == 32 else F64_NAN
    if inf:
        return x
    p = _FORMATS[bits][0]
    mant, ex = _mant_exp(_exact(x, bits))
    if ex & 1:
        mant, ex = mant << 1, ex - 1
    s = p + 3                                     # isqrt(mant * 4^s) >= 2^(p+3)
    big = mant << (2 * s)
    q = math.isqrt(big)
    value = Fraction(q) if q * q == big else Fraction(2 * q + 1, 2)
    return round_fraction(value * Fraction(2) ** (ex // 2 - s), bits, mode)


def rsqrt(x: int, bits: int, ftz: bool) -> int:
    """rsqrt.approx (PTX ISA 9.7.3.16), given as the correctly rounded 1/sqrt(x) (round to nearest)."""
    x, nan, inf, zero, neg = _operand(x, bits, ftz)
    if nan:
        return _nan_result(x, bits)
    if zero:
        return _inf(bits, neg)
    if neg:
        return F32_NAN if bits == 32 else F64_NAN
    if inf:
        return 0
    p = _FORMATS[bits][0]
    mant, ex = _mant_exp(_exact(x, bits))
    if ex & 1:
        mant, ex = mant << 1, ex - 1
    # 1/sqrt(mant * 2^ex) = 2^(-ex/2) * 2^-k * (2^k / sqrt(mant)); y = floor(2^k / sqrt(mant)).
    k = p + 4 + (mant.bit_length() + 1) // 2
    y = math.isqrt((1 << (2 * k)) // mant)
    value = Fraction(y) if y * y * mant == 1 << (2 * k) else Fraction(2 * y + 1, 2)
    r = round_fraction(value * Fraction(2) ** (-ex // 2 - k), bits, "rn")
    return flush(r, bits) if ftz else r


# -- transcendental functions (f32, .approx) -------------------------------------------------------

_PI_CACHE: dict[int, decimal.Decimal] = {}


def _pi(prec: int) -> decimal.Decimal:
    """pi to `prec` digits (the series of the `decimal` module's documentation)."""
    if prec not in _PI_CACHE:
        with decimal.localcontext() as ctx:
            ctx.prec = prec + 3
            D = decimal.Decimal
            lasts, t, s, n, na, d, da = D(0), D(3), D(3), D(1), D(0), D(0), D(24)
            while s != lasts:
                lasts = s
                n, na = n + na, na + 8
                d, da = d + da, da + 32
                t = (t * n) / d
                s += t
            _PI_CACHE[prec] = +s
    return _PI_CACHE[prec]


def _sin_cos(x: Fraction, cos: bool) -> Fraction:
    D = decimal.Decimal
    with decimal.localcontext() as ctx:
        ctx.prec = 140
        two_pi = 2 * _pi(140)
        r = D(x.numerator) / D(x.denominator)
        r = r - two_pi * (r / two_pi).to_integral_value(rounding=decimal.ROUND_FLOOR)
        if cos:
            r = r + _pi(140) / 2
        # Taylor series of sin(r), r in [0, 2.5*pi)
        term, total, i = r, r, 1
        r2 = r * r
        while True:
            term = -term * r2 / ((i + 1) * (i + 2))
            i += 2
            if abs(term) < D(10) ** -130:
                break
            total += term
        return Fraction(total)


def _high_precision(fn: str, x: Fraction) -> Fraction:
    D = decimal.Decimal
    if fn in ("sin", "cos"):
        return _sin_cos(x, fn == "cos")
    with decimal.localcontext() as ctx:
        # Enough digits for the cancellation in tanh near zero, and 60 beyond it.
        lost = max(0, -math.floor(math.log10(abs(x)))) if x else 0
        ctx.prec = 60 + lost
        dx = D(x.numerator) / D(x.denominator)
        if fn == "ex2":
            return Fraction((dx * D(2).ln()).exp())
        if fn == "lg2":
            return Fraction(dx.ln() / D(2).ln())
        e2 = (2 * dx).exp()
        return Fraction((e2 - 1) / (e2 + 1))


def _libm(fn: str, x: float) -> float:
    if fn == "sin":
        return math.sin(x)
    if fn == "cos":
        return math.cos(x)
    if fn == "ex2":
        return math.pow(2.0, x)
    if fn == "lg2":
        return math.log2(x)
    return math.tanh(x)


def transcendental(fn: str, x: int, ftz: bool) -> int:
    """sin, cos, ex2, lg2, tanh .approx.f32 (PTX ISA 9.7.3.18-22): the correctly rounded f32 value
    (the hardware's result may differ within the error bound the ISA states), with the ISA's
    corner-case table for infinities, zeros and NaN."""
    bits = 32
    x, nan, inf, zero, neg = _operand(x, bits, ftz)
    one = 0x3F800000
    if nan:
        return F32_NAN
    if fn in ("sin", "cos"):
        if inf:
            return F32_NAN
        if zero:
            return x if fn == "sin" else one
    elif fn == "ex2":
        if inf:
            return 0 if neg else x
        if zero:
            return one
    elif fn == "lg2":
        if zero:
            return _inf(bits, True)
        if neg:
            return F32_NAN
        if inf:
            return x
    else:  # tanh
        if inf:
            return one | (x & 0x80000000)
        if zero:
            return x
    xf = to_float(x, bits)
    if fn == "ex2" and xf == math.floor(xf):
        if xf >= 128:
            return _inf(bits, False)
        r = round_fraction(Fraction(2) ** int(max(xf, -200.0)), bits, "rn")  # exact powers of two
        return flush(r, bits) if ftz else r
    if fn == "ex2" and xf >= 128:
        return _inf(bits, False)
    if fn == "ex2" and xf < -152:
        return 0
    y = _libm(fn, xf)
    r = round_fraction(Fraction(y), bits, "rn")
    # The double result is within a few ulp of the true value; if every value that close rounds
    # to the same f32, so does the true value. Otherwise compute it again with 60+ digits.
    slack = 16 * math.ulp(y)
    if (round_fraction(Fraction(y) - Fraction(slack), bits, "rn") != r
            or round_fraction(Fraction(y) + Fraction(slack), bits, "rn") != r):
        r = round_fraction(_high_precision(fn, Fraction(xf)), bits, "rn")
    return flush(r, bits) if ftz else r
