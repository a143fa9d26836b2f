"""Facts of the warpgroup matrix multiply-accumulate instructions (PTX ISA 9.7.15), as data.

The simulator (`sim.mma`, `sim.isa.wgmma`) reads the shapes, the types, the descriptor's fields, the
swizzle modes and the register-fragment arithmetic from here. Section numbers are those of PTX ISA 9.1.
"""

from __future__ import annotations

from typing import Final

SECTION: Final = "9.7.15"
MMA_SECTION: Final = "9.7.15.5.2"          # wgmma.mma_async
SPARSE_SECTION: Final = "9.7.15.6"         # wgmma.mma_async.sp: sparse A, sm_90a (ptxas 13.0 assembles it)
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
