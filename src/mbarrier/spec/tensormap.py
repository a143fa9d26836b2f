"""The CUDA driver API's tensor maps as data: the enums of `cuTensorMapEncodeTiled` and
`cuTensorMapEncodeIm2col` (their names and values) and the limits those functions refuse with
CUDA_ERROR_INVALID_VALUE, as the CUDA 13.0 driver API documents them (cuda.h, "Tensor Map Object
Managment") and as the driver enforces them: where the two differ the driver is followed, as measured
on an H100 with driver 580.159.04 (every case of tests/sim/test_tensormap.py through the real encode
calls): it takes a global stride of 0, takes CU_TENSOR_MAP_INTERLEAVE_32B with any swizzle (the
documentation asks for SWIZZLE_32B), and refuses a box whose inner dimension is not a multiple of 16
bytes with interleaved layouts too (the documentation asks it of INTERLEAVE_NONE only). The PTX side
(`cp.async.bulk.tensor`, PTX ISA 9.7.9.25.5.2) reads a tensor map as an opaque 128-byte object;
`sim.tensormap` encodes and decodes the simulator's own layout of it.
"""

from __future__ import annotations

from typing import Final

#: The error both encode functions return for any argument outside the limits below.
INVALID_VALUE: Final = "CUDA_ERROR_INVALID_VALUE"

#: sizeof(CUtensorMap), and the alignment cuTensorMapEncode* requires of its address.
TENSOR_MAP_SIZE: Final = 128
TENSOR_MAP_ALIGN: Final = 64

#: CUtensorMapDataType: name -> (value, element size in bytes; 0 for the packed sub-byte types).
DATA_TYPES: Final[dict[str, tuple[int, int]]] = {
    "CU_TENSOR_MAP_DATA_TYPE_UINT8": (0, 1),
    "CU_TENSOR_MAP_DATA_TYPE_UINT16": (1, 2),
    "CU_TENSOR_MAP_DATA_TYPE_UINT32": (2, 4),
    "CU_TENSOR_MAP_DATA_TYPE_INT32": (3, 4),
    "CU_TENSOR_MAP_DATA_TYPE_UINT64": (4, 8),
    "CU_TENSOR_MAP_DATA_TYPE_INT64": (5, 8),
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT16": (6, 2),
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT32": (7, 4),
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT64": (8, 8),
    "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16": (9, 2),
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ": (10, 4),
    "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32": (11, 4),
    "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ": (12, 4),
    "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B": (13, 0),
    "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B": (14, 0),
    "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B": (15, 0),
}
#: The floating-point types: the only ones CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA may fill.
FLOAT_TYPES: Final = frozenset({
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "CU_TENSOR_MAP_DATA_TYPE_FLOAT32", "CU_TENSOR_MAP_DATA_TYPE_FLOAT64",
    "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ",
    "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32", "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ",
})

#: CUtensorMapInterleave.
INTERLEAVES: Final[dict[str, int]] = {
    "CU_TENSOR_MAP_INTERLEAVE_NONE": 0, "CU_TENSOR_MAP_INTERLEAVE_16B": 1, "CU_TENSOR_MAP_INTERLEAVE_32B": 2,
}
#: CUtensorMapSwizzle: name -> (value, the swizzle span in bytes that bounds the box's inner dimension).
SWIZZLES: Final[dict[str, tuple[int, int]]] = {
    "CU_TENSOR_MAP_SWIZZLE_NONE": (0, 0),
    "CU_TENSOR_MAP_SWIZZLE_32B": (1, 32),
    "CU_TENSOR_MAP_SWIZZLE_64B": (2, 64),
    "CU_TENSOR_MAP_SWIZZLE_128B": (3, 128),
    "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B": (4, 128),
    "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B": (5, 128),
    "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B": (6, 128),
}
#: CUtensorMapL2promotion.
L2_PROMOTIONS: Final[dict[str, int]] = {
    "CU_TENSOR_MAP_L2_PROMOTION_NONE": 0, "CU_TENSOR_MAP_L2_PROMOTION_L2_64B": 1,
    "CU_TENSOR_MAP_L2_PROMOTION_L2_128B": 2, "CU_TENSOR_MAP_L2_PROMOTION_L2_256B": 3,
}
#: CUtensorMapFloatOOBfill.
OOB_FILLS: Final[dict[str, int]] = {
    "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE": 0, "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA": 1,
}

#: tensorRank: 1..5 (tiled; at least 3 when interleaved), 3..5 (im2col).
RANK_MAX: Final = 5
RANK_MIN_INTERLEAVED: Final = 3
RANK_MIN_IM2COL: Final = 3
#: globalAddress: 16-byte aligned; 32 with CU_TENSOR_MAP_INTERLEAVE_32B.
ADDRESS_ALIGN: Final = 16
ADDRESS_ALIGN_INTERLEAVE_32B: Final = 32
#: globalDim[i]: 1..2^32.
GLOBAL_DIM_MAX: Final = 1 << 32
#: globalStrides[i] (bytes, rank - 1 of them): a multiple of 16 (32 with INTERLEAVE_32B; 0 is one), below
#: 2^40.
STRIDE_MULTIPLE: Final = 16
STRIDE_MULTIPLE_INTERLEAVE_32B: Final = 32
STRIDE_LIMIT: Final = 1 << 40
#: boxDim[i] (tiled): 1..256; boxDim[0] * element size a multiple of 16 bytes (the driver asks it of every
#: interleave).
BOX_DIM_MAX: Final = 256
BOX_INNER_MULTIPLE: Final = 16
#: elementStrides[i]: 1..8.
ELEMENT_STRIDE_MAX: Final = 8
#: im2col: channelsPerPixel 1..256, pixelsPerColumn 1..1024, and the pixel box corners' ranges by rank
#: (one offset for rank 3, two for rank 4, three for rank 5).
CHANNELS_PER_PIXEL_MAX: Final = 256
PIXELS_PER_COLUMN_MAX: Final = 1024
CORNER_RANGE: Final[dict[int, tuple[int, int]]] = {3: (-32768, 32767), 4: (-128, 127), 5: (-16, 15)}

#: What a tensor copy does beyond the ISA's and the driver API's words, measured on an H100 (driver
#: 580.159.04; the records of mbarrier.hw.tma, src/mbarrier/hw/data/tma/h100.json):
#: * the OOB-NaN (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) is this 16-bit pattern in every
#:   16-bit half of the element, whatever its type (f16, bf16, f32 0x7ff77ff7, tf32, f64);
OOB_NAN_HALF: Final = 0x7FF7
#: * a load of the TFLOAT32 types rounds each element to tf32: 10 mantissa bits, to nearest even
#:   (ties to even recorded both ways), subnormals rounded too (not flushed, with _FTZ as well),
#:   infinity kept, an overflow to infinity, every NaN recorded to TF32_NAN; a store copies the bits,
#:   and a load of FLOAT32_FTZ too (subnormals kept);
TF32_ROUNDED: Final = frozenset({"CU_TENSOR_MAP_DATA_TYPE_TFLOAT32", "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ"})
TF32_NAN: Final = 0x7FFFE000
#: * cp.reduce.async.bulk.tensor .add takes FLOAT32_FTZ elements as f32 and flushes subnormal inputs
#:   and results to a zero of their sign;
FLUSHED_REDUCTIONS: Final = frozenset({"CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ"})
#: * a copy or prefetch whose box starts at a byte of dimension 0 off this multiple (coordinate 0 times
#:   the element size; im2col's channel coordinate too) ends the kernel with an illegal-instruction
#:   fault (tiled loads, stores and prefetches of u8, u16, f32; an f16 im2col load);
BOX_START_ALIGN: Final = 16
#: * a load whose shared-memory destination, or a store whose source, is off this multiple ends it
#:   with a misaligned-address fault, with every swizzle mode (16 and 64 fault; 128 to 512 work);
SHARED_BOX_ALIGN: Final = 128
#: * with a swizzle (and no interleave) each row of the box takes the whole swizzle span in shared
#:   memory, however narrow the row: a 16-byte row of the 32B swizzle lands 32 bytes after the one
#:   before (the pad bytes are left alone and not counted as complete-tx); the span is SWIZZLES' second
#:   field;
#: * with an interleave each element of dimension 0 is one interleave unit (16 or 32 bytes: boxDim[0],
#:   elementStrides[0], globalDim[0] and coordinate 0 count units), and dimension tensorRank - 2 takes
#:   one position, its boxDim and elementStrides unused (ranks 3, 4 and 5 recorded; bounds checked in
#:   every dimension, units too).
INTERLEAVE_UNIT: Final[dict[str, int]] = {
    "CU_TENSOR_MAP_INTERLEAVE_16B": 16, "CU_TENSOR_MAP_INTERLEAVE_32B": 32,
}

#: tensormap.replace (PTX ISA, Data Movement and Conversion Instructions: tensormap.replace, Table
#: "Tensormap new_val validity"): the immediate `new_val` of each .field3 and what it selects, by the
#: driver API's names (the ISA notes that `.elemtype`'s values are not CUtensorMapDataType's). The
#: sub-byte element types (13-15) and the 96B swizzle (4) are sm_100 forms, left out.
REPLACE_ELEMTYPES: Final[dict[int, str]] = {
    0: "CU_TENSOR_MAP_DATA_TYPE_UINT8", 1: "CU_TENSOR_MAP_DATA_TYPE_UINT16",
    2: "CU_TENSOR_MAP_DATA_TYPE_UINT32", 3: "CU_TENSOR_MAP_DATA_TYPE_INT32",
    4: "CU_TENSOR_MAP_DATA_TYPE_UINT64", 5: "CU_TENSOR_MAP_DATA_TYPE_INT64",
    6: "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 7: "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
    8: "CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ", 9: "CU_TENSOR_MAP_DATA_TYPE_FLOAT64",
    10: "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", 11: "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32",
    12: "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ",
}
REPLACE_INTERLEAVES: Final[dict[int, str]] = {
    0: "CU_TENSOR_MAP_INTERLEAVE_NONE", 1: "CU_TENSOR_MAP_INTERLEAVE_16B", 2: "CU_TENSOR_MAP_INTERLEAVE_32B",
}
REPLACE_SWIZZLES: Final[dict[int, str]] = {
    0: "CU_TENSOR_MAP_SWIZZLE_NONE", 1: "CU_TENSOR_MAP_SWIZZLE_32B", 2: "CU_TENSOR_MAP_SWIZZLE_64B",
    3: "CU_TENSOR_MAP_SWIZZLE_128B",
}
#: .swizzle_atomicity of a 128B swizzle: 16B (the plain mode), 32B, 32B with the 8B flip, 64B.
REPLACE_ATOMICITIES: Final[dict[int, str]] = {
    0: "CU_TENSOR_MAP_SWIZZLE_128B", 1: "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B",
    2: "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B", 3: "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B",
}
REPLACE_FILLS: Final[dict[int, str]] = {
    0: "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE", 1: "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA",
}

#: tensormap.replace's operand rules beyond that table, measured with ptxas 13.0: the ordinal of
#: the .field2 forms (the dimension) is an immediate in [0..REPLACE_ORDINAL_MAX]; the sub-byte element
#: types 13-15 take PTX ISA 8.7 and a target from sm_100 on (ptxas's range [0..15] there, [0..12]
#: below); the 96B swizzle, 4, PTX ISA 8.8 and `sm_103a` alone.
REPLACE_ORDINAL_MAX: Final = RANK_MAX - 1
REPLACE_SUBBYTE_ELEMTYPES: Final = (13, 14, 15)
REPLACE_SUBBYTE_SM: Final = 100
REPLACE_SWIZZLE_96B: Final = 4
REPLACE_SWIZZLE_96B_TARGETS: Final = ("sm_103a",)
