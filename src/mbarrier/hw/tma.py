"""Tensor-copy conformance cases (PTX ISA 5.5 Tensors, 9.7.9.25.5.2-3): known tensors, a tensor map
(the arguments of cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col), a PTX kernel per case, the records.

A load case copies one box twice into shared memory that a sentinel fills: copy A completes on an
mbarrier armed with exactly the bytes the simulator counts for the box (`box_bytes`, its out-of-bounds
fill included), copy B on one armed with 16 more. The kernel records whether A's phase completes (in a
bounded wait), whether B's completed before the kernel adds the missing 16 bytes with
mbarrier.complete_tx (after a delay that lets B land), and whether it completes after: together they
say the copy completes exactly `box_bytes`. Then it writes the flags and both shared-memory areas to
`out`. A store case fills the box in shared memory with a pattern, stores (or reduces) it into the
tensor and the host reads the tensor back. A multicast case runs a cluster of two CTAs and writes each
CTA's areas. The same PTX runs on the GPU (`tools/record_tma.sh`: ptxas for sm_90a, the CUDA driver
encoding the map, tools/tma/run_cases.cu) and in the simulator (tests/hw/test_tma_replay.py), so both
see the same bytes; nothing here depends on the simulator's tensor-copy model.

    python3 -m mbarrier.hw.tma emit DIR      # DIR/manifest.txt, DIR/<case>.ptx, .in, .tmap
    python3 -m mbarrier.hw.tma collect DIR OUT.json [--device NAME] [--toolchain TEXT]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import random
import sys
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

from mbarrier.spec import tensormap as spec

THREADS = 128
RUNS = 3           # each case runs this often on the GPU: equal outputs show the hardware deterministic
SCHEMA = 1
KERNEL = "tma_case"
SENTINEL = 0xEE    # shared memory before the copies: bytes no copy writes keep it
FLAGS = 16         # bytes of flags at the start of `out` (u32: A complete, B early, B after, CTA rank)
EXTRA_TX = 16      # copy B's mbarrier expects this many bytes more than the box
PATTERN = 0x5A     # a store case's tensor before the store: bytes it must not write keep it


@dataclass(frozen=True)
class Case:
    """One tensor copy. `kind` "load", "store" or "reduce.OP"; the map's arguments under the driver
    API's names (enums by their short names); `coords` (and `offsets` for im2col) as the instruction
    gives them; `dst` the byte offset of the box in its shared-memory area (off the swizzle pattern's
    boundary: the base offset); `cluster` 2 for a multicast to both CTAs of a cluster."""

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
        """The bytes of the box in shared memory, as the simulator's reading of the ISA counts them (what
        copy A's mbarrier expects: the records say whether the hardware agrees)."""
        if self.im2col is not None:
            cpp, ppc, _, _ = self.im2col
            return cpp * ppc * self.esize
        strides = list(self.element_strides)
        if self.interleave == "NONE":
            strides[0] = 1
        counts = [math.ceil(b / s) for b, s in zip(self.box, strides, strict=True)]
        row = counts[0] * self.esize
        if self.interleave != "NONE":
            row = -(-row // 16) * 16
        return row * math.prod(counts[1:])

    @property
    def area(self) -> int:
        """The bytes of one shared-memory area: the box at `dst`, rounded up to whole 1024-byte swizzle
        patterns (so area B starts where A's pattern does)."""
        return -(-(self.dst + self.box_bytes) // 1024) * 1024

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
    """n bytes of elements: random bytes, or for a float reduction powers of two (exact sums)."""
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
    """A store case's shared memory: the box's bytes (before the store reads them through the swizzle)."""
    return _values(case, case.box_bytes, case.seed + 1000)


def _s32(v: int) -> str:
    return str(v)


def ptx(case: Case) -> str:
    """The case's kernel: params (tensor map by value, the global tensor, out), one or two CTAs."""
    head = (".version 8.6\n.target sm_90a\n.address_size 64\n\n"
            f".visible .entry {KERNEL}(.param .align 64 .b8 tmap[128], .param .u64 gmem, .param .u64 out)\n")
    if case.cluster > 1:
        head += f".reqnctapercluster {case.cluster}, 1, 1\n"
    if case.kind == "load":
        return head + "{\n" + _load(case) + "}\n"
    image = box_image(case)
    words = ", ".join(f"{int.from_bytes(image[i:i + 4], 'little'):#x}" for i in range(0, len(image), 4))
    data = f".global .align 4 .b32 image[{len(image) // 4}] = {{{words}}};\n\n"
    return head.replace(".visible", data + ".visible", 1) + "{\n" + _store(case) + "}\n"


_REGS = """    .reg .pred %p<8>;
    .reg .b16 %h<4>;
    .reg .b32 %r<48>;
    .reg .b64 %rd<16>;
"""


def _coords(case: Case) -> tuple[str, str]:
    """(PTX that puts the coordinates in %r30.., the brace list)."""
    lines = "".join(f"    mov.u32 %r{30 + i}, {_s32(c)};\n" for i, c in enumerate(case.coords))
    return lines, "{" + ", ".join(f"%r{30 + i}" for i in range(case.rank)) + "}"


def _tma_load(case: Case, dst: str, bar: str) -> str:
    mode = ".im2col" if case.im2col is not None else ".tile"
    multicast = ".multicast::cluster" if case.cluster > 1 else ""
    offsets = ""
    if case.im2col is not None:
        offsets = ", {" + ", ".join(f"%h{i}" for i in range(len(case.offsets))) + "}"
    mask = ", %h3" if case.cluster > 1 else ""
    _, brace = _coords(case)
    return (f"    cp.async.bulk.tensor.{case.rank}d.shared::cluster.global{mode}.mbarrier::complete_tx::bytes"
            f"{multicast} [{dst}], [%rd1, {brace}], [{bar}]{offsets}{mask};\n")


def _wait(bar: str, flag: str, label: str) -> str:
    """A bounded wait for phase 0: `flag` = 1 when it completes within 2^20 try_waits, else 0."""
    return f"""    mov.u32 {flag}, 0;
    mov.u32 %r20, 0;
{label}:
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [{bar}], 0;
    @%p1 mov.u32 {flag}, 1;
    @%p1 bra {label}_done;
    add.u32 %r20, %r20, 1;
    setp.lt.u32 %p2, %r20, 1048576;
    @%p2 bra {label};
{label}_done:
"""


def _load(case: Case) -> str:
    area, box = case.area, case.box_bytes
    coords, _ = _coords(case)
    offsets = "".join(f"    mov.u16 %h{i}, {o};\n" for i, o in enumerate(case.offsets))
    rank0 = "    mov.u32 %r9, %cluster_ctarank;\n" if case.cluster > 1 else "    mov.u32 %r9, 0;\n"
    sync = "    barrier.cluster.arrive.release;\n    barrier.cluster.wait.acquire;\n" if case.cluster > 1 \
        else "    bar.sync 0;\n"
    issue_guard = "    setp.ne.or.u32 %p4, %r9, 0, %p0;\n" if case.cluster > 1 else "    mov.pred %p4, %p0;\n"
    return _REGS + f"""    .shared .align 1024 .b8 sm[{2 * area}];
    .shared .align 8 .b64 bars[2];
    ld.param.u64 %rd2, [gmem];
    ld.param.u64 %rd3, [out];
    mov.u64 %rd1, tmap;
    cvta.param.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
{rank0}    mov.u32 %r2, sm;
    mov.u32 %r3, bars;
    add.u32 %r4, %r3, 8;
    setp.ne.u32 %p0, %r1, 0;
{issue_guard}    // the sentinel in both areas (generic writes, then a proxy fence: the copies overwrite them)
    mov.u32 %r5, %r1;
FILL:
    setp.ge.u32 %p2, %r5, {2 * area // 4};  @%p2 bra FILLED;
    shl.b32 %r6, %r5, 2;  add.u32 %r7, %r2, %r6;  st.shared.u32 [%r7], {SENTINEL * 0x01010101:#x};
    add.u32 %r5, %r5, {THREADS};  bra FILL;
FILLED:
    fence.proxy.async.shared::cta;
    @!%p0 mbarrier.init.shared::cta.b64 [%r3], 1;
    @!%p0 mbarrier.init.shared::cta.b64 [%r4], 1;
    fence.mbarrier_init.release.cluster;
{sync}    @%p0 bra WAIT;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r3], {box};
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r4], {box + EXTRA_TX};
    @%p4 bra WAIT;
{coords}{offsets}    mov.u16 %h3, {(1 << case.cluster) - 1};
    add.u32 %r10, %r2, {case.dst};
    add.u32 %r11, %r2, {area + case.dst};
{_tma_load(case, "%r10", "%r3")}{_tma_load(case, "%r11", "%r4")}WAIT:
{_wait("%r3", "%r12", "WA")}    mov.u32 %r13, 0;
    mov.u32 %r14, 0;
    @%p0 bra DUMP;
    // let copy B land, then see whether its phase completed early; then add the missing bytes
    mov.u32 %r20, 0;
DELAY:
    nanosleep.u32 100;
    add.u32 %r20, %r20, 1;
    setp.lt.u32 %p2, %r20, 2000;
    @%p2 bra DELAY;
    mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r4], 0;
    selp.u32 %r13, 1, 0, %p3;
    mbarrier.complete_tx.shared::cta.b64 [%r4], {EXTRA_TX};
{_wait("%r4", "%r14", "WB")}DUMP:
    bar.sync 0;
    @%p0 bra WB2;
    bra COPY;
WB2:
{_wait("%r4", "%r15", "WC")}COPY:
    mul.wide.u32 %rd5, %r9, {FLAGS + 2 * area};
    add.s64 %rd3, %rd3, %rd5;
    @%p0 bra ROWS;
    st.global.v4.u32 [%rd3], {{%r12, %r13, %r14, %r9}};
ROWS:
    mov.u32 %r5, %r1;
ROW:
    setp.ge.u32 %p2, %r5, {2 * area // 16};  @%p2 bra DUMPED;
    shl.b32 %r6, %r5, 4;  add.u32 %r7, %r2, %r6;
    ld.shared.v4.u32 {{%r40, %r41, %r42, %r43}}, [%r7];
    cvt.u64.u32 %rd6, %r6;  add.s64 %rd7, %rd3, %rd6;
    st.global.v4.u32 [%rd7+{FLAGS}], {{%r40, %r41, %r42, %r43}};
    add.u32 %r5, %r5, {THREADS};  bra ROW;
DUMPED:
{sync}    ret;
"""


def _store(case: Case) -> str:
    box = case.box_bytes
    coords, brace = _coords(case)
    red = "" if case.kind == "store" else "." + case.kind.split(".")[1]
    op = (f"cp{'.reduce' if red else ''}.async.bulk.tensor.{case.rank}d.global.shared::cta{red}.tile"
          ".bulk_group")
    return _REGS + f"""    .shared .align 1024 .b8 sm[{case.dst + box}];
    ld.param.u64 %rd3, [out];
    mov.u64 %rd1, tmap;
    cvta.param.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, sm;
    add.u32 %r2, %r2, {case.dst};
    mov.u64 %rd8, image;
    cvta.global.u64 %rd8, %rd8;
    // the box's bytes in shared memory (generic writes, then the proxy fence a TMA store needs)
    mov.u32 %r5, %r1;
FILL:
    setp.ge.u32 %p2, %r5, {box // 4};  @%p2 bra FILLED;
    mul.wide.u32 %rd9, %r5, 4;  add.s64 %rd10, %rd8, %rd9;  ld.global.u32 %r8, [%rd10];
    shl.b32 %r6, %r5, 2;  add.u32 %r7, %r2, %r6;  st.shared.u32 [%r7], %r8;
    add.u32 %r5, %r5, {THREADS};  bra FILL;
FILLED:
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.ne.u32 %p0, %r1, 0;
    @%p0 bra DONE;
{coords}    {op} [%rd1, {brace}], [%r2];
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
    mov.u32 %r12, 1;
    st.global.v4.u32 [%rd3], {{%r12, %r12, %r12, %r12}};
DONE:
    ret;
"""


def _cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    # tiled loads: in bounds, partly out of bounds (zeros, OOB-NaN), element types
    add(Case("f32_2d_inside", "FLOAT32", (64, 32), (16, 8), box=(16, 8)))
    add(Case("f32_2d_oob_low", "FLOAT32", (64, 32), (-4, -3), box=(16, 8)))
    add(Case("f32_2d_oob_high_nan", "FLOAT32", (64, 32), (56, 28), box=(16, 8), fill="NAN_REQUEST_ZERO_FMA"))
    add(Case("f16_2d_oob_nan", "FLOAT16", (64, 32), (-8, 30), box=(32, 4), fill="NAN_REQUEST_ZERO_FMA"))
    add(Case("bf16_2d_oob_nan", "BFLOAT16", (64, 32), (40, -2), box=(32, 4), fill="NAN_REQUEST_ZERO_FMA"))
    add(Case("f64_2d_oob", "FLOAT64", (20, 9), (18, 7), box=(4, 4), fill="NAN_REQUEST_ZERO_FMA"))
    add(Case("u8_2d_padded", "UINT8", (40, 12), (8, 2), box=(32, 6), pad=24))
    add(Case("u64_2d", "UINT64", (16, 8), (2, 1), box=(4, 4)))
    add(Case("f32_1d", "FLOAT32", (200,), (180,), box=(64,)))
    add(Case("f32_1d_neg", "FLOAT32", (200,), (-12,), box=(32,)))
    # swizzles, with the box on and off the pattern's boundary (the base offset), inner dims below span
    for swz, span in (("32B", 32), ("64B", 64), ("128B", 128)):
        for dst in (0, 128, 384):
            add(Case(f"bf16_swizzle{swz}_dst{dst}", "BFLOAT16", (256, 40), (32, 4), box=(span // 2, 16),
                     swizzle=swz, dst=dst))
        add(Case(f"bf16_swizzle{swz}_half_inner", "BFLOAT16", (256, 40), (8, 4), box=(span // 4, 16),
                 swizzle=swz))
    add(Case("f32_swizzle128B_oob", "FLOAT32", (40, 20), (24, 12), box=(32, 16), swizzle="128B"))
    # element strides, more dimensions
    add(Case("f32_3d_estr", "FLOAT32", (16, 20, 30), (4, 3, 5), box=(4, 5, 6), estr=(1, 2, 3)))
    add(Case("u8_3d_oob", "UINT8", (48, 10, 6), (40, 8, -1), box=(16, 4, 3)))
    add(Case("f32_4d", "FLOAT32", (8, 6, 5, 4), (4, 2, 3, 1), box=(8, 3, 3, 2)))
    add(Case("u16_5d", "UINT16", (16, 4, 3, 3, 2), (8, 1, 0, 2, 1), box=(8, 2, 2, 2, 2)))
    # interleaved layouts (NC/8HWC8: dimension 0 the 16 bytes of a slice; NC/16HWC16 with the 32B swizzle)
    add(Case("f16_interleave16B", "FLOAT16", (8, 10, 6), (0, 2, 1), box=(8, 4, 3), interleave="16B"))
    add(Case("f16_interleave16B_estr", "FLOAT16", (8, 10, 6), (0, 1, 1), box=(8, 6, 2), estr=(1, 2, 1),
             interleave="16B"))
    add(Case("f32_interleave32B", "FLOAT32", (8, 10, 6), (0, 3, 2), box=(8, 4, 2), interleave="32B",
             swizzle="32B"))
    # im2col: NWC with padding 1 (corners -1 / -1), pixels past the image; NHWC with a traversal stride
    add(Case("f16_im2col_3d", "FLOAT16", (16, 10, 2), (0, -1, 0), im2col=(16, 12, (-1,), (-1,)),
             offsets=(1,)))
    add(Case("f16_im2col_3d_channels", "FLOAT16", (24, 10, 2), (16, 2, 1), im2col=(16, 8, (-1,), (-1,)),
             offsets=(0,)))
    add(Case("f32_im2col_4d_stride", "FLOAT32", (8, 6, 5, 2), (0, 0, -1, 0), estr=(1, 2, 1, 1),
             im2col=(8, 10, (-1, -1), (-1, -1)), offsets=(1, 2)))
    add(Case("bf16_im2col_4d_swizzle", "BFLOAT16", (64, 7, 7, 1), (0, 0, 0, 0),
             im2col=(64, 16, (0, 0), (-2, -2)), offsets=(1, 1), swizzle="128B"))
    # multicast to both CTAs of a cluster of two
    add(Case("f32_2d_multicast", "FLOAT32", (64, 32), (8, 4), box=(16, 8), cluster=2))
    add(Case("bf16_multicast_swizzle128B", "BFLOAT16", (128, 16), (0, 0), box=(64, 8), swizzle="128B",
             cluster=2))
    # stores and reductions: the box partly outside the tensor (the outside is not written)
    add(Case("u32_store_oob", "UINT32", (40, 20), (32, 16), box=(16, 8), kind="store"))
    add(Case("bf16_store_swizzle128B", "BFLOAT16", (128, 16), (32, 4), box=(64, 8), swizzle="128B",
             kind="store", dst=384))
    add(Case("u8_store_3d", "UINT8", (32, 6, 4), (16, 2, 3), box=(32, 4, 2), kind="store"))
    add(Case("u32_reduce_add", "UINT32", (40, 20), (8, 4), box=(16, 8), kind="reduce.add"))
    add(Case("s32_reduce_min_oob", "INT32", (40, 20), (36, 18), box=(16, 8), kind="reduce.min"))
    add(Case("f32_reduce_add", "FLOAT32", (32, 16), (0, 8), box=(32, 8), kind="reduce.add"))
    add(Case("bf16_reduce_max", "BFLOAT16", (64, 8), (0, 0), box=(64, 8), kind="reduce.max"))
    return c


CASES: list[Case] = _cases()


# -- records -----------------------------------------------------------------------------------------------
def _pack(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 9)).decode()


def unpack(text: str) -> bytes:
    return zlib.decompress(base64.b64decode(text))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def emit(directory: Path) -> None:
    """Write every case's kernel, its tensor and its encode arguments, and the manifest the GPU runner
    reads (one line a case: name, PTX file, tensor file, tensor bytes, out bytes, cluster size)."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for case in CASES:
        data = tensor(case)
        (directory / f"{case.name}.ptx").write_text(ptx(case))
        (directory / f"{case.name}.in").write_bytes(data)
        (directory / f"{case.name}.tmap").write_text(" ".join(map(str, case.tmap_args())) + "\n")
        rows.append(f"{case.name} {case.name}.ptx {case.name}.in {len(data)} {case.out_bytes} {case.cluster}")
    (directory / "manifest.txt").write_text("\n".join(rows) + "\n")


def collect(directory: Path, device: str, toolchain: str = "") -> dict[str, object]:
    """The records of a GPU run: per case its definition, the digest of its input tensor (regenerated from
    the case) and the outputs of its first run, with whether every run gave the same."""
    results: list[dict[str, object]] = []
    for case in CASES:
        runs = [directory.joinpath(f"{case.name}.out{i}").read_bytes() for i in range(RUNS)
                if directory.joinpath(f"{case.name}.out{i}").exists()]
        err = directory / f"{case.name}.err"
        if not runs:
            results.append({"case": asdict(case), "error": err.read_text() if err.exists() else "no output"})
            continue
        first = runs[0]
        results.append({"case": asdict(case), "input_sha256": digest(tensor(case)),
                        "deterministic": all(r == first for r in runs), "runs": len(runs),
                        "out": _pack(first[:case.out_bytes]),
                        "tensor": "" if case.kind == "load" else _pack(first[case.out_bytes:])})
    return {"schema": SCHEMA, "device": device, "toolchain": toolchain, "kernel": KERNEL, "results": results}


def case_of(d: dict[str, object]) -> Case:
    """A Case from its record (`asdict` turned tuples into lists)."""
    def tup(v: object) -> object:
        return tuple(tup(x) for x in v) if isinstance(v, list) else v
    return Case(**{k: tup(v) for k, v in d.items()})  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m mbarrier.hw.tma", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("emit")
    e.add_argument("dir", type=Path)
    c = sub.add_parser("collect")
    c.add_argument("dir", type=Path)
    c.add_argument("out", type=Path)
    c.add_argument("--device", default="unknown")
    c.add_argument("--toolchain", default="")
    args = p.parse_args(argv)
    if args.cmd == "emit":
        emit(args.dir)
    else:
        args.out.write_text(json.dumps(collect(args.dir, args.device, args.toolchain), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
