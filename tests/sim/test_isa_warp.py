"""The small instructions of warp-specialized sm_90a kernels: packed cvt, match.sync, setmaxnreg's rules,
brkpt, a call of __assertfail, %envreg, prefetch.tensormap, fence.proxy variants, griddepcontrol, and
ldmatrix/stmatrix against the fragment layouts of the PTX ISA (Warp Level Matrix instructions)."""

from __future__ import annotations

import pytest
from tests.sim.helpers import HEADER, module, run, words

from mbarrier import sim
from mbarrier.ptx.parser import parse
from mbarrier.spec.checks import ASSERTION, BRKPT, KERNEL_FAULT, SETMAXNREG

REGS = """
    .reg .pred %p<8>;
    .reg .b16 %h<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
"""


def test_packed_cvt_puts_a_in_the_upper_half() -> None:
    """cvt.rn.f16x2.f32 d, a, b: d[31:16] = cvt(a), d[15:0] = cvt(b); .relu, .satfinite, bf16 too."""
    body = REGS + """
        ld.param.u64 %rd0, [out];
        mov.b32 %f1, 0f3FC00000;                 // 1.5
        mov.b32 %f2, 0fC0400000;                 // -3
        mov.b32 %f3, 0f477FF000;                 // 65520: beyond the largest f16
        cvt.rn.f16x2.f32 %r1, %f1, %f2;
        cvt.rn.relu.bf16x2.f32 %r2, %f1, %f2;
        cvt.rn.satfinite.f16x2.f32 %r3, %f3, %f2;
        cvt.rn.f16x2.f32 %r4, %f3, %f1;
        cvt.rz.bf16.f32 %h1, %f2;
        cvt.f32.bf16 %f4, %h1;
        cvt.rn.f16.f32 %h2, %f1;
        cvt.f32.f16 %f5, %h2;
        cvt.u32.u16 %r5, %h1;
        st.global.v4.u32 [%rd0], {%r1, %r2, %r3, %r4};
        st.global.u32 [%rd0+16], %r5;
        st.global.f32 [%rd0+20], %f4;
        st.global.f32 [%rd0+24], %f5;
        ret;
    """
    r = run(module(body), args={"out": sim.Buffer(64)})
    assert r.ok, r.message
    assert words(r.machine, "out", 7) == [0x3E00C200, 0x3FC00000, 0x7BFFC200, 0x7C003E00, 0xC040,
                                          0xC0400000, 0x3FC00000]


@pytest.mark.parametrize("line, why", [
    ("cvt.rm.f16x2.f32 %r1, %f1, %f2;", "rounding modifier"),
    ("cvt.f16x2.f32 %r1, %f1, %f2;", "rounding modifier"),
    ("cvt.rn.bf16.s32 %h1, %r1;", "16-bit float conversions"),
    ("cvt.rn.relu.f32.f64 %f1, %fd1;", "16-bit float conversions"),
])
def test_cvt_forms_outside_the_model_stop_loudly(line: str, why: str) -> None:
    body = REGS + "    .reg .f64 %fd<2>;\n    " + line + "\n    ret;"
    r = run(module(body), args={"out": sim.Buffer(8)})
    assert r.outcome == "unsupported" and why in r.message, r.message
    assert r.site is not None and r.site.text.startswith(line.split()[0])


def test_match_any_and_all() -> None:
    """match.any: the lanes holding this lane's value; match.all: the mask and true when all agree."""
    body = REGS + """
        ld.param.u64 %rd0, [out];
        mov.u32 %r1, %laneid;
        and.b32 %r2, %r1, 3;
        cvt.u64.u32 %rd1, %r2;
        match.any.sync.b64 %r3, %rd1, 0xffffffff;
        match.all.sync.b32 %r4|%p1, %r2, 0xffffffff;
        selp.u32 %r5, 1, 0, %p1;
        setp.lt.u32 %p3, %r1, 16;
        @!%p3 bra DONE;
        match.all.sync.b32 %r6|%p2, 7, 0x0000ffff;
        selp.u32 %r7, 1, 0, %p2;
        mul.wide.u32 %rd2, %r1, 16;  add.s64 %rd2, %rd0, %rd2;
        st.global.v4.u32 [%rd2], {%r3, %r5, %r6, %r7};
    DONE:
        ret;
    """
    r = run(module(body), seed=2, block=32, args={"out": sim.Buffer(16 * 16)})
    assert r.ok, r.message
    got = words(r.machine, "out", 64)
    for lane in range(16):
        assert got[4 * lane:4 * lane + 4] == [0x11111111 << (lane % 4), 0, 0xFFFF, 1]


def _setmaxnreg(body: str, block: int = 128) -> sim.Machine | str:
    r = run(module(REGS + body + "\n    ret;"), seed=1, block=block, args={"out": sim.Buffer(8)})
    return r.machine if r.ok else f"{r.outcome}:{r.rule}:{r.message}"


def test_setmaxnreg_warp_specialized_roles_run() -> None:
    """The CUTLASS pattern: warpgroup 0 (the producer) .dec, warpgroup 1 (consumers) .inc, once each."""
    body = """
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 128;
        @%p1 bra PRODUCER;
        setmaxnreg.inc.sync.aligned.u32 232;
        bra DONE;
    PRODUCER:
        setmaxnreg.dec.sync.aligned.u32 40;
    DONE:
    """
    got = _setmaxnreg(body, block=256)
    assert isinstance(got, sim.Machine), got
    warps = [got.threads[32 * i].warp for i in range(8)]
    assert [w.nreg[0][1:] for w in warps if w is not None] == [(".dec", 40)] * 4 + [(".inc", 232)] * 4


@pytest.mark.parametrize("body, words_", [
    ("setmaxnreg.dec.sync.aligned.u32 44;", ["imm-reg-count 44", "multiple of 8"]),
    ("setmaxnreg.inc.sync.aligned.u32 264;", ["imm-reg-count 264", "24..256"]),
    ("setmaxnreg.dec.sync.aligned.u32 40;\n setmaxnreg.inc.sync.aligned.u32 32;", [".inc needs at most"]),
    ("setmaxnreg.inc.sync.aligned.u32 240;\n setmaxnreg.dec.sync.aligned.u32 248;", [".dec needs at least"]),
    # warp 0 of the warpgroup takes another branch: the warps execute different setmaxnreg
    ("mov.u32 %r1, %warpid; setp.eq.u32 %p1, %r1, 0; @%p1 bra A;\n setmaxnreg.dec.sync.aligned.u32 40;"
     "\n bra B;\nA: setmaxnreg.inc.sync.aligned.u32 232;\nB:", ["warps of one warpgroup", "different"]),
    # warp 0 skips it: "not executed by all warps in the warpgroup"
    ("mov.u32 %r1, %warpid; setp.eq.u32 %p1, %r1, 0; @%p1 bra A;\n setmaxnreg.dec.sync.aligned.u32 40;\nA:",
     ["exit", "every warp of the warpgroup"]),
    # lanes of one warp at different setmaxnreg
    ("mov.u32 %r1, %laneid; setp.eq.u32 %p1, %r1, 0; @%p1 bra A;\n setmaxnreg.dec.sync.aligned.u32 40;"
     "\n bra B;\nA: setmaxnreg.dec.sync.aligned.u32 48;\nB:", ["lanes of warp", "same one"]),
])
def test_setmaxnreg_undefined_behaviour_is_a_finding(body: str, words_: list[str]) -> None:
    got = _setmaxnreg(body)
    assert isinstance(got, str) and got.startswith(f"violation:{SETMAXNREG}:"), got
    for w in words_:
        assert w in got, got


def test_brkpt_and_assertfail_are_findings_with_their_text() -> None:
    r = run(module(REGS + "    brkpt;\n    ret;"), args={"out": sim.Buffer(8)})
    assert (r.outcome, r.rule) == ("violation", BRKPT)
    decl = """
.extern .func __assertfail
(
    .param .b64 __assertfail_param_0,
    .param .b64 __assertfail_param_1,
    .param .b32 __assertfail_param_2,
    .param .b64 __assertfail_param_3,
    .param .b64 __assertfail_param_4
)
;
.global .align 1 .b8 $str[11] = {105, 32, 60, 32, 78, 32, 38, 38, 32, 112, 0};
.global .align 1 .b8 $str$1[8] = {107, 101, 114, 46, 99, 117, 0, 0};
.global .align 1 .b8 __unnamed_1[5] = {115, 116, 101, 112, 0};
"""
    body = REGS + """
        mov.u64 %rd1, $str;  cvta.global.u64 %rd1, %rd1;
        mov.u64 %rd2, $str$1;  cvta.global.u64 %rd2, %rd2;
        mov.u64 %rd3, __unnamed_1;  cvta.global.u64 %rd3, %rd3;
        {
        .param .b64 param0;  st.param.b64 [param0], %rd1;
        .param .b64 param1;  st.param.b64 [param1], %rd2;
        .param .b32 param2;  st.param.b32 [param2], 42;
        .param .b64 param3;  st.param.b64 [param3], %rd3;
        .param .b64 param4;  st.param.b64 [param4], 1;
        call.uni __assertfail, (param0, param1, param2, param3, param4);
        }
        ret;
    """
    r = run(module(body, extra=decl), args={"out": sim.Buffer(8)})
    assert (r.outcome, r.rule) == ("violation", ASSERTION)
    assert r.message.startswith("assertion `i < N && p` failed: ker.cu:42: step"), r.message


def test_envreg_reads_zero_or_the_launch_value() -> None:
    body = REGS + """
        ld.param.u64 %rd0, [out];
        mov.u32 %r1, %envreg0;  mov.u32 %r2, %envreg31;
        st.global.v2.u32 [%rd0], {%r1, %r2};
        ret;
    """
    r = run(module(body), args={"out": sim.Buffer(8)})
    assert words(r.machine, "out", 2) == [0, 0]
    r = run(module(body), args={"out": sim.Buffer(8)}, envregs={31: 0xCAFE})
    assert words(r.machine, "out", 2) == [0, 0xCAFE]
    with pytest.raises(sim.LaunchError, match="envreg32"):
        sim.launch(module(body), args={"out": sim.Buffer(8)}, envregs={32: 1})


def test_hints_and_fences_of_a_tma_pipeline_run() -> None:
    """prefetch.tensormap, the proxy fences and griddepcontrol change nothing a single launch observes."""
    body = REGS + """
        ld.param.u64 %rd0, [out];
        prefetch.param.tensormap [tmap];
        mov.u64 %rd1, tmap;
        prefetch.tensormap [%rd1];
        fence.proxy.async;
        fence.proxy.async.global;
        fence.proxy.async.shared::cta;
        fence.proxy.async.shared::cluster;
        fence.proxy.tensormap::generic.release.gpu;
        fence.proxy.tensormap::generic.acquire.gpu [%rd0], 128;
        griddepcontrol.wait;
        griddepcontrol.launch_dependents;
        st.global.u32 [%rd0], 7;
        ret;
    """
    r = run(module(body, params=".param .u64 out, .param .align 64 .b8 tmap[128]"),
            args={"out": sim.Buffer(128), "tmap": bytes(128)})
    assert r.ok, r.message
    assert words(r.machine, "out", 1) == [7]


# -- ldmatrix / stmatrix -----------------------------------------------------------------------------
# Shared memory holds h[i] = i (16-bit) for i < 512. Lane t gives the row address sm + 16 t (so matrix k,
# row j is h[64 k + 8 j .. + 8]). The reference below is the ISA text's layout, written independently:
# thread n's register k = row n/4, elements 2(n%4), 2(n%4)+1; .trans: elements (2(n%4), n/4), (2(n%4)+1, n/4).

def _matrix_kernel(op: str) -> str:
    return REGS + f"""
        .shared .align 16 .b8 sm[2048];
        ld.param.u64 %rd0, [out];
        mov.u32 %r1, %tid.x;
        mov.u32 %r2, %r1;
    FILL:
        shl.b32 %r3, %r2, 1;  mov.u32 %r4, sm;  add.u32 %r4, %r4, %r3;  st.shared.u16 [%r4], %r2;
        add.u32 %r2, %r2, 32;  setp.lt.u32 %p1, %r2, 512;  @%p1 bra FILL;
        bar.sync 0;
        mov.u32 %r5, sm;  shl.b32 %r6, %r1, 4;  add.u32 %r5, %r5, %r6;
        {op}
        mul.wide.u32 %rd1, %r1, 16;  add.s64 %rd1, %rd0, %rd1;
        st.global.v4.u32 [%rd1], {{%r10, %r11, %r12, %r13}};
        ret;
    """


def _fragment(n: int, k: int, trans: bool) -> int:
    def h(row: int, col: int) -> int:
        return 64 * k + 8 * row + col
    if trans:
        lo, hi = h(2 * (n % 4), n // 4), h(2 * (n % 4) + 1, n // 4)
    else:
        lo, hi = h(n // 4, 2 * (n % 4)), h(n // 4, 2 * (n % 4) + 1)
    return lo | hi << 16


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("generic", [False, True])
def test_ldmatrix_layouts(num: int, trans: bool, generic: bool) -> None:
    dst = ", ".join(f"%r{10 + i}" for i in range(num))
    addr = "%rd5" if generic else "%r5"
    op = (("cvta.shared.u64 %rd5, %rd6;" if generic else "") + "\n        "
          + f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}{'' if generic else '.shared'}.b16 "
          + f"{{{dst}}}, [{addr}];")
    if generic:
        op = "cvt.u64.u32 %rd6, %r5;\n        " + op
    r = run(module(_matrix_kernel(op)), seed=4, block=32, args={"out": sim.Buffer(32 * 16)})
    assert r.ok, r.message
    got = words(r.machine, "out", 32 * 4)
    for n in range(32):
        assert got[4 * n:4 * n + num] == [_fragment(n, k, trans) for k in range(num)], n


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_inverts_ldmatrix(num: int, trans: bool) -> None:
    """stmatrix writes each fragment where ldmatrix of the same form read it: a load from one region and
    a store to another copies the region (the layouts agree); rows beyond the matrices stay 0."""
    t = ".trans" if trans else ""
    regs = ", ".join(f"%r{10 + i}" for i in range(num))
    op = f"""ldmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 {{{regs}}}, [%r5];
        add.u32 %r7, %r5, 1024;
        stmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 [%r7], {{{regs}}};
        bar.sync 0;
        ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [%r7];"""
    r = run(module(_matrix_kernel(op)), seed=6, block=32, args={"out": sim.Buffer(32 * 16)})
    assert r.ok, r.message
    got = words(r.machine, "out", 32 * 4)
    for n in range(32):  # row n of the copy: written for the num matrices, zero beyond them
        want = [(8 * n + 2 * i) | (8 * n + 2 * i + 1) << 16 for i in range(4)] if n < 8 * num else [0] * 4
        assert got[4 * n:4 * n + 4] == want, n


@pytest.mark.parametrize("op, rule, why", [
    ("@%p2 ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r10}, [%r5];", KERNEL_FAULT,
     "lane(s) of the warp exited"),
    ("add.u32 %r5, %r5, 8;\n ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r10}, [%r5];", "memory-fault",
     "16-byte aligned"),
])
def test_ldmatrix_misuse_is_a_finding(op: str, rule: str, why: str) -> None:
    # %p2: lanes 0..15 take the ldmatrix, the others exit first.
    op = "setp.lt.u32 %p2, %r1, 16;\n @!%p2 exit;\n " + op if op.startswith("@%p2") else op
    r = run(module(_matrix_kernel(op)), seed=1, block=32, args={"out": sim.Buffer(32 * 16)})
    assert (r.outcome, r.rule) == ("violation", rule), r.message
    assert why in r.message


def test_ldmatrix_sm100_shapes_stop_loudly() -> None:
    src = HEADER + ".visible .entry k()\n{\n .reg .b32 %r<4>;\n .shared .align 16 .b8 sm[256];\n" \
        " ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1, %r2}, [sm];\n ret;\n}\n"
    r = run(parse(src, "t.ptx"), block=32)
    assert r.outcome == "unsupported" and "figures" in r.message
