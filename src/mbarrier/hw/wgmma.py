"""wgmma.mma_async conformance cases (PTX ISA 9.7.15), wgmma.mma_async.sp (9.7.15.6) among them: known
inputs, a PTX kernel per case, the records.

Each case is one wgmma.mma_async of a chosen form and layout. Its inputs are a shared-memory image (the A
and B matrices placed in a canonical layout of 9.7.15.5.1.2.1.3 amid junk bytes the instruction must not
read), each thread's A fragment (register forms) and accumulator. The kernel (`ptx`) copies the image into
shared memory, loads its registers, runs the instruction once and stores its accumulator registers. The
same PTX runs on the GPU (`tools/record_wgmma.sh`, through the CUDA driver) and in the simulator
(tests/hw/test_wgmma_replay.py), so both see the same bytes and descriptors. A sparse case also loads each
thread's metadata register: the kept positions of every chunk of the unpacked A, placed by the layout
`meta_position` states, and junk in the lanes the selector leaves out.

This module derives the layouts and the fragments from the ISA's tables on its own (CuTe-style shapes and
strides, the CLayout of the accumulator), apart from `mbarrier.sim.mma`, so a test of one against the
other is not circular.

    python3 -m mbarrier.hw.wgmma emit DIR       # DIR/manifest.txt, DIR/<case>.ptx, DIR/<case>.in
    python3 -m mbarrier.hw.wgmma collect DIR OUT.json [--device NAME] [--toolchain TEXT]  # -> records
"""

from __future__ import annotations

import base64
import hashlib
import random
import sys
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mbarrier.hw.recorder_cli import recorder_main
from mbarrier.hw.wgmma_case import BY_NAME as BY_NAME
from mbarrier.hw.wgmma_case import CASES as CASES
from mbarrier.hw.wgmma_case import Case as Case
from mbarrier.spec import wgmma as spec

THREADS = 128
RUNS = 3  # each case runs this often on the GPU: equal outputs show the hardware deterministic
SCHEMA = 1
KERNEL = "wgmma_case"


# -- layouts (9.7.15.5.1.2.1.3: CuTe shapes and strides, swizzle on the byte address) ------------------------
def _eval(coord: int, shape: tuple[int, ...], stride: tuple[int, ...]) -> int:
    """A coordinate of a (colexicographic) CuTe mode: its offset."""
    off = 0
    for s, d in zip(shape, stride, strict=True):
        off += (coord % s) * d
        coord //= s
    return off


@dataclass(frozen=True)
class Layout:
    """A matrix's canonical layout: major-ness, swizzle width (bytes, None), the leading and stride byte
    offsets, and its start in the shared-memory image."""

    transposed: bool
    swizzle: int | None
    lbo: int
    sbo: int
    start: int

    def element(self, mn: int, k: int, bits: int) -> tuple[int, int]:
        """Byte address and bit (for .b1) of element (mn, k): the table's layout in elements of `bits`,
        then the swizzle on the byte address."""
        t = 128 // bits                       # T: elements in 16 bytes
        lbo, sbo = self.lbo * 8 // bits, self.sbo * 8 // bits   # byte offsets in elements
        w = (self.swizzle or 16) // 16        # 16-byte units in a swizzle row (1 for none)
        if not self.transposed:
            if self.swizzle is None:   # ((8,m),(T,2k)):((1T,SBO),(1,LBO))
                off = _eval(mn, (8, 1 << 20), (t, sbo)) + _eval(k, (t, 1 << 20), (1, lbo))
            else:                      # ((8,m),(T,2k)):((wT,SBO),(1,T))
                off = _eval(mn, (8, 1 << 20), (w * t, sbo)) + _eval(k, (t, 1 << 20), (1, t))
        elif self.swizzle is None:     # ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
            off = _eval(mn, (t, 1, 1 << 20), (1, t, sbo)) + _eval(k, (8, 1 << 20), (t, lbo))
        else:                          # ((T,w,m),(8,k)):((1,T,LBO),(wT,SBO))
            off = _eval(mn, (t, w, 1 << 20), (1, t, lbo)) + _eval(k, (8, 1 << 20), (w * t, sbo))
        bit = off * bits
        addr = self.start + bit // 8
        if self.swizzle is not None:
            addr ^= ((addr >> 7) & (w - 1)) << 4
        return addr, bit % 8

    def descriptor(self) -> int:
        mode = {None: 0, 128: 1, 64: 2, 32: 3}[self.swizzle]
        return ((self.lbo & 0x3FFFF) >> 4) << 16 | ((self.sbo & 0x3FFFF) >> 4) << 32 | mode << 62


def _layout(rows: int, transposed: bool, swizzle: int | None, start: int, bits: int, flip: bool,
            kbytes: int = 32) -> tuple[Layout, int]:
    """A dense canonical layout of `rows` (M or N) x `kbytes` of K at `start`, and the bytes it spans.
    `flip`: the other of the two natural orders of the core matrices (both are legal; cases use both).
    K-major swizzled rows hold all K (a swizzle at least `kbytes` wide) but in "raw" cases."""
    kc = kbytes // 16            # 16-byte columns of K (K-major), groups of 8 K-rows (MN-major, 16-bit)
    if not transposed:
        if swizzle is None:
            groups = -(-rows // 8)
            lbo, sbo = (128, 128 * kc) if not flip else (groups * 128, 128)
            return Layout(False, None, lbo, sbo, start), groups * 128 * kc
        if swizzle < kbytes:   # "raw" cases: 8 rows at 512 bytes, all junk; K past W at LBO 4096
            return Layout(False, swizzle, 4096, 512, start), 8192
        atoms = -(-rows // 8)
        return Layout(False, swizzle, 16, 8 * swizzle, start), atoms * 8 * swizzle
    per = 128 // bits  # elements of M/N in 16 bytes
    kgroups = kbytes * 8 // bits // 8
    if swizzle is None:
        blocks = -(-rows // per)
        lbo, sbo = (blocks * 128, 128) if not flip else (128, 128 * kgroups)
        return Layout(True, None, lbo, sbo, start), blocks * 128 * kgroups
    w = swizzle // 16
    blocks = -(-rows // (per * w))
    return (Layout(True, swizzle, kgroups * 8 * swizzle, 8 * swizzle, start),
            blocks * kgroups * 8 * swizzle)


# -- fragments (9.7.15.5.1.1) ----------------------------------------------------------------------
def d_position(tid: int, i: int) -> tuple[int, int]:
    """Element i of thread tid's accumulator: (row, column) of the 64 x N matrix. The CLayout of 9.7.15.5.1.1
    (Figure "WGMMA .m64nNk* register fragment layout for accumulator matrix D") as CuTe writes it:
    threads ((4,8,4):(128,1,16)), values ((2,2,N/8):(64,8,512)) on the column-major offset m + 64 n."""
    off = _eval(tid, (4, 8, 4), (128, 1, 16)) + _eval(i, (2, 2, 1 << 10), (64, 8, 512))
    return off % 64, off // 64


def a_position(tid: int, reg: int, byte: int) -> tuple[int, int]:
    """Byte `byte` (0..3) of register `reg` of thread tid's A fragment: (row of the 64, byte of the 32 of K).
    As the ALayout of the 16-bit forms in bytes: threads ((4,8,4):(4 bytes of K, 1 row, 16 rows)),
    registers ((2,2):(8 rows, 16 bytes of K))."""
    lane, warp = tid % 32, tid // 32
    row = 16 * warp + lane // 4 + _eval(reg, (2, 2), (8, 0))
    kbyte = 4 * (lane % 4) + _eval(reg, (2, 2), (0, 16)) + byte
    return row, kbyte


# -- inputs ------------------------------------------------------------------------------------------
def meta_position(atype: str, tid: int, fld: int) -> tuple[int, int, int]:
    """The 4-bit field `fld` (bits 4*fld..+3) of thread tid's metadata register: (row of the 64, chunk of
    that row, thread pair of the selector). Our reading of the figures of 9.7.15.6.2 (absent from our
    text), as a CuTe-style layout: for .f16/.bf16/.tf32 (fields of 16-bit units, 8 chunks a row) threads
    ((2,2,8,4):(4 chunks, pair, 1 row, 16 rows)) and fields ((4,2):(1 chunk, 8 rows)); for 8-bit types
    (16 chunks a row, every thread) threads ((2,2,8,4):(8 rows, 8 chunks, 1 row, 16 rows)), fields
    ((8):(1 chunk))."""
    lane, warp = tid % 32, tid // 32
    row = 16 * warp + lane // 4
    j = lane % 4
    if spec.ELEMENT_BITS[atype] >= 16:
        return row + 8 * (fld // 4), 4 * (j % 2) + fld % 4, j // 2
    return row + 8 * (j % 2), 8 * (j // 2) + fld, 0


@dataclass
class Inputs:
    """A case's inputs: the logical matrices (raw K-major bytes, `Case.kbytes` a row: A 64 rows, unpacked
    for a sparse case, B N rows), each thread's accumulator registers, the shared-memory image, and where
    A and B are in it; for a sparse case A packed (32 bytes a row) and each thread's metadata."""

    a: npt.NDArray[np.uint8]
    b: npt.NDArray[np.uint8]
    d: npt.NDArray[np.uint32]               # THREADS x d_registers
    image: bytes
    layout_a: Layout | None
    layout_b: Layout
    a_regs: npt.NDArray[np.uint32] = field(default_factory=lambda: np.zeros((THREADS, 4), np.uint32))
    a_packed: npt.NDArray[np.uint8] | None = None
    meta: npt.NDArray[np.uint32] | None = None   # THREADS

    def blob(self) -> bytes:
        """The kernel's input buffer: the image, then 4 A registers and the accumulators per thread, then
        (sparse) the metadata register per thread."""
        tail = b"" if self.meta is None else self.meta.astype("<u4").tobytes()
        return self.image + self.a_regs.astype("<u4").tobytes() + self.d.astype("<u4").tobytes() + tail


def _elements(rng: random.Random, t: str, count: int, values: str) -> bytes:
    """`count` elements of type t as bytes (for .b1: count bits)."""
    if t == ".b1":
        return rng.getrandbits(count).to_bytes(count // 8, "little")
    if values == "exact" or t in (".e4m3", ".e5m2") and values != "random":
        small = [rng.randint(-3, 3) for _ in range(count)]
        return _encode(t, [float(v) for v in small])
    if t in (".s8", ".u8"):
        if values == "overflow":
            return bytes([0x7F if t == ".s8" else 0xFF] * count)
        return bytes(rng.getrandbits(8) for _ in range(count))
    return _encode(t, [rng.uniform(-2.0, 2.0) for _ in range(count)])


def _encode(t: str, vals: list[float]) -> bytes:
    arr = np.array(vals, dtype=np.float64)
    if t == ".f16":
        return arr.astype("<f2").tobytes()
    if t == ".bf16":
        f = arr.astype(np.float32).view(np.uint32)
        return ((f + 0x7FFF + ((f >> 16) & 1)) >> 16).astype("<u2").tobytes()
    if t == ".tf32":
        return (arr.astype(np.float32).view(np.uint32) & 0xFFFFE000).astype("<u4").tobytes()
    if t in (".s8", ".u8"):
        return arr.astype(np.int64).astype(np.int8 if t == ".s8" else np.uint8).tobytes()
    return _fp8(t, arr).tobytes()


def _fp8(t: str, vals: npt.NDArray[np.float64]) -> npt.NDArray[np.uint8]:
    """The FP8 codes nearest the values (ties to the even code), by comparison with every finite code."""
    codes = np.array([c for c in range(256) if fp8_value(t, c) == fp8_value(t, c)], dtype=np.int64)
    table = np.array([fp8_value(t, int(c)) for c in codes], dtype=np.float64)
    table[np.isinf(table)] = np.nan
    err = np.abs(vals[:, None] - table[None, :])
    err = np.where(np.isnan(err), np.inf, err) + (codes % 2)[None, :] * 1e-300
    found: npt.NDArray[np.uint8] = codes[np.argmin(err, axis=1)].astype(np.uint8)
    return found


def fp8_value(t: str, code: int) -> float:
    """The value of an FP8 code: .e4m3 (bias 7, S.1111.111 NaN, no infinities), .e5m2 (bias 15, IEEE)."""
    e_bits, m_bits = (4, 3) if t == ".e4m3" else (5, 2)
    bias = (1 << (e_bits - 1)) - 1
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    if t == ".e5m2" and e == 31:
        return sign * float("inf") if m == 0 else float("nan")
    if t == ".e4m3" and e == 15 and m == 7:
        return float("nan")
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / (1 << m_bits)) * 2.0 ** (e - bias)


def _sparse(case: Case, rng: random.Random, packed: npt.NDArray[np.uint8]
            ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint32]]:
    """The unpacked A of a sparse case (9.7.15.6.1) and each thread's metadata register: every chunk's
    kept positions drawn at random (for 2:4 any two distinct positions in either order; for .tf32's 1:2
    0b0100, element 0, or 0b1110, element 1), the packed elements placed there, zeros elsewhere; the
    fields of the pair the selector leaves out are junk."""
    ebytes = spec.ELEMENT_BITS[case.atype] // 8
    tf32 = case.atype == ".tf32"
    chunks = case.k // (2 if tf32 else 4)
    pairs = [lo | hi << 2 for lo in range(4) for hi in range(4) if lo != hi]
    fields = [[rng.choice((0b0100, 0b1110) if tf32 else pairs) for _ in range(chunks)] for _ in range(64)]
    full = np.zeros((64, case.kbytes), np.uint8)
    for row in range(64):
        for c, f in enumerate(fields[row]):
            kept = [{0b0100: 0, 0b1110: 1}[f]] if tf32 else [f & 3, f >> 2]
            width = len(kept)
            for i, pos in enumerate(kept):
                src, dst = (width * c + i) * ebytes, ((2 if tf32 else 4) * c + pos) * ebytes
                full[row, dst:dst + ebytes] = packed[row, src:src + ebytes]
    meta = np.zeros(THREADS, np.uint32)
    for tid in range(THREADS):
        word = 0
        for fld in range(8):
            row, chunk, pair = meta_position(case.atype, tid, fld)
            value = fields[row][chunk] if pair == case.selector else rng.getrandbits(4)
            word |= value << (4 * fld)
        meta[tid] = word
    return full, meta


def inputs(case: Case) -> Inputs:
    rng = random.Random(f"{case.name}/{case.seed}")
    bits_a, bits_b = spec.ELEMENT_BITS[case.atype], spec.ELEMENT_BITS[case.b]
    if case.values == "identity":   # small nonzero values: D shows where each packed element went
        vals = [float(rng.choice((-3, -2, -1, 1, 2, 3))) for _ in range(64 * 256 // bits_a)]
        a = np.frombuffer(_encode(case.atype, vals), np.uint8).reshape(64, 32)
        eye = np.eye(case.n, case.k, dtype=np.float64).ravel().tolist()
        b = np.frombuffer(_encode(case.b, eye), np.uint8).reshape(case.n, case.kbytes)
    else:
        a = np.frombuffer(_elements(rng, case.atype, 64 * 256 // bits_a, case.values), np.uint8)
        a = a.reshape(64, 32)
        b = np.frombuffer(_elements(rng, case.b, case.n * case.kbytes * 8 // bits_b, case.values), np.uint8)
        b = b.reshape(case.n, case.kbytes)
    packed, meta = a, None
    if case.sparse:
        a, meta = _sparse(case, rng, packed)
    start = 0
    layout_a = None
    spans: list[tuple[Layout, npt.NDArray[np.uint8], int]] = []
    if not case.a_regs:
        layout_a, size = _layout(64, bool(case.trans_a), case.swizzle_a, start, bits_a, flip=False)
        spans.append((layout_a, packed, bits_a))
        start = -(-(start + size) // 1024) * 1024
    layout_b, size = _layout(case.n, bool(case.trans_b), case.swizzle_b, start, bits_b, flip=True,
                             kbytes=case.kbytes)
    spans.append((layout_b, b, bits_b))
    total = -(-(start + size) // 1024) * 1024
    image = bytearray(rng.getrandbits(8) for _ in range(total))   # junk the instruction must not read
    if case.values == "raw":   # B is the junk where the instruction reads
        spans.pop()
        b = np.zeros_like(b)
    for lay, mat, bits in spans:
        per_row = mat.shape[1] * 8 // bits
        for mn in range(mat.shape[0]):
            for k in range(per_row):
                addr, bit = lay.element(mn, k, bits)
                kb, kbit = k * bits // 8, k * bits % 8
                if bits == 1:
                    value = (int(mat[mn, kb]) >> kbit) & 1
                    image[addr] = (image[addr] & ~(1 << bit)) | (value << bit)
                else:
                    image[addr:addr + bits // 8] = bytes(mat[mn, kb:kb + bits // 8])
    d = np.zeros((THREADS, case.d_registers), np.uint32)
    if case.scale_d:
        d = _fragments_of(case, _accumulator(case, rng))
    a_regs = np.zeros((THREADS, 4), np.uint32)
    if case.a_regs:
        for tid in range(THREADS):
            for reg in range(4):
                word = 0
                for byte in range(4):
                    row, kb = a_position(tid, reg, byte)
                    word |= int(packed[row, kb]) << (8 * byte)
                a_regs[tid, reg] = word
    if not case.sparse:
        return Inputs(a, b, d, bytes(image), layout_a, layout_b, a_regs)
    return Inputs(a, b, d, bytes(image), layout_a, layout_b, a_regs, packed, meta)


def _accumulator(case: Case, rng: random.Random) -> npt.NDArray[np.float64]:
    shape = (64, case.n)
    if case.dtype == ".s32":
        if case.values == "overflow":
            return np.full(shape, float((1 << 31) - 1000), dtype=np.float64)
        return np.array([[rng.randint(-1000, 1000) for _ in range(case.n)] for _ in range(64)], np.float64)
    if case.values == "random":
        return np.array([[rng.uniform(-4, 4) for _ in range(case.n)] for _ in range(64)], np.float64)
    return np.array([[rng.randint(-8, 8) for _ in range(case.n)] for _ in range(64)], np.float64)


def _fragments_of(case: Case, mat: npt.NDArray[np.float64]) -> npt.NDArray[np.uint32]:
    """Each thread's accumulator registers (bit patterns) for a 64 x N matrix."""
    out = np.zeros((THREADS, case.d_registers), np.uint32)
    for tid in range(THREADS):
        for i in range(case.n // 2):
            v = mat[d_position(tid, i)]
            if case.dtype == ".f32":
                out[tid, i] = int(np.float32(v).view(np.uint32))
            elif case.dtype == ".s32":
                out[tid, i] = int(v) & 0xFFFFFFFF
            else:
                out[tid, i // 2] |= int(np.float16(v).view(np.uint16)) << (16 * (i % 2))
    return out


def matrix_of(case: Case, regs: npt.NDArray[np.uint32]) -> npt.NDArray[np.float64]:
    """The 64 x N accumulator matrix (values) from each thread's registers."""
    out = np.zeros((64, case.n), np.float64)
    for tid in range(THREADS):
        for i in range(case.n // 2):
            if case.dtype == ".f16":
                bits = (int(regs[tid, i // 2]) >> (16 * (i % 2))) & 0xFFFF
                v = float(np.uint16(bits).view(np.float16))
            elif case.dtype == ".f32":
                v = float(np.uint32(regs[tid, i]).view(np.float32))
            else:
                v = float(int(regs[tid, i]) - ((int(regs[tid, i]) & 0x80000000) << 1))
            out[d_position(tid, i)] = v
    return out


# -- the reference --------------------------------------------------------------------------------------
def element_values(raw: npt.NDArray[np.uint8], t: str) -> npt.NDArray[np.float64]:
    """Rows x 32 bytes of K-major elements as rows x K values."""
    if t == ".b1":
        return np.unpackbits(raw, axis=1, bitorder="little").astype(np.float64)
    if t in (".e4m3", ".e5m2"):
        table = np.array([fp8_value(t, c) for c in range(256)], dtype=np.float64)
        fp8: npt.NDArray[np.float64] = table[raw]
        return fp8
    if t == ".s8":
        return raw.view(np.int8).astype(np.float64)
    if t == ".u8":
        return raw.astype(np.float64)
    if t == ".f16":
        return raw.view("<f2").astype(np.float64)
    if t == ".bf16":
        return (raw.view("<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return (raw.view("<u4") & 0xFFFFE000).view(np.float32).astype(np.float64)


def reference(case: Case, inp: Inputs) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(D = A*B + D in binary64 before rounding to the accumulator type, sum |a*b| + |D|: the scale of the
    bound). Integer results wrapped or saturated to s32 exactly."""
    a = element_values(inp.a, case.atype) * case.scale_a
    b = element_values(inp.b, case.b) * case.scale_b
    d = matrix_of(case, inp.d) if case.scale_d else np.zeros((64, case.n))
    if case.atype == ".b1":
        acc = (a.astype(np.int64) @ b.astype(np.int64).T).astype(np.float64) + d
    else:
        acc = a @ b.T + d
    if not case.floating:
        if case.satfinite:
            acc = np.clip(acc, -(2 ** 31), 2 ** 31 - 1)
        else:
            acc = np.array([[(int(v) + 2 ** 31) % 2 ** 32 - 2 ** 31 for v in row] for row in acc], np.float64)
    return acc, np.abs(a) @ np.abs(b).T + np.abs(d)


#: The H100's accumulation keeps this many fraction bits (measured: FP8 products into .f32 differ from an
#: exactly rounded sum by up to 0.51 * 2^-13 of |D| + sum |a*b|, the other inputs by 0.92 * 2^-23).
ACCUMULATION_BITS: dict[tuple[str, bool], int] = {(".f32", False): 23, (".f32", True): 13,
                                                  (".f16", False): 10, (".f16", True): 10}


def bound(case: Case, scale: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """How far a GPU's accumulator may be from the simulator's: 0 for integers and for "exact" inputs,
    else 2 units of the accumulation's precision (`ACCUMULATION_BITS`) at `scale` = |D| + sum |a*b|."""
    if not case.floating or case.values == "exact":
        return np.zeros_like(scale)
    bits = ACCUMULATION_BITS[(case.dtype, case.atype in (".e4m3", ".e5m2"))]
    return 2 * scale * 2.0 ** -bits


# -- the kernel ----------------------------------------------------------------------------------------
def ptx(case: Case, inp: Inputs) -> str:
    """The case's kernel: copy the image into shared memory, load the registers, fence, run the wgmma,
    wait, store the accumulators (thread tid's register i at out[tid * R + i])."""
    size = len(inp.image)
    r = case.d_registers
    lines = [
        ".version 8.4", ".target sm_90a", ".address_size 64", "",
        f".visible .entry {KERNEL}(.param .u64 in, .param .u64 out)", "{",
        "    .reg .pred %p<4>;", "    .reg .b32 %r<16>;", f"    .reg .b32 %d<{r}>;", "    .reg .b32 %a<4>;",
        "    .reg .b64 %rd<16>;", f"    .shared .align 1024 .b8 smem[{size}];", "",
        "    ld.param.u64 %rd1, [in];", "    ld.param.u64 %rd2, [out];",
        "    cvta.to.global.u64 %rd1, %rd1;", "    cvta.to.global.u64 %rd2, %rd2;",
        "    mov.u32 %r1, %tid.x;", "    mov.u32 %r9, smem;", "    shl.b32 %r2, %r1, 4;",
        "COPY:", f"    setp.ge.u32 %p1, %r2, {size};", "    @%p1 bra COPIED;",
        "    cvt.u64.u32 %rd3, %r2;", "    add.u64 %rd4, %rd1, %rd3;",
        "    ld.global.v4.u32 {%r3, %r4, %r5, %r6}, [%rd4];", "    add.u32 %r8, %r9, %r2;",
        "    st.shared.v4.u32 [%r8], {%r3, %r4, %r5, %r6};", f"    add.u32 %r2, %r2, {16 * THREADS};",
        "    bra COPY;", "COPIED:",
        "    mul.wide.u32 %rd5, %r1, 16;", "    add.u64 %rd6, %rd1, %rd5;",
        f"    ld.global.v4.u32 {{%a0, %a1, %a2, %a3}}, [%rd6+{size}];",
        f"    mul.wide.u32 %rd7, %r1, {4 * r};", "    add.u64 %rd8, %rd1, %rd7;",
    ]
    base = size + 16 * THREADS
    lines += [f"    ld.global.u32 %d{i}, [%rd8+{base + 4 * i}];" for i in range(r)]
    if case.sparse:   # the metadata register, after every thread's accumulators
        lines += ["    mul.wide.u32 %rd12, %r1, 4;", "    add.u64 %rd12, %rd1, %rd12;",
                  f"    ld.global.u32 %r11, [%rd12+{base + 4 * r * THREADS}];"]
    lines += ["    fence.proxy.async.shared::cta;", "    bar.sync 0;"]
    for reg, lay in (("%rd10", inp.layout_a), ("%rd11", inp.layout_b)):
        if lay is None:
            continue
        lines += [f"    add.u32 %r10, %r9, {lay.start};", f"    cvt.u64.u32 {reg}, %r10;",
                  f"    shr.u64 {reg}, {reg}, 4;", f"    and.b64 {reg}, {reg}, 0x3fff;",
                  f"    or.b64 {reg}, {reg}, {lay.descriptor():#x};"]
    setp = "eq" if case.scale_d else "ne"
    lines += [f"    setp.{setp}.u32 %p2, %r1, %r1;", "    wgmma.fence.sync.aligned;"]
    d_vec = "{" + ", ".join(f"%d{i}" for i in range(r)) + "}"
    a_op = "{%a0, %a1, %a2, %a3}" if case.a_regs else "%rd10"
    imms: list[int] = []
    if case.floating:
        imms = [case.scale_a, case.scale_b]
        if case.atype in spec.TRANSPOSABLE:
            imms += [case.trans_b] if case.a_regs else [case.trans_a, case.trans_b]
    tail = "".join(f", {v}" for v in imms)
    sparse = f", %r11, {case.selector}" if case.sparse else ""
    lines += [f"    {case.instruction}", f"        {d_vec},", f"        {a_op}, %rd11{sparse}, %p2{tail};",
              "    wgmma.commit_group.sync.aligned;", "    wgmma.wait_group.sync.aligned 0;",
              "    add.u64 %rd9, %rd2, %rd7;"]
    lines += [f"    st.global.u32 [%rd9+{4 * i}], %d{i};" for i in range(r)]
    lines += ["    ret;", "}", ""]
    return "\n".join(lines)


def out_bytes(case: Case) -> int:
    return THREADS * case.d_registers * 4


# -- records -----------------------------------------------------------------------------------------------
def _pack(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 9)).decode()


def unpack(text: str) -> bytes:
    return zlib.decompress(base64.b64decode(text))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def emit(directory: Path) -> None:
    """Write every case's kernel and input buffer, and the manifest the GPU runner reads (one line a case:
    name, PTX file, input file, input bytes, output bytes)."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for case in CASES:
        inp = inputs(case)
        blob = inp.blob()
        (directory / f"{case.name}.ptx").write_text(ptx(case, inp))
        (directory / f"{case.name}.in").write_bytes(blob)
        rows.append(f"{case.name} {case.name}.ptx {case.name}.in {len(blob)} {out_bytes(case)}")
    (directory / "manifest.txt").write_text("\n".join(rows) + "\n")


def collect(directory: Path, device: str, toolchain: str = "") -> dict[str, object]:
    """The records of a GPU run: per case its definition, the digest of its input buffer (the inputs are
    regenerated from the case) and each run's accumulators."""
    results: list[dict[str, object]] = []
    for case in CASES:
        runs = []
        for i in range(RUNS):
            path = directory / f"{case.name}.out{i}"
            if path.exists():
                runs.append(path.read_bytes())
        if not runs:
            results.append({"case": asdict(case), "error": (directory / f"{case.name}.err").read_text()
                            if (directory / f"{case.name}.err").exists() else "no output"})
            continue
        results.append({"case": asdict(case), "input_sha256": digest(inputs(case).blob()),
                        "deterministic": all(r == runs[0] for r in runs), "runs": len(runs),
                        "output": _pack(runs[0])})
    return {"schema": SCHEMA, "device": device, "toolchain": toolchain, "kernel": KERNEL, "results": results}


def main(argv: list[str] | None = None) -> int:
    return recorder_main("python3 -m mbarrier.hw.wgmma", __doc__ or "", emit, collect, argv)


if __name__ == "__main__":
    sys.exit(main())
