"""Device-side printf: `vprintf(format, args)` as nvcc emits it for `printf`, formatted on the host side.

The format string is read from memory (a generic address); the arguments from the packed buffer nvcc
builds in local memory, each aligned to its own size. Conversions: d i u x X o c s p f F e E g G a A and
%%, with the flags, width, precision and length modifiers (h, hh, l, ll, z, t, j) of C.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diuxXocspfFeEgGaA%])")


def format_printf(fmt: str, read: Callable[[int, int], int], args: int) -> tuple[str, int]:
    """C's printf formatting of `fmt`, reading argument bytes with read(address, size); also the number
    of arguments it used (what CUDA's printf returns)."""
    out: list[str] = []
    pos = 0
    offset = 0
    used = 0

    def take(size: int) -> int:
        nonlocal offset
        offset = (offset + size - 1) // size * size
        value = read(args + offset, size)
        offset += size
        return value

    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        used += 1
        if width == "*":
            width = str(_signed(take(4), 32))
        if prec == "*":
            prec = str(_signed(take(4), 32))
        spec = "%" + flags + (width or "") + (f".{prec}" if prec is not None else "")
        if conv in "fFeEgGaA":
            value: object = struct.unpack("<d", take(8).to_bytes(8, "little"))[0]
            out.append(float.hex(value) if conv in "aA" else (spec + conv) % value)  # type: ignore[arg-type]
        elif conv == "s":
            out.append((spec + "s") % _cstring(read, take(8)))
        elif conv == "p":
            out.append(f"{take(8):#x}")
        elif conv == "c":
            out.append((spec + "c") % chr(take(4) & 0xFF))
        else:
            size = 8 if length in ("l", "ll", "z", "j", "t") else 4
            value = take(size)
            bits = {"hh": 8, "h": 16}.get(length or "", size * 8)
            value &= (1 << bits) - 1
            if conv in "di":
                out.append((spec + "d") % _signed(value, bits))
            else:
                out.append((spec + {"u": "d"}.get(conv, conv)) % value)
    out.append(fmt[pos:])
    return "".join(out), used


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def _cstring(read: Callable[[int, int], int], addr: int, limit: int = 4096) -> str:
    if addr == 0:
        return "(null)"
    data = bytearray()
    while len(data) < limit:
        byte = read(addr + len(data), 1)
        if byte == 0:
            break
        data.append(byte)
    return data.decode("utf-8", errors="replace")
