"""Tensor maps: the arguments of cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col, checked against the
limits those functions enforce (`spec.tensormap`), and the 128 bytes the simulator keeps of one.

The hardware's CUtensorMap bytes are opaque (the driver API says so); the simulator writes its own
layout, which `decode` reads back exactly (every field of the encode call, nothing lost):

| bytes | field |
|---|---|
| 0-3 | magic `MBTM` |
| 4 | layout version (1) |
| 5 | 0 tiled, 1 im2col |
| 6 | tensorDataType (CUtensorMapDataType value) |
| 7 | tensorRank |
| 8-15 | globalAddress |
| 16-55 | globalDim[0..4] (u64 each; unused dimensions 0) |
| 56-87 | globalStrides[0..3] (u64 each, bytes; rank - 1 of them) |
| 88-97 | boxDim[0..4] (u16 each; im2col: 0) |
| 98-102 | elementStrides[0..4] (u8 each) |
| 103-106 | interleave, swizzle, l2Promotion, oobFill (enum values, u8 each) |
| 107-108 | channelsPerPixel (u16; tiled: 0) |
| 109-110 | pixelsPerColumn (u16; tiled: 0) |
| 111-116 | pixelBoxLowerCorner[0..2] (s16 each) |
| 117-122 | pixelBoxUpperCorner[0..2] (s16 each) |
| 123 | 0 |
| 124-127 | CRC-32 of bytes 0-123 |

Little-endian throughout. A decoder that meets 128 bytes without the magic or with a wrong CRC says
the memory holds no tensor map a launch encoded (`TensorMapError`).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from mbarrier.spec import tensormap as spec

_MAGIC = b"MBTM"
_VERSION = 1
_LAYOUT = struct.Struct("<4sBBBBQ5Q4Q5H5B4BHH3h3hx")
assert _LAYOUT.size == 124


class TensorMapError(ValueError):
    """cuTensorMapEncode* would refuse these arguments (`error`: the CUresult name), or 128 bytes that
    are not a tensor map the simulator encoded."""

    def __init__(self, message: str, error: str = spec.INVALID_VALUE) -> None:
        super().__init__(message)
        self.error = error


def _enum_name(value: str, table: dict[str, object], prefix: str, what: str) -> str:
    """The full enum name from itself or its suffix (`FLOAT16` for CU_TENSOR_MAP_DATA_TYPE_FLOAT16)."""
    name = value if value.startswith(prefix) else prefix + value
    if name not in table:
        names = ", ".join(n.removeprefix(prefix) for n in table)
        raise TensorMapError(f"{what} {value!r} is not a {prefix}* value ({names})")
    return name


@dataclass(frozen=True)
class TensorMap:
    """One cuTensorMapEncodeTiled (`mode` "tiled") or cuTensorMapEncodeIm2col (`mode` "im2col") call:
    its arguments under their API names, enums by their full names. `global_address` is the address the
    tensor starts at (the launch resolves a buffer and offset to it)."""

    mode: str
    tensorDataType: str
    tensorRank: int
    globalAddress: int
    globalDim: tuple[int, ...]
    globalStrides: tuple[int, ...]
    elementStrides: tuple[int, ...]
    boxDim: tuple[int, ...] = ()
    pixelBoxLowerCorner: tuple[int, ...] = ()
    pixelBoxUpperCorner: tuple[int, ...] = ()
    channelsPerPixel: int = 0
    pixelsPerColumn: int = 0
    interleave: str = "CU_TENSOR_MAP_INTERLEAVE_NONE"
    swizzle: str = "CU_TENSOR_MAP_SWIZZLE_NONE"
    l2Promotion: str = "CU_TENSOR_MAP_L2_PROMOTION_NONE"
    oobFill: str = "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"

    @staticmethod
    def enum(kind: str, value: str) -> str:
        """Normalise an enum argument (`kind`: tensorDataType, interleave, swizzle, l2Promotion, oobFill)
        given by its full name or its suffix."""
        table, prefix = {
            "tensorDataType": (spec.DATA_TYPES, "CU_TENSOR_MAP_DATA_TYPE_"),
            "interleave": (spec.INTERLEAVES, "CU_TENSOR_MAP_INTERLEAVE_"),
            "swizzle": (spec.SWIZZLES, "CU_TENSOR_MAP_SWIZZLE_"),
            "l2Promotion": (spec.L2_PROMOTIONS, "CU_TENSOR_MAP_L2_PROMOTION_"),
            "oobFill": (spec.OOB_FILLS, "CU_TENSOR_MAP_FLOAT_OOB_FILL_"),
        }[kind]
        return _enum_name(value, table, prefix, kind)  # type: ignore[arg-type]

    @property
    def function(self) -> str:
        return "cuTensorMapEncodeTiled" if self.mode == "tiled" else "cuTensorMapEncodeIm2col"

    @property
    def element_size(self) -> int:
        return spec.DATA_TYPES[self.tensorDataType][1]

    def _refuse(self, why: str) -> TensorMapError:
        return TensorMapError(f"{self.function} would return {spec.INVALID_VALUE}: {why}")

    def validate(self) -> None:
        """Raise TensorMapError naming the first argument outside the encode function's limits."""
        if self.mode not in ("tiled", "im2col"):
            raise TensorMapError(f"mode {self.mode!r}: expected 'tiled' or 'im2col'")
        for kind in ("tensorDataType", "interleave", "swizzle", "l2Promotion", "oobFill"):
            if self.enum(kind, getattr(self, kind)) != getattr(self, kind):
                raise TensorMapError(f"{kind} {getattr(self, kind)!r}: give the full enum name")
        if self.element_size == 0:
            raise TensorMapError(f"tensorDataType {self.tensorDataType}: the packed sub-byte types are not "
                                 "supported by the simulator", "unsupported")
        rank, interleaved = self.tensorRank, self.interleave != "CU_TENSOR_MAP_INTERLEAVE_NONE"
        low = spec.RANK_MIN_IM2COL if self.mode == "im2col" else \
            spec.RANK_MIN_INTERLEAVED if interleaved else 1
        if not low <= rank <= spec.RANK_MAX:
            raise self._refuse(f"tensorRank {rank} is outside {low}..{spec.RANK_MAX}"
                               + (" (interleaved)" if interleaved and self.mode == "tiled" else ""))
        i32 = self.interleave == "CU_TENSOR_MAP_INTERLEAVE_32B"
        align = spec.ADDRESS_ALIGN_INTERLEAVE_32B if i32 else spec.ADDRESS_ALIGN
        if self.globalAddress % align:
            raise self._refuse(f"globalAddress {self.globalAddress:#x} is not {align}-byte aligned")
        self._lengths(rank)
        for i, d in enumerate(self.globalDim):
            if not 1 <= d <= spec.GLOBAL_DIM_MAX:
                raise self._refuse(f"globalDim[{i}] = {d} is outside 1..2^32")
        multiple = spec.STRIDE_MULTIPLE_INTERLEAVE_32B if i32 else spec.STRIDE_MULTIPLE
        for i, s in enumerate(self.globalStrides):  # 0 is a multiple: the driver takes it (a broadcast)
            if s % multiple or not 0 <= s < spec.STRIDE_LIMIT:
                raise self._refuse(f"globalStrides[{i}] = {s} is not a multiple of {multiple} below 2^40")
        for i, e in enumerate(self.elementStrides):
            if not 1 <= e <= spec.ELEMENT_STRIDE_MAX:
                raise self._refuse(f"elementStrides[{i}] = {e} is outside 1..{spec.ELEMENT_STRIDE_MAX}")
        filled = self.oobFill != "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"
        if filled and self.tensorDataType not in spec.FLOAT_TYPES:
            raise self._refuse(f"oobFill {self.oobFill} needs a floating-point tensorDataType, not "
                               f"{self.tensorDataType}")
        if self.mode == "tiled":
            self._validate_box(interleaved)
        else:
            self._validate_im2col(interleaved)

    def _lengths(self, rank: int) -> None:
        expect = {"globalDim": rank, "globalStrides": rank - 1, "elementStrides": rank}
        if self.mode == "tiled":
            expect["boxDim"] = rank
        else:
            expect["pixelBoxLowerCorner"] = expect["pixelBoxUpperCorner"] = rank - 2
        for name, n in expect.items():
            got = len(getattr(self, name))
            if got != n:  # the C call has no lengths: it would read past the array, or ignore the rest
                raise TensorMapError(f"{name} has {got} entries; tensorRank {rank} needs {n}")

    def _inner_limit(self, inner: int, what: str) -> None:
        span = spec.SWIZZLES[self.swizzle][1]
        if span and inner > span:
            raise self._refuse(f"{what} is {inner} bytes, more than the {span} bytes of {self.swizzle}")

    def _validate_box(self, interleaved: bool) -> None:
        for i, b in enumerate(self.boxDim):
            if not 1 <= b <= spec.BOX_DIM_MAX:
                raise self._refuse(f"boxDim[{i}] = {b} is outside 1..{spec.BOX_DIM_MAX}")
        inner = self.boxDim[0] * self.element_size
        if inner % spec.BOX_INNER_MULTIPLE:  # interleaved too: the driver refuses it there as well
            raise self._refuse(f"boxDim[0] * element size = {inner} bytes is not a multiple of "
                               f"{spec.BOX_INNER_MULTIPLE}")
        if not interleaved:
            self._inner_limit(inner, "the box's inner dimension (boxDim[0] * element size)")

    def _validate_im2col(self, interleaved: bool) -> None:
        low, high = spec.CORNER_RANGE[self.tensorRank]
        for name in ("pixelBoxLowerCorner", "pixelBoxUpperCorner"):
            for i, c in enumerate(getattr(self, name)):
                if not low <= c <= high:
                    raise self._refuse(f"{name}[{i}] = {c} is outside {low}..{high} for tensorRank "
                                       f"{self.tensorRank}")
        for i, (lo, up) in enumerate(zip(self.pixelBoxLowerCorner, self.pixelBoxUpperCorner, strict=True)):
            if self.globalDim[i + 1] + up - lo <= 0:
                raise self._refuse(f"the pixel bounding box is empty in spatial dimension {i} (globalDim["
                                   f"{i + 1}] + pixelBoxUpperCorner[{i}] - pixelBoxLowerCorner[{i}] <= 0)")
        if not 1 <= self.channelsPerPixel <= spec.CHANNELS_PER_PIXEL_MAX:
            raise self._refuse(f"channelsPerPixel {self.channelsPerPixel} is outside "
                               f"1..{spec.CHANNELS_PER_PIXEL_MAX}")
        if not 1 <= self.pixelsPerColumn <= spec.PIXELS_PER_COLUMN_MAX:
            raise self._refuse(f"pixelsPerColumn {self.pixelsPerColumn} is outside "
                               f"1..{spec.PIXELS_PER_COLUMN_MAX}")
        if not interleaved:
            self._inner_limit(self.channelsPerPixel * self.element_size,
                              "the box's inner dimension (channelsPerPixel * element size)")

    def encode(self) -> bytes:
        """The 128 bytes of this tensor map (validated first)."""
        self.validate()

        def pad(v: tuple[int, ...], n: int) -> list[int]:
            return list(v) + [0] * (n - len(v))

        body = _LAYOUT.pack(
            _MAGIC, _VERSION, 0 if self.mode == "tiled" else 1, spec.DATA_TYPES[self.tensorDataType][0],
            self.tensorRank, self.globalAddress, *pad(self.globalDim, 5), *pad(self.globalStrides, 4),
            *pad(self.boxDim, 5), *pad(self.elementStrides, 5), spec.INTERLEAVES[self.interleave],
            spec.SWIZZLES[self.swizzle][0], spec.L2_PROMOTIONS[self.l2Promotion],
            spec.OOB_FILLS[self.oobFill],
            self.channelsPerPixel, self.pixelsPerColumn, *pad(self.pixelBoxLowerCorner, 3),
            *pad(self.pixelBoxUpperCorner, 3))
        return body + zlib.crc32(body).to_bytes(4, "little")


def _by_value(table: dict[str, int]) -> dict[int, str]:
    return {v: k for k, v in table.items()}


def decode(data: bytes) -> TensorMap:
    """The tensor map whose 128 bytes `encode` wrote (TensorMapError for anything else)."""
    if len(data) != spec.TENSOR_MAP_SIZE or data[:4] != _MAGIC or \
            zlib.crc32(data[:124]).to_bytes(4, "little") != data[124:]:
        raise TensorMapError("these 128 bytes are not a tensor map encoded by a launch (the simulator "
                             "cannot read a CUtensorMap the driver encoded)", "not-a-tensor-map")
    f = _LAYOUT.unpack(data[:124])
    if f[1] != _VERSION:
        raise TensorMapError(f"tensor map layout version {f[1]} (this simulator reads {_VERSION})",
                             "not-a-tensor-map")
    rank = f[4]
    dims, strides, box, estr = f[6:11], f[11:15], f[15:20], f[20:25]
    interleave, swizzle, l2, oob = f[25:29]
    cpp, ppc, lower, upper = f[29], f[30], f[31:34], f[34:37]
    im2col = f[2] == 1
    types = {v: k for k, (v, _) in spec.DATA_TYPES.items()}
    return TensorMap(
        "im2col" if im2col else "tiled", types[f[3]], rank, f[5], tuple(dims[:rank]),
        tuple(strides[:rank - 1]),
        tuple(estr[:rank]), () if im2col else tuple(box[:rank]),
        tuple(lower[:rank - 2]) if im2col else (), tuple(upper[:rank - 2]) if im2col else (), cpp, ppc,
        _by_value(spec.INTERLEAVES)[interleave], {v: k for k, (v, _) in spec.SWIZZLES.items()}[swizzle],
        _by_value(spec.L2_PROMOTIONS)[l2], _by_value(spec.OOB_FILLS)[oob])


#: tensormap.replace's fields that take their value itself: (first index among the layout's fields, how
#: many ordinals).
_FIELDS: dict[str, tuple[int, int]] = {
    "global_address": (5, 1), "rank": (4, 1), "global_dim": (6, 5), "global_stride": (11, 4),
    "box_dim": (15, 5), "element_stride": (20, 5),
}


def replace_field(data: bytes, field: str, ordinal: int, value: int) -> bytes:
    """The 128 bytes `data` (a tensor map `encode` wrote) with one field replaced as tensormap.replace
    does (PTX ISA, tensormap.replace): `.rank` takes the rank minus one, `.elemtype` and the other
    enumerations take the ISA's immediates (`spec.REPLACE_*`), the ordinal picks the dimension. The result
    need not be a valid map (replacing one field at a time passes through invalid ones): a copy that
    uses it checks it. 128 zero bytes are a blank tiled map of rank 1 (the hardware's all-zero object,
    whose rank field holds the rank minus one), every other field zero: kernels build maps from one
    (Triton zeroes 128 bytes of shared memory, then replaces each field). TensorMapError: `data` is no
    tensor map, or the value is outside what the field can hold (`error` "unsupported" when the ISA has
    it but the simulator does not model it)."""
    if data == bytes(spec.TENSOR_MAP_SIZE):
        f = list(_LAYOUT.unpack(bytes(124)))
        f[0], f[1], f[4] = _MAGIC, _VERSION, 1
    else:
        decode(data)  # is it one?
        f = list(_LAYOUT.unpack(data[:124]))
    if field in _FIELDS:
        first, count = _FIELDS[field]
        if not 0 <= ordinal < count:
            raise TensorMapError(f".{field} has ordinals 0..{count - 1}, not {ordinal}")
        f[first + ordinal] = value + 1 if field == "rank" else value
        if field == "rank" and not 1 <= f[4] <= spec.RANK_MAX:
            raise TensorMapError(f".rank {value}: the rank minus one is 0..{spec.RANK_MAX - 1}")
    else:
        table, at = {
            "elemtype": (spec.REPLACE_ELEMTYPES, 3), "interleave_layout": (spec.REPLACE_INTERLEAVES, 25),
            "swizzle_mode": (spec.REPLACE_SWIZZLES, 26), "swizzle_atomicity": (spec.REPLACE_ATOMICITIES, 26),
            "fill_mode": (spec.REPLACE_FILLS, 28),
        }[field]
        name = table.get(value)
        if name is None:
            raise TensorMapError(f".{field} {value}: not a value the simulator models "
                                 f"({', '.join(map(str, table))})", "unsupported")
        if field == "elemtype":
            f[3] = spec.DATA_TYPES[name][0]
        elif field == "interleave_layout":
            f[25] = spec.INTERLEAVES[name]
        elif field == "fill_mode":
            f[28] = spec.OOB_FILLS[name]
        elif field == "swizzle_mode" or f[26] >= spec.SWIZZLES["CU_TENSOR_MAP_SWIZZLE_128B"][0]:
            f[26] = spec.SWIZZLES[name][0]
        elif value:
            raise TensorMapError(f".swizzle_atomicity {value} on a tensor map without the 128B swizzle")
    try:
        body = _LAYOUT.pack(*f)
    except struct.error:
        raise TensorMapError(f".{field} {value}: more than the simulator's encoding of the field holds",
                             "unsupported") from None
    return body + zlib.crc32(body).to_bytes(4, "little")
