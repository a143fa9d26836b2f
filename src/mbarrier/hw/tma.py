"""Tensor-copy conformance cases (PTX ISA 5.5 Tensors, 9.7.9.25.5.2-3): known tensors, a tensor map
(the arguments of cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col), a PTX kernel per case, the records.

A load case copies one box twice into shared memory that a sentinel fills: copy A completes on an
mbarrier armed with exactly the bytes the simulator counts for the box (`box_bytes`, its out-of-bounds
fill included), copy B on one armed with 16 more. The kernel records whether A's phase completes (in a
bounded wait), whether B's completed before the kernel adds the missing 16 bytes with
mbarrier.complete_tx (after a delay that lets B land), and whether it completes after: together they
say the copy completes exactly `box_bytes`. A counting case (`count`, for layouts whose byte count is
the question) arms both mbarriers with COUNT_ARM bytes instead, lets both copies land, then completes
16 bytes at a time until each phase completes: the steps give the bytes each copy completed. Then the
kernel writes the flags and both shared-memory areas to `out`. A store case fills the box in shared
memory with a pattern, stores (or reduces) it into the tensor and the host reads the tensor back; a
prefetch case prefetches the box and leaves the tensor. A multicast case runs a cluster of two CTAs and
writes each CTA's areas. The same PTX runs on the GPU (`tools/record_tma.sh`: ptxas for sm_90a, the
CUDA driver encoding the map, tools/tma/run_cases.cu) and in the simulator
(tests/hw/test_tma_replay.py), so both see the same bytes; nothing here depends on the simulator's
tensor-copy model (`footprint` restates the H100's row pitch so that each area holds its box).

    python3 -m mbarrier.hw.tma emit DIR      # DIR/manifest.txt, DIR/<case>.ptx, .in, .tmap
    python3 -m mbarrier.hw.tma collect DIR OUT.json [--device NAME] [--toolchain TEXT]
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zlib
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from mbarrier.hw.recorder_cli import recorder_main
from mbarrier.hw.tma_case import (
    COUNT_ARM,
    COUNT_CAP,
    EXTRA_TX,
    FLAGS,
    SENTINEL,
    THREADS,
    Case,
    box_image,
    tensor,
)

RUNS = 3           # each case runs this often on the GPU: equal outputs show the hardware deterministic
SCHEMA = 1
KERNEL = "tma_case"

__all__ = ["CASES", "COUNT_ARM", "COUNT_CAP", "FLAGS", "SENTINEL", "THREADS", "Case", "box_image", "case_of",
           "collect", "digest", "emit", "ptx", "tensor", "unpack"]

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
    if case.kind == "prefetch":
        return head + "{\n" + _prefetch(case) + "}\n"
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
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r3], {COUNT_ARM if case.count else box};
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r4], {COUNT_ARM if case.count else box + EXTRA_TX};
    @%p4 bra WAIT;
{coords}{offsets}    mov.u16 %h3, {(1 << case.cluster) - 1};
    add.u32 %r10, %r2, {case.dst};
    add.u32 %r11, %r2, {area + case.dst};
{_tma_load(case, "%r10", "%r3")}{_tma_load(case, "%r11", "%r4")}WAIT:
{_counted() if case.count else _flagged()}DUMP:
    bar.sync 0;
    @%p0 bra WB2;
    bra COPY;
WB2:
{_wait("%r3", "%r16", "WD") if case.count else ""}{_wait("%r4", "%r15", "WC")}COPY:
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


def _prefetch(case: Case) -> str:
    """cp.async.bulk.prefetch.tensor of the box into L2 (a hint: the flags say the kernel got past it)."""
    coords, brace = _coords(case)
    mode = ".im2col" if case.im2col is not None else ".tile"
    offsets = "".join(f"    mov.u16 %h{i}, {o};\n" for i, o in enumerate(case.offsets))
    brace_off = ", {" + ", ".join(f"%h{i}" for i in range(len(case.offsets))) + "}" if case.offsets else ""
    return _REGS + f"""    ld.param.u64 %rd3, [out];
    mov.u64 %rd1, tmap;
    cvta.param.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p0, %r1, 0;
    @%p0 bra DONE;
{coords}{offsets}    cp.async.bulk.prefetch.tensor.{case.rank}d.L2.global{mode} [%rd1, {brace}]{brace_off};
    mov.u32 %r12, 1;
    st.global.v4.u32 [%rd3], {{%r12, %r12, %r12, %r12}};
DONE:
    ret;
"""


_DELAY = """    // let the copies land
    mov.u32 %r20, 0;
DELAY:
    nanosleep.u32 100;
    add.u32 %r20, %r20, 1;
    setp.lt.u32 %p2, %r20, 2000;
    @%p2 bra DELAY;
"""


def _flagged() -> str:
    """Thread 0 and the others wait for A; thread 0 then sees whether B completed early, adds its
    missing bytes and waits for it."""
    return _wait("%r3", "%r12", "WA") + f"""    mov.u32 %r13, 0;
    mov.u32 %r14, 0;
    @%p0 bra DUMP;
{_DELAY}    mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r4], 0;
    selp.u32 %r13, 1, 0, %p3;
    mbarrier.complete_tx.shared::cta.b64 [%r4], {EXTRA_TX};
""" + _wait("%r4", "%r14", "WB")


def _count(bar: str, steps: str, label: str) -> str:
    """16-byte complete_tx steps until `bar`'s phase 0 completes (at most COUNT_CAP) into `steps`."""
    return f"""    mov.u32 {steps}, 0;
{label}:
    mbarrier.test_wait.parity.shared::cta.b64 %p3, [{bar}], 0;
    @%p3 bra {label}_done;
    mbarrier.complete_tx.shared::cta.b64 [{bar}], 16;
    add.u32 {steps}, {steps}, 1;
    setp.lt.u32 %p2, {steps}, {COUNT_CAP};
    @%p2 bra {label};
{label}_done:
"""


def _counted() -> str:
    """Thread 0 lets both copies land and counts the bytes each left to complete; the others go on to
    the barrier (and wait for both phases after it)."""
    return f"""    mov.u32 %r13, 0;
    @%p0 bra DUMP;
{_DELAY}{_count("%r3", "%r12", "CA")}{_count("%r4", "%r14", "CB")}"""


def _store(case: Case) -> str:
    box = case.footprint
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
    add(Case("f16_interleave16B", "FLOAT16", (8, 10, 6), (0, 2, 1), box=(8, 4, 3), interleave="16B",
             count=True))
    add(Case("f16_interleave16B_estr", "FLOAT16", (8, 10, 6), (0, 1, 1), box=(8, 6, 2), estr=(1, 2, 1),
             interleave="16B", count=True))
    add(Case("f32_interleave32B", "FLOAT32", (8, 10, 6), (0, 3, 2), box=(8, 4, 2), interleave="32B",
             swizzle="32B", count=True))
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
    _cases_2(add)
    return c


def _cases_2(add: Callable[[Case], None]) -> None:
    """The second recording: what the first left open (probes of its disagreements) and more coverage."""
    # the box's first byte in global memory off 16 bytes (the u8 faults of the first recording)
    add(Case("f32_2d_count", "FLOAT32", (64, 32), (16, 8), box=(16, 8), count=True))  # the counting, checked
    add(Case("u8_2d_inside", "UINT8", (64, 8), (16, 2), box=(32, 4)))
    add(Case("u8_2d_ragged_row", "UINT8", (40, 12), (16, 2), box=(32, 6), pad=24))
    add(Case("u8_2d_swizzle128B", "UINT8", (256, 16), (128, 4), box=(128, 8), swizzle="128B"))
    add(Case("u16_2d_padded", "UINT16", (20, 12), (4, 2), box=(16, 6), pad=24))
    add(Case("u8_3d_oob_x_on16", "UINT8", (48, 10, 6), (32, 8, -1), box=(32, 4, 3)))
    add(Case("f32_2d_x_off16", "FLOAT32", (64, 32), (2, 4), box=(16, 8)))
    add(Case("f32_2d_x_neg_off16", "FLOAT32", (64, 32), (-6, 4), box=(16, 8)))
    add(Case("u8_store_x_off16", "UINT8", (64, 8), (8, 2), box=(16, 4), kind="store"))
    # rows narrower than the swizzle span: the span is the row pitch; an area too small for it
    add(Case("bf16_swizzle128B_half_inner_overflow", "BFLOAT16", (256, 40), (8, 4), box=(32, 16),
             swizzle="128B", smem=1024))
    add(Case("f32_swizzle64B_quarter", "FLOAT32", (64, 20), (8, 3), box=(4, 8), swizzle="64B"))
    add(Case("bf16_swizzle128B_quarter_dst256", "BFLOAT16", (256, 40), (8, 4), box=(16, 8),
             swizzle="128B", dst=256))
    add(Case("bf16_store_swizzle64B_half", "BFLOAT16", (128, 16), (16, 4), box=(16, 8), swizzle="64B",
             kind="store"))
    add(Case("bf16_store_swizzle32B", "BFLOAT16", (128, 16), (16, 4), box=(16, 8), swizzle="32B",
             kind="store", dst=128))
    add(Case("bf16_im2col_swizzle128B_half", "BFLOAT16", (32, 6, 6, 1), (0, 0, 0, 0),
             im2col=(32, 12, (0, 0), (-1, -1)), offsets=(0, 1), swizzle="128B"))
    # the destination's alignment: 16 bytes, and off the swizzle's 128-byte lines
    for swz, box in (("NONE", (16, 8)), ("64B", (32, 8)), ("128B", (64, 8))):
        for dst in (16, 64, 512):
            add(Case(f"bf16_swizzle{swz}_dst{dst}", "BFLOAT16", (256, 40), (32, 4), box=box, swizzle=swz,
                     dst=dst))
    add(Case("f32_2d_dst8", "FLOAT32", (64, 32), (16, 8), box=(16, 8), dst=8))
    # interleaved layouts: probes with room for whatever the hardware writes, counting its bytes
    def il(name: str, dtype: str, dims: tuple[int, ...], coords: tuple[int, ...], box: tuple[int, ...],
           unit: str, swizzle: str = "NONE", estr: tuple[int, ...] = ()) -> None:
        add(Case(name, dtype, dims, coords, box=box, estr=estr, swizzle=swizzle, interleave=unit, smem=8192,
                 count=True))

    il("f16_il16_a", "FLOAT16", (8, 32, 4), (0, 2, 1), (8, 4, 2), "16B")
    il("f16_il16_box0_16", "FLOAT16", (8, 32, 4), (0, 2, 1), (16, 4, 2), "16B")
    il("f16_il16_box1_16", "FLOAT16", (8, 32, 4), (0, 2, 1), (8, 16, 2), "16B")
    il("f16_il16_box1_2", "FLOAT16", (8, 32, 4), (0, 2, 1), (8, 2, 2), "16B")
    il("f16_il16_estr0", "FLOAT16", (8, 32, 4), (0, 2, 1), (8, 4, 2), "16B", estr=(2, 1, 1))
    il("f16_il16_edge", "FLOAT16", (8, 32, 4), (0, 28, 1), (8, 4, 2), "16B")
    il("f16_il16_4d", "FLOAT16", (8, 6, 5, 3), (0, 1, 1, 1), (8, 2, 2, 2), "16B")
    il("f16_il16_swizzle32B", "FLOAT16", (8, 32, 4), (0, 2, 1), (8, 4, 2), "16B", swizzle="32B")
    il("u8_il16_a", "UINT8", (16, 32, 4), (0, 2, 1), (16, 4, 2), "16B")
    il("f32_il32_a", "FLOAT32", (8, 32, 4), (0, 3, 1), (8, 4, 2), "32B", swizzle="32B")
    il("f32_il32_noswizzle", "FLOAT32", (8, 32, 4), (0, 3, 1), (8, 4, 2), "32B")
    il("f32_il32_box1_16", "FLOAT32", (8, 32, 4), (0, 3, 1), (8, 16, 2), "32B", swizzle="32B")
    # OOB-NaN of the other float types; im2col in 5 dimensions; 5d with a swizzle
    add(Case("tf32_2d_oob_nan", "TFLOAT32", (64, 32), (-8, 2), box=(16, 4), fill="NAN_REQUEST_ZERO_FMA"))
    add(Case("f32ftz_2d_oob_nan", "FLOAT32_FTZ", (64, 32), (60, 30), box=(16, 4),
             fill="NAN_REQUEST_ZERO_FMA"))
    add(Case("f16_im2col_3d_nan", "FLOAT16", (16, 10, 2), (0, -1, 0), im2col=(16, 12, (-1,), (-1,)),
             offsets=(1,), fill="NAN_REQUEST_ZERO_FMA"))
    add(Case("f16_im2col_5d", "FLOAT16", (8, 4, 4, 3, 2), (0, -1, 0, 0, 0), im2col=(8, 20, (-1, -1, 0),
             (0, 0, 0)), offsets=(0, 1, 0)))
    add(Case("bf16_5d_swizzle64B", "BFLOAT16", (32, 3, 3, 2, 2), (0, 1, 1, 0, 1), box=(32, 2, 2, 2, 1),
             swizzle="64B"))
    # multicast: im2col, out of bounds with the OOB-NaN
    add(Case("bf16_im2col_multicast", "BFLOAT16", (16, 8, 2), (0, -1, 0), im2col=(16, 8, (-1,), (-1,)),
             offsets=(1,), cluster=2))
    add(Case("f32_multicast_oob_nan", "FLOAT32", (64, 32), (56, -2), box=(16, 8), fill="NAN_REQUEST_ZERO_FMA",
             cluster=2))
    # stores in 1, 4 and 5 dimensions; swizzled and clipped; the other reductions
    add(Case("u16_store_1d", "UINT16", (200,), (184,), box=(32,), kind="store"))
    add(Case("f32_store_4d", "FLOAT32", (8, 6, 5, 4), (4, 4, 3, 2), box=(8, 3, 3, 2), kind="store"))
    add(Case("u16_store_5d", "UINT16", (16, 4, 3, 3, 2), (8, 1, 0, 2, 1), box=(8, 2, 2, 2, 2), kind="store"))
    add(Case("f16_store_swizzle128B_oob", "FLOAT16", (96, 12), (64, 8), box=(64, 8), swizzle="128B",
             kind="store"))
    for op in ("inc", "dec", "and", "or", "xor"):
        add(Case(f"u32_reduce_{op}", "UINT32", (40, 20), (8, 4), box=(16, 8), kind=f"reduce.{op}"))
    add(Case("s32_reduce_max_4d", "INT32", (8, 6, 5, 4), (0, 4, 3, 2), box=(8, 3, 3, 2), kind="reduce.max"))
    add(Case("u64_reduce_add", "UINT64", (16, 8), (4, 2), box=(8, 4), kind="reduce.add"))
    add(Case("s64_reduce_min", "INT64", (16, 8), (8, 6), box=(8, 4), kind="reduce.min"))
    add(Case("f16_reduce_add", "FLOAT16", (64, 8), (0, 0), box=(64, 8), kind="reduce.add"))
    add(Case("bf16_reduce_add_swizzle64B", "BFLOAT16", (64, 8), (32, 0), box=(32, 8), swizzle="64B",
             kind="reduce.add"))
    add(Case("f16_reduce_min", "FLOAT16", (64, 8), (0, 0), box=(64, 8), kind="reduce.min"))
    # prefetch (a hint: the kernel gets past it)
    add(Case("f32_prefetch_2d", "FLOAT32", (64, 32), (16, 8), box=(16, 8), kind="prefetch"))
    add(Case("f16_prefetch_im2col", "FLOAT16", (16, 10, 2), (0, -1, 0), im2col=(16, 12, (-1,), (-1,)),
             offsets=(1,), kind="prefetch"))
    _cases_3(add)


#: f32 bit patterns where tf32 rounding and flushing show: ties (even and odd), just off a tie, NaNs
#: whose payload is in the low 13 bits only, infinities, the largest finite, subnormals, -0.
_SPECIALS = (0x3F801000, 0x3F803000, 0xBF801000, 0x3F800FFF, 0x3F801001, 0x7F800001, 0x7FC00000,
             0x7F800000, 0xFF800000, 0x7F7FFFFF, 0x00001FFF, 0x00001000, 0x00000FFF, 0x80001000,
             0x3F7FF000, 0x80000000)


def _cases_3(add: Callable[[Case], None]) -> None:
    """The third recording: what the second left unrecorded."""
    for ty in ("TFLOAT32", "TFLOAT32_FTZ", "FLOAT32_FTZ"):
        add(Case(f"{ty.lower()}_specials", ty, (64, 4), (0, 0), box=(64, 4), data=_SPECIALS))
    add(Case("tf32_store_specials", "TFLOAT32", (64, 4), (0, 0), box=(64, 4), kind="store", data=_SPECIALS))
    add(Case("f32ftz_reduce_add_subnormal", "FLOAT32_FTZ", (64, 4), (0, 0), box=(64, 4), kind="reduce.add",
             data=(0x00001000, 0x3F800000, 0x80000FFF, 0x00400000)))
    # interleaved: rank 4 with boxDim[1] != boxDim[2], rank 5, out of bounds in each dimension

    def il(name: str, dims: tuple[int, ...], coords: tuple[int, ...], box: tuple[int, ...]) -> None:
        add(Case(name, "FLOAT16", dims, coords, box=box, interleave="16B", smem=8192, count=True))

    il("f16_il16_4d_b1_3", (8, 6, 5, 3), (0, 1, 1, 1), (8, 3, 2, 2))
    il("f16_il16_4d_b2_3", (8, 6, 5, 3), (0, 1, 1, 1), (8, 2, 3, 2))
    il("f16_il16_5d", (8, 4, 3, 3, 2), (0, 1, 1, 1, 0), (8, 2, 2, 2, 2))
    il("f16_il16_oob_last", (8, 32, 4), (0, 2, 3), (8, 4, 2))
    il("f16_il16_oob_collapsed", (8, 32, 4), (0, 40, 1), (8, 4, 2))
    il("f16_il16_neg_units", (8, 32, 4), (-2, 2, 1), (8, 4, 2))
    # starts off 16 bytes where the second recording did not look: im2col channels, a prefetch
    add(Case("f16_im2col_c_off16", "FLOAT16", (16, 10, 2), (4, -1, 0), im2col=(8, 12, (-1,), (-1,)),
             offsets=(1,)))
    add(Case("f32_prefetch_x_off16", "FLOAT32", (64, 32), (2, 8), box=(16, 8), kind="prefetch"))
    # a store's shared source off 128 bytes
    for dst in (16, 64):
        add(Case(f"bf16_store_src{dst}", "BFLOAT16", (128, 16), (32, 4), box=(64, 8), kind="store", dst=dst))


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
        same = all(r == first for r in runs)
        row: dict[str, object] = {
            "case": asdict(case), "input_sha256": digest(tensor(case)), "deterministic": same,
            "runs": len(runs), "out": _pack(first[:case.out_bytes]),
            "tensor": "" if case.kind == "load" else _pack(first[case.out_bytes:])}
        if not same:  # every run's bytes, to see what varies
            row["outs"] = [_pack(r) for r in runs]
        results.append(row)
    return {"schema": SCHEMA, "device": device, "toolchain": toolchain, "kernel": KERNEL, "results": results}


def case_of(d: dict[str, object]) -> Case:
    """A Case from its record (`asdict` turned tuples into lists)."""
    def tup(v: object) -> object:
        return tuple(tup(x) for x in v) if isinstance(v, list) else v
    return Case(**{k: tup(v) for k, v in d.items()})  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    return recorder_main("python3 -m mbarrier.hw.tma", __doc__ or "", emit, collect, argv)


if __name__ == "__main__":
    sys.exit(main())
