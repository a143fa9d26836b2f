"""Conversions between `.f32` and the 16-bit float formats `.f16` and `.bf16`, bit-exact.

`cvt` (PTX ISA, Data Movement and Conversion Instructions: cvt) narrows an `.f32` to `.f16`
or `.bf16` with `.rn` (nearest, ties to even), `.rz` (toward zero), `.rm` or `.rp`; `.relu` clamps a
negative result to +0 and `.satfinite` clamps a result beyond the format's largest finite value to that
value (sign kept). A NaN input gives the canonical NaN `0x7fff` of either format: the ISA fixes it for
`.relu` ("NaN results are converted to canonical NaN"); elsewhere it only says the result is a NaN, and
the simulator writes the same canonical one. Values travel as bit patterns (the register contents);
rounding uses integer arithmetic only, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Half:
    """A 16-bit binary float format: `frac` fraction bits, `bias` exponent bias (5 or 8 exponent bits)."""

    name: str
    frac: int
    bias: int

    @property
    def exp_bits(self) -> int:
        return 15 - self.frac

    @property
    def inf(self) -> int:
        return ((1 << self.exp_bits) - 1) << self.frac

    @property
    def max_finite(self) -> int:
        return self.inf - 1


F16: Final = Half(".f16", 10, 15)
BF16: Final = Half(".bf16", 7, 127)
CANONICAL_NAN: Final = 0x7FFF
FORMATS: Final[dict[str, Half]] = {".f16": F16, ".bf16": BF16}


def _is_nan32(x: int) -> bool:
    return (x & 0x7FFFFFFF) > 0x7F800000


def from_f32(x: int, fmt: Half, mode: str = "rn", relu: bool = False, satfinite: bool = False) -> int:
    """The 16-bit pattern of the `.f32` pattern `x` converted to `fmt` (`mode` "rn", "rz", "rm", "rp")."""
    x &= 0xFFFFFFFF
    if _is_nan32(x):
        return CANONICAL_NAN
    sign = (x >> 31) & 1
    if relu and sign:
        return 0  # a negative result (or -0) clamps to +0
    e32 = (x >> 23) & 0xFF
    m32 = x & 0x7FFFFF
    out_sign = sign << 15
    if e32 == 0xFF:  # an infinity
        return out_sign | (fmt.max_finite if satfinite else fmt.inf)
    if e32 == 0 and m32 == 0:
        return out_sign
    # The value is sig * 2^exp exactly, with sig an integer (subnormals have no hidden bit).
    sig = m32 | (1 << 23) if e32 else m32
    exp = (e32 if e32 else 1) - 127 - 23
    return round_dyadic(sign, sig, exp, fmt, mode, satfinite)


def round_dyadic(sign: int, sig: int, exp: int, fmt: Half, mode: str = "rn", satfinite: bool = False) -> int:
    """The 16-bit pattern of (-1)^sign * sig * 2^exp (sig > 0 an integer) rounded to `fmt` in `mode`:
    every value a sum of two binary floats can take."""
    out_sign = sign << 15
    # The exponent of the target's unit in the last place at this magnitude (fixed for its subnormals).
    top = sig.bit_length() - 1 + exp          # floor(log2(value))
    ulp = max(top, 1 - fmt.bias) - fmt.frac
    shift = ulp - exp
    if shift <= 0:
        q, up = sig << -shift, False
    else:
        q, rem = sig >> shift, sig & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if mode == "rn":
            up = rem > half or (rem == half and q & 1 == 1)
        else:  # directed: away from zero only toward the mode's infinity
            up = rem != 0 and (mode == "rp" and not sign or mode == "rm" and bool(sign))
    q += up
    # q * 2^ulp: normalise to the format's fields.
    if q >> (fmt.frac + 1):                    # rounding carried into the next binade
        q >>= 1
        ulp += 1
    if q >> fmt.frac == 0:                     # subnormal (or zero after rounding)
        return out_sign | q
    biased = ulp + fmt.frac + fmt.bias
    if biased >= (1 << fmt.exp_bits) - 1:      # beyond the largest finite value
        toward_zero = mode == "rz" or (mode == "rm" and not sign) or (mode == "rp" and bool(sign))
        if satfinite or toward_zero:
            return out_sign | fmt.max_finite
        return out_sign | fmt.inf
    return out_sign | (biased << fmt.frac) | (q & ((1 << fmt.frac) - 1))


def to_f32(h: int, fmt: Half) -> int:
    """The `.f32` pattern of the 16-bit pattern `h` (exact: both formats widen without rounding; a NaN
    keeps its payload's top bits and comes out quiet)."""
    h &= 0xFFFF
    if fmt is BF16:
        return h << 16  # bf16 is the upper half of an f32
    sign = (h >> 15) << 31
    e = (h >> fmt.frac) & ((1 << fmt.exp_bits) - 1)
    m = h & ((1 << fmt.frac) - 1)
    if e == (1 << fmt.exp_bits) - 1:
        return sign | 0x7F800000 | (m << (23 - fmt.frac)) | (0x400000 if m else 0)
    if e == 0:
        if m == 0:
            return sign
        top = m.bit_length() - 1                       # value = m * 2^(1 - 15 - 10): normal in f32
        e32 = top + 1 - fmt.bias - fmt.frac + 127
        return sign | (e32 << 23) | ((m << (23 - top)) & 0x7FFFFF)
    return sign | ((e - fmt.bias + 127) << 23) | (m << (23 - fmt.frac))
