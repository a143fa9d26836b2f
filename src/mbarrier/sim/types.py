"""PTX scalar types as the simulator needs them: width in bits, signedness, float-ness."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Scalar:
    name: str
    bits: int
    signed: bool = False
    float: bool = False
    pred: bool = False

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    @property
    def size(self) -> int:
        """Bytes in memory."""
        return max(1, self.bits // 8)


TYPES: dict[str, Scalar] = {}
for _bits in (8, 16, 32, 64):
    TYPES[f".b{_bits}"] = Scalar(f".b{_bits}", _bits)
    TYPES[f".u{_bits}"] = Scalar(f".u{_bits}", _bits)
    TYPES[f".s{_bits}"] = Scalar(f".s{_bits}", _bits, signed=True)
TYPES[".b128"] = Scalar(".b128", 128)
TYPES[".f16"] = Scalar(".f16", 16, float=True)
TYPES[".f32"] = Scalar(".f32", 32, float=True)
TYPES[".f64"] = Scalar(".f64", 64, float=True)
TYPES[".pred"] = Scalar(".pred", 1, pred=True)
