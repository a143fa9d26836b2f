"""Instruction semantics: each kernel computes values a thread stores to `out`, checked against Python."""

from __future__ import annotations

import struct

import pytest

from mbarrier import sim

from .helpers import module, run, words

REGS = ".reg .pred %p<8>;\n.reg .b16 %h<8>;\n.reg .b32 %r<32>;\n.reg .b64 %rd<32>;\n.reg .f32 %f<8>;\n"


def _one(body: str, n: int, width: int = 4, signed: bool = False, **launch: object) -> list[int]:
    mod = module(REGS + "ld.param.u64 %rd0, [out];\n" + body + "\nret;")
    r = run(mod, args={"out": sim.Buffer(8 * 64)}, **launch)  # type: ignore[arg-type]
    assert r.outcome == "exited", (r.outcome, r.message)
    return words(r.machine, "out", n, width, signed)


def test_integer_arithmetic_of_each_width() -> None:
    out = _one("""
        mov.u32 %r1, 0xfffffff0;
        add.u32 %r2, %r1, 0x20;          st.global.u32 [%rd0], %r2;
        sub.s32 %r3, 5, 7;               st.global.u32 [%rd0+4], %r3;
        mul.lo.s32 %r4, %r3, 1000;       st.global.u32 [%rd0+8], %r4;
        mul.hi.u32 %r5, %r1, 0x10;       st.global.u32 [%rd0+12], %r5;
        mad.lo.s32 %r6, %r3, 3, 100;     st.global.u32 [%rd0+16], %r6;
        div.s32 %r7, -7, 2;              st.global.u32 [%rd0+20], %r7;
        rem.s32 %r8, -7, 2;              st.global.u32 [%rd0+24], %r8;
        min.s32 %r9, %r3, 1;             st.global.u32 [%rd0+28], %r9;
        max.u32 %r10, %r3, 1;            st.global.u32 [%rd0+32], %r10;
        abs.s32 %r11, %r3;               st.global.u32 [%rd0+36], %r11;
        neg.s32 %r12, %r11;              st.global.u32 [%rd0+40], %r12;
        cvt.u16.u32 %h1, %r1;
        add.s16 %h2, %h1, 0x20;          cvt.u32.u16 %r13, %h2;  st.global.u32 [%rd0+44], %r13;
        mul.wide.u16 %r14, %h1, 2;       st.global.u32 [%rd0+48], %r14;
        sub.u32 %r15, 0, 1;              st.global.u32 [%rd0+52], %r15;
    """, 14, signed=True)
    assert out == [0x10, -2, -2000, 0xF, 94, -3, -1, -2, -2, 2, -2, 0x10, 0x1FFE0, -1]


def test_wide_multiplies_shifts_and_conversions() -> None:
    out = _one("""
        mov.u32 %r1, 0x80000000;
        mul.wide.u32 %rd1, %r1, 4;       st.global.u64 [%rd0], %rd1;
        mul.wide.s32 %rd2, %r1, 4;       st.global.u64 [%rd0+8], %rd2;
        mad.wide.u32 %rd3, %r1, 2, %rd1; st.global.u64 [%rd0+16], %rd3;
        cvt.s64.s32 %rd4, %r1;           st.global.u64 [%rd0+24], %rd4;
        cvt.u64.u32 %rd5, %r1;           st.global.u64 [%rd0+32], %rd5;
        shr.s64 %rd6, %rd4, 60;          st.global.u64 [%rd0+40], %rd6;
        shr.u64 %rd7, %rd4, 60;          st.global.u64 [%rd0+48], %rd7;
        shl.b64 %rd8, %rd5, 33;          st.global.u64 [%rd0+56], %rd8;
        shl.b32 %r2, %r1, 40;            cvt.u64.u32 %rd9, %r2;  st.global.u64 [%rd0+64], %rd9;
        cvt.u32.u64 %r3, %rd3;           cvt.u64.u32 %rd10, %r3; st.global.u64 [%rd0+72], %rd10;
        cvt.s8.s32 %r4, 200;             cvt.s64.s32 %rd11, %r4; st.global.u64 [%rd0+80], %rd11;
        cvt.sat.u8.s32 %r5, -5;          cvt.u64.u32 %rd12, %r5; st.global.u64 [%rd0+88], %rd12;
    """, 12, width=8, signed=True)
    assert out == [1 << 33, -(1 << 33), (1 << 33) + (1 << 32), -(1 << 31), 1 << 31, -1, 15, 0,
                   0, 0, -56, 0]


def test_bit_operations() -> None:
    out = _one("""
        mov.b32 %r1, 0x12345678;
        and.b32 %r2, %r1, 0xff00;        st.global.u32 [%rd0], %r2;
        or.b32 %r3, %r1, 0xf;            st.global.u32 [%rd0+4], %r3;
        xor.b32 %r4, %r1, -1;            st.global.u32 [%rd0+8], %r4;
        not.b32 %r5, %r1;                st.global.u32 [%rd0+12], %r5;
        popc.b32 %r6, %r1;               st.global.u32 [%rd0+16], %r6;
        clz.b32 %r7, %r1;                st.global.u32 [%rd0+20], %r7;
        brev.b32 %r8, 1;                 st.global.u32 [%rd0+24], %r8;
        bfe.u32 %r9, %r1, 8, 12;         st.global.u32 [%rd0+28], %r9;
        bfe.s32 %r10, 0xf00, 8, 4;       st.global.u32 [%rd0+32], %r10;
        bfi.b32 %r11, 0xf, %r1, 4, 8;    st.global.u32 [%rd0+36], %r11;
        prmt.b32 %r12, %r1, 0, 0x0123;   st.global.u32 [%rd0+40], %r12;
        cnot.b32 %r13, 0;                st.global.u32 [%rd0+44], %r13;
    """, 12)
    assert out == [0x5600, 0x1234567F, 0xEDCBA987, 0xEDCBA987, 13, 3, 0x80000000, 0x456, 0xFFFFFFFF,
                   0x123450F8, 0x78563412, 1]


def test_setp_with_combiners_selp_and_predicate_logic() -> None:
    out = _one("""
        mov.u32 %r1, 7;
        setp.lt.s32 %p1, %r1, 10; selp.u32 %r2, 1, 0, %p1; st.global.u32 [%rd0], %r2;
        setp.gt.and.s32 %p2, %r1, 10, %p1; selp.u32 %r3, 1, 0, %p2; st.global.u32 [%rd0+4], %r3;
        setp.gt.or.s32 %p3, %r1, 10, %p1; selp.u32 %r4, 1, 0, %p3; st.global.u32 [%rd0+8], %r4;
        setp.eq.xor.s32 %p4|%p5, %r1, 7, !%p1; selp.u32 %r5, 1, 0, %p4; st.global.u32 [%rd0+12], %r5;
 selp.u32 %r6, 1, 0, %p5; st.global.u32 [%rd0+16], %r6;
        setp.lo.u32 %p6, %r1, -1; selp.u32 %r7, 1, 0, %p6; st.global.u32 [%rd0+20], %r7;
        setp.lt.s32 %p6, %r1, -1; selp.u32 %r8, 1, 0, %p6; st.global.u32 [%rd0+24], %r8;
        and.pred %p7, %p1, %p3;  not.pred %p7, %p7; selp.u32 %r9, 1, 0, %p7; st.global.u32 [%rd0+28], %r9;
        or.pred %p7, %p7, %p2; xor.pred %p7, %p7, 1; selp.u32 %r10, 1, 0, %p7; st.global.u32 [%rd0+32], %r10;
        @%p1 mov.u32 %r11, 5;   @!%p1 mov.u32 %r11, 6; st.global.u32 [%rd0+36], %r11;
    """, 10)
    assert out == [1, 0, 1, 1, 0, 1, 0, 0, 1, 5]


def test_setp_pair_with_a_sink_half_and_its_own_predicate_as_the_combiner_input() -> None:
    """`setp.CmpOp.BoolOp d|q, a, b, c` (PTX ISA 9.7.6.1): d = (a CmpOp b) BoolOp c and q = !(a CmpOp b)
    BoolOp c, both from the inputs before the instruction, even where c is d; either half may be `_`."""
    out = _one("""
        mov.u32 %r1, 7; setp.eq.u32 %p1, %r1, 7;
        setp.lt.and.u32 %p1|%p2, %r1, 3, %p1;
        selp.u32 %r2, 1, 0, %p1; st.global.u32 [%rd0], %r2;
        selp.u32 %r3, 1, 0, %p2; st.global.u32 [%rd0+4], %r3;
        setp.lt.u32 _|%p3, %r1, 3; selp.u32 %r4, 1, 0, %p3; st.global.u32 [%rd0+8], %r4;
        setp.lt.u32 %p4|_, %r1, 3; selp.u32 %r5, 1, 0, %p4; st.global.u32 [%rd0+12], %r5;
    """, 4)
    # 7 < 3 is false: d = false and true, q = true and true; then the complement alone, the comparison alone
    assert out == [0, 1, 1, 0]


def test_floats_as_far_as_kernels_need_them() -> None:
    out = _one("""
        mov.f32 %f1, 0f3FC00000;
        add.f32 %f2, %f1, %f1;           st.global.f32 [%rd0], %f2;
        mul.f32 %f3, %f2, 0f40400000;    st.global.f32 [%rd0+4], %f3;
        fma.rn.f32 %f4, %f1, %f1, %f3;   st.global.f32 [%rd0+8], %f4;
        cvt.rzi.s32.f32 %r1, %f4;        st.global.u32 [%rd0+12], %r1;
        cvt.rn.f32.s32 %f5, -3;          st.global.f32 [%rd0+16], %f5;
        setp.gt.f32 %p1, %f5, %f1;       selp.u32 %r2, 1, 0, %p1;  st.global.u32 [%rd0+20], %r2;
    """, 6)
    f = [struct.unpack("<f", v.to_bytes(4, "little"))[0] for v in out]
    assert f[0] == 3.0 and f[1] == 9.0 and f[2] == 11.25 and f[4] == -3.0
    assert out[3] == 11 and out[5] == 0


def test_special_registers_for_each_thread() -> None:
    body = """
        mov.u32 %r1, %tid.x;  mov.u32 %r2, %tid.y;  mov.u32 %r3, %ntid.x;  mov.u32 %r4, %ctaid.x;
        mov.u32 %r5, %laneid; mov.u32 %r6, %warpid; mov.u32 %r7, %cluster_ctarank;
        mov.u32 %r8, %cluster_nctarank; mov.u32 %r9, %nctaid.x;
        mad.lo.s32 %r10, %r2, %r3, %r1;
        mov.u32 %r11, %ntid.y; mul.lo.s32 %r12, %r3, %r11; mad.lo.s32 %r10, %r4, %r12, %r10;
        mul.wide.u32 %rd1, %r10, 32; add.s64 %rd1, %rd0, %rd1;
        st.global.v4.u32 [%rd1], {%r1, %r2, %r4, %r5};
        st.global.v4.u32 [%rd1+16], {%r6, %r7, %r8, %r9};
    """
    mod = module(REGS + "ld.param.u64 %rd0, [out];\n" + body + "ret;")
    r = run(mod, grid=4, block=(20, 2), cluster=2, args={"out": sim.Buffer(32 * 160)})
    assert r.ok
    got = words(r.machine, "out", 8 * 160)
    for cta in range(4):
        for ty in range(2):
            for tx in range(20):
                lin = ty * 20 + tx
                i = cta * 40 + lin
                assert got[8 * i:8 * i + 8] == [tx, ty, cta, lin % 32, lin // 32, cta % 2, 2, 4]


def test_shared_vectors_atomics_and_reductions() -> None:
    out = _one("""
        .shared .align 16 .b8 buf[64];
        mov.u32 %r1, buf;
        st.shared.v2.u32 [%r1], {1, 2};
        ld.shared.v2.u32 {%r2, %r3}, [%r1];    st.global.v2.u32 [%rd0], {%r3, %r2};
        ld.shared.u8 %r4, [buf+4];             st.global.u32 [%rd0+8], %r4;
        st.shared.u32 [%r1+8], -2;
        ld.shared.s16 %r5, [%r1+8];            st.global.u32 [%rd0+12], %r5;
        atom.shared.add.u32 %r6, [%r1+16], 5;  st.global.u32 [%rd0+16], %r6;
        red.shared.add.u32 [%r1+16], 5;
        atom.shared.cas.b32 %r7, [%r1+16], 10, 99;   st.global.u32 [%rd0+20], %r7;
        ld.shared.u32 %r8, [%r1+16];           st.global.u32 [%rd0+24], %r8;
        atom.global.max.s32 %r9, [%rd0+24], -4; st.global.u32 [%rd0+28], %r9;
        atom.global.exch.b32 %r10, [%rd0+24], 3;
        atom.global.inc.u32 %r11, [%rd0+24], 3; ld.global.u32 %r12, [%rd0+24]; st.global.u32 [%rd0+32], %r12;
    """, 9, signed=True)
    # out[6] is then the target of the global atomics: max keeps 99, exch sets 3, inc wraps 3 to 0.
    assert out == [2, 1, 2, -2, 0, 10, 0, 99, 0]


def test_cvta_mapa_and_distributed_shared_memory() -> None:
    # Every thread of CTA rank r writes r+1 into CTA (r+1)%2's buffer through mapa, then reads its own.
    body = REGS + """
        .shared .align 4 .b32 slot[4];
        ld.param.u64 %rd0, [out];
        mov.u32 %r1, %cluster_ctarank;  mov.u32 %r2, %tid.x;
        add.u32 %r3, %r1, 1;  and.b32 %r4, %r3, 1;
        mov.u64 %rd1, slot;  cvta.shared.u64 %rd2, %rd1;
        mapa.u64 %rd3, %rd2, %r4;
        mul.wide.u32 %rd4, %r2, 4;  add.s64 %rd5, %rd3, %rd4;
        barrier.cluster.arrive; barrier.cluster.wait;
        st.u32 [%rd5], %r3;
        mov.u32 %r5, slot;  mapa.shared::cluster.u32 %r6, %r5, %r4;
        shl.b32 %r7, %r2, 2;  add.u32 %r8, %r6, %r7;
        ld.shared::cluster.u32 %r9, [%r8];
        barrier.cluster.arrive; barrier.cluster.wait;
        cvta.to.shared.u64 %rd6, %rd2;  cvt.u32.u64 %r10, %rd6;  add.u32 %r10, %r10, %r7;
        ld.shared.u32 %r11, [%r10];
        mad.lo.s32 %r12, %r1, 4, %r2;  mul.wide.u32 %rd7, %r12, 8;  add.s64 %rd8, %rd0, %rd7;
        st.global.v2.u32 [%rd8], {%r9, %r11};
        ret;
    """
    for seed in range(3):
        r = run(module(body), seed=seed, grid=2, block=4, cluster=2, args={"out": sim.Buffer(64)})
        assert r.ok, r.message
        got = words(r.machine, "out", 16)
        assert got == [1, 2] * 4 + [2, 1] * 4


def test_warp_collectives() -> None:
    body = REGS + """
        ld.param.u64 %rd0, [out];
        mov.u32 %r1, %laneid;
        elect.sync %r2|%p1, -1;
        selp.u32 %r3, 1, 0, %p1;
        setp.lt.u32 %p2, %r1, 5;
        vote.sync.ballot.b32 %r4, %p2, -1;
        vote.sync.all.pred %p3, %p2, -1;  selp.u32 %r5, 1, 0, %p3;
        shfl.sync.idx.b32 %r6, %r1, 3, 0x1f, -1;
        shfl.sync.down.b32 %r7|%p4, %r1, 1, 0x1f, -1;
        bar.warp.sync -1;
        activemask.b32 %r8;
        mul.wide.u32 %rd1, %r1, 32;  add.s64 %rd1, %rd0, %rd1;
        st.global.v4.u32 [%rd1], {%r2, %r3, %r4, %r5};
        st.global.v4.u32 [%rd1+16], {%r6, %r7, %r8, %r1};
        ret;
    """
    r = run(module(body), seed=5, block=32, args={"out": sim.Buffer(32 * 32)})
    assert r.ok, r.message
    got = words(r.machine, "out", 8 * 32)
    for lane in range(32):
        row = got[8 * lane:8 * lane + 8]
        assert row[:6] + row[7:] == [0, int(lane == 0), 0x1F, 0, 3, min(lane + 1, 31), lane]
        # activemask: the lanes not exited yet (lanes may run ahead to exit); always its own lane.
        assert row[6] >> lane & 1


def test_bar_sync_orders_a_cta() -> None:
    # Thread i writes slot i, bar.sync, then reads slot (i+1)%n: the write must be there on every schedule.
    body = REGS + """
        .shared .align 4 .b32 s[64];
        ld.param.u64 %rd0, [out];
        mov.u32 %r1, %tid.x;  mov.u32 %r2, %ntid.x;
        shl.b32 %r3, %r1, 2;  mov.u32 %r4, s;  add.u32 %r5, %r4, %r3;
        add.u32 %r6, %r1, 100;  st.shared.u32 [%r5], %r6;
        bar.sync 0;
        add.u32 %r7, %r1, 1;  rem.u32 %r8, %r7, %r2;  shl.b32 %r9, %r8, 2;  add.u32 %r10, %r4, %r9;
        ld.shared.u32 %r11, [%r10];
        mul.wide.u32 %rd1, %r1, 4;  add.s64 %rd1, %rd0, %rd1;  st.global.u32 [%rd1], %r11;
        ret;
    """
    for seed in range(4):
        r = run(module(body), seed=seed, block=48, args={"out": sim.Buffer(4 * 48)})
        assert r.ok
        assert words(r.machine, "out", 48) == [100 + (i + 1) % 48 for i in range(48)]


def test_an_unsupported_instruction_stops_the_run_with_its_line() -> None:
    body = REGS + "ld.param.u64 %rd0, [out];\nmov.u32 %r1, 1;\nex2.approx.f16 %h1, %h2;\nret;"
    mod = module(body)
    r = run(mod, args={"out": sim.Buffer(4)})
    assert r.outcome == "unsupported"
    assert r.site is not None and mod.source_lines[r.site.line - 1] == "ex2.approx.f16 %h1, %h2;"
    assert "`ex2.approx.f16` is not supported" in r.message


def test_unreached_unsupported_instructions_do_not_stop_a_run() -> None:
    body = REGS + "bra DONE;\nex2.approx.f16 %h1, %h2;\nDONE:\nret;"
    assert run(module(body), args={"out": sim.Buffer(4)}).ok


@pytest.mark.parametrize("access", ["st.shared.u32 [bar+4], 1;", "ld.shared.u32 %r1, [bar];",
                                    "atom.shared.add.u32 %r1, [bar], 1;"])
def test_ordinary_access_to_a_valid_mbarrier_is_a_violation(access: str) -> None:
    body = REGS + f"""
        .shared .align 8 .b64 bar;
        mbarrier.init.shared::cta.b64 [bar], 1;
        {access}
        ret;
    """
    r = run(module(body), args={"out": sim.Buffer(4)})
    assert r.outcome == "violation" and r.rule == "non-mbarrier-access"
    assert r.site is not None and access.split()[0] in r.site.text


def test_the_bytes_of_an_invalidated_mbarrier_are_ordinary_memory() -> None:
    body = REGS + """
        .shared .align 8 .b64 bar;
        ld.param.u64 %rd0, [out];
        mbarrier.init.shared::cta.b64 [bar], 32;
        mbarrier.arrive.shared::cta.b64 %rd1, [bar];
        mbarrier.inval.shared::cta.b64 [bar];
        ld.shared.u64 %rd2, [bar];  st.global.u64 [%rd0], %rd2;
        st.shared.u64 [bar], 5;
        mbarrier.init.shared::cta.b64 [bar], 1;
        ret;
    """
    r = run(module(body), args={"out": sim.Buffer(8)})
    assert r.ok, r.message
    # measured on an H100 (record enc-arrive1-32): init(32), one arrive: 0x7fff0800001fffc0 after inval.
    assert words(r.machine, "out", 1, width=8) == [0x7FFF0800001FFFC0]


def test_missing_scalar_argument_is_named() -> None:
    mod = module("ret;", params=".param .u64 out, .param .u32 n")
    with pytest.raises(sim.LaunchError, match="'n'"):
        sim.launch(mod, args={})


def test_arguments_by_position_and_lazily_backed_pointers() -> None:
    mod = module(REGS + """
        ld.param.u64 %rd0, [p0];  ld.param.u64 %rd1, [p1];  ld.param.u32 %r1, [n];
        add.s64 %rd2, %rd1, 0x7ffff000;  ld.global.u32 %r2, [%rd2];
        add.u32 %r3, %r2, %r1;  st.global.u32 [%rd0], %r3;  ret;
    """, params=".param .u64 p0, .param .u64 p1, .param .u32 n")
    m = sim.launch(mod, args={0: sim.Buffer(4), "2": 41})
    from mbarrier import explore
    assert explore.run(m).ok
    assert words(m, "p0", 1) == [41]
    assert sum(len(r.pages) for r in m.gmem.regions) == 1  # p1 was read, never backed


def test_getctarank_isspacep_and_prefetch() -> None:
    body = REGS + """
        .shared .align 4 .b32 s[4];
        ld.param.u64 %rd0, [out];
        mov.u32 %r1, s;  mapa.shared::cluster.u32 %r2, %r1, 1;
        getctarank.shared::cluster.u32 %r3, %r2;
        cvt.u64.u32 %rd1, %r2;  cvta.shared.u64 %rd2, %rd1;  getctarank.u32 %r4, %rd2;
        isspacep.shared::cluster %p1, %rd2;  isspacep.shared %p2, %rd2;  isspacep.global %p3, %rd0;
        selp.u32 %r5, 1, 0, %p1;  selp.u32 %r6, 1, 0, %p2;  selp.u32 %r7, 1, 0, %p3;
        prefetch.global.L2 [%rd0];
        mov.u32 %r8, %cluster_ctarank;
        mul.wide.u32 %rd3, %r8, 32;  add.s64 %rd3, %rd0, %rd3;
        st.global.v4.u32 [%rd3], {%r3, %r4, %r5, %r6};  st.global.u32 [%rd3+16], %r7;
        barrier.cluster.arrive; barrier.cluster.wait;
        ret;
    """
    r = run(module(body), grid=2, cluster=2, block=1, args={"out": sim.Buffer(64)})
    assert r.ok, r.message
    got = words(r.machine, "out", 16)
    # The mapped address is CTA 1's: in the shared::cluster window, not in the executing CTA's own.
    assert got[0:5] == [1, 1, 1, 0, 1] and got[8:13] == [1, 1, 1, 0, 1]


def test_redux_setmaxnreg_and_griddepcontrol() -> None:
    body = REGS + """
        ld.param.u64 %rd0, [out];
        griddepcontrol.wait;
        setmaxnreg.inc.sync.aligned.u32 232;
        mov.u32 %r1, %laneid;  sub.s32 %r2, 3, %r1;
        redux.sync.add.u32 %r3, %r1, -1;
        redux.sync.min.s32 %r4, %r2, -1;
        redux.sync.or.b32 %r5, %r1, 0xffff;
        griddepcontrol.launch_dependents;
        mul.wide.u32 %rd1, %r1, 16;  add.s64 %rd1, %rd0, %rd1;
        st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r1};
        ret;
    """
    # The last redux's mask holds lanes 0-15 only: lanes 16-31 must not run it.
    body = body.replace("redux.sync.or.b32 %r5, %r1, 0xffff;",
                        "setp.lt.u32 %p1, %r1, 16;\n@%p1 redux.sync.or.b32 %r5, %r1, 0xffff;")
    r = run(module(body), seed=3, block=32, args={"out": sim.Buffer(16 * 32)})
    assert r.ok, r.message
    got = words(r.machine, "out", 4 * 32)
    for lane in range(32):
        assert got[4 * lane:4 * lane + 4] == [496, (3 - 31) & 0xFFFFFFFF, 15 if lane < 16 else 0, lane]
