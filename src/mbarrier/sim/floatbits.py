"""Floats as the bits a register holds, and back (IEEE binary16, binary32, binary64, little-endian)."""

from __future__ import annotations

import struct


def f32_bits(value: float) -> int:
    try:
        return int.from_bytes(struct.pack("<f", value), "little")
    except OverflowError:
        return 0x7F800000 if value > 0 else 0xFF800000


def f64_bits(value: float) -> int:
    return int.from_bytes(struct.pack("<d", value), "little")


def f32_value(bits: int) -> float:
    return float(struct.unpack("<f", (bits & 0xFFFFFFFF).to_bytes(4, "little"))[0])


def f64_value(bits: int) -> float:
    return float(struct.unpack("<d", (bits & (1 << 64) - 1).to_bytes(8, "little"))[0])


def f16_bits(value: float) -> int:
    try:
        return int.from_bytes(struct.pack("<e", value), "little")
    except OverflowError:
        return 0x7C00 if value > 0 else 0xFC00


def f16_value(bits: int) -> float:
    return float(struct.unpack("<e", (bits & 0xFFFF).to_bytes(2, "little"))[0])


#: Float conversions the generated code calls: _F32(bits) -> float, _B32(float) -> bits; 16 and 64 too.
FLOAT_HELPERS: dict[str, object] = {"_F16": f16_value, "_B16": f16_bits, "_F32": f32_value, "_B32": f32_bits,
                                    "_F64": f64_value, "_B64": f64_bits}
