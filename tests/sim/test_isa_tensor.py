"""Tensor copies in kernels (PTX ISA 9.7.9.25.5.2-4): cp.async.bulk.tensor loads complete the box's bytes
(out-of-bounds fill included) on the mbarrier, land swizzled, multicast to a cluster; stores and
reductions write the elements inside the tensor under bulk groups; the race tracker sees a TMA store of
shared memory written without fence.proxy.async; forms outside the model stop loudly."""

from __future__ import annotations

import struct

import pytest

from mbarrier import explore, sim
from mbarrier.sim.launchspec import Launch, Pointer, TensorMapArg, TensorMapRef
from mbarrier.sim.race_report import ProxyFence
from mbarrier.sim.races import track
from mbarrier.sim.tensorcopy import swizzle
from mbarrier.sim.tensormap import TensorMap

from .helpers import module, words

REGS = ".reg .pred %p<4>;\n.reg .b32 %r<24>;\n.reg .b64 %rd<16>;\n.reg .b16 %h<2>;\n"
PARAMS = ".param .align 64 .b8 tmap[128], .param .u64 out"


def _load_kernel(copy: str, expect: int, dump: int, smem: int = 8192, setup: str = "") -> str:
    """Thread 0 initializes `bar`, arms it with `expect` bytes and issues `copy` (%r2: sm + the
    destination offset set by `setup`, %rd1: the tensor map's generic address); every thread waits for
    phase 0; thread 0 writes the first `dump` bytes of shared memory to out."""
    return REGS + f"""
    .shared .align 1024 .b8 sm[{smem}];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd0, [out];
    mov.u32 %r1, %tid.x;
    mov.u64 %rd1, tmap;
    cvta.param.u64 %rd1, %rd1;
    mov.u32 %r2, sm;
    {setup}
    setp.ne.u32 %p1, %r1, 0;
    @!%p1 mbarrier.init.shared::cta.b64 [bar], 1;
    bar.sync 0;
    @%p1 bra WAIT;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], {expect};
    {copy}
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    @%p1 bra DONE;
    mov.u32 %r20, 0;
DUMP:
    mov.u32 %r21, sm;  add.u32 %r21, %r21, %r20;  ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [%r21];
    cvt.u64.u32 %rd3, %r20;  add.s64 %rd4, %rd0, %rd3;  st.global.v4.u32 [%rd4], {{%r10, %r11, %r12, %r13}};
    add.u32 %r20, %r20, 16;  setp.lt.u32 %p3, %r20, {dump};  @%p3 bra DUMP;
DONE:
    ret;
"""


def _launch(body: str, tm: TensorMap, tensor: bytes, out: int, *, block: int = 1, grid: int = 1,
            cluster: int | None = None, races: bool = False, seed: int = 0) -> explore.RunResult:
    spec = Launch(buffers={"g": sim.Buffer(len(tensor), tensor), "out": sim.Buffer(out)},
                  tensor_maps={"t": TensorMapArg(Pointer("g"), tm)},
                  params={"tmap": TensorMapRef("t"), "out": Pointer("out")})
    m = sim.launch(module(body, params=PARAMS), grid=grid, block=block, cluster=cluster, spec=spec)
    if races:
        track(m)
    return explore.run(m, explore.RandomScheduler(seed))


def _f32_tensor(n: int) -> bytes:
    return b"".join(struct.pack("<f", float(i)) for i in range(n))


def _map2d(dims: tuple[int, int], box: tuple[int, int], dtype: str = "FLOAT32", swz: str = "NONE",
           fill: str = "NONE", esize: int = 4) -> TensorMap:
    return TensorMap("tiled", f"CU_TENSOR_MAP_DATA_TYPE_{dtype}", 2, 0, dims, (dims[0] * esize,), (1, 1), box,
                     swizzle=f"CU_TENSOR_MAP_SWIZZLE_{swz}", oobFill=f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{fill}")


LOAD_2D = ("mov.u32 %r3, {x};  mov.u32 %r4, {y};\n    "
           "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes{hint} "
           "[%r2], [%rd1, {{%r3, %r4}}], [bar]{policy};")


@pytest.mark.parametrize("x, y", [(16, 8), (-4, -2), (56, 30)])
def test_tile_load_moves_the_box_and_completes_its_bytes(x: int, y: int) -> None:
    """A 16 x 8 f32 box of a 64 x 32 tensor: in bounds, or partly outside (zeros there); the phase
    completes with expect_tx of the whole box's 512 bytes, the filled ones included."""
    tm = _map2d((64, 32), (16, 8))
    copy = LOAD_2D.format(x=x, y=y, hint="", policy="")
    r = _launch(_load_kernel(copy, 512, 512), tm, _f32_tensor(64 * 32), 512, block=2)
    assert r.ok, r.message
    got = [struct.unpack("<f", v.to_bytes(4, "little"))[0] for v in words(r.machine, "out", 128)]
    want = [float((y + i) * 64 + x + j) if 0 <= y + i < 32 and 0 <= x + j < 64 else 0.0
            for i in range(8) for j in range(16)]
    assert got == want


def test_cache_hint_is_accepted_and_oob_nan_fill() -> None:
    tm = _map2d((64, 32), (16, 8), fill="NAN_REQUEST_ZERO_FMA")
    copy = "mov.u64 %rd9, 0x1000000000000000;\n    " + LOAD_2D.format(x=60, y=0, hint=".L2::cache_hint",
                                                                       policy=", %rd9")
    r = _launch(_load_kernel(copy, 512, 64), tm, _f32_tensor(64 * 32), 64)
    assert r.ok, r.message
    assert words(r.machine, "out", 16) == [0x42700000, 0x42740000, 0x42780000, 0x427C0000] + [0x7FF77FF7] * 12


def test_expect_tx_other_than_the_box_is_stuck() -> None:
    """The planted bug of the issue: expect_tx bytes different from the box's. 1024 expected, the box's
    512 come: the phase waits for 512 more bytes forever."""
    tm = _map2d((64, 32), (16, 8))
    r = _launch(_load_kernel(LOAD_2D.format(x=0, y=0, hint="", policy=""), 1024, 16), tm,
                _f32_tensor(64 * 32), 16, block=2)
    assert r.outcome == "stuck" and len(r.stuck) == 2
    assert all(s.state.endswith("512 transaction bytes still outstanding") for s in r.stuck), r.stuck


@pytest.mark.parametrize("swz, span", [("32B", 32), ("64B", 64), ("128B", 128)])
@pytest.mark.parametrize("dst", [0, 384])
def test_swizzled_load_lands_at_the_xor_addresses(swz: str, span: int, dst: int) -> None:
    tm = _map2d((256, 16), (span // 2, 8), "BFLOAT16", swz, esize=2)
    tensor = b"".join(struct.pack("<H", i) for i in range(256 * 16))
    copy = LOAD_2D.format(x=32, y=4, hint="", policy="")
    box = span // 2 * 2 * 8
    r = _launch(_load_kernel(copy, box, 2048, setup=f"add.u32 %r2, %r2, {dst};"), tm, tensor, 2048)
    assert r.ok, r.message
    base, _ = r.machine.buffers["out"]
    smem = r.machine.gmem.read(base, 2048)
    bits = {"32B": 1, "64B": 2, "128B": 3}[swz]
    for i in range(8):
        for j in range(span // 2):
            at = swizzle(dst + i * span + 2 * j, bits)
            assert int.from_bytes(smem[at:at + 2], "little") == (4 + i) * 256 + 32 + j


MULTICAST = REGS + """
    .shared .align 1024 .b8 sm[512];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd0, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r9, %cluster_ctarank;
    mov.u64 %rd1, tmap;  cvta.param.u64 %rd1, %rd1;
    mov.u32 %r2, sm;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SYNC;
    mbarrier.init.shared::cta.b64 [bar], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 512;
SYNC:
    barrier.cluster.arrive.release;
    barrier.cluster.wait.acquire;
    setp.ne.or.u32 %p3, %r9, 0, %p1;
    @%p3 bra WAIT;
    mov.u16 %h1, 3;  mov.u32 %r3, 8;  mov.u32 %r4, 4;
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
        [%r2], [%rd1, {%r3, %r4}], [bar], %h1;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    @%p1 bra DONE;
    mul.wide.u32 %rd5, %r9, 512;  add.s64 %rd0, %rd0, %rd5;
    mov.u32 %r20, 0;
DUMP:
    mov.u32 %r21, sm;  add.u32 %r21, %r21, %r20;  ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r21];
    cvt.u64.u32 %rd3, %r20;  add.s64 %rd4, %rd0, %rd3;  st.global.v4.u32 [%rd4], {%r10, %r11, %r12, %r13};
    add.u32 %r20, %r20, 16;  setp.lt.u32 %p3, %r20, 512;  @%p3 bra DUMP;
DONE:
    ret;
"""


def test_multicast_fills_every_cta_of_the_mask_and_their_barriers() -> None:
    """A 2-CTA cluster: rank 0 issues the copy with ctaMask 0b11; both CTAs' `bar` complete 512 bytes and
    both hold the box at the same offset."""
    tm = _map2d((64, 32), (16, 8))
    for seed in range(3):
        r = _launch(MULTICAST, tm, _f32_tensor(64 * 32), 1024, grid=2, cluster=2, block=2, seed=seed)
        assert r.ok, r.message
        got = words(r.machine, "out", 256)
        want = [struct.unpack("<I", struct.pack("<f", float((4 + i) * 64 + 8 + j)))[0]
                for i in range(8) for j in range(16)]
        assert got[:128] == want and got[128:] == want


STORE_KERNEL = REGS + """
    .shared .align 128 .b8 sm[512];
    mov.u32 %r1, %tid.x;
    mov.u64 %rd1, tmap;  cvta.param.u64 %rd1, %rd1;
    shl.b32 %r2, %r1, 2;  mov.u32 %r3, sm;  add.u32 %r3, %r3, %r2;
    add.u32 %r4, %r1, 1000;  st.shared.u32 [%r3], %r4;
    {fence}
    bar.sync 0;
    setp.ne.u32 %p1, %r1, 0;  @%p1 bra DONE;
    mov.u32 %r5, sm;  mov.u32 %r6, {x};  mov.u32 %r7, {y};
    {op} [%rd1, {{%r6, %r7}}], [%r5];
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
DONE:
    ret;
"""


@pytest.mark.parametrize("op, initial, want", [
    ("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", 5, lambda v, old: v),
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group", 5, lambda v, old: v + old),
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.max.bulk_group", 1010, lambda v, old: max(v, old)),
])
def test_store_and_reduce_write_only_inside_the_tensor(op: str, initial: int, want: object) -> None:
    """A 16 x 8 u32 box stored at (56, 28) of a 64 x 32 tensor: its last 8 columns and 4 rows are
    outside and are not written (the tensor's other elements keep `initial`)."""
    tm = TensorMap("tiled", "CU_TENSOR_MAP_DATA_TYPE_UINT32", 2, 0, (64, 32), (256,), (1, 1), (16, 8))
    body = STORE_KERNEL.format(fence="fence.proxy.async.shared::cta;", x=56, y=28, op=op)
    r = _launch(body, tm, struct.pack("<I", initial) * (64 * 32), 16, block=128)
    assert r.ok, r.message
    base, _ = r.machine.buffers["g"]
    got = [r.machine.gmem.load(base + 4 * k, 4) for k in range(64 * 32)]
    for row in range(32):
        for col in range(64):
            i, j = row - 28, col - 56
            inside = 0 <= i < 8 and 0 <= j < 16
            assert got[row * 64 + col] == (want(1000 + i * 16 + j, initial) if inside else initial)  # type: ignore


def test_tma_store_of_generic_writes_without_proxy_fence_is_a_race() -> None:
    """The planted bug: shared memory written by st.shared and read by a TMA store with no
    fence.proxy.async between (bar.sync orders the threads, not the proxies)."""
    tm = TensorMap("tiled", "CU_TENSOR_MAP_DATA_TYPE_UINT32", 2, 0, (64, 32), (256,), (1, 1), (16, 8))
    op = "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"
    bad = _launch(STORE_KERNEL.format(fence="", x=0, y=0, op=op), tm, bytes(64 * 32 * 4), 16, block=128,
                  races=True)
    assert bad.outcome == "race" and bad.rule == ProxyFence.rule, bad.message
    good = _launch(STORE_KERNEL.format(fence="fence.proxy.async.shared::cta;", x=0, y=0, op=op), tm,
                   bytes(64 * 32 * 4), 16, block=128, races=True)
    assert good.ok, good.message


def test_im2col_load_in_a_kernel() -> None:
    # NWC: C = 16 f16 channels, W = 10, N = 2; corners -1 / -1 (pad 1, 3 taps); 8 pixels from w = -1.
    tm = TensorMap("im2col", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 3, 0, (16, 10, 2), (32, 320), (1, 1, 1),
                   pixelBoxLowerCorner=(-1,), pixelBoxUpperCorner=(-1,), channelsPerPixel=16,
                   pixelsPerColumn=12)
    copy = ("mov.u32 %r3, 0;  mov.u32 %r4, -1;  mov.u32 %r5, 0;  mov.u16 %h1, 1;\n    "
            "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
            "[%r2], [%rd1, {%r3, %r4, %r5}], [bar], {%h1};")
    tensor = b"".join(struct.pack("<H", i) for i in range(16 * 10 * 2))
    r = _launch(_load_kernel(copy, 12 * 32, 12 * 32), tm, tensor, 12 * 32)
    assert r.ok, r.message
    base, _ = r.machine.buffers["out"]
    data = r.machine.gmem.read(base, 12 * 32)
    # filter base w = -1..8 (the box is [-1, 10 - 1 - 1]) then image 1 from w = -1; offset 1: w + 1
    ws = [(w, 0) for w in range(-1, 9)] + [(-1, 1), (0, 1)]
    for p, (w, n) in enumerate(ws):
        at = w + 1
        row = [int.from_bytes(data[32 * p + 2 * c:32 * p + 2 * c + 2], "little") for c in range(16)]
        assert row == [(n * 10 + at) * 16 + c for c in range(16)], p


@pytest.mark.parametrize("form, why", [
    ("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes "
     "[%r2], [%rd1, {%r3, %r4, %r3, %r4, %r3}], [bar];", ".tile::gather4"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2 "
     "[%r2], [%rd1, {%r3, %r4}], [bar];", ".cta_group::2"),
])
def test_sm100_forms_stop_loudly(form: str, why: str) -> None:
    tm = _map2d((64, 32), (16, 8))
    r = _launch(_load_kernel("mov.u32 %r3, 0;  mov.u32 %r4, 0;\n    " + form, 512, 16), tm,
                _f32_tensor(64 * 32), 16)
    assert r.outcome == "unsupported" and why in r.message, r.message


def test_bytes_that_are_no_tensor_map_are_unsupported_not_a_finding() -> None:
    body = _load_kernel(LOAD_2D.format(x=0, y=0, hint="", policy=""), 512, 16)
    m = sim.launch(module(body, params=PARAMS), args={"tmap": bytes(128), "out": sim.Buffer(16)})
    r = explore.run(m, explore.RoundRobin())
    assert r.outcome == "unsupported" and "not a tensor map" in r.message, r.message


DEVICE_MAP = REGS + """
    .shared .align 128 .b8 tm[128];
    .shared .align 1024 .b8 sm[1024];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd0, [out];
    ld.param.u64 %rd10, [scratch];
    ld.param.u64 %rd11, [data];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;  mov.u32 %r3, tm;  add.u32 %r3, %r3, %r2;
    st.shared.u32 [%r3], 0;                     // 32 lanes zero the 128 bytes (Triton's way)
    bar.warp.sync -1;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra COPY;
    mov.u32 %r4, tm;
    tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r4], %rd11;
    tensormap.replace.tile.rank.shared::cta.b1024.b32 [%r4], 1;
    tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r4], 0, 8;
    tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r4], 1, 4;
    tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r4], 0, 32;
    tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r4], 1, 16;
    tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%r4], 0, 128;
    tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%r4], 0, 1;
    tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%r4], 1, 1;
    tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%r4], 7;
    tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%r4], 0;
COPY:
    bar.warp.sync -1;
    mov.u32 %r5, tm;
    tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned
        [%rd10], [%r5], 128;
    fence.proxy.tensormap::generic.acquire.gpu [%rd10], 128;
    @%p1 bra DONE;
    mbarrier.init.shared::cta.b64 [bar], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 128;
    mov.u32 %r6, sm;  mov.u32 %r7, 8;  mov.u32 %r8, 2;
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
        [%r6], [%rd10, {%r7, %r8}], [bar];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    mov.u32 %r20, 0;
DUMP:
    mov.u32 %r21, sm;  add.u32 %r21, %r21, %r20;  ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r21];
    cvt.u64.u32 %rd3, %r20;  add.s64 %rd4, %rd0, %rd3;  st.global.v4.u32 [%rd4], {%r10, %r11, %r12, %r13};
    add.u32 %r20, %r20, 16;  setp.lt.u32 %p3, %r20, 128;  @%p3 bra DUMP;
DONE:
    ret;
"""


def test_a_tensor_map_built_on_the_device_with_tensormap_replace() -> None:
    """Triton's way: zero 128 bytes of shared memory, tensormap.replace every field, copy the map to
    global memory with tensormap.cp_fenceproxy, acquire it, load an 8 x 4 f32 box through it."""
    data = _f32_tensor(32 * 16)
    m = sim.launch(module(DEVICE_MAP, params=".param .u64 out, .param .u64 scratch, .param .u64 data"),
                   block=32, args={"out": sim.Buffer(128), "scratch": sim.Buffer(128),
                                   "data": sim.Buffer(len(data), data)})
    r = explore.run(m, explore.RandomScheduler(1))
    assert r.ok, r.message
    got = [struct.unpack("<f", v.to_bytes(4, "little"))[0] for v in words(r.machine, "out", 32)]
    assert got == [float((2 + i) * 32 + 8 + j) for i in range(4) for j in range(8)]


def test_a_half_built_tensor_map_is_the_kernels_fault() -> None:
    body = DEVICE_MAP.replace("    tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r4], 1, 4;\n", "")
    m = sim.launch(module(body, params=".param .u64 out, .param .u64 scratch, .param .u64 data"),
                   block=32, args={"out": sim.Buffer(128), "scratch": sim.Buffer(128),
                                   "data": sim.Buffer(2048)})
    r = explore.run(m, explore.RandomScheduler(1))
    assert r.outcome == "violation" and "boxDim[1] = 0" in r.message, r.message


@pytest.mark.parametrize("fence, ok", [
    ("fence.proxy.async;", True), ("fence.proxy.async.shared::cta;", True),
    ("fence.proxy.async.shared::cluster;", True), ("fence.proxy.async.global;", False),
])
def test_a_proxy_fence_covers_only_its_state_space(fence: str, ok: bool) -> None:
    """fence.proxy.async{.global,.shared::{cta,cluster}}: a fence of global memory does not make the
    generic writes of shared memory visible to the async proxy (the TMA store reads them)."""
    tm = TensorMap("tiled", "CU_TENSOR_MAP_DATA_TYPE_UINT32", 2, 0, (64, 32), (256,), (1, 1), (16, 8))
    op = "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"
    r = _launch(STORE_KERNEL.format(fence=fence, x=0, y=0, op=op), tm, bytes(64 * 32 * 4), 16, block=128,
                races=True)
    assert r.ok == ok, r.message
    if not ok:
        assert r.rule == ProxyFence.rule
