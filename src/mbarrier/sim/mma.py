"""The arithmetic of wgmma.mma_async (PTX ISA 9.7.15): forms, matrix descriptors, shared-memory layouts,
register fragments and the multiply-accumulate, for one warp's 16 rows of the warpgroup's 64; for
wgmma.mma_async.sp (9.7.15.6) also the unpacking of the sparse A by its metadata.

Nothing here knows the machine: `sim.machine` hands in the registers and a reader of shared memory. numpy
does the arithmetic (the only module of the simulator that needs it).

Numbers (9.7.15.5.2, "Precision and rounding": the accumulation order, rounding and handling of
subnormal inputs are unspecified): each product of two inputs is exact in binary64; the products of a
row and a column and the accumulator are summed with compensation (the exact sum to within binary64's
precision) and that sum is rounded to nearest-even into the accumulator type. Integer forms are exact
(wrapped, or clamped with .satfinite). The GPU may round differently: `mbarrier.hw.wgmma.bound` is the
difference the conformance replay accepts.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mbarrier.spec import wgmma as spec

Reader = Callable[[int], bytes]   # 16 bytes of shared memory at an offset


class FormError(ValueError):
    """A qualifier combination or operand value the ISA does not define (the message says which)."""


@dataclass(frozen=True, slots=True)
class Form:
    """One wgmma.mma_async form: shape m64nNkK, types, whether A comes from registers, .satfinite, and
    whether it is the sparse form (.sp: K is the unpacked K, twice the dense one)."""

    n: int
    k: int
    dtype: str
    atype: str
    btype: str
    a_in_registers: bool
    satfinite: bool = False
    sparse: bool = False

    @property
    def shape(self) -> str:
        return f".m64n{self.n}k{self.k}"

    @property
    def floating(self) -> bool:
        return self.atype in spec.FLOATS

    @property
    def d_registers(self) -> int:
        return spec.registers(self.dtype, self.n)

    @property
    def b_bytes(self) -> int:
        """Bytes of K in a row of B (and of the unpacked A): 32, 64 for the sparse form."""
        return self.k * spec.ELEMENT_BITS[self.btype] // 8

    def operands(self) -> int:
        """9.7.15.5.2's syntax: d, a, b-desc, scale-d, then the immediates of the type; 9.7.15.6.3's adds
        sp-meta and sp-sel after b-desc."""
        extra = 2 if self.sparse else 0
        if self.atype in (".f16", ".bf16"):
            return extra + (7 if self.a_in_registers else 8)
        return extra + (6 if self.floating else 4)


def parse_form(quals: tuple[str, ...], a_in_registers: bool) -> Form:
    """The form a `wgmma.mma_async` instruction's qualifiers name (after the opcode), or FormError."""
    q = list(quals)
    sparse = q[1:2] == [".sp"]
    if sparse:
        del q[1]
    if q[:3] != [".mma_async", ".sync", ".aligned"]:
        raise FormError("wgmma.mma_async needs .sync.aligned")
    rest = q[3:]
    satfinite = ".satfinite" in rest
    rest = [x for x in rest if x != ".satfinite"]
    if rest[-2:] == [".and", ".popc"]:
        rest = rest[:-2]
        popc = True
    else:
        popc = False
    if len(rest) != 4 or not rest[0].startswith(".m64n"):
        raise FormError("expected .shape.dtype.atype.btype")
    shape, dtype, atype, btype = rest
    if atype not in spec.ELEMENT_BITS or btype not in spec.ELEMENT_BITS:
        raise FormError(f"multiplicand types {atype}{btype}")
    if atype != btype and not any({atype, btype} <= mixed for mixed in spec.MIXED):
        raise FormError(f"multiplicand types {atype}{btype} (only FP8 and 8-bit integers may mix)")
    if sparse and atype not in spec.SPARSE_K:
        raise FormError(f"{atype} has no sparse form ({spec.SPARSE_MMA_SECTION})")
    k = spec.SPARSE_K[atype] if sparse else spec.K[atype]
    n_text, _, k_text = shape[len(".m64n"):].partition("k")
    if not n_text.isdigit() or k_text != str(k) or int(n_text) not in spec.N[atype]:
        raise FormError(f"shape {shape} for {atype}")
    if dtype not in spec.DTYPES[atype]:
        raise FormError(f"accumulator {dtype} for {atype}")
    if satfinite and atype not in spec.INTEGERS:
        raise FormError(".satfinite is for the integer forms")
    if popc != (atype == ".b1"):
        raise FormError(".b1 needs .and.popc (and only .b1 takes it)")
    return Form(int(n_text), k, dtype, atype, btype, a_in_registers, satfinite, sparse)


# -- the matrix descriptor (9.7.15.5.1.2.2) --------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Descriptor:
    """A decoded matrix descriptor: byte addresses and offsets, the matrix base offset, the swizzle's width
    in bytes (None: no swizzle)."""

    start: int
    leading: int
    stride: int
    base_offset: int
    swizzle: int | None


def decode(desc: int) -> Descriptor:
    f = {name: (desc >> lo) & ((1 << width) - 1) for name, lo, width in spec.DESCRIPTOR_FIELDS}
    shift = spec.DESCRIPTOR_ENCODE_SHIFT
    return Descriptor(f["start"] << shift, f["leading"] << shift, f["stride"] << shift, f["base_offset"],
                      spec.SWIZZLE_BYTES[f["swizzle"]])


def encode(start: int, leading: int, stride: int, swizzle: int | None, base_offset: int = 0) -> int:
    """The descriptor of these byte values (the inverse of `decode`, for tests and generated kernels)."""
    mode = {v: k for k, v in spec.SWIZZLE_BYTES.items()}[swizzle]
    enc = spec.DESCRIPTOR_ENCODE_MASK
    values = {"start": (start & enc) >> 4, "leading": (leading & enc) >> 4, "stride": (stride & enc) >> 4,
              "base_offset": base_offset, "swizzle": mode}
    return sum(values[name] << lo for name, lo, _ in spec.DESCRIPTOR_FIELDS)


def swizzled(addr: int, width: int | None) -> int:
    """The address a swizzled layout really uses: the 16-byte chunk index within a `width`-byte row (bits 4
    and up) XORed with the row's index within the repeating pattern of 8 rows (bits 7 and up): the
    Swizzle<1,4,3>, <2,4,3>, <3,4,3> of 9.7.15.5.1.2.1.3 for 32, 64, 128 bytes, on the shared address."""
    if width is None:
        return addr
    mask = width // 16 - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def chunk_k_major(d: Descriptor, row: int, chunk: int) -> int:
    """K-major (9.7.15.5.1.2.1.3, ((8,m),(T,2k))): the 16-byte chunk `chunk` of K (0 or 1: the 32 bytes of
    K a dense instruction reads; up to 3 for B of the sparse form) of row `row` (of M for A, of N for B).
    Without swizzle the core matrices are 8 rows of 16 bytes, the next 8 rows `stride` bytes on, chunk c
    c * `leading` bytes on; with a swizzle of W bytes the rows are W bytes apart and the chunks of a row
    adjacent. The ISA calls the leading offset unused there (9.7.15.5.1.2.1.1), and so it is while K fits
    in W; the sparse form's 64 bytes of K in a 32-byte swizzle continue `leading` bytes on (measured on
    the H100: the records sp_s8_raw_sw32, sp_u8_raw_sw32_rs)."""
    if d.swizzle is None:
        addr = d.start + (row % 8) * 16 + (row // 8) * d.stride + chunk * d.leading
    else:
        per = d.swizzle // 16
        addr = (d.start + (row % 8) * d.swizzle + (row // 8) * d.stride + (chunk % per) * 16
                + (chunk // per) * d.leading)
    return swizzled(addr, d.swizzle)


def chunk_mn_major(d: Descriptor, block: int, k: int) -> int:
    """MN-major (((T,W/16,m),(8,k))): the 16 bytes holding elements 16*block/ebytes.. of M (or N) at
    K index `k`. Without swizzle a core matrix is 8 K-rows of 16 bytes, the next M/N block `stride`
    bytes on, the next 8 K `leading` bytes on; with a swizzle of W bytes a K-row holds W/16 blocks, the
    next W/16 blocks `leading` bytes on, the next 8 K `stride` bytes on."""
    if d.swizzle is None:
        addr = d.start + block * d.stride + (k % 8) * 16 + (k // 8) * d.leading
    else:
        w = d.swizzle // 16
        addr = (d.start + (block % w) * 16 + (block // w) * d.leading + (k % 8) * d.swizzle
                + (k // 8) * d.stride)
    return swizzled(addr, d.swizzle)


def gather(d: Descriptor, rows: range, transposed: bool, ebits: int, read: Reader, kbytes: int = 32
           ) -> tuple[npt.NDArray[np.uint8], list[int]]:
    """The bytes of `rows` (of M or N) of a matrix in shared memory, K-major in the result (`kbytes` a
    row: K elements little-endian; 64 for B of the sparse form, its K-chunks 2 and 3 placed as the
    layouts' (T,2k) mode places chunk 1), and the 16-byte chunks read (their offsets)."""
    out = np.zeros((len(rows), kbytes), dtype=np.uint8)
    chunks: list[int] = []
    if not transposed:
        for i, r in enumerate(rows):
            for c in range(kbytes // 16):
                at = chunk_k_major(d, r, c)
                chunks.append(at)
                out[i, 16 * c:16 * c + 16] = np.frombuffer(read(at), dtype=np.uint8)
        return out, chunks
    # MN-major: only 16-bit types (spec.TRANSPOSABLE): 8 elements of M/N per chunk, one chunk per K-row.
    per = 128 // ebits
    krows = kbytes * 8 // ebits
    elems = np.zeros((len(rows), krows), dtype=np.uint16)
    first, last = rows[0] // per, (rows[-1]) // per
    for block in range(first, last + 1):
        for k in range(krows):
            at = chunk_mn_major(d, block, k)
            chunks.append(at)
            vals = np.frombuffer(read(at), dtype="<u2")
            for j in range(per):
                r = block * per + j
                if rows[0] <= r <= rows[-1]:
                    elems[r - rows[0], k] = vals[j]
    out[:, :] = elems.astype("<u2").view(np.uint8).reshape(len(rows), kbytes)
    return out, chunks


def warp_row0(linear: int) -> int:
    """The first of the 16 rows of M (of A and D) the warp of the thread with this index in its CTA
    computes: warp k of its warpgroup takes rows 16k..16k+15 (9.7.15.5.1)."""
    return (linear // 32) % spec.WARPS_PER_GROUP * 16


def engine_chunks(form: Form, trans_a: bool, trans_b: bool, desc_a: Descriptor | None, desc_b: Descriptor,
                  row0: int) -> list[int]:
    """The 16-byte chunks of shared memory one warp's wgmma.mma_async engine reads (9.7.15.5.1): the n
    rows of B, and where A lies in shared memory (`desc_a`), the warp's 16 rows of it from `row0`."""
    chunks = operand_chunks(desc_b, range(form.n), trans_b, spec.ELEMENT_BITS[form.btype], form.b_bytes)
    if desc_a is not None:
        chunks += operand_chunks(desc_a, range(row0, row0 + 16), trans_a, spec.ELEMENT_BITS[form.atype])
    return chunks


def modelled(d: Descriptor) -> bool:
    """Whether the simulator knows where this descriptor's matrix lies: not a swizzle pattern with a base
    offset (not aligned to its repeat), whose hardware behaviour is not recorded yet."""
    return d.swizzle is None or not d.base_offset


def spans(chunks: list[int]) -> tuple[tuple[int, int], ...]:
    """The byte ranges [lo, hi) that 16-byte chunks at these offsets cover, merged."""
    out: list[list[int]] = []
    for at in sorted(set(chunks)):
        if out and at <= out[-1][1]:
            out[-1][1] = max(out[-1][1], at + 16)
        else:
            out.append([at, at + 16])
    return tuple((lo, hi) for lo, hi in out)


def operand_chunks(d: Descriptor, rows: range, transposed: bool, ebits: int, kbytes: int = 32
                   ) -> list[int]:
    """The 16-byte chunks `gather` reads (without reading them)."""
    _, chunks = gather(d, rows, transposed, ebits, lambda at: bytes(16), kbytes)
    return chunks


# -- register fragments (9.7.15.5.1.1) --------------------------------------------------------------------
def a_fragment_bytes(lane: int, reg: int) -> tuple[int, int]:
    """Where register `reg` (0..3) of matrix A of lane `lane` sits in the warp's 16 rows x 32 bytes: (row,
    first byte). Every type: rows g and g+8 (g = lane/4), bytes 4*(lane%4) of each 16-byte half of K."""
    g, t = lane // 4, lane % 4
    return g + 8 * (reg % 2), 16 * (reg // 2) + 4 * t


def d_element(lane: int, i: int) -> tuple[int, int]:
    """Element i of the accumulator fragment of lane `lane`: (row within the warp's 16, column)."""
    g, t = lane // 4, lane % 4
    return g + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * t + (i % 2)


def a_from_registers(regs: list[tuple[int, ...]]) -> npt.NDArray[np.uint8]:
    """The warp's 16 x 32 bytes of A from each lane's four registers (lane order)."""
    out = np.zeros((16, 32), dtype=np.uint8)
    for lane, values in enumerate(regs):
        for j, v in enumerate(values):
            row, at = a_fragment_bytes(lane, j)
            out[row, at:at + 4] = np.frombuffer((v & 0xFFFFFFFF).to_bytes(4, "little"), dtype=np.uint8)
    return out


@functools.cache
def _d_positions(n: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Row and column of element i of lane `lane` (d_element) as two (32, n/2) index arrays."""
    pos = [[d_element(lane, i) for i in range(n // 2)] for lane in range(32)]
    return (np.array([[r for r, _ in row] for row in pos], dtype=np.intp),
            np.array([[c for _, c in row] for row in pos], dtype=np.intp))


def d_to_matrix(form: Form, regs: list[tuple[int, ...]]) -> npt.NDArray[np.float64] | npt.NDArray[np.int64]:
    """The warp's 16 x N accumulator from each lane's D registers (bit patterns)."""
    rows, cols = _d_positions(form.n)
    bits = (np.array(regs, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)  # (32, registers): low 32 bits
    mat: npt.NDArray[np.float64] | npt.NDArray[np.int64]
    if form.dtype == ".f16":  # element i: half i % 2 of register i // 2
        halves = np.stack([bits & 0xFFFF, bits >> 16], axis=2).reshape(32, -1)[:, :form.n // 2]
        mat = np.zeros((16, form.n), dtype=np.float64)
        mat[rows, cols] = halves.astype(np.uint16).view(np.float16)
    elif form.dtype == ".f32":
        mat = np.zeros((16, form.n), dtype=np.float64)
        mat[rows, cols] = bits[:, :form.n // 2].view(np.float32)
    else:
        mat = np.zeros((16, form.n), dtype=np.int64)
        mat[rows, cols] = bits[:, :form.n // 2].view(np.int32)
    return mat


def matrix_to_d(form: Form, mat: npt.NDArray[np.float64] | npt.NDArray[np.int64]) -> list[tuple[int, ...]]:
    """Each lane's D registers (bit patterns) holding the warp's 16 x N result: floats rounded to nearest
    even, a NaN as the simulator's canonical NaN (docs/simulator.md), integers modulo 2^32."""
    rows, cols = _d_positions(form.n)
    elems = mat[rows, cols]  # (32, n/2)
    if form.dtype == ".f16":
        with np.errstate(over="ignore", invalid="ignore"):
            h = elems.astype(np.float16).view(np.uint16).astype(np.uint32)
        h[np.isnan(elems)] = 0x7FFF
        regs = h[:, 0::2] | h[:, 1::2] << 16
    elif form.dtype == ".f32":
        with np.errstate(over="ignore", invalid="ignore"):
            regs = elems.astype(np.float32).view(np.uint32)
        regs[np.isnan(elems)] = 0x7FFFFFFF
    else:
        regs = (elems.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)
    return [tuple(row) for row in regs.tolist()]


# -- the sparse A (9.7.15.6.1, 9.7.15.6.2) ------------------------------------------------------------------
def metadata_error(form: Form, meta: list[int], selector: int) -> str | None:
    """Why the lanes' metadata registers (lane order) make this warp's wgmma.mma_async.sp undefined
    (9.7.15.6.1: a field whose two positions are equal; for .tf32 a field other than 0b0100 and
    0b1110), or None."""
    for row, chunk, fld in _fields(form, meta, selector):
        lane, bit = spec.metadata_field(form.atype, row, chunk, selector)
        lo, hi = fld & 3, fld >> 2
        if lo == hi or form.atype == ".tf32" and fld not in spec.TF32_METADATA:
            return (f"lane {lane}'s sparsity metadata {meta[lane] & 0xFFFFFFFF:#010x} has {fld:#06b} at bits "
                    f"{bit + 3}..{bit} (row {row} of the warp's 16, chunk {chunk}): undefined for "
                    f"{form.atype} ({spec.SPARSE_STORAGE_SECTION})")
    return None


def _fields(form: Form, meta: list[int], selector: int) -> list[tuple[int, int, int]]:
    """(row, chunk, 4-bit field) of every chunk of the warp's 16 rows."""
    chunks = form.b_bytes * 8 // spec.METADATA_UNIT_BITS[form.atype] // 4
    out = []
    for row in range(16):
        for chunk in range(chunks):
            lane, bit = spec.metadata_field(form.atype, row, chunk, selector)
            out.append((row, chunk, (meta[lane] >> bit) & 0xF))
    return out


def unpack_sparse(form: Form, packed: npt.NDArray[np.uint8], meta: list[int], selector: int
                  ) -> npt.NDArray[np.uint8]:
    """The warp's 16 rows of A unpacked (rows x `b_bytes`, zeros where the metadata keeps nothing) from
    the packed rows (rows x 32 bytes: 2 units of each chunk of 4, 9.7.15.6.1) and the lanes' metadata:
    the first kept unit of chunk c goes to position (field & 3), the second to (field >> 2)."""
    ub = spec.METADATA_UNIT_BITS[form.atype] // 8
    out = np.zeros((16, form.b_bytes), dtype=np.uint8)
    for row, chunk, fld in _fields(form, meta, selector):
        for i, pos in enumerate((fld & 3, fld >> 2)):
            src = (2 * chunk + i) * ub
            dst = (4 * chunk + pos) * ub
            out[row, dst:dst + ub] = packed[row, src:src + ub]
    return out


# -- element values -------------------------------------------------------------------------------------
def _fp8_table(exp_bits: int, ieee: bool) -> npt.NDArray[np.float64]:
    """The 256 values of an FP8 format: e4m3 (bias 7, no infinities, S.1111.111 is NaN) or e5m2 (bias 15,
    IEEE infinities and NaNs)."""
    man_bits = 7 - exp_bits
    bias = (1 << (exp_bits - 1)) - 1
    out = np.zeros(256, dtype=np.float64)
    for b in range(256):
        sign = -1.0 if b & 0x80 else 1.0
        e = (b >> man_bits) & ((1 << exp_bits) - 1)
        m = b & ((1 << man_bits) - 1)
        top = (1 << exp_bits) - 1
        if ieee and e == top:
            out[b] = sign * math.inf if m == 0 else math.nan
        elif not ieee and e == top and m == (1 << man_bits) - 1:
            out[b] = math.nan
        elif e == 0:
            out[b] = sign * m * 2.0 ** (1 - bias - man_bits)
        else:
            out[b] = sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
    return out


_FP8 = {".e4m3": _fp8_table(4, False), ".e5m2": _fp8_table(5, True)}


def integers(raw: npt.NDArray[np.uint8], t: str) -> npt.NDArray[np.int64]:
    """Rows x 32 bytes as rows x K integer elements of type t (0/1 for .b1: bit i of byte j is element
    8j+i)."""
    if t == ".s8":
        return raw.view(np.int8).astype(np.int64)
    if t == ".u8":
        return raw.astype(np.int64)
    return np.unpackbits(raw, axis=1, bitorder="little").astype(np.int64)


def floats(raw: npt.NDArray[np.uint8], t: str) -> npt.NDArray[np.float64]:
    """Rows x 32 bytes as rows x K floating-point elements of type t, exactly, in binary64."""
    if t == ".f16":
        return raw.view("<f2").astype(np.float64)
    if t == ".bf16":
        return (raw.view("<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if t == ".tf32":
        keep = np.uint32(~((1 << spec.TF32_TRUNCATED_BITS) - 1) & 0xFFFFFFFF)
        return (raw.view("<u4") & keep).view(np.float32).astype(np.float64)
    return _FP8[t][raw]


# -- the operation --------------------------------------------------------------------------------------
def multiply(form: Form, a: npt.NDArray[np.uint8], b: npt.NDArray[np.uint8],
             d: npt.NDArray[np.float64] | npt.NDArray[np.int64] | None, scale_a: int = 1, scale_b: int = 1
             ) -> npt.NDArray[np.float64] | npt.NDArray[np.int64]:
    """D = A*B (+ D): `a` the warp's 16 rows of A, `b` N rows of B (column n of B is row n here), both
    `form.b_bytes` of K a row (A unpacked for the sparse form), `d` the 16 x N accumulator or None
    (scale-d false). Floats as described above (the result rounded to the accumulator type, as float64);
    integers wrapped or saturated to s32."""
    if not form.floating:
        ai, bi = integers(a, form.atype), integers(b, form.btype)
        acc: npt.NDArray[np.int64] = (ai[:, None, :] & bi[None, :, :]).sum(axis=2) if form.atype == ".b1" \
            else ai @ bi.T
        if d is not None:
            acc = acc + d.astype(np.int64)
        if form.satfinite:
            return np.clip(acc, -(1 << 31), (1 << 31) - 1)
        return ((acc + (1 << 31)) % (1 << 32)) - (1 << 31)
    av = floats(a, form.atype) * scale_a
    bv = floats(b, form.btype) * scale_b
    with np.errstate(invalid="ignore", over="ignore"):
        prods = av[:, None, :] * bv[None, :, :]
        terms = [prods[:, :, k] for k in range(form.k)] + ([d.astype(np.float64)] if d is not None else [])
        out = _sum(terms)
        narrow = out.astype(np.float16 if form.dtype == ".f16" else np.float32)
    return narrow.astype(np.float64)


def _sum(terms: list[npt.NDArray[np.float64]]) -> npt.NDArray[np.float64]:
    """Element-wise sum of the terms, compensated (Neumaier): the exact sum to within binary64's precision
    (every product is exact in binary64). Infinities and NaNs as IEEE addition gives them."""
    s = np.zeros_like(terms[0])
    c = np.zeros_like(terms[0])
    for x in terms:
        t = s + x
        c += np.where(np.abs(s) >= np.abs(x), (s - t) + x, (x - t) + s)
        s = t
    return np.where(np.isfinite(s), s + c, s)
