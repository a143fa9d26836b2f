"""wgmma (PTX ISA 9.7.15): the matrix descriptor (9.7.15.5.1.2.2), the shared-memory layouts
(9.7.15.5.1.2.1), the register fragments (9.7.15.5.1.1) and the arithmetic of wgmma.mma_async (9.7.15.5.2)
and of its sparse form (9.7.15.6: the metadata, the unpacked A, K doubled) against the conformance cases'
own derivation of the layouts (`mbarrier.hw.wgmma`, written apart from `mbarrier.sim.mma`) and a numpy
reference; the asynchronous rules of wgmma.fence, commit_group and wait_group (9.7.15.7) as findings."""

from __future__ import annotations

import numpy as np
import pytest

from mbarrier import explore, sim
from mbarrier.hw import wgmma as cases
from mbarrier.ptx.parser import parse
from mbarrier.sim import mma
from mbarrier.sim.races import track
from mbarrier.spec import wgmma as spec

from .helpers import module, run

# -- the descriptor and the layouts, without the machine --------------------------------------------------


def test_the_descriptor_fields_are_those_of_the_table() -> None:
    """9.7.15.5.1.2.2: start 13-0, leading 29-16, stride 45-32, base offset 51-49, swizzle 63-62, the
    addresses as (x & 0x3FFFF) >> 4; swizzle 0 none, 1 128B, 2 64B, 3 32B."""
    desc = (0x1234 >> 4) | (0x80 >> 4) << 16 | (0x400 >> 4) << 32 | 5 << 49 | 2 << 62
    d = mma.decode(desc)
    assert (d.start, d.leading, d.stride, d.base_offset, d.swizzle) == (0x1230, 0x80, 0x400, 5, 64)
    assert mma.decode(mma.encode(0x40000 + 0x2340, 256, 1024, 128)).start == 0x2340  # 18 bits of address
    assert [mma.decode(m << 62).swizzle for m in range(4)] == [None, 128, 64, 32]


def test_the_encoded_offsets_of_the_manuals_examples() -> None:
    """9.7.15.5.1.2.1.3's examples: K-major no-swizzle tf32 LBO 64*4 -> 16, SBO 32*4 -> 8; MN-major 64B
    bf16 LBO 256*2 -> 32, SBO 512*2 -> 64."""
    d = mma.decode(mma.encode(0, 64 * 4, 32 * 4, None))
    assert (d.leading >> 4, d.stride >> 4) == (16, 8)
    d = mma.decode(mma.encode(0, 256 * 2, 512 * 2, 64))
    assert (d.leading >> 4, d.stride >> 4) == (32, 64)


def test_swizzle_xors_the_16_byte_chunk_with_the_row_of_the_pattern() -> None:
    """Swizzle<3,4,3> (128B): bits 4-6 of the address ^= bits 7-9; <2,4,3> and <1,4,3> likewise."""
    assert mma.swizzled(0x380 + 0x10, 128) == 0x380 + 0x60
    assert mma.swizzled(0x380 + 0x10, 64) == 0x380 + 0x20
    assert mma.swizzled(0x380 + 0x10, 32) == 0x380 + 0x00
    assert mma.swizzled(0x390, None) == 0x390


DERIVED = [c for c in cases.CASES if c.values != "raw"]  # "raw" B is only what the H100 read (replayed)


@pytest.mark.parametrize("case", DERIVED, ids=[c.name for c in DERIVED])
def test_gather_and_multiply_agree_with_the_cases_derivation(case: cases.Case) -> None:
    """Every conformance case without the machine: the matrices read through the descriptors are the
    ones the case placed (a sparse A unpacked by each lane's metadata is the case's A), and D is the
    numpy reference (exactly for exact and integer inputs)."""
    inp = cases.inputs(case)
    form = mma.parse_form(tuple("." + q for q in case.instruction.split(".")[1:]), case.a_regs)
    image = inp.image

    def read(at: int) -> bytes:
        return image[at:at + 16]

    b, chunks = mma.gather(mma.decode(inp.layout_b.descriptor() | inp.layout_b.start >> 4), range(case.n),
                           bool(case.trans_b), spec.ELEMENT_BITS[case.b], read, form.b_bytes)
    assert np.array_equal(b, inp.b) and all(at % 16 == 0 for at in chunks)
    out = np.zeros((64, case.n))
    for warp in range(4):
        rows = range(16 * warp, 16 * warp + 16)
        if case.a_regs:
            lanes = [tuple(int(x) for x in inp.a_regs[32 * warp + lane]) for lane in range(32)]
            a = mma.a_from_registers(lanes)
        else:
            assert inp.layout_a is not None
            a, _ = mma.gather(mma.decode(inp.layout_a.descriptor() | inp.layout_a.start >> 4), rows,
                              bool(case.trans_a), spec.ELEMENT_BITS[case.atype], read)
        if case.sparse:
            assert inp.a_packed is not None and inp.meta is not None
            assert np.array_equal(a, inp.a_packed[16 * warp:16 * warp + 16])
            meta = [int(x) for x in inp.meta[32 * warp:32 * warp + 32]]
            a = mma.unpack_sparse(form, a, meta, case.selector)
        assert np.array_equal(a, inp.a[16 * warp:16 * warp + 16])
        regs = [tuple(int(x) for x in inp.d[32 * warp + lane]) for lane in range(32)]
        d = mma.d_to_matrix(form, regs) if case.scale_d else None
        out[16 * warp:16 * warp + 16] = mma.multiply(form, a, b, d, case.scale_a, case.scale_b)
    ref, scale = cases.reference(case, inp)
    if case.floating:
        ref = ref.astype(np.float16 if case.dtype == ".f16" else np.float32).astype(np.float64)
    assert np.all(np.abs(out - ref) <= cases.bound(case, scale)), case.name


def test_fragments_are_the_clayout_of_the_isa() -> None:
    """9.7.15.5.1.1: the simulator's accumulator and A fragments against the CuTe layouts of the cases."""
    for tid in range(128):
        for i in range(64):
            r, c = mma.d_element(tid % 32, i)
            assert (16 * (tid // 32) + r, c) == cases.d_position(tid, i)
        for reg in range(4):
            r, at = mma.a_fragment_bytes(tid % 32, reg)
            assert (16 * (tid // 32) + r, at) == cases.a_position(tid, reg, 0)


@pytest.mark.parametrize("quals, why", [
    (".m64n40k32.s32.s8.s8", "shape"), (".m64n8k16.f32.f16.bf16", "multiplicand types"),
    (".m64n8k16.f16.bf16.bf16", "accumulator"), (".m64n8k16.satfinite.f32.f16.f16", "satfinite"),
    (".m64n8k256.s32.b1.b1", "popc"), (".m64n8k8.f32.f16.f16", "shape"), (".m64n264k16.f32.f16.f16", "shape"),
    ("sp.m64n8k16.f32.f16.f16", "shape"), ("sp.m64n8k512.s32.b1.b1.and.popc", "no sparse form"),
    ("sp.m64n40k64.s32.s8.s8", "shape"), ("sp.m64n8k32.f32.tf32.tf32", "shape"),
])
def test_forms_the_isa_does_not_define_are_refused(quals: str, why: str) -> None:
    sp = quals.startswith("sp.")
    text = f"mma_async.sp.sync.aligned.{quals[3:]}" if sp else f"mma_async.sync.aligned{quals}"
    with pytest.raises(mma.FormError, match=why):
        mma.parse_form(tuple("." + q for q in text.split(".")), False)


def test_the_sparse_shapes_double_k() -> None:
    """9.7.15.2, 9.7.15.6.3: m64nNk16 for .tf32, k32 for .f16/.bf16, k64 for FP8 and 8-bit integers, the
    dense N; sp-meta and sp-sel come after b-desc; a row of B is 64 bytes."""
    for quals, k, operands in ((".m64n256k16.f32.tf32.tf32", 16, 8), (".m64n8k32.f16.f16.f16", 32, 10),
                               (".m64n24k64.f16.e5m2.e4m3", 64, 8),
                               (".m64n240k64.satfinite.s32.u8.s8", 64, 6)):
        form = mma.parse_form(tuple("." + q for q in f"mma_async.sp.sync.aligned{quals}".split(".")), False)
        assert form.sparse and form.k == k and form.b_bytes == 64 and form.operands() == operands


def test_the_shape_table_of_the_spec() -> None:
    """9.7.15.2: N up to 256 for every type; the integer and .b1 forms skip 40, 56, 72 ... (N = 16i from
    48); K is 32 bytes of each row."""
    assert spec.N[".f16"][-1] == spec.N[".s8"][-1] == spec.N[".b1"][-1] == 256
    assert 40 not in spec.N[".s8"] and 48 in spec.N[".s8"] and 40 in spec.N[".e4m3"]
    assert {t: spec.K[t] for t in (".f16", ".tf32", ".e4m3", ".s8", ".b1")} == \
        {".f16": 16, ".tf32": 8, ".e4m3": 32, ".s8": 32, ".b1": 256}


# -- whole kernels on the machine --------------------------------------------------------------------------
MACHINE_CASES = ["f16_ss_k_none", "f16_ss_mn_128", "bf16_ss_k_64", "bf16_rs_mn", "f16_neg", "f16_nod",
                 "f16_f16acc", "tf32_32", "tf32_rs", "e4m3_e5m2", "e5m2_e4m3_f16acc", "s8_u8", "s8_rs",
                 "s8_satfinite", "s8_wrap", "b1", "b1_rs", "bf16_random", "sp_f16_rs_sel1",
                 "sp_bf16_ss_mn_none_sel1", "sp_tf32_128_sel1", "sp_e5m2_e4m3", "sp_s8_rs", "sp_s8_satfinite"]


def case_run(case: cases.Case, seed: int = 1) -> tuple[explore.RunResult, sim.Machine, cases.Inputs]:
    inp = cases.inputs(case)
    blob = inp.blob()
    m = sim.launch(parse(cases.ptx(case, inp), f"{case.name}.ptx"), cases.KERNEL, grid=1, block=128,
                   args={"in": sim.Buffer(len(blob), blob), "out": sim.Buffer(cases.out_bytes(case))})
    track(m)
    return explore.run(m, explore.RandomScheduler(seed)), m, inp


@pytest.mark.parametrize("name", MACHINE_CASES)
def test_a_warpgroup_runs_the_case_kernel(name: str) -> None:
    """The case's PTX (the one the GPU runs) under `run` with races tracked: it exits, no race, and the
    accumulators equal the numpy reference (the bound of `cases.bound`: 0 for exact inputs)."""
    case = cases.BY_NAME[name]
    r, m, inp = case_run(case)
    assert r.outcome == "exited", r.message
    base, size = m.buffers["out"]
    regs = np.frombuffer(m.gmem.read(base, size), "<u4").reshape(128, case.d_registers)
    got = cases.matrix_of(case, regs)
    ref, scale = cases.reference(case, inp)
    if case.floating:
        ref = ref.astype(np.float16 if case.dtype == ".f16" else np.float32).astype(np.float64)
    assert np.all(np.abs(got - ref) <= cases.bound(case, scale))


# -- the asynchronous rules (9.7.15.7) ----------------------------------------------------------------------
# 128 threads; 4 KiB of shared memory filled with f16 1.0 (each thread 32 bytes), fenced for the async proxy;
# %rd1 a K-major no-swizzle descriptor of it (LBO 128, SBO 256): every element of A and B is 1.0.
PRELUDE = """
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .f32 %d<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 smem[4096];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, smem;
    shl.b32 %r3, %r1, 5;
    add.u32 %r3, %r2, %r3;
    mov.b32 %r4, 0x3c003c00;
    st.shared.v4.u32 [%r3], {%r4, %r4, %r4, %r4};
    st.shared.v4.u32 [%r3+16], {%r4, %r4, %r4, %r4};
    fence.proxy.async.shared::cta;
    bar.sync 0;
    cvt.u64.u32 %rd1, %r2;
    shr.u64 %rd1, %rd1, 4;
    or.b64 %rd1, %rd1, 0x1000080000;
    mov.f32 %d0, 0f00000000;
    mov.f32 %d1, 0f00000000;
    mov.f32 %d2, 0f00000000;
    mov.f32 %d3, 0f00000000;
"""
MMA = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d0, %d1, %d2, %d3}, %rd1, %rd1, 1, 1, 1, 0, 0;"
MMA_N16 = ("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, "
           "%rd1, %rd1, 1, 1, 1, 0, 0;")
FENCE, COMMIT = "wgmma.fence.sync.aligned;", "wgmma.commit_group.sync.aligned;"
STORE = """
    ld.param.u64 %rd2, [out];
    mul.wide.u32 %rd3, %r1, 16;
    add.u64 %rd2, %rd2, %rd3;
    st.global.v4.f32 [%rd2], {%d0, %d1, %d2, %d3};
"""


def _kernel(*lines: str, prelude: str = PRELUDE) -> sim.Machine:
    body = prelude + "\n".join(f"    {x}" for x in lines) + STORE + "    ret;"
    m = sim.launch(module(body), grid=1, block=128, args={"out": sim.Buffer(128 * 16)})
    track(m)
    return m


def _outcome(m: sim.Machine, seed: int = 0) -> explore.RunResult:
    return explore.run(m, explore.RandomScheduler(seed))


def _d0(m: sim.Machine) -> float:
    base, _ = m.buffers["out"]
    return float(np.frombuffer(m.gmem.read(base, 4), "<f4")[0])


def test_chained_accumulators_of_one_shape_need_no_fence() -> None:
    """9.7.15.7.1's exception: accumulator accesses across wgmma.mma_async of the same shape are ordered;
    two of them in one group add up (K = 16 ones: 16, then 32)."""
    for seed in range(4):
        m = _kernel(FENCE, MMA, MMA, COMMIT, "wgmma.wait_group.sync.aligned 0;")
        r = _outcome(m, seed)
        assert r.outcome == "exited", r.message
        assert _d0(m) == 32.0


def test_wait_group_n_retires_all_but_the_n_most_recent_groups() -> None:
    """9.7.15.7.3: wait_group 1 with two groups retires the first (its accumulator is readable), while the
    second still owns its registers."""
    m = _kernel(FENCE, MMA, COMMIT, "mov.f32 %d4, 0f00000000;", "mov.f32 %d5, 0f00000000;",
                "mov.f32 %d6, 0f00000000;", "mov.f32 %d7, 0f00000000;", FENCE,
                "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d4, %d5, %d6, %d7}, %rd1, %rd1, "
                "0, 1, 1, 0, 0;", COMMIT, "wgmma.wait_group.sync.aligned 1;", "mov.f32 %f1, %d0;",
                "mov.f32 %f2, %d4;", "wgmma.wait_group.sync.aligned 0;")
    r = _outcome(m)
    assert r.outcome == "violation" and r.rule == "wgmma-register-inflight", r.message
    assert "%d4" in r.message and r.site is not None and r.site.text == "mov.f32 %f2, %d4;"


@pytest.mark.parametrize("lines, rule, words", [
    ((MMA, COMMIT, "wgmma.wait_group.sync.aligned 0;"), "wgmma-fence-missing", "no wgmma.fence before it"),
    ((FENCE, "mov.f32 %d2, 0f3f800000;", MMA, COMMIT, "wgmma.wait_group.sync.aligned 0;"),
     "wgmma-fence-missing", "accessed register %d2 at line"),
    ((FENCE, MMA, MMA_N16, COMMIT, "wgmma.wait_group.sync.aligned 0;"), "wgmma-fence-missing",
     "of shape .m64n8k16"),
    ((FENCE, MMA, COMMIT, "add.f32 %d1, %d1, %d1;", "wgmma.wait_group.sync.aligned 0;"),
     "wgmma-register-inflight", "still owns"),
    ((FENCE, MMA, COMMIT, "wgmma.wait_group.sync.aligned 1;", "st.shared.f32 [smem], %d3;"),
     "wgmma-register-inflight", "still owns"),
])
def test_register_rules_are_findings(lines: tuple[str, ...], rule: str, words: str) -> None:
    """9.7.15.7.1 (a wgmma.fence before the first wgmma.mma_async and between a register access and a
    wgmma.mma_async using the register) and 9.7.15.7.3 (the accumulator belongs to the operation until a
    wait_group retires it) are findings of `run`, with their rule and section."""
    r = _outcome(_kernel(*lines))
    assert r.outcome == "violation" and r.rule == rule and words in (r.message or ""), r.message
    assert r.section and r.section.startswith("9.7.15.7")


def test_fence_after_the_access_makes_it_legal() -> None:
    m = _kernel(FENCE, "mov.f32 %d2, 0f3f800000;", FENCE, MMA, COMMIT, "wgmma.wait_group.sync.aligned 0;")
    r = _outcome(m)
    assert r.outcome == "exited", r.message
    assert _d0(m) == 16.0


def test_lanes_must_agree_and_the_warpgroup_be_whole() -> None:
    """9.7.15.5.2: .aligned, one descriptor for the warpgroup; 9.7.15.1: four warps."""
    varying = PRELUDE + "    cvt.u64.u32 %rd4, %r1;\n    and.b64 %rd4, %rd4, 1;\n"
    varying += "    add.u64 %rd1, %rd1, %rd4;\n"
    r = _outcome(_kernel(FENCE, MMA, COMMIT, "wgmma.wait_group.sync.aligned 0;", prelude=varying))
    assert r.outcome == "violation" and r.rule == "wgmma-not-aligned", r.message
    body = PRELUDE + f"    {FENCE}\n    {MMA}\n    ret;"
    m = sim.launch(module(body), grid=1, block=64, args={"out": sim.Buffer(64)})
    r = _outcome(m)
    assert r.outcome == "violation" and r.rule == "wgmma-not-aligned" and "4 warps" in (r.message or "")


def test_generic_writes_need_a_proxy_fence_before_the_wgmma_reads_them() -> None:
    """9.7.15.4: wgmma.mma_async reads shared memory in the async proxy; without fence.proxy.async after
    the st.shared, the read races (rule proxy-fence)."""
    m = _kernel(FENCE, MMA, COMMIT, "wgmma.wait_group.sync.aligned 0;",
                prelude=PRELUDE.replace("fence.proxy.async.shared::cta;", ""))
    r = _outcome(m)
    assert r.outcome == "race" and r.rule == "proxy-fence", r.message
    assert "wgmma.mma_async" in (r.message or "")


def test_forms_the_simulator_refuses_stop_the_run_naming_them() -> None:
    r = run(module(PRELUDE + "    wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d0, %d1}, %rd1, %rd1, "
                   "1, 1, 1, 0, 0;\n    ret;"), grid=1, block=128, args={"out": sim.Buffer(16)})
    assert r.outcome == "unsupported" and "vector of 4 registers" in (r.message or "")


# -- wgmma.mma_async.sp (9.7.15.6) --------------------------------------------------------------------------
# The prelude's ones as a packed A (K-major, no swizzle) and a B with 64 bytes of K (chunk c at c * LBO);
# %r5 the metadata: every field 0b0100 (the two kept halves at positions 0 and 1): D = 16 ones.
SPARSE = PRELUDE + "    mov.b32 %r5, 0x44444444;\n"
SPMMA = ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%d0, %d1, %d2, %d3}, %rd1, %rd1, %r5, 0, "
         "1, 1, 1, 0, 0;")


def test_a_sparse_wgmma_sums_the_kept_half_of_k() -> None:
    m = _kernel(FENCE, SPMMA, COMMIT, "wgmma.wait_group.sync.aligned 0;", prelude=SPARSE)
    r = _outcome(m)
    assert r.outcome == "exited", r.message
    assert _d0(m) == 16.0


@pytest.mark.parametrize("lines, rule, words", [
    ((FENCE, SPMMA, COMMIT, "mov.b32 %r5, 0x44444444;", "wgmma.wait_group.sync.aligned 0;"),
     "wgmma-register-inflight", "register %r5"),
    ((FENCE, "mov.b32 %r5, 0x44444444;", SPMMA, COMMIT, "wgmma.wait_group.sync.aligned 0;"),
     "wgmma-fence-missing", "accessed register %r5 at line"),
    ((FENCE, "mov.b32 %r5, 0x44444440;", FENCE, SPMMA, COMMIT, "wgmma.wait_group.sync.aligned 0;"),
     "kernel-fault", "0b0000 at bits 3..0"),
])
def test_the_metadata_register_follows_the_rules_of_a(lines: tuple[str, ...], rule: str, words: str) -> None:
    """The metadata register is an input of the operation as A's fragment is: owned until wait_group
    retires it (9.7.15.7.3), fenced after an ordinary access (9.7.15.7.1); a field naming one position
    twice is undefined (9.7.15.6.1), a finding at the wgmma.mma_async.sp."""
    r = _outcome(_kernel(*lines, prelude=SPARSE))
    assert r.outcome == "violation" and r.rule == rule and words in (r.message or ""), r.message


@pytest.mark.parametrize("instruction, words", [
    (SPMMA.replace("%r5, 0,", "%r5, 2,"), "sp-sel 2: .f16 takes 0 or 1"),
    (SPMMA.replace("%r5, 0,", "0x44444444, 0,"), "sp-meta must be a 32-bit register"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.s8 {%d0, %d1, %d2, %d3}, %rd1, %rd1, %r5, 1, 1;",
     "sp-sel 1: .s8 takes 0"),
])
def test_sparse_operands_ptxas_refuses_stop_the_run(instruction: str, words: str) -> None:
    """9.7.15.6.3: sp-sel is 0 or 1 (16- and 32-bit types) or 0 (8-bit); sp-meta a register (ptxas 13.0
    refuses the others)."""
    r = run(module(SPARSE + f"    {instruction}\n    ret;"), grid=1, block=128, args={"out": sim.Buffer(16)})
    assert r.outcome == "unsupported" and words in (r.message or ""), r.message


@pytest.mark.parametrize("offset, outcome", [(2048 + 3 * 128, "race"), (2048 + 512, "exited")])
def test_the_second_half_of_b_is_in_flight_until_wait_group(offset: int, outcome: str) -> None:
    """B at 2048 (LBO 128): its K-chunk 3 (bytes 48-63 of K, which only the sparse form reads) at +384 is
    read in flight; a store there before wgmma.wait_group races with it (wgmma-operand-inflight when the
    read lands first, data-race when the store does), one past B's last row does not."""
    b = "add.u64 %rd2, %rd1, 128;"   # descriptor start + 2048 bytes
    mma = SPMMA.replace("%rd1, %rd1, %r5", "%rd1, %rd2, %r5")
    store = f"@%p1 st.shared.u32 [smem+{offset}], %r4;"
    m = _kernel(b, "setp.eq.u32 %p1, %r1, 0;", FENCE, mma, COMMIT, store, "wgmma.wait_group.sync.aligned 0;",
                prelude=SPARSE)
    r = _outcome(m)
    assert r.outcome == outcome, r.message
    if outcome == "race":
        assert r.rule in ("wgmma-operand-inflight", "data-race") and "wgmma.mma_async" in (r.message or "")
