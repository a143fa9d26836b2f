"""Values of PTX literals (PTX ISA 4.5): integers (hex, octal, binary, decimal, `U` suffix) and floats
(`0f` single and `0d` double bit patterns, decimal)."""

from __future__ import annotations

import struct

from mbarrier.ptx import ast


def int_value(text: str) -> int | None:
    """The value of an integer literal, or None if it is not one (`09` is not octal). `WARP_SZ` is one:
    the predefined constant 32 (PTX ISA 10.2, ptxas reads it wherever a number may stand)."""
    neg = text[:1] == "-"
    s = text[1:] if neg else text
    if s == "WARP_SZ":
        return -32 if neg else 32
    if s[-1:] == "U":
        s = s[:-1]
    try:
        if len(s) > 1 and s[0] == "0":
            c = s[1]
            if c in "xX":
                v = int(s[2:], 16)
            elif c in "bB":
                v = int(s[2:], 2)
            else:
                v = int(s[1:], 8)
        else:
            v = int(s)
    except ValueError:
        return None
    return -v if neg else v


def float_imm(text: str, pos: ast.Pos) -> ast.FloatImm:
    """A FloatImm for `0fXXXXXXXX`, `0dXXXXXXXXXXXXXXXX` or a decimal literal, optionally negated."""
    neg = text[:1] == "-"
    s = text[1:] if neg else text
    c = s[1:2]
    if s[:1] == "0" and c in ("f", "F") and len(s) == 10:
        raw = int(s[2:], 16)
        value: float = struct.unpack("<f", raw.to_bytes(4, "little"))[0]
        bits = 32
    elif s[:1] == "0" and c in ("d", "D") and len(s) == 18:
        raw = int(s[2:], 16)
        value = struct.unpack("<d", raw.to_bytes(8, "little"))[0]
        bits = 64
    else:
        raw, value, bits = 0, float(s), 0
    return ast.FloatImm(-value if neg else value, raw, bits, text, pos)
