"""Facts of the warpgroup matrix multiply-accumulate instructions (PTX ISA 9.7.15), as data.

The simulator (`sim.mma`, `sim.isa.wgmma`) reads the shapes, the types, the descriptor's fields, the
swizzle modes and the register-fragment arithmetic from here. Section numbers are those of PTX ISA 9.1.
"""

from __future__ import annotations

from typing import Final

SECTION: Final = "9.7.15"
MMA_SECTION: Final = "9.7.15.5.2"          # wgmma.mma_async
SPARSE_SECTION: Final = "9.7.15.6"         # wgmma.mma_async.sp: sparse A, sm_90a (ptxas 13.0 assembles it)
SPARSE_STORAGE_SECTION: Final = "9.7.15.6.1"    # sparse matrix storage: granularity, metadata, selector
SPARSE_FRAGMENTS_SECTION: Final = "9.7.15.6.2"  # fragments of sparse A and of the metadata
SPARSE_MMA_SECTION: Final = "9.7.15.6.3"        # wgmma.mma_async.sp: syntax, operands
FRAGMENTS_SECTION: Final = "9.7.15.5.1.1"  # register fragments
LAYOUT_SECTION: Final = "9.7.15.5.1.2"     # shared memory matrix layout
DESCRIPTOR_SECTION: Final = "9.7.15.5.1.2.2"
FENCE_SECTION: Final = "9.7.15.7.1"        # wgmma.fence
COMMIT_SECTION: Final = "9.7.15.7.2"       # wgmma.commit_group
WAIT_SECTION: Final = "9.7.15.7.3"         # wgmma.wait_group

#: 9.7.15.1: "A warpgroup is a set of four contiguous warps such that the warp-rank of the first warp is a
#: multiple of 4."
WARPS_PER_GROUP: Final = 4

#: 9.7.15.2: M is 64 for every shape.
M: Final = 64

#: 9.7.15.3, 9.7.15.5.2: bits of one element of A or B, by .atype/.btype.
ELEMENT_BITS: Final[dict[str, int]] = {".f16": 16, ".bf16": 16, ".tf32": 32, ".e4m3": 8, ".e5m2": 8,
                                       ".s8": 8, ".u8": 8, ".b1": 1}

#: 9.7.15.2: K of every dense shape, by .atype: one instruction reads 32 bytes of each row of A and B.
K: Final[dict[str, int]] = {t: 256 // bits for t, bits in ELEMENT_BITS.items()}

_FLOAT_N: Final = tuple(range(8, 257, 8))
_INT_N: Final = (8, 16, 24, 32) + tuple(range(48, 257, 16))

#: 9.7.15.2 (Matrix Shape) and 9.7.15.5.2: the N of the dense shapes, by .atype. For .s8/.u8 the syntax
#: block of 9.7.15.5.2 stops at n224 while the table of 9.7.15.2 goes to n256; ptxas 13.0 assembles
#: m64n240k32 and m64n256k32 (and refuses m64n40k32 with "Illegal matrix shape"): the table is right.
N: Final[dict[str, tuple[int, ...]]] = {
    ".f16": _FLOAT_N, ".bf16": _FLOAT_N, ".tf32": _FLOAT_N, ".e4m3": _FLOAT_N, ".e5m2": _FLOAT_N,
    ".s8": _INT_N, ".u8": _INT_N, ".b1": _INT_N,
}

#: 9.7.15.3: the accumulator types each multiplicand type allows.
DTYPES: Final[dict[str, tuple[str, ...]]] = {
    ".f16": (".f16", ".f32"), ".bf16": (".f32",), ".tf32": (".f32",), ".e4m3": (".f16", ".f32"),
    ".e5m2": (".f16", ".f32"), ".s8": (".s32",), ".u8": (".s32",), ".b1": (".s32",),
}

#: 9.7.15.5.2: ".atype and .btype must be the same for all floating point wgmma.mma_async variants except
#: for the FP8 floating point variants"; integers mix .s8 and .u8 (PTX ISA 8.4).
MIXED: Final[tuple[frozenset[str], ...]] = (frozenset({".e4m3", ".e5m2"}), frozenset({".s8", ".u8"}))

FLOATS: Final = frozenset({".f16", ".bf16", ".tf32", ".e4m3", ".e5m2"})
INTEGERS: Final = frozenset({".s8", ".u8"})

#: 9.7.15.5.2: "The transpose operation is only supported for the wgmma.mma_async variants with .f16/
#: .bf16 types on matrices accessed from shared memory using matrix descriptors."
TRANSPOSABLE: Final = frozenset({".f16", ".bf16"})
#: "The valid values of imm-scale-a and imm-scale-b are -1 and 1"; of imm-trans-a/-b 0 and 1.
SCALE_VALUES: Final = (-1, 1)
TRANS_VALUES: Final = (0, 1)

#: 9.7.15.5.2: "wgmma.mma_async operation involving type .tf32 will truncate lower 13 bits of the 32-bit
#: input data before multiplication is issued."
TF32_TRUNCATED_BITS: Final = 13

#: 9.7.15.5.1.2.2, Matrix Descriptor Format: (name, lowest bit, width) of the 64-bit descriptor. The
#: three addresses are stored as matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4.
DESCRIPTOR_FIELDS: Final[tuple[tuple[str, int, int], ...]] = (
    ("start", 0, 14), ("leading", 16, 14), ("stride", 32, 14), ("base_offset", 49, 3), ("swizzle", 62, 2),
)
DESCRIPTOR_ENCODE_MASK: Final = 0x3FFFF
DESCRIPTOR_ENCODE_SHIFT: Final = 4

#: The swizzle field: 0 none, 1 128-byte, 2 64-byte, 3 32-byte; the value is the swizzle's width in bytes
#: (None: no swizzle, the "interleaved" canonical layouts of 9.7.15.5.1.2.1.3).
SWIZZLE_BYTES: Final[dict[int, int | None]] = {0: None, 1: 128, 2: 64, 3: 32}

#: 9.7.15.5.1.2.2: the base offset is 0 when the swizzle's repeating pattern starts on this boundary.
PATTERN_BYTES: Final[dict[int, int]] = {128: 1024, 64: 512, 32: 256}

#: 9.7.15.5.1.2: "Each core matrix has 8 rows or columns and the size of each row is 16 bytes";
#: 9.7.15.5.1: "When the matrices are in shared memory, their starting addresses must be aligned to 16
#: bytes."
CORE_ROWS: Final = 8
CORE_ROW_BYTES: Final = 16
SMEM_ALIGN: Final = 16


#: 9.7.15.6 (the sparse forms' shapes): A is 2:4 sparse (1:2 for .tf32), so K is twice the dense
#: K of each .atype; there is no sparse .b1 form.
SPARSE_K: Final[dict[str, int]] = {t: 2 * k for t, k in K.items() if t != ".b1"}

#: 9.7.15.6 (wgmma.mma_async.sp): the sparsity selector `sp-sel`, an immediate: 0 or 1 for
#: .f16/.bf16/.tf32 (which thread pairs of a quad hold the metadata), 0 for the 8-bit types.
SPARSE_SELECTORS: Final[dict[str, tuple[int, ...]]] = {
    ".f16": (0, 1), ".bf16": (0, 1), ".tf32": (0, 1), ".e4m3": (0,), ".e5m2": (0,), ".s8": (0,), ".u8": (0,),
}


def registers(dtype: str, n: int) -> int:
    """9.7.15.5.1.1: the accumulator D of m64nN is N/2 registers of .f32/.s32, N/4 .f16x2 registers."""
    return n // 4 if dtype == ".f16" else n // 2


#: 9.7.15.5.1.1: matrix A in registers is "a vector expression containing four .b32 registers" (four
#: .f16x2 for .f16/.bf16) for every K.
A_REGISTERS: Final = 4


# -- wgmma.mma_async.sp (9.7.15.6): A structured-sparse, packed to M x K/2 -------------------------------
# K of the sparse shapes is `SPARSE_K`, the selectors `SPARSE_SELECTORS` (above). A packed row is 32 bytes
# as in the dense form; a row of B is 64 bytes of K.

#: 9.7.15.6.1: each chunk of 4 elements of a row of A keeps 2, and a 4-bit field of the metadata holds their
#: two 2-bit positions (the lower 2 bits the first kept element's); fields whose two positions are equal
#: (0b0000, 0b0101, 0b1010, 0b1111) are undefined. .tf32 is 1:2, its 4-bit field being the same thing on
#: 16-bit halves: 0b0100 (element 0 kept) and 0b1110 (element 1) are its only meaningful values. So the
#: metadata indexes units of this many bits, 4 to a chunk, 2 kept.
METADATA_UNIT_BITS: Final[dict[str, int]] = {t: min(ELEMENT_BITS[t], 16) for t in SPARSE_K}
TF32_METADATA: Final = (0b0100, 0b1110)
#: 9.7.15.6.3: sp-meta is a 32-bit register (ptxas 13.0 refuses an immediate: "Arguments mismatch").
METADATA_BITS: Final = 32


def metadata_field(atype: str, row: int, chunk: int, selector: int) -> tuple[int, int]:
    """Where the 4-bit metadata field of chunk `chunk` (of 4 units, `METADATA_UNIT_BITS`) of row `row` (of
    the warp's 16) sits: (lane, lowest bit). 9.7.15.6.2: each warp gives the metadata of its own 16 rows;
    the figures of 9.7.15.6.2.1-3 that place the fields are not in our text, so this is the layout the
    H100 records confirm (tests/hw/test_wgmma_replay.py, the sp_* cases; the sp_*_identity ones show
    the unpacked A itself). For 16-bit units (8 chunks a row) lanes 4g + 2*selector and 4g + 2*selector
    + 1 hold chunks 0-3 and 4-7 of rows g (bits 0-15) and g + 8 (bits 16-31); for 8-bit units (16
    chunks a row) every lane 4g + j holds chunks 8*(j//2) .. +7 of row g + 8*(j%2), chunk c at bits
    4*(c % 8). The first kept unit of a chunk is the field's low 2 bits (unordered pairs such as 0b0001
    put it after the second: recorded too)."""
    g, half = row % 8, row // 8
    if METADATA_UNIT_BITS[atype] == 16:
        return 4 * g + 2 * selector + chunk // 4, 16 * half + 4 * (chunk % 4)
    return 4 * g + half + 2 * (chunk // 8), 4 * (chunk % 8)
