"""Tensor copies: which bytes `cp.async.bulk.tensor` and `cp.reduce.async.bulk.tensor` move, and where.

From a tensor map (`sim.tensormap`, the arguments of cuTensorMapEncodeTiled/Im2col) and the
instruction's coordinates, a `Plan` lists the box as pieces: a byte offset in the box as laid out in
shared memory before swizzling, the global address of those bytes (or none: outside the tensor), and a
length that never crosses a 16-byte chunk. The PTX ISA (5.5 Tensors; 9.7.9.25.5.2 cp.async.bulk.tensor)
and the driver API (cuda.h, cuTensorMapEncodeTiled/Im2col) give:

* **Tiled mode** (5.5.3): the box starts at the coordinates; along dimension i it holds
  ceil(boxDim[i] / elementStrides[i]) elements, coordinates c[i] + k * elementStrides[i] (the driver:
  "TMA loads ceil(boxDim[i] / elementStrides[i]) number of elements along i-th dimension"; with
  interleave NONE the stride of dimension 0 is ignored). Dimension 0 is fastest in shared memory: the
  box is a dense row-major array of its elements (rows of boxDim[0] elements, a multiple of 16 bytes
  without interleave).
* **im2col mode** (5.5.4): the tensor is NWC/NHWC/NDHWC (dimension 0 = C, the last = N). The
  coordinates give the channel start and the first pixel (n, d, h, w); pixels follow in W, then H, D,
  N order, each spatial coordinate stepping by its elementStrides within the bounding box
  [pixelBoxLowerCorner, globalDim - 1 + pixelBoxUpperCorner] and wrapping to the lower corner; each
  pixel reads channelsPerPixel channels at its position plus the im2col offsets. pixelsPerColumn
  rows of channelsPerPixel elements, dense.
* **Out of bounds** (5.5.3.3, 5.5.4.3): elements outside the tensor are filled with zeros, or with the
  OOB-NaN (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA), whose bits the ISA does not give: the
  H100 writes 0x7ff7 in every 16-bit half of the element (`spec.tensormap.OOB_NAN_HALF`). A store
  (shared to global) writes only the elements inside the tensor.
* **Swizzling** (5.5.6): 32B, 64B and 128B modes exchange 16-byte chunks: bits 4.. of the shared
  address XOR bits 7.. (1, 2 or 3 bits), of the address itself, so a destination not on the pattern's
  1024/512/256-byte boundary starts at the "swizzle base offset" (dstMem / 128) % 8, % 4, % 2. Each row
  of a swizzled box takes the whole span (32, 64 or 128 bytes), however narrow (the H100 records).
* **complete-tx** (9.7.9.25.5.2: "completeCount argument equal to amount of data copied in bytes"):
  the bytes of the box's rows, out-of-bounds fill included, the span's padding not.
* **TFLOAT32** (and TFLOAT32_FTZ) loads round each element to tf32 (`to_tf32`, as the H100 records
  show); stores copy the bits, and FLOAT32_FTZ loads too. A FLOAT32_FTZ reduction flushes subnormals.
* **Faults** the H100 shows (`spec.tensormap`): a box starting off 16 bytes in dimension 0 (an illegal
  instruction), shared memory off 128 bytes (a misaligned address).
* **Interleaved layouts** (as the H100 moves them): dimension 0 counts 16- or 32-byte units, and
  dimension tensorRank - 2 takes one position; interleaved im2col copies, not recorded, stop the run,
  as do the 128B swizzle atoms of sm_100.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mbarrier.sim.tensormap import TensorMap
from mbarrier.spec import tensormap as spec

NONE = "CU_TENSOR_MAP_INTERLEAVE_NONE"
#: Swizzle modes the simulator models: the number of address bits XORed into bits 4 and up.
SWIZZLE_BITS: dict[str, int] = {
    "CU_TENSOR_MAP_SWIZZLE_NONE": 0, "CU_TENSOR_MAP_SWIZZLE_32B": 1, "CU_TENSOR_MAP_SWIZZLE_64B": 2,
    "CU_TENSOR_MAP_SWIZZLE_128B": 3,
}
CHUNK = 16


class PlanError(ValueError):
    """The instruction and the tensor map disagree, or the map asks for what the simulator does not
    model (`unsupported`: the tool's limit, not the kernel's fault)."""

    def __init__(self, message: str, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


def swizzle(addr: int, bits: int) -> int:
    """The shared-memory address a byte of the box lands at (5.5.6: 16-byte chunks exchanged)."""
    return addr ^ ((addr >> 3) & (((1 << bits) - 1) << 4))


def oob_fill(tm: TensorMap) -> int:
    """One out-of-bounds element's bits: 0, or the OOB-NaN (the H100's: see the module)."""
    if tm.oobFill == "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE":
        return 0
    return int.from_bytes(spec.OOB_NAN_HALF.to_bytes(2, "little") * (tm.element_size // 2), "little")


def to_tf32(x: int) -> int:
    """f32 bits with the mantissa rounded to tf32's 10 bits, to nearest even (a carry into the exponent
    may give infinity); infinity kept, a NaN the H100's tf32 NaN (`spec.tensormap`)."""
    if x >> 23 & 0xFF == 0xFF:
        return x if x & 0x7FFFFF == 0 else spec.TF32_NAN
    return (x + 0xFFF + (x >> 13 & 1)) & 0xFFFFE000


def _flush(x: int) -> int:
    """An f32 subnormal as the zero of its sign."""
    return x & 0x80000000 if x >> 23 & 0xFF == 0 else x


@dataclass(frozen=True)
class Piece:
    box: int      # byte offset in the box (shared memory, before swizzling)
    gaddr: int    # global address of its first byte; -1: outside the tensor
    n: int        # bytes, within one 16-byte chunk of the box


@dataclass(frozen=True)
class Plan:
    """One tensor copy's bytes: its map, mode, coordinates (and im2col offsets) and what they give."""

    tm: TensorMap
    coords: tuple[int, ...]
    offsets: tuple[int, ...] | None   # im2col's; None in tiled mode
    pieces: tuple[Piece, ...]
    box_bytes: int   # the bytes of its rows: what it completes on an mbarrier
    footprint: int   # the shared-memory bytes it spans (rows padded to the swizzle span)
    esize: int
    fill: int
    bits: int     # swizzle bits

    @property
    def key(self) -> tuple[object, ...]:
        """What identifies the copy's effect (for state keys): the pieces follow from it."""
        return self.tm, self.coords, self.offsets

    def shared(self, base: int, piece: Piece) -> int:
        return swizzle(base + piece.box, self.bits)

    def loaded(self, data: bytes) -> bytes:
        """Global bytes as a load writes them to shared memory: TFLOAT32 elements rounded to tf32."""
        if self.tm.tensorDataType not in spec.TF32_ROUNDED:
            return data
        return b"".join(to_tf32(int.from_bytes(data[i:i + 4], "little")).to_bytes(4, "little")
                        for i in range(0, len(data), 4))

    def fill_bytes(self, n: int) -> bytes:
        return self.fill.to_bytes(self.esize, "little") * (n // self.esize)

    def runs(self, base: int, outside: bool) -> list[tuple[int, int, int]]:
        """(shared address, global address or -1, bytes) of the runs contiguous on both sides, box at
        `base`; `outside`: with the pieces outside the tensor (a load fills them, a store skips them)."""
        out: list[list[int]] = []
        for p in self.pieces:
            if p.gaddr < 0 and not outside:
                continue
            at = self.shared(base, p)
            last = out[-1] if out else None
            if last is not None and last[0] + last[2] == at and (
                    last[1] < 0 and p.gaddr < 0 or last[1] >= 0 and last[1] + last[2] == p.gaddr):
                last[2] += p.n
            else:
                out.append([at, p.gaddr, p.n])
        return [(a, g, n) for a, g, n in out]

    def global_span(self) -> tuple[int, int] | None:
        """[lo, hi) of the global bytes it touches (None: none)."""
        inside = [p for p in self.pieces if p.gaddr >= 0]
        if not inside:
            return None
        return min(p.gaddr for p in inside), max(p.gaddr + p.n for p in inside)

    def shared_span(self, base: int) -> tuple[int, int]:
        """[lo, hi) covering every shared byte it touches (whole swizzle patterns)."""
        unit = CHUNK << (3 + self.bits) if self.bits else CHUNK
        return base // unit * unit, -(-(base + self.footprint) // unit) * unit


def tensor_extent(tm: TensorMap) -> tuple[int, int] | None:
    """[lo, hi) of the global bytes a box of this map can touch, whatever its coordinates: the tensor's
    elements, from `globalAddress` to its last element (`tile_plan`, `im2col_plan`: an element inside
    the tensor lies at globalAddress + c0 * esize + the sum of c_i * globalStrides[i - 1]). None for an
    interleaved map (its dimension 0 moves in units of the interleave)."""
    if tm.interleave != NONE:
        return None
    dims = tm.globalDim
    last = sum((d - 1) * s for d, s in zip(dims[1:], tm.globalStrides, strict=False))
    return tm.globalAddress, tm.globalAddress + dims[0] * tm.element_size + last


def _split(pieces: list[Piece], box: int, gaddr: int, n: int) -> None:
    """Append the run [box, box + n) as pieces that do not cross a 16-byte chunk of the box."""
    while n > 0:
        take = min(n, CHUNK - box % CHUNK)
        pieces.append(Piece(box, gaddr, take))
        box += take
        gaddr = gaddr + take if gaddr >= 0 else -1
        n -= take


def _common(tm: TensorMap, mode: str) -> tuple[int, int]:
    bits = SWIZZLE_BITS.get(tm.swizzle)
    if bits is None:
        raise PlanError(f"swizzle {tm.swizzle} (an sm_100 swizzle atom) is not modelled", unsupported=True)
    if tm.mode != mode:
        raise PlanError(f"a .{'tile' if mode == 'tiled' else 'im2col'} copy with a tensor map made by "
                        f"{tm.function} (an {tm.mode} map)")
    return bits, tm.element_size


def tile_plan(tm: TensorMap, coords: tuple[int, ...]) -> Plan:
    """The box of a tiled tensor map at `coords` (signed)."""
    bits, esize = _common(tm, "tiled")
    rank = tm.tensorRank
    if len(coords) != rank:
        raise PlanError(f"{len(coords)} coordinates for a tensor map of rank {rank}")
    unit = spec.INTERLEAVE_UNIT.get(tm.interleave)
    if unit is not None:
        return _interleaved_plan(tm, coords, bits, unit)
    _box_start(coords[0], esize)
    strides = list(tm.elementStrides)
    strides[0] = 1  # the driver: the stride of dimension 0 is ignored without an interleave
    counts = [math.ceil(b / s) for b, s in zip(tm.boxDim, strides, strict=True)]
    row_bytes = counts[0] * esize
    row_pitch = CHUNK << bits if bits else row_bytes  # a swizzled row takes the whole span
    pitch = (esize, *tm.globalStrides)
    dims = tm.globalDim
    pieces: list[Piece] = []
    rows = math.prod(counts[1:])
    for row in range(rows):
        k = _row_position(row, counts)
        base = tm.globalAddress
        inside = True
        for i in range(1, rank):
            c = coords[i] + k[i] * strides[i]
            inside = inside and 0 <= c < dims[i]
            base += c * pitch[i]
        box = row * row_pitch
        lo = max(0, -coords[0]) if inside else counts[0]
        hi = max(lo, min(counts[0], dims[0] - coords[0])) if inside else counts[0]
        for a, b, g in ((0, lo, -1), (lo, hi, base + (coords[0] + lo) * esize), (hi, counts[0], -1)):
            _split(pieces, box + a * esize, g, (b - a) * esize)
    return Plan(tm, tuple(coords), None, tuple(pieces), rows * row_bytes, rows * row_pitch, esize,
                oob_fill(tm), bits)


def box_plan(tm: TensorMap) -> Plan:
    """The plan of a map's box at coordinates (and im2col offsets) 0: what every copy of the box has in
    common, whatever its coordinates: the bytes it completes on an mbarrier (`box_bytes`) and the shared
    memory it spans from a destination (`shared_span`). Raises PlanError as `tile_plan` does."""
    rank = tm.tensorRank
    if tm.mode == "tiled":
        return tile_plan(tm, (0,) * rank)
    return im2col_plan(tm, (0,) * rank, (0,) * (rank - 2))


def _row_position(row: int, counts: list[int]) -> list[int]:
    """Where the box's `row`-th row lies: its index in dimensions 1 and up (dimension 0 is the row)."""
    k, rest = [0] * len(counts), row
    for i in range(1, len(counts)):
        k[i], rest = rest % counts[i], rest // counts[i]
    return k


def _box_start(c0: int, esize: int) -> None:
    """The H100's illegal-instruction fault of a box starting off 16 bytes in dimension 0."""
    if c0 * esize % spec.BOX_START_ALIGN:
        raise PlanError(f"the box starts {c0 * esize} bytes into dimension 0 (coordinate {c0} of "
                        f"{esize}-byte elements), not a multiple of {spec.BOX_START_ALIGN}: the H100 faults "
                        "(an illegal instruction)")


def _interleaved_plan(tm: TensorMap, coords: tuple[int, ...], bits: int, unit: int) -> Plan:
    """A tiled box of an interleaved map as the H100 moves it (`spec.tensormap`): dimension 0 in units
    of `unit` bytes (its elementStrides honoured), dimension rank - 2 one position, the box dense."""
    rank = tm.tensorRank
    strides = tm.elementStrides
    counts = [math.ceil(b / s) for b, s in zip(tm.boxDim, strides, strict=True)]
    counts[rank - 2] = 1
    row_bytes = counts[0] * unit
    pitch = (unit, *tm.globalStrides)
    dims = tm.globalDim
    pieces: list[Piece] = []
    rows = math.prod(counts[1:])
    for row in range(rows):
        k = _row_position(row, counts)
        c = [coords[i] + k[i] * strides[i] for i in range(rank)]
        inside = all(0 <= c[i] < dims[i] for i in range(1, rank))
        base = tm.globalAddress + sum(c[i] * pitch[i] for i in range(1, rank))
        for k0 in range(counts[0]):
            c0 = coords[0] + k0 * strides[0]
            g = base + c0 * unit if inside and 0 <= c0 < dims[0] else -1
            _split(pieces, row * row_bytes + k0 * unit, g, unit)
    return Plan(tm, tuple(coords), None, tuple(pieces), rows * row_bytes, rows * row_bytes, tm.element_size,
                oob_fill(tm), bits)


def im2col_plan(tm: TensorMap, coords: tuple[int, ...], offsets: tuple[int, ...]) -> Plan:
    """The column of an im2col tensor map: coordinates (c, w[, h[, d]], n), offsets (w[, h[, d]])."""
    bits, esize = _common(tm, "im2col")
    rank = tm.tensorRank
    spatial = rank - 2
    if len(coords) != rank or len(offsets) != spatial:
        raise PlanError(f"{len(coords)} coordinates and {len(offsets)} im2col offsets for a tensor map of "
                        f"rank {rank} (it takes {rank} and {spatial})")
    dims = tm.globalDim
    pitch = (esize, *tm.globalStrides)
    lower, upper = tm.pixelBoxLowerCorner, tm.pixelBoxUpperCorner
    lo = [lower[s] for s in range(spatial)]
    hi = [dims[1 + s] - 1 + upper[s] for s in range(spatial)]
    step = [tm.elementStrides[1 + s] for s in range(spatial)]
    pos = [coords[1 + s] for s in range(spatial)]   # w, h, d: the filter base
    n = coords[rank - 1]
    if tm.interleave != NONE:
        raise PlanError("an interleaved im2col tensor map: interleaved boxes do not move as the driver API "
                        "describes them, and the H100 records have no im2col one", unsupported=True)
    _box_start(coords[0], esize)
    cpp = tm.channelsPerPixel
    row_bytes = cpp * esize
    row_pitch = CHUNK << bits if bits else row_bytes  # a swizzled row takes the whole span
    c0 = coords[0]
    c_lo, c_hi = max(0, -c0), max(max(0, -c0), min(cpp, dims[0] - c0))
    pieces: list[Piece] = []
    for pixel in range(tm.pixelsPerColumn):
        at = [pos[s] + offsets[s] for s in range(spatial)]
        inside = 0 <= n < dims[rank - 1] and all(0 <= at[s] < dims[1 + s] for s in range(spatial))
        box = pixel * row_pitch
        if inside:
            base = tm.globalAddress + n * pitch[rank - 1] + sum(at[s] * pitch[1 + s] for s in range(spatial))
            for a, b, g in ((0, c_lo, -1), (c_lo, c_hi, base + (c0 + c_lo) * esize), (c_hi, cpp, -1)):
                _split(pieces, box + a * esize, g, (b - a) * esize)
        else:
            _split(pieces, box, -1, row_bytes)
        # The next pixel: W first, then H, D (each wrapping to the box's lower corner), then N.
        for s in range(spatial):
            pos[s] += step[s]
            if pos[s] <= hi[s]:
                break
            pos[s] = lo[s]
        else:
            n += 1
    return Plan(tm, tuple(coords), tuple(offsets), tuple(pieces), tm.pixelsPerColumn * row_bytes,
                tm.pixelsPerColumn * row_pitch, esize, oob_fill(tm), bits)


#: cp.reduce.async.bulk.tensor's .redOp and the element types (from the tensor map) each takes
#: (9.7.9.25.5.3's table): the type names the reduction uses for each tensorDataType.
_RED_TYPE: dict[str, str] = {
    "CU_TENSOR_MAP_DATA_TYPE_UINT32": "u32", "CU_TENSOR_MAP_DATA_TYPE_INT32": "s32",
    "CU_TENSOR_MAP_DATA_TYPE_UINT64": "u64", "CU_TENSOR_MAP_DATA_TYPE_INT64": "s64",
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT32": "f32", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16": "f16",
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ": "f32",
    "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16": "bf16",
}
RED_OPS: dict[str, frozenset[str]] = {
    "add": frozenset({"u32", "s32", "u64", "f32", "f16", "bf16"}),
    "min": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16"}),
    "max": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16"}),
    "inc": frozenset({"u32"}), "dec": frozenset({"u32"}),
    "and": frozenset({"u32", "s32", "u64", "s64"}), "or": frozenset({"u32", "s32", "u64", "s64"}),
    "xor": frozenset({"u32", "s32", "u64", "s64"}),
}


def reduction_type(op: str, tm: TensorMap) -> str:
    """The element type of `.redOp` `op` on this map's elements (PlanError: a combination the ISA does
    not have)."""
    ty = _RED_TYPE.get(tm.tensorDataType)
    if ty is None or ty not in RED_OPS[op]:
        raise PlanError(f"cp.reduce.async.bulk.tensor .{op} on {tm.tensorDataType} elements: not a "
                        f".redOp/type combination of the ISA ({', '.join(sorted(RED_OPS[op]))})")
    return ty


def reduce_element(op: str, ty: str, old: int, new: int, ftz: bool = False) -> int:
    """old (global) op new (shared), as a bit pattern of the element's width. Float add rounds to
    nearest even once (the exact sum of two binary floats is a dyadic rational); `ftz` (FLOAT32_FTZ
    elements) flushes f32 subnormal inputs and results to zeros of their sign."""
    if ftz:
        return _flush(reduce_element(op, ty, _flush(old), _flush(new)))
    from fractions import Fraction

    from mbarrier.sim import floatops, halfops
    bits = {"u32": 32, "s32": 32, "u64": 64, "s64": 64, "f32": 32, "f16": 16, "bf16": 16}[ty]
    mask = (1 << bits) - 1
    if ty[0] in "us":
        signed = ty[0] == "s"
        sign = 1 << (bits - 1)
        a, b = ((old ^ sign) - sign, (new ^ sign) - sign) if signed else (old, new)
        result = {"add": lambda: a + b, "min": lambda: min(a, b), "max": lambda: max(a, b),
                  "and": lambda: old & new, "or": lambda: old | new, "xor": lambda: old ^ new,
                  "inc": lambda: 0 if old >= new else old + 1,
                  "dec": lambda: new if old == 0 or old > new else old - 1}[op]()
        return result & mask
    half = halfops.FORMATS.get("." + ty)
    wide = (lambda h: halfops.to_f32(h, half)) if half is not None else (lambda x: x)
    x, y = wide(old), wide(new)
    nan = halfops.CANONICAL_NAN if half is not None else floatops.F32_NAN
    if floatops.is_nan(x, 32) or floatops.is_nan(y, 32):
        return nan
    infs = [v for v in (x, y) if v & 0x7FFFFFFF == 0x7F800000]
    if infs:
        if op == "add":
            return nan if len(set(infs)) > 1 else (old if x in infs else new)
        fx_, fy_ = floatops.to_float(x, 32), floatops.to_float(y, 32)
        return old if (fx_ < fy_) == (op == "min") else new
    fx, fy = Fraction(floatops.to_float(x, 32)), Fraction(floatops.to_float(y, 32))
    if op in ("min", "max"):
        pick = old if (fx < fy) == (op == "min") else new
        return pick if fx != fy else (old | new if op == "min" else old & new) & mask  # -0 < +0
    total = fx + fy
    if half is None:
        return floatops.round_fraction(total, 32, "rn", negative=x >> 31 == 1 and y >> 31 == 1)
    if total == 0:
        return 0x8000 if x >> 31 and y >> 31 else 0
    den = total.denominator
    return halfops.round_dyadic(int(total < 0), abs(total.numerator), -(den.bit_length() - 1), half)
