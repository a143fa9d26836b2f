"""`sim.halfops`: .f32 to .f16/.bf16 and back, bit-exact (PTX ISA, Data Movement and Conversion
Instructions: cvt: `.rn` nearest-even, `.rz`, `.rm`, `.rp`; `.relu` clamps negative results to 0 and
makes NaN canonical; `.satfinite` clamps beyond the largest finite value, sign kept, NaN stays NaN).

References independent of the implementation: Python's `struct` "e" format (IEEE binary16, round to
nearest even) for .f16, and the exact rational value rounded by hand for every mode and both formats."""

from __future__ import annotations

import random
import struct
from fractions import Fraction

import pytest

from mbarrier.sim.halfops import BF16, CANONICAL_NAN, F16, Half, from_f32, to_f32

EDGES = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x3F800000, 0xBF800000, 0x477FE000,
         0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
         0x7FC00000, 0xFFC00001, 0x7F800001, 0x33000000, 0x33000001, 0x337FFFFF, 0x387FC000, 0x387FE000,
         0x38800000, 0x3F808000, 0x3F818000, 0x7F7F8000, 0x7F7F7FFF, 0x00010000, 0x00018000]
_RNG = random.Random(7)
RANDOM = [_RNG.getrandbits(32) for _ in range(3000)]


def _value(x: int) -> Fraction:
    return Fraction(struct.unpack("<f", x.to_bytes(4, "little"))[0])


def _reference(x: int, fmt: Half, mode: str) -> int:
    """Round the exact value of `x` (finite, at most the format's largest finite value) to `fmt`: pick
    one of its two representable neighbours."""
    v = _value(x)
    sign = 0x8000 if x >> 31 else 0
    a = abs(v)
    ulp_min = Fraction(2) ** (1 - fmt.bias - fmt.frac)
    # Representable magnitudes: k * 2^e for the binade of `a` (subnormals: the lowest binade's step).
    e = max(_floor_log2(a), 1 - fmt.bias) if a else 1 - fmt.bias
    ulp = max(Fraction(2) ** (e - fmt.frac), ulp_min)
    lo = (a // ulp) * ulp
    hi = lo + ulp
    if a == lo:
        pick = lo
    elif mode == "rn":
        pick = lo if a - lo < hi - a or (a - lo == hi - a and (lo / ulp) % 2 == 0) else hi
    elif mode == "rz" or (mode == "rp" and sign) or (mode == "rm" and not sign):
        pick = lo
    else:
        pick = hi
    return sign | _encode(pick, fmt)


def _floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if a >= Fraction(2) ** e else e - 1


def _encode(a: Fraction, fmt: Half) -> int:
    if a == 0:
        return 0
    if a < Fraction(2) ** (1 - fmt.bias):  # subnormal
        return int(a / Fraction(2) ** (1 - fmt.bias - fmt.frac))
    e = _floor_log2(a)
    m = a / Fraction(2) ** e - 1
    return ((e + fmt.bias) << fmt.frac) | int(m * (1 << fmt.frac))


def _f16_struct(x: int) -> int | None:
    try:
        return int.from_bytes(struct.pack("<e", struct.unpack("<f", x.to_bytes(4, "little"))[0]), "little")
    except OverflowError:
        return None


def _is_nan(x: int) -> bool:
    return (x & 0x7FFFFFFF) > 0x7F800000


def test_f16_rn_agrees_with_ieee_binary16() -> None:
    for x in EDGES + RANDOM:
        want = _f16_struct(x)
        got = from_f32(x, F16, "rn")
        if _is_nan(x):
            assert got == CANONICAL_NAN
        elif want is None:   # overflow: beyond max + ulp/2 rounds to infinity
            assert got == (0xFC00 if x >> 31 else 0x7C00)
        else:
            assert got == want, hex(x)


@pytest.mark.parametrize("fmt", [F16, BF16], ids=["f16", "bf16"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_every_mode_agrees_with_exact_rounding(fmt: Half, mode: str) -> None:
    for x in EDGES + RANDOM:
        if _is_nan(x) or (x & 0x7FFFFFFF) == 0x7F800000:
            continue
        got = from_f32(x, fmt, mode)
        v = abs(_value(x))
        max_finite = (2 - Fraction(2) ** -fmt.frac) * Fraction(2) ** fmt.bias
        if v <= max_finite:
            want = _reference(x, fmt, mode)
        else:  # overflow: the mode decides between infinity and the largest finite value
            to_inf = mode == "rn" or (mode == "rp" and not x >> 31) or (mode == "rm" and x >> 31)
            want = (0x8000 if x >> 31 else 0) | (fmt.inf if to_inf else fmt.max_finite)
            if mode == "rn" and v < max_finite + (Fraction(2) ** (fmt.bias - fmt.frac)) / 2:
                want = (0x8000 if x >> 31 else 0) | fmt.max_finite
        assert got == want, (hex(x), mode, hex(got), hex(want))


def test_bf16_rn_is_the_rounded_upper_half() -> None:
    for x in EDGES + RANDOM:
        if _is_nan(x):
            continue
        # Round half to even on the 16 dropped bits: the well-known bias trick.
        assert from_f32(x, BF16, "rn") == ((x + 0x7FFF + ((x >> 16) & 1)) >> 16) & 0xFFFF, hex(x)


def test_relu_and_satfinite() -> None:
    minus_three, big, nan, minus_inf = 0xC0400000, 0x477FF000, 0x7FC00000, 0xFF800000
    assert from_f32(minus_three, F16, "rn", relu=True) == 0
    assert from_f32(minus_three, BF16, "rn", relu=True) == 0
    assert from_f32(0x3FC00000, F16, "rn", relu=True) == 0x3E00        # 1.5 stays
    assert from_f32(nan, F16, "rn", relu=True) == CANONICAL_NAN
    assert from_f32(big, F16, "rn") == 0x7C00                            # 65520 rounds to infinity
    assert from_f32(big, F16, "rn", satfinite=True) == 0x7BFF            # ... or clamps to 65504
    assert from_f32(minus_inf, F16, "rn", satfinite=True) == 0xFBFF
    assert from_f32(minus_inf, BF16, "rz", satfinite=True) == 0xFF7F
    assert from_f32(nan, BF16, "rz", satfinite=True) == CANONICAL_NAN
    assert from_f32(minus_inf, F16, "rz") == 0xFC00                      # infinity stays without .satfinite


@pytest.mark.parametrize("fmt", [F16, BF16], ids=["f16", "bf16"])
def test_widening_is_exact_and_inverts_narrowing(fmt: Half) -> None:
    for h in range(0x10000):
        x = to_f32(h, fmt)
        e = (h >> fmt.frac) & ((1 << fmt.exp_bits) - 1)
        if e == (1 << fmt.exp_bits) - 1 and h & ((1 << fmt.frac) - 1):
            assert _is_nan(x)
            continue
        assert from_f32(x, fmt, "rz") == h, (hex(h), hex(x))
        if fmt is F16 and e != (1 << fmt.exp_bits) - 1:
            assert _value(x) == Fraction(struct.unpack("<e", h.to_bytes(2, "little"))[0])
