"""Integer and float helpers the generated instruction code calls for the less common operations."""

from __future__ import annotations

import math


def div(a: int, b: int, mask: int) -> int:
    """Integer division truncating toward zero; division by zero gives all ones, as sm_90 does."""
    if b == 0:
        return mask
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def rem(a: int, b: int, mask: int) -> int:
    """The remainder with the sign of the dividend; by zero it is the dividend."""
    if b == 0:
        return a
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def bfe_u(a: int, pos: int, length: int, bits: int) -> int:
    if length == 0 or pos >= bits:
        return 0
    return (a >> pos) & ((1 << min(length, bits - pos)) - 1)


def bfe_s(a: int, pos: int, length: int, bits: int) -> int:
    if length == 0:
        return 0
    if pos >= bits:
        return -1 if a >> (bits - 1) & 1 else 0
    top = min(pos + length, bits) - 1
    field = bfe_u(a, pos, length, bits)
    n = top - pos + 1
    sign = (a >> top) & 1
    return field - (1 << n) if sign and n < bits + 1 and field >> (n - 1) & 1 else field


def bfi(f: int, b: int, pos: int, length: int, bits: int) -> int:
    if length == 0 or pos >= bits:
        return b
    mask = ((1 << min(length, bits - pos)) - 1) << pos
    return (b & ~mask) | ((f << pos) & mask)


def prmt(a: int, b: int, c: int) -> int:
    """prmt.b32 default mode: each result byte picks one of the eight bytes of {b, a}, or its sign."""
    pool = (b << 32) | a
    out = 0
    for i in range(4):
        sel = (c >> (4 * i)) & 0xF
        byte = (pool >> (8 * (sel & 7))) & 0xFF
        if sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * i)
    return out


def fdiv(a: float, b: float) -> float:
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def fnum(a: float, b: float) -> bool:
    return not (math.isnan(a) or math.isnan(b))


def f2i(x: float, mode: str, lo: int, hi: int) -> int:
    """Float to integer with the given rounding, saturating as PTX cvt does (NaN gives 0)."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    if mode == "rni":
        v = round(x)
    elif mode == "rmi":
        v = math.floor(x)
    elif mode == "rpi":
        v = math.ceil(x)
    else:
        v = math.trunc(x)
    return max(lo, min(hi, int(v)))


# -- PTX ISA 9.7.1 and 9.7.8: bit and integer instructions the generated code calls ----------------

def bfind(a: int, bits: int, signed: bool, shiftamt: bool) -> int:
    """bfind (PTX ISA 9.7.1.16): the position of the most significant non-sign bit, 0xffffffff if none;
    with .shiftamt, the left shift that brings it to the most significant position."""
    msb = bits - 1
    if signed and a >> msb & 1:
        a = ~a & ((1 << bits) - 1)
    if a == 0:
        return 0xFFFFFFFF
    d = a.bit_length() - 1
    return msb - d if shiftamt else d


def fns(mask: int, base: int, offset: int) -> int:
    """fns.b32 (PTX ISA 9.7.1.17): the position of the offset-th set bit counting from `base` (up for a
    positive offset, down for a negative one), 0xffffffff if there is none. The caller rejects a base
    above 31 (undefined behaviour)."""
    if offset == 0:
        return base if mask >> base & 1 else 0xFFFFFFFF
    count = abs(offset) - 1
    step = 1 if offset > 0 else -1
    pos = base
    while 0 <= pos < 32:
        if mask >> pos & 1:
            if count == 0:
                return pos
            count -= 1
        pos += step
    return 0xFFFFFFFF


def bmsk(a: int, b: int, clamp: bool) -> int:
    """bmsk.b32 (PTX ISA 9.7.1.22): the mask of b bits starting at bit a."""
    full = 0xFFFFFFFF
    a1, b1 = a & 0x1F, b & 0x1F
    mask0 = (full << a1) & full
    total = a1 + b1
    mask1 = (full << total) & full if total < 32 else 0
    overflow = total >= 32
    if clamp:
        if a >= 32:
            overflow = True
            mask0 = 0
        if b >= 32:
            overflow = True
    if overflow:
        mask1 = 0
    elif b1 == 0:
        mask1 = full
    return mask0 & ~mask1 & full


def szext(a: int, b: int, signed: bool, clamp: bool) -> int:
    """szext.{clamp,wrap}.{u32,s32} (PTX ISA 9.7.1.21): extend the low N = b bits of a."""
    full = 0xFFFFFFFF
    b1 = b & 0x1F
    too_large = b >= 32 and clamp
    mask = 0 if too_large else (full << b1) & full
    sign = 0
    if b1 != 0 and not too_large and signed:
        sign = a >> ((b1 - 1) & 0x1F) & 1
    return (a & ~mask & full) | (mask if sign else 0)


def _lanes(v: int, width: int, n: int, signed: bool) -> list[int]:
    out = []
    for i in range(n):
        x = v >> (width * i) & ((1 << width) - 1)
        if signed and x >> (width - 1):
            x -= 1 << width
        out.append(x)
    return out


def dp4a(a: int, b: int, c: int, a_signed: bool, b_signed: bool) -> int:
    """dp4a (PTX ISA 9.7.1.23): c plus the dot product of the four bytes of a and of b (mod 2^32)."""
    va, vb = _lanes(a, 8, 4, a_signed), _lanes(b, 8, 4, b_signed)
    return (c + sum(x * y for x, y in zip(va, vb, strict=True))) & 0xFFFFFFFF


def dp2a(a: int, b: int, c: int, a_signed: bool, b_signed: bool, hi: bool) -> int:
    """dp2a.{lo,hi} (PTX ISA 9.7.1.24): c plus the dot product of the two half-words of a with two
    bytes of b (bytes 0-1 for .lo, 2-3 for .hi), mod 2^32."""
    va, vb = _lanes(a, 16, 2, a_signed), _lanes(b, 8, 4, b_signed)
    sel = 2 if hi else 0
    return (c + va[0] * vb[sel] + va[1] * vb[sel + 1]) & 0xFFFFFFFF


def lop3_expr(a: str, b: str, c: str, lut: int, mask: int) -> str:
    """Python source for lop3 (PTX ISA 9.7.8.6) with a constant look-up table: the OR of the minterms
    whose bit is set in immLut (bit index = 4*a + 2*b + c, as ta=0xF0, tb=0xCC, tc=0xAA define)."""
    lut &= 0xFF
    if lut == 0:
        return "0"
    if lut == 0xFF:
        return f"{mask:#x}"
    terms = []
    for i in range(8):
        if lut >> i & 1:
            fa = a if i & 4 else f"~{a}"
            fb = b if i & 2 else f"~{b}"
            fc = c if i & 1 else f"~{c}"
            terms.append(f"({fa} & {fb} & {fc})")
    return f"({' | '.join(terms)}) & {mask:#x}"
