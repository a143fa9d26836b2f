"""The wgmma.mma_async conformance cases of `mbarrier.hw.wgmma` (PTX ISA 9.7.15), dense and sparse
(wgmma.mma_async.sp, 9.7.15.6): each case's form, layouts, immediates and kind of inputs."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.spec import wgmma as spec


@dataclass(frozen=True)
class Case:
    """One wgmma.mma_async: its form, where A comes from and how A and B are laid out (swizzle width in
    bytes, None for none; transposed: MN-major), the immediates, scale-d, and the inputs: "exact" (small
    values whose every partial sum is exact in the accumulator type: any summation order gives the same
    bits), "random" (full-range values: floats compared within a bound), "overflow" (integer sums past
    the s32 range), "identity" (sparse: B the K x K identity, so D shows the unpacked A) or "raw" (B
    K-major with a swizzle narrower than its K: the image all junk, B whatever the instruction reads
    there, the leading byte offset 4096; integers only, compared bit for bit). `sparse`:
    wgmma.mma_async.sp with sparsity selector `selector`."""

    name: str
    atype: str
    dtype: str
    n: int
    btype: str = ""
    a_regs: bool = False
    trans_a: int = 0
    trans_b: int = 0
    swizzle_a: int | None = None
    swizzle_b: int | None = None
    scale_d: bool = True
    scale_a: int = 1
    scale_b: int = 1
    satfinite: bool = False
    values: str = "exact"
    seed: int = 1
    sparse: bool = False
    selector: int = 0

    @property
    def b(self) -> str:
        return self.btype or self.atype

    @property
    def k(self) -> int:
        return spec.SPARSE_K[self.atype] if self.sparse else spec.K[self.atype]

    @property
    def kbytes(self) -> int:
        """Bytes of K in a row of B and of the unpacked A (a packed row of A is 32)."""
        return self.k * spec.ELEMENT_BITS[self.atype] // 8

    @property
    def floating(self) -> bool:
        return self.atype in spec.FLOATS

    @property
    def instruction(self) -> str:
        sat = ".satfinite" if self.satfinite else ""
        popc = ".and.popc" if self.atype == ".b1" else ""
        sp = ".sp" if self.sparse else ""
        return (f"wgmma.mma_async{sp}.sync.aligned.m64n{self.n}k{self.k}{sat}{self.dtype}{self.atype}"
                f"{self.b}{popc}")

    @property
    def d_registers(self) -> int:
        return spec.registers(self.dtype, self.n)


def _cases() -> list[Case]:
    out: list[Case] = []
    f32 = ".f32"
    for t in (".f16", ".bf16"):
        for sw in (None, 32, 64, 128):
            out.append(Case(f"{t[1:]}_ss_k_{sw or 'none'}", t, f32, 16, swizzle_a=sw, swizzle_b=sw))
            out.append(Case(f"{t[1:]}_ss_mn_{sw or 'none'}", t, f32, 16, trans_a=1, trans_b=1, swizzle_a=sw,
                            swizzle_b=sw))
        out.append(Case(f"{t[1:]}_rs_k", t, f32, 24, a_regs=True, swizzle_b=128))
        out.append(Case(f"{t[1:]}_rs_mn", t, f32, 32, a_regs=True, trans_b=1, swizzle_b=64))
        out.append(Case(f"{t[1:]}_neg", t, f32, 8, scale_a=-1, scale_b=-1, swizzle_a=128, swizzle_b=32))
        out.append(Case(f"{t[1:]}_nod", t, f32, 8, scale_d=False, scale_b=-1))
        out.append(Case(f"{t[1:]}_random", t, f32, 64, swizzle_a=128, swizzle_b=128, values="random"))
        out.append(Case(f"{t[1:]}_n256", t, f32, 256, swizzle_a=128, swizzle_b=128, seed=2))
    out.append(Case("f16_f16acc", ".f16", ".f16", 32, swizzle_a=64, swizzle_b=64))
    out.append(Case("f16_f16acc_random", ".f16", ".f16", 16, values="random", trans_b=1))
    out.append(Case("f16_f16acc_rs_n256", ".f16", ".f16", 256, a_regs=True, swizzle_b=128))
    for sw in (None, 32, 128):
        out.append(Case(f"tf32_{sw or 'none'}", ".tf32", f32, 16, swizzle_a=sw, swizzle_b=sw))
    out.append(Case("tf32_rs", ".tf32", f32, 8, a_regs=True, swizzle_b=64, scale_a=-1))
    out.append(Case("tf32_random", ".tf32", f32, 32, values="random", swizzle_a=128, swizzle_b=128))
    for a, b in ((".e4m3", ".e4m3"), (".e4m3", ".e5m2"), (".e5m2", ".e4m3"), (".e5m2", ".e5m2")):
        name = f"{a[1:]}_{b[1:]}"
        out.append(Case(name, a, f32, 16, btype=b, swizzle_a=128, swizzle_b=64))
        out.append(Case(name + "_f16acc", a, ".f16", 8, btype=b))
    out.append(Case("e4m3_rs", ".e4m3", f32, 24, a_regs=True, swizzle_b=32, scale_b=-1))
    out.append(Case("e4m3_random", ".e4m3", f32, 64, values="random", swizzle_a=128, swizzle_b=128))
    out.append(Case("e5m2_random_f16acc", ".e5m2", ".f16", 16, values="random"))
    for a, b in ((".s8", ".s8"), (".u8", ".u8"), (".s8", ".u8"), (".u8", ".s8")):
        name = f"{a[1:]}_{b[1:]}"
        out.append(Case(name, a, ".s32", 16, btype=b, swizzle_a=128, swizzle_b=128, values="random"))
    out.append(Case("s8_none", ".s8", ".s32", 8, values="random"))
    out.append(Case("s8_rs", ".s8", ".s32", 24, a_regs=True, swizzle_b=32, values="random"))
    out.append(Case("s8_wrap", ".s8", ".s32", 8, values="overflow"))
    out.append(Case("s8_satfinite", ".s8", ".s32", 8, satfinite=True, values="overflow"))
    out.append(Case("u8_n256", ".u8", ".s32", 256, swizzle_a=128, swizzle_b=128, values="random"))
    out.append(Case("b1", ".b1", ".s32", 16, swizzle_a=128, swizzle_b=64, values="random"))
    out.append(Case("b1_rs", ".b1", ".s32", 8, a_regs=True, values="random"))
    return out + _sparse_cases()


def _sparse_cases() -> list[Case]:
    """wgmma.mma_async.sp: every type and pairing, each selector, SS and RS, K- and MN-major, N 8..256."""
    f32 = ".f32"

    def sp(name: str, atype: str, dtype: str, n: int, **kw: object) -> Case:
        return Case("sp_" + name, atype, dtype, n, sparse=True, **kw)  # type: ignore[arg-type]

    out: list[Case] = []
    for t in (".f16", ".bf16"):
        x = t[1:]
        out.append(sp(f"{x}_identity", t, f32, 32, values="identity", scale_d=False, swizzle_b=128))
        out.append(sp(f"{x}_identity_sel1", t, f32, 32, values="identity", scale_d=False, swizzle_b=128,
                      selector=1))
        out.append(sp(f"{x}_ss_k_none", t, f32, 16))
        out.append(sp(f"{x}_ss_k_128_sel1", t, f32, 32, swizzle_a=128, swizzle_b=128, selector=1))
        out.append(sp(f"{x}_ss_k_64", t, f32, 8, swizzle_a=32, swizzle_b=64))
        out.append(sp(f"{x}_ss_mn_64", t, f32, 16, trans_a=1, trans_b=1, swizzle_a=64, swizzle_b=64))
        out.append(sp(f"{x}_ss_mn_none_sel1", t, f32, 16, trans_a=1, trans_b=1, selector=1))
        out.append(sp(f"{x}_rs_sel1", t, f32, 24, a_regs=True, swizzle_b=128, selector=1))
        out.append(sp(f"{x}_rs_mn", t, f32, 16, a_regs=True, trans_b=1, swizzle_b=32))
        out.append(sp(f"{x}_neg", t, f32, 8, scale_a=-1, scale_b=-1, swizzle_a=128, swizzle_b=64))
        out.append(sp(f"{x}_random", t, f32, 64, swizzle_a=128, swizzle_b=128, values="random"))
    out.append(sp("f16_f16acc", ".f16", ".f16", 16, swizzle_a=64, swizzle_b=64, selector=1))
    out.append(sp("f16_nod_n256", ".f16", f32, 256, swizzle_a=128, swizzle_b=128, scale_d=False))
    out.append(sp("f16_identity_rs", ".f16", f32, 32, values="identity", scale_d=False, swizzle_b=128,
                  a_regs=True))
    out.append(sp("tf32_identity", ".tf32", f32, 16, values="identity", scale_d=False, swizzle_b=64))
    out.append(sp("tf32_identity_sel1", ".tf32", f32, 16, values="identity", scale_d=False, swizzle_b=64,
                  selector=1))
    out.append(sp("tf32_identity_rs", ".tf32", f32, 16, values="identity", scale_d=False, swizzle_b=128,
                  a_regs=True, selector=1))
    out.append(sp("tf32_none", ".tf32", f32, 16))
    out.append(sp("tf32_128_sel1", ".tf32", f32, 32, swizzle_a=128, swizzle_b=128, selector=1))
    out.append(sp("tf32_rs_sel1", ".tf32", f32, 8, a_regs=True, swizzle_b=64, scale_a=-1, selector=1))
    out.append(sp("tf32_random", ".tf32", f32, 32, values="random", swizzle_a=128, swizzle_b=128))
    out.append(sp("e4m3_identity", ".e4m3", f32, 64, values="identity", scale_d=False, swizzle_b=128))
    out.append(sp("s8_identity", ".s8", ".s32", 64, values="identity", scale_d=False, swizzle_b=64))
    out.append(sp("s8_identity_rs", ".s8", ".s32", 64, values="identity", scale_d=False, swizzle_b=128,
                  a_regs=True))
    for a, b in ((".e4m3", ".e4m3"), (".e4m3", ".e5m2"), (".e5m2", ".e4m3"), (".e5m2", ".e5m2")):
        out.append(sp(f"{a[1:]}_{b[1:]}", a, f32, 16, btype=b, swizzle_a=128, swizzle_b=128))
    out.append(sp("e5m2_f16acc", ".e5m2", ".f16", 8, btype=".e4m3"))
    out.append(sp("e4m3_rs", ".e4m3", f32, 24, a_regs=True, swizzle_b=64, scale_b=-1))
    out.append(sp("e4m3_random", ".e4m3", f32, 64, values="random", swizzle_a=128, swizzle_b=128))
    for a, b in ((".s8", ".s8"), (".u8", ".u8"), (".s8", ".u8"), (".u8", ".s8")):
        out.append(sp(f"{a[1:]}_{b[1:]}", a, ".s32", 16, btype=b, swizzle_a=128, swizzle_b=128,
                      values="random"))
    out.append(sp("u8_none", ".u8", ".s32", 8, values="random"))
    out.append(sp("s8_rs", ".s8", ".s32", 24, a_regs=True, swizzle_b=64, values="random"))
    out.append(sp("s8_satfinite", ".s8", ".s32", 8, satfinite=True, values="overflow"))
    out.append(sp("u8_n256", ".u8", ".s32", 256, swizzle_a=128, swizzle_b=128, values="random"))
    out.append(sp("s8_raw_sw32", ".s8", ".s32", 16, swizzle_a=128, swizzle_b=32, values="raw"))
    out.append(sp("u8_raw_sw32_rs", ".u8", ".s32", 8, a_regs=True, swizzle_b=32, values="raw"))
    return out


CASES: tuple[Case, ...] = tuple(_cases())
BY_NAME: dict[str, Case] = {c.name: c for c in CASES}
