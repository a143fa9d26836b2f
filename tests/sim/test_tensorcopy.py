"""`sim.tensorcopy`: the bytes a tensor copy moves and where they land, against references written from
the PTX ISA's text (5.5 Tensors: tiled and im2col modes, out-of-bounds fill, the swizzle tables of 5.5.6)
and the driver API's (elementStrides: ceil(boxDim / elementStrides) elements), element by element."""

from __future__ import annotations

import itertools
import math

import pytest

from mbarrier.sim import tensorcopy
from mbarrier.sim.tensorcopy import Plan, PlanError, im2col_plan, reduce_element, tile_plan
from mbarrier.sim.tensormap import TensorMap

BASE = 0x10_0000_0000

# 5.5.6's tables: for each 128-byte line r of the repeating pattern, the 16-byte chunk the line holds at
# each position (read off the "… Pattern repeats …" tables of the 32B, 64B and 128B modes).
TABLES = {
    1: [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6]],
    2: [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5],
        [3, 2, 1, 0, 7, 6, 5, 4]],
    3: [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5],
        [3, 2, 1, 0, 7, 6, 5, 4], [4, 5, 6, 7, 0, 1, 2, 3], [5, 4, 7, 6, 1, 0, 3, 2],
        [6, 7, 4, 5, 2, 3, 0, 1], [7, 6, 5, 4, 3, 2, 1, 0]],
}
SWIZZLES = {0: "NONE", 1: "32B", 2: "64B", 3: "128B"}


def _map(dims: tuple[int, ...], box: tuple[int, ...], dtype: str = "FLOAT32", swizzle: int = 0,
         strides: tuple[int, ...] | None = None, estr: tuple[int, ...] | None = None,
         fill: str = "NONE") -> TensorMap:
    esize = {"FLOAT32": 4, "BFLOAT16": 2, "UINT8": 1, "UINT16": 2, "FLOAT64": 8, "UINT32": 4}[dtype]
    if strides is None:
        acc, out = dims[0] * esize, []
        for d in dims[1:]:
            out.append(-(-acc // 16) * 16)
            acc = out[-1] * d
        strides = tuple(out)
    tm = TensorMap("tiled", f"CU_TENSOR_MAP_DATA_TYPE_{dtype}", len(dims), BASE, dims, strides,
                   estr or (1,) * len(dims), box, swizzle=f"CU_TENSOR_MAP_SWIZZLE_{SWIZZLES[swizzle]}",
                   oobFill=f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{fill}")
    tm.validate()
    return tm


def _placed(plan: Plan, dst: int) -> dict[int, int]:
    """shared address -> global address (or -1) of every byte the plan writes."""
    out: dict[int, int] = {}
    for p in plan.pieces:
        at = plan.shared(dst, p)
        for i in range(p.n):
            assert at + i not in out, "two bytes land at one address"
            out[at + i] = p.gaddr + i if p.gaddr >= 0 else -1
    return out


def _table_address(dst: int, off: int, bits: int) -> int:
    """Where byte `off` of the box lands by the ISA's table (the pattern's lines are 128 bytes, its
    position given by the absolute address: a `dst` off the pattern's boundary starts inside it)."""
    if not bits:
        return dst + off
    addr = dst + off
    line, chunk, byte = addr // 128, (addr // 16) % 8, addr % 16
    row = TABLES[bits][line % len(TABLES[bits])]
    return line * 128 + row.index(chunk) * 16 + byte


def _reference(tm: TensorMap, coords: tuple[int, ...], dst: int, bits: int) -> dict[int, int]:
    esize = tm.element_size
    rank = tm.tensorRank
    estr = (1,) + tuple(tm.elementStrides[1:])
    counts = [math.ceil(b / s) for b, s in zip(tm.boxDim, estr, strict=True)]
    pitch = (esize, *tm.globalStrides)
    row_pitch = 16 << bits if bits else counts[0] * esize  # a swizzled row takes the span (H100 records)
    out: dict[int, int] = {}
    for n, k in enumerate(itertools.product(*(range(n) for n in reversed(counts)))):
        k = tuple(reversed(k))  # dimension 0 fastest
        off = n // counts[0] * row_pitch + k[0] * esize
        c = [coords[i] + k[i] * estr[i] for i in range(rank)]
        inside = all(0 <= c[i] < tm.globalDim[i] for i in range(rank))
        g = tm.globalAddress + sum(c[i] * pitch[i] for i in range(rank))
        for b in range(esize):
            out[_table_address(dst, off + b, bits)] = g + b if inside else -1
    return out


@pytest.mark.parametrize("swizzle", [0, 1, 2, 3])
@pytest.mark.parametrize("dst", [0, 1024, 1024 + 128, 1024 + 384, 2048 + 896])
def test_tiled_box_lands_where_the_swizzle_tables_say(swizzle: int, dst: int) -> None:
    span = 16 << swizzle if swizzle else 64
    tm = _map((100, 40, 3), (span // 2, 9, 2), "BFLOAT16", swizzle)
    plan = tile_plan(tm, (8, 30, 1))  # rows 30..38 of 40, planes 1..2 of 3: some of the box is outside
    assert _placed(plan, dst) == _reference(tm, (8, 30, 1), dst, swizzle)
    assert plan.box_bytes == span // 2 * 2 * 9 * 2


@pytest.mark.parametrize("coords", [(0, 0), (-4, -2), (60, 30), (-8, 35), (64, 0), (-100, -100)])
def test_out_of_bounds_elements_are_filled(coords: tuple[int, int]) -> None:
    tm = _map((64, 32), (8, 4))
    plan = tile_plan(tm, coords)
    assert _placed(plan, 0) == _reference(tm, coords, 0, 0)
    assert plan.box_bytes == 8 * 4 * 4  # complete-tx counts the filled bytes too
    assert plan.fill_bytes(8) == bytes(8)
    nan = tile_plan(_map((64, 32), (8, 4), fill="NAN_REQUEST_ZERO_FMA"), coords)
    assert nan.fill_bytes(8) == bytes.fromhex("f77ff77f") * 2  # the H100's OOB-NaN: 0x7ff7 a half


def test_element_strides_take_every_kth_element() -> None:
    # dims 1, 2 with strides 2, 3: ceil(5 / 2) = 3 and ceil(6 / 3) = 2 elements; dimension 0's is ignored
    tm = _map((16, 20, 30), (4, 5, 6), estr=(2, 2, 3))
    plan = tile_plan(tm, (4, 3, 4))
    assert plan.box_bytes == 4 * 3 * 2 * 4
    assert _placed(plan, 0) == _reference(tm, (4, 3, 4), 0, 0)


def test_five_dimensions_and_padded_strides() -> None:
    tm = _map((24, 3, 4, 2, 3), (16, 2, 3, 2, 2), "UINT8", strides=(32, 128, 1024, 4096))
    plan = tile_plan(tm, (16, 2, 1, 0, 2))
    assert _placed(plan, 256) == _reference(tm, (16, 2, 1, 0, 2), 256, 0)


@pytest.mark.parametrize("swizzle", [1, 2, 3])
def test_a_row_narrower_than_the_span_takes_the_whole_span(swizzle: int) -> None:
    """The H100 records (bf16_swizzle*_half_inner): rows of 16, 32, 64 bytes in the 32B, 64B, 128B
    swizzles land a span apart; complete-tx counts the rows' bytes, not the padding."""
    span = 16 << swizzle
    tm = _map((256, 40), (span // 4, 16), "BFLOAT16", swizzle)
    plan = tile_plan(tm, (8, 4))
    assert _placed(plan, 0) == _reference(tm, (8, 4), 0, swizzle)
    assert (plan.box_bytes, plan.footprint) == (span // 2 * 16, span * 16)


@pytest.mark.parametrize("dtype, esize", [("FLOAT16", 2), ("BFLOAT16", 2), ("FLOAT32", 4), ("FLOAT64", 8),
                                          ("TFLOAT32", 4)])
def test_the_oob_nan_is_0x7ff7_in_every_half(dtype: str, esize: int) -> None:
    tm = TensorMap("tiled", f"CU_TENSOR_MAP_DATA_TYPE_{dtype}", 1, BASE, (64,), (), (1,), (16 // esize,),
                   oobFill="CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA")
    assert tile_plan(tm, (-16 // esize,)).fill_bytes(esize) == b"\xf7\x7f" * (esize // 2)


#: f32 -> what the H100 wrote to shared memory for a TFLOAT32 load (records tfloat32_specials,
#: tf32_2d_oob_nan).
TF32_RECORDED = {0x5FEC898F: 0x5FEC8000, 0x1622BD79: 0x1622C000, 0x3F801000: 0x3F800000,
                 0x3F803000: 0x3F804000, 0xBF801000: 0xBF800000, 0x3F800FFF: 0x3F800000,
                 0x3F801001: 0x3F802000, 0x7F800001: 0x7FFFE000, 0x7FC00000: 0x7FFFE000,
                 0x7F800000: 0x7F800000, 0xFF800000: 0xFF800000, 0x7F7FFFFF: 0x7F800000,
                 0x00001FFF: 0x00002000, 0x00001000: 0x00000000, 0x00000FFF: 0x00000000,
                 0x80001000: 0x80000000, 0x3F7FF000: 0x3F800000, 0x80000000: 0x80000000}


@pytest.mark.parametrize("dtype", ["TFLOAT32", "TFLOAT32_FTZ"])
def test_tf32_loads_round_to_nearest_even(dtype: str) -> None:
    for x, want in TF32_RECORDED.items():
        assert tensorcopy.to_tf32(x) == want, f"{x:#x}"
    tm = TensorMap("tiled", f"CU_TENSOR_MAP_DATA_TYPE_{dtype}", 1, BASE, (64,), (), (1,), (4,))
    assert tile_plan(tm, (0,)).loaded(bytes.fromhex("8f89ec5f")) == bytes.fromhex("0080ec5f")


def test_ftz_reductions_flush_subnormals() -> None:
    """The H100 record f32ftz_reduce_add_subnormal: .add of FLOAT32_FTZ elements."""
    for old, new, want in ((0x00001000, 0x00001000, 0), (0x3F800000, 0x3F800000, 0x40000000),
                           (0x80000FFF, 0x80000FFF, 0x80000000), (0x00400000, 0x00400000, 0)):
        assert reduce_element("add", "f32", old, new, ftz=True) == want
    assert reduce_element("add", "f32", 0x00400000, 0x00400000) == 0x00800000


@pytest.mark.parametrize("dtype, x", [("UINT8", 8), ("UINT16", 4), ("FLOAT32", 2), ("FLOAT32", -6)])
def test_a_box_starting_off_16_bytes_faults(dtype: str, x: int) -> None:
    """The H100 records (u8_2d_padded, u16_2d_padded, f32_2d_x_off16, ...): an illegal instruction."""
    tm = _map((64, 32), (16, 4), dtype)
    with pytest.raises(PlanError, match="not a multiple of 16: the H100 faults"):
        tile_plan(tm, (x, 0))


def test_interleaved_boxes_count_units_in_dimension_0() -> None:
    """The H100 records (f16_il16_*): with INTERLEAVE_16B, dimension 0 counts 16-byte units (its box,
    bound and element stride), dimension rank - 2 takes one position."""
    tm = TensorMap("tiled", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 3, BASE, (8, 32, 4), (16, 512), (2, 1, 1),
                   (16, 4, 2), interleave="CU_TENSOR_MAP_INTERLEAVE_16B")
    plan = tile_plan(tm, (0, 2, 1))
    units = [(p.box, p.gaddr - BASE if p.gaddr >= 0 else -1) for p in plan.pieces]
    # ceil(16 / 2) = 8 units at 0, 2, .. 14 (in bounds below 8), then the next plane 512 bytes on
    want = [(16 * i, 544 + 32 * i if 2 * i < 8 else -1) for i in range(8)]
    assert units == want + [(128 + b, g + 512 if g >= 0 else -1) for b, g in want]
    assert plan.box_bytes == plan.footprint == 256
    # rank 5 (record f16_il16_5d): dimensions 1, 2 and 4 step, dimension 3 takes one position
    rank5 = TensorMap("tiled", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 5, BASE, (8, 4, 3, 3, 2),
                      (16, 64, 192, 576), (1,) * 5, (8, 2, 2, 2, 2),
                      interleave="CU_TENSOR_MAP_INTERLEAVE_16B")
    rows = [p.gaddr - BASE for p in tile_plan(rank5, (0, 1, 1, 1, 0)).pieces[::8]]
    assert rows == [272, 288, 336, 352, 848, 864, 912, 928]


def test_a_tile_copy_refuses_an_im2col_map_and_wrong_coordinates() -> None:
    tm = _map((64, 32), (8, 4))
    with pytest.raises(PlanError, match="3 coordinates for a tensor map of rank 2"):
        tile_plan(tm, (1, 2, 3))
    with pytest.raises(PlanError, match="tensor map made by cuTensorMapEncodeTiled"):
        im2col_plan(tm, (0, 0), ())
    atom = TensorMap("tiled", "CU_TENSOR_MAP_DATA_TYPE_FLOAT32", 2, BASE, (64, 32), (256,), (1, 1), (32, 4),
                     swizzle="CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B")
    with pytest.raises(PlanError) as e:
        tile_plan(atom, (0, 0))
    assert e.value.unsupported


def _im2col(dims: tuple[int, ...], lower: tuple[int, ...], upper: tuple[int, ...], cpp: int, ppc: int,
            estr: tuple[int, ...] | None = None) -> TensorMap:
    strides, acc = [], dims[0] * 2
    for d in dims[1:]:
        strides.append(acc)
        acc *= d
    tm = TensorMap("im2col", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", len(dims), BASE, dims, tuple(strides),
                   estr or (1,) * len(dims), pixelBoxLowerCorner=lower, pixelBoxUpperCorner=upper,
                   channelsPerPixel=cpp, pixelsPerColumn=ppc)
    tm.validate()
    return tm


def test_im2col_walks_pixels_inside_the_bounding_box() -> None:
    """5.5.4.1's example 1 (NHWC 64 x 14 x 9 x 64 = dims C=64, W=9, H=14, N=64; corners -1, -1 / -1, -1;
    coordinates (7, 7, 4, 0): channel 7, filter base w=7, h=4, image 0): the walk starts at (w 7, h 4),
    wraps from w 7 (= 9 - 1 - 1) to the lower corner -1 on the next row; (w -1) is outside the image.
    The example's channel 7 starts 14 bytes into the pixel, which the H100 faults on (record
    f16_im2col_c_off16): the walk is taken from channel 8."""
    tm = _im2col((64, 9, 14, 64), (-1, -1), (-1, -1), 8, 64)
    with pytest.raises(PlanError, match="not a multiple of 16: the H100 faults"):
        im2col_plan(tm, (7, 7, 4, 0), (0, 0))
    plan = im2col_plan(tm, (8, 7, 4, 0), (0, 0))
    assert plan.box_bytes == 64 * 8 * 2
    rows = {}
    for p in plan.pieces:
        rows.setdefault(p.box // 16, []).append(p)
    pitch_w, pitch_h = 64 * 2, 64 * 2 * 9

    def first(pixel: int) -> int:
        return rows[pixel][0].gaddr

    assert first(0) == BASE + 4 * pitch_h + 7 * pitch_w + 8 * 2             # (w 7, h 4)
    assert first(1) == -1                                                    # (w -1, h 5): padding
    assert first(2) == BASE + 5 * pitch_h + 0 * pitch_w + 8 * 2             # (w 0, h 5)
    assert first(10) == -1 and first(11) == BASE + 6 * pitch_h + 8 * 2      # the next row
    # channels 8..15 of 64: all inside; with offsets (2, 1) the same walk reads (w + 2, h + 1)
    shifted = im2col_plan(tm, (8, 7, 4, 0), (2, 1))
    assert shifted.pieces[0].gaddr == -1                                     # (w 9, h 5): outside W
    assert [p.gaddr for p in shifted.pieces if p.box // 16 == 1][0] == BASE + 6 * pitch_h + 1 * pitch_w + 16


def test_im2col_strides_and_the_next_image() -> None:
    # W = 4, H = 2, corners 0 / 0, traversal stride 2 in W: w = 0, 2, then the next row, then image 1.
    tm = _im2col((16, 4, 2, 3), (0, 0), (0, 0), 16, 6, estr=(1, 2, 1, 1))
    plan = im2col_plan(tm, (0, 0, 0, 1), (0, 0))
    starts = [p.gaddr for p in plan.pieces if p.box % 32 == 0]
    pw, ph, pn = 32, 128, 256
    assert starts == [BASE + pn + 0, BASE + pn + 2 * pw, BASE + pn + ph, BASE + pn + ph + 2 * pw,
                      BASE + 2 * pn, BASE + 2 * pn + 2 * pw]


@pytest.mark.parametrize("op, ty, old, new, want", [
    ("add", "u32", 0xFFFFFFFF, 2, 1), ("add", "s32", 5, 0xFFFFFFFE, 3),
    ("min", "s32", 0xFFFFFFFF, 3, 0xFFFFFFFF),
    ("max", "u64", 7, 1 << 63, 1 << 63), ("inc", "u32", 5, 5, 0), ("dec", "u32", 0, 9, 9),
    ("xor", "u32", 0b1100, 0b1010, 0b0110), ("add", "f32", 0x3F800000, 0x40000000, 0x40400000),
    ("add", "f32", 0x7F800000, 0xFF800000, 0x7FFFFFFF), ("add", "f16", 0x3C00, 0x1400, 0x3C01),
    ("add", "f16", 0x7BFF, 0x5000, 0x7C00), ("add", "bf16", 0x3F80, 0x3C00, 0x3F81),
    ("add", "bf16", 0x3F80, 0x3B80, 0x3F80),   # 1 + 2^-8: a tie, to even
    ("min", "bf16", 0x8000, 0x0000, 0x8000), ("max", "f16", 0xC000, 0x3C00, 0x3C00),
])
def test_reductions(op: str, ty: str, old: int, new: int, want: int) -> None:
    assert reduce_element(op, ty, old, new) == want


def test_reduction_types_follow_the_isa_table() -> None:
    f64 = _map((64, 32), (4, 4), "FLOAT64")
    with pytest.raises(PlanError, match="not a .redOp/type combination"):
        tensorcopy.reduction_type("add", f64)
    assert tensorcopy.reduction_type("add", _map((64, 32), (8, 4))) == "f32"
    with pytest.raises(PlanError):
        tensorcopy.reduction_type("min", _map((64, 32), (8, 4)))   # no .min on .f32
