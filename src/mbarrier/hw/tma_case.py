"""One tensor-copy conformance case of `mbarrier.hw.tma` (PTX ISA 5.5 Tensors, 9.7.9.25.5.2-4): the
arguments of its cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col call, its instruction's operands, the
layout of its kernel's output, and the elements of its tensor (and of a store's shared memory)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from mbarrier.spec import tensormap as spec

THREADS = 128
SENTINEL = 0xEE    # shared memory before the copies: bytes no copy writes keep it
FLAGS = 16         # bytes of flags at the start of `out` (u32: A complete, B early, B after, CTA rank;
                   # a counting case: A's steps, 0, B's steps, CTA rank)
COUNT_ARM = 16384  # a counting case's expect_tx on both mbarriers
COUNT_CAP = 1100   # the most 16-byte steps it takes (more: the copy completed more than COUNT_ARM)
EXTRA_TX = 16      # copy B's mbarrier expects this many bytes more than the box
PATTERN = 0x5A     # a store case's tensor before the store: bytes it must not write keep it


@dataclass(frozen=True)
class Case:
    """One tensor copy. `kind` "load", "store", "reduce.OP" or "prefetch"; the map's arguments under the
    driver API's names (enums by their short names); `coords` (and `offsets` for im2col) as the
    instruction gives them; `dst` the byte offset of the box in its shared-memory area (off the swizzle
    pattern's boundary: the base offset); `cluster` 2 for a multicast to both CTAs of a cluster; `smem`
    the bytes of each shared-memory area when not the box's footprint rounded up (a probe of a layout
    the footprint does not predict, or an area too small on purpose: the copy overruns it); `count` a
    counting case (see the module); `data` the elements (bit patterns, repeated over the tensor and a
    store's shared memory) when the values matter (tf32 rounding, subnormals)."""

    name: str
    dtype: str
    dims: tuple[int, ...]
    coords: tuple[int, ...]
    box: tuple[int, ...] = ()
    estr: tuple[int, ...] = ()
    kind: str = "load"
    swizzle: str = "NONE"
    interleave: str = "NONE"
    fill: str = "NONE"
    dst: int = 0
    pad: int = 0                          # bytes added to each global stride
    im2col: tuple[int, int, tuple[int, ...], tuple[int, ...]] | None = None  # cpp, ppc, lower, upper
    offsets: tuple[int, ...] = ()
    cluster: int = 1
    seed: int = 1
    smem: int = 0
    count: bool = False
    data: tuple[int, ...] = ()            # element bit patterns, repeated, instead of random elements

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def esize(self) -> int:
        return spec.DATA_TYPES["CU_TENSOR_MAP_DATA_TYPE_" + self.dtype][1]

    @property
    def strides(self) -> tuple[int, ...]:
        """globalStrides (bytes) of a packed tensor plus `pad` bytes a row, rounded up to 16 (32 with the
        32B interleave)."""
        unit = 32 if self.interleave == "32B" else 16
        out, acc = [], self.dims[0] * self.esize
        for d in self.dims[1:]:
            s = -(-(acc + self.pad) // unit) * unit
            out.append(s)
            acc = s * d
        return tuple(out)

    @property
    def element_strides(self) -> tuple[int, ...]:
        return self.estr or (1,) * self.rank

    @property
    def tensor_bytes(self) -> int:
        return self.strides[-1] * self.dims[-1] if self.rank > 1 else self.dims[0] * self.esize

    @property
    def box_bytes(self) -> int:
        """The bytes the box completes, as the H100 records show them (what copy A's mbarrier expects:
        the records say whether the hardware agrees). Interleaved: dimension 0 counts 16- or 32-byte
        units, dimension rank - 2 one position."""
        if self.im2col is not None:
            cpp, ppc, _, _ = self.im2col
            return cpp * ppc * self.esize
        strides = list(self.element_strides)
        if self.interleave == "NONE":
            strides[0] = 1
        counts = [math.ceil(b / s) for b, s in zip(self.box, strides, strict=True)]
        if self.interleave == "NONE":
            return counts[0] * self.esize * math.prod(counts[1:])
        counts[self.rank - 2] = 1
        return counts[0] * int(self.interleave[:-1]) * math.prod(counts[1:])

    @property
    def footprint(self) -> int:
        """The shared-memory bytes the box spans: with a swizzle (and no interleave) each row of the box
        takes the whole swizzle span, however narrow the row (the H100 records: a 64-byte row of the
        128B swizzle lands 128 bytes after the one before)."""
        span = spec.SWIZZLES["CU_TENSOR_MAP_SWIZZLE_" + self.swizzle][1]
        if not span or self.interleave != "NONE":
            return self.box_bytes
        row = (self.im2col[0] if self.im2col is not None else self.box[0]) * self.esize
        return self.box_bytes // row * span

    @property
    def area(self) -> int:
        """The bytes of one shared-memory area: `smem`, or the footprint at `dst` rounded up to whole
        1024-byte swizzle patterns (so area B starts where A's pattern does)."""
        return self.smem or -(-(self.dst + self.footprint) // 1024) * 1024

    @property
    def out_bytes(self) -> int:
        if self.kind == "load":
            return self.cluster * (FLAGS + 2 * self.area)
        return FLAGS

    def tmap_args(self) -> list[int]:
        """The encode call's arguments as integers, in the order tools/tma/run_cases.cu reads them."""
        p = "CU_TENSOR_MAP_"
        head = [0 if self.im2col is None else 1, spec.DATA_TYPES[p + "DATA_TYPE_" + self.dtype][0],
                self.rank, spec.INTERLEAVES[p + "INTERLEAVE_" + self.interleave],
                spec.SWIZZLES[p + "SWIZZLE_" + self.swizzle][0], spec.L2_PROMOTIONS[p + "L2_PROMOTION_NONE"],
                spec.OOB_FILLS[p + "FLOAT_OOB_FILL_" + self.fill]]
        tail: list[int] = list(self.box)
        if self.im2col is not None:
            cpp, ppc, lower, upper = self.im2col
            tail = [*lower, *upper, cpp, ppc]
        return head + list(self.dims) + list(self.strides) + list(self.element_strides) + tail


#: The powers of two 1..128 of the float element types (reductions of them are exact in any order).
_ONE = {"FLOAT32": (0x3F800000, 23), "FLOAT16": (0x3C00, 10), "BFLOAT16": (0x3F80, 7)}


def _values(case: Case, n: int, seed: int) -> bytes:
    """n bytes of elements: `case.data` repeated, random bytes, or for a float reduction powers of two
    (exact sums)."""
    if case.data:
        cycle = b"".join(v.to_bytes(case.esize, "little") for v in case.data)
        return (cycle * (n // len(cycle) + 1))[:n]
    r = random.Random(seed)
    if case.kind.startswith("reduce.") and case.dtype in _ONE:
        one, shift = _ONE[case.dtype]
        return b"".join((one + (r.randrange(8) << shift)).to_bytes(case.esize, "little")
                        for _ in range(n // case.esize))
    return r.randbytes(n)


def tensor(case: Case) -> bytes:
    """The global tensor before the kernel: elements (seeded) for a load or a reduction, the pattern for
    a store (whatever it does not write keeps it)."""
    if case.kind == "store":
        return bytes([PATTERN]) * case.tensor_bytes
    return _values(case, case.tensor_bytes, case.seed)


def box_image(case: Case) -> bytes:
    """A store case's shared memory: the box's footprint (before the store reads it through the swizzle)."""
    return _values(case, case.footprint, case.seed + 1000)
