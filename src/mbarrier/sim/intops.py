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
