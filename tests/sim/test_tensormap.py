"""Tensor maps: the arguments of cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col refused with the
driver's own limits (CUDA 13.0 driver API, cuda.h) and error name, and the 128 bytes decoded exactly."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mbarrier.sim.tensormap import TensorMap, TensorMapError, decode
from mbarrier.spec import tensormap as spec

TILED = TensorMap("tiled", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 2, 0x10_0000_0000, (64, 32), (128,), (1, 1),
                  boxDim=(64, 8), swizzle="CU_TENSOR_MAP_SWIZZLE_128B")
IM2COL = TensorMap("im2col", "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", 4, 0x10_0000_0040, (64, 9, 9, 2),
                   (128, 1152, 10368), (1, 1, 1, 1), pixelBoxLowerCorner=(-1, -1), pixelBoxUpperCorner=(1, 1),
                   channelsPerPixel=64, pixelsPerColumn=128, swizzle="CU_TENSOR_MAP_SWIZZLE_128B",
                   l2Promotion="CU_TENSOR_MAP_L2_PROMOTION_L2_128B",
                   oobFill="CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA")


RANK5 = replace(TILED, tensorRank=5, globalDim=(8, 2, 3, 4, 1 << 32),
                globalStrides=(16, 32, 96, (1 << 40) - 16), boxDim=(8, 1, 1, 1, 256),
                elementStrides=(1, 2, 3, 8, 1), swizzle="CU_TENSOR_MAP_SWIZZLE_NONE")


@pytest.mark.parametrize("tm", [TILED, IM2COL, RANK5], ids=["tiled", "im2col", "tiled-rank5-extremes"])
def test_encode_then_decode_gives_back_every_argument(tm: TensorMap) -> None:
    data = tm.encode()
    assert len(data) == spec.TENSOR_MAP_SIZE and data[:4] == b"MBTM"
    assert decode(data) == tm


def test_decode_refuses_bytes_that_are_no_encoded_tensor_map() -> None:
    data = bytearray(TILED.encode())
    data[20] ^= 1  # a flipped bit: the CRC no longer matches
    with pytest.raises(TensorMapError, match="not a tensor map encoded by a launch"):
        decode(bytes(data))
    with pytest.raises(TensorMapError):
        decode(bytes(128))


def test_enum_names_are_the_driver_api_names_or_their_suffixes() -> None:
    assert TensorMap.enum("tensorDataType", "FLOAT16") == "CU_TENSOR_MAP_DATA_TYPE_FLOAT16"
    assert TensorMap.enum("swizzle", "CU_TENSOR_MAP_SWIZZLE_64B") == "CU_TENSOR_MAP_SWIZZLE_64B"
    with pytest.raises(TensorMapError, match="not a CU_TENSOR_MAP_SWIZZLE_"):
        TensorMap.enum("swizzle", "256B")


# Each case: one argument just outside a limit the driver API documents, and the words that name it.
REFUSED = [
    (replace(TILED, tensorRank=6, globalDim=(1,) * 6, globalStrides=(16,) * 5, boxDim=(8,) * 6,
             elementStrides=(1,) * 6), "tensorRank 6 is outside 1..5"),
    (replace(TILED, interleave="CU_TENSOR_MAP_INTERLEAVE_16B"), "tensorRank 2 is outside 3..5 (interleaved)"),
    (replace(IM2COL, tensorRank=2, globalDim=(64, 9), globalStrides=(128,), elementStrides=(1, 1),
             pixelBoxLowerCorner=(), pixelBoxUpperCorner=()), "tensorRank 2 is outside 3..5"),
    (replace(TILED, globalAddress=0x10_0000_0008), "globalAddress 0x1000000008 is not 16-byte aligned"),
    (replace(TILED, tensorRank=3, globalDim=(64, 32, 2), globalStrides=(128, 4096), boxDim=(64, 8, 1),
             elementStrides=(1, 1, 1), interleave="CU_TENSOR_MAP_INTERLEAVE_32B",
             swizzle="CU_TENSOR_MAP_SWIZZLE_32B", globalAddress=0x10_0000_0010), "not 32-byte aligned"),
    (replace(TILED, globalDim=(0, 32)), "globalDim[0] = 0 is outside 1..2^32"),
    (replace(TILED, globalDim=(64, (1 << 32) + 1)), "globalDim[1] = 4294967297 is outside 1..2^32"),
    (replace(TILED, globalStrides=(120,)), "globalStrides[0] = 120 is not a multiple of 16 below 2^40"),
    (replace(TILED, globalStrides=(1 << 40,)), "is not a multiple of 16 below 2^40"),
    (replace(TILED, boxDim=(64, 257)), "boxDim[1] = 257 is outside 1..256"),
    (replace(TILED, boxDim=(0, 8)), "boxDim[0] = 0 is outside 1..256"),
    (replace(TILED, boxDim=(4, 8), swizzle="CU_TENSOR_MAP_SWIZZLE_NONE"),
     "boxDim[0] * element size = 8 bytes is not a multiple of 16"),
    (replace(TILED, elementStrides=(1, 9)), "elementStrides[1] = 9 is outside 1..8"),
    (replace(TILED, elementStrides=(0, 1)), "elementStrides[0] = 0 is outside 1..8"),
    (replace(TILED, boxDim=(128, 8)), "256 bytes, more than the 128 bytes of CU_TENSOR_MAP_SWIZZLE_128B"),
    (replace(TILED, boxDim=(32, 8), swizzle="CU_TENSOR_MAP_SWIZZLE_32B"),
     "64 bytes, more than the 32 bytes of CU_TENSOR_MAP_SWIZZLE_32B"),
    (replace(TILED, boxDim=(64, 8), swizzle="CU_TENSOR_MAP_SWIZZLE_64B"), "more than the 64 bytes"),
    (replace(TILED, tensorRank=3, globalDim=(8, 32, 2), globalStrides=(16, 512), boxDim=(4, 8, 1),
             elementStrides=(1, 1, 1), interleave="CU_TENSOR_MAP_INTERLEAVE_16B",
             swizzle="CU_TENSOR_MAP_SWIZZLE_NONE"),
     "boxDim[0] * element size = 8 bytes is not a multiple of 16"),
    (replace(TILED, tensorDataType="CU_TENSOR_MAP_DATA_TYPE_INT32", boxDim=(32, 8),
             oobFill="CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"),
     "needs a floating-point tensorDataType"),
    (replace(IM2COL, pixelBoxLowerCorner=(-129, 0)), "pixelBoxLowerCorner[0] = -129 is outside -128..127"),
    (replace(IM2COL, tensorRank=5, globalDim=(64, 9, 9, 9, 2), globalStrides=(128, 1152, 10368, 93312),
             elementStrides=(1,) * 5, pixelBoxLowerCorner=(0, 0, 0), pixelBoxUpperCorner=(16, 0, 0)),
     "pixelBoxUpperCorner[0] = 16 is outside -16..15"),
    (replace(IM2COL, pixelBoxLowerCorner=(0, 0), pixelBoxUpperCorner=(-9, 0)),
     "the pixel bounding box is empty"),
    (replace(IM2COL, channelsPerPixel=257), "channelsPerPixel 257 is outside 1..256"),
    (replace(IM2COL, pixelsPerColumn=1025), "pixelsPerColumn 1025 is outside 1..1024"),
    (replace(IM2COL, channelsPerPixel=128),
     "(channelsPerPixel * element size) is 256 bytes, more than the 128"),
]


@pytest.mark.parametrize(("tm", "words"), REFUSED, ids=[w for _, w in REFUSED])
def test_arguments_outside_the_encode_limits_are_refused_with_the_api_error(tm: TensorMap,
                                                                             words: str) -> None:
    with pytest.raises(TensorMapError) as e:
        tm.encode()
    assert e.value.error == "CUDA_ERROR_INVALID_VALUE"
    assert f"{tm.function} would return CUDA_ERROR_INVALID_VALUE" in str(e.value)
    assert words in str(e.value)


# Taken by the driver (H100, driver 580.159.04) though the documentation reads otherwise.
ACCEPTED = [replace(TILED, globalStrides=(0,))] + [  # a broadcast dimension; INTERLEAVE_32B, any swizzle
    replace(TILED, tensorRank=3, globalDim=(16, 32, 2), globalStrides=(32, 1024), boxDim=(16, 8, 1),
            elementStrides=(1, 1, 1), interleave="CU_TENSOR_MAP_INTERLEAVE_32B", swizzle=swizzle)
    for swizzle in ("CU_TENSOR_MAP_SWIZZLE_NONE", "CU_TENSOR_MAP_SWIZZLE_64B", "CU_TENSOR_MAP_SWIZZLE_128B")]


@pytest.mark.parametrize("tm", ACCEPTED)
def test_what_the_driver_takes_is_taken(tm: TensorMap) -> None:
    assert decode(tm.encode()) == tm


def test_array_lengths_must_match_the_rank() -> None:
    for tm, words in ((replace(TILED, globalStrides=()), "globalStrides has 0 entries; tensorRank 2 needs 1"),
                      (replace(TILED, boxDim=(64,)), "boxDim has 1 entries; tensorRank 2 needs 2")):
        with pytest.raises(TensorMapError, match=words):
            tm.validate()


def test_packed_sub_byte_types_are_the_simulators_limit_not_the_apis() -> None:
    tm = replace(TILED, tensorDataType="CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B")
    with pytest.raises(TensorMapError, match="not supported by the simulator") as e:
        tm.validate()
    assert e.value.error == "unsupported"
