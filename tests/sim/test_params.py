"""The kernel parameter state space as memory (PTX ISA 5.1.6): a parameter's address taken with mov or
cvta.param, ld.param through a register, generic loads in the parameter window, `.ptr` attributes, and
the read-only rule (5.1.6.1)."""

from __future__ import annotations

import pytest

from mbarrier import sim
from mbarrier.ptx.parser import parse
from mbarrier.sim.launch import param_offsets
from mbarrier.spec.checks import PARAM_STORE

from .helpers import HEADER, module, run, words

REGS = ".reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n"
# A struct parameter as nvcc writes one: 8-byte aligned bytes, then a pointer to the output.
STRUCT = ".param .align 8 .b8 s[24], .param .u64 out"
ONE = ".param .align 8 .b8 s[24]"
FIELDS = (7).to_bytes(4, "little") + (-3 & 0xFFFFFFFF).to_bytes(4, "little") + (0x1122334455667788).to_bytes(
    8, "little") + (99).to_bytes(8, "little")


def _run(body: str, params: str = STRUCT, **args: object) -> list[int]:
    mod = module(REGS + "ld.param.u64 %rd0, [out];\n" + body + "\nret;", params=params)
    r = run(mod, args={"s": FIELDS, "out": sim.Buffer(64), **args})
    assert r.outcome == "exited", (r.outcome, r.message)
    return words(r.machine, "out", 6)


def test_mov_takes_the_param_address_and_ld_param_reads_through_a_register() -> None:
    # nvcc's pattern for a struct parameter (5.1.6.1: the address of a kernel parameter may be moved into
    # a register and used with ld.param).
    out = _run("""
        mov.b64 %rd1, s;
        add.s64 %rd2, %rd1, 16;
        ld.param.u32 %r1, [%rd2+-16];   st.global.u32 [%rd0], %r1;
        ld.param.s32 %r2, [%rd1+4];     st.global.u32 [%rd0+4], %r2;
        ld.param.v2.u32 {%r3, %r4}, [%rd1+8];
        st.global.u32 [%rd0+8], %r3;    st.global.u32 [%rd0+12], %r4;
        mov.u32 %r5, 2;
        mul.wide.u32 %rd3, %r5, 4;
        add.s64 %rd4, %rd1, %rd3;
        ld.param.u32 %r6, [%rd4+8];     st.global.u32 [%rd0+16], %r6;
    """)
    assert out[:5] == [7, 0xFFFFFFFD, 0x55667788, 0x11223344, 99]


def test_cvta_param_gives_a_generic_address_that_generic_loads_read() -> None:
    out = _run("""
        mov.b64 %rd1, s;
        cvta.param.u64 %rd2, %rd1;
        ld.u32 %r1, [%rd2+16];          st.global.u32 [%rd0], %r1;
        ld.u64 %rd3, [%rd2+8];          st.global.u64 [%rd0+8], %rd3;
        cvta.to.param.u64 %rd4, %rd2;
        ld.param.u32 %r2, [%rd4];       st.global.u32 [%rd0+16], %r2;
        cvta.param::entry.u64 %rd5, s+4;
        ld.u32 %r3, [%rd5];             st.global.u32 [%rd0+20], %r3;
    """)
    assert out == [99, 0, 0x55667788, 0x11223344, 7, 0xFFFFFFFD]


def test_isspacep_param_knows_the_window() -> None:
    out = _run("""
        cvta.param.u64 %rd2, s;
        isspacep.param %p1, %rd2;       selp.u32 %r1, 1, 0, %p1;  st.global.u32 [%rd0], %r1;
        isspacep.global %p2, %rd2;      selp.u32 %r2, 1, 0, %p2;  st.global.u32 [%rd0+4], %r2;
        isspacep.param %p3, %rd0;       selp.u32 %r3, 1, 0, %p3;  st.global.u32 [%rd0+8], %r3;
    """)
    assert out[:3] == [1, 0, 0]


def test_parameters_are_laid_out_at_their_alignment_in_declaration_order() -> None:
    mod = module("ret;", params=".param .u32 a, .param .align 16 .b8 t[128], .param .u64 .ptr .global "
                                ".align 16 p, .param .u8 c, .param .u16 h")
    fn = mod.entries[0]
    # .ptr's .align is the pointee's (5.1.6.3), not the parameter's: p sits at 8-byte alignment.
    assert param_offsets(fn) == {"a": (0, 4), "t": (16, 128), "p": (144, 8), "c": (152, 1), "h": (154, 2)}
    p = fn.params[2]
    assert (p.ptr, p.ptr_space, p.ptr_align, p.align) == (True, ".global", 16, None)


def test_a_load_past_the_parameters_is_a_memory_fault() -> None:
    mod = module(REGS + "mov.b64 %rd1, s;\nld.param.u64 %rd2, [%rd1+24];\nret;", params=ONE)
    r = run(mod, args={"s": FIELDS})
    assert (r.outcome, r.rule) == ("violation", "memory-fault")
    assert "outside the 24 bytes of the kernel's parameters" in r.message


@pytest.mark.parametrize("store", [
    "st.param.u32 [s+4], 1;",                                     # by name (ptxas refuses it)
    "mov.b64 %rd1, s;\nst.param.u32 [%rd1+4], 1;",               # through its .param address
    "cvta.param.u64 %rd1, s;\nst.u32 [%rd1+4], 1;",              # through its generic address
    "cvta.param.u64 %rd1, s;\natom.add.u32 %r1, [%rd1+4], 1;",   # an atomic through it
])
def test_a_write_to_a_kernel_parameter_is_a_finding(store: str) -> None:
    mod = module(REGS + store + "\nret;", params=ONE)
    r = run(mod, args={"s": FIELDS})
    assert (r.outcome, r.rule, r.section) == ("violation", PARAM_STORE, "5.1.6.1")
    assert "kernel parameter s+4" in r.message and "read-only" in r.message


def test_check_finds_the_parameter_store_too() -> None:
    from mbarrier.explore.check import check
    mod = module(REGS + "cvta.param.u64 %rd1, s;\nst.u32 [%rd1], 1;\nret;", params=ONE)
    res = check(mod, args={"s": FIELDS}, block=2)
    assert res.verdict == "finding"
    assert {f.rule for f in res.findings} == {PARAM_STORE}


def test_ld_param_func_through_a_register_in_a_func_stops_loudly() -> None:
    # In a .func, .param means .param::func (its own parameters): not the kernel's parameter memory.
    text = HEADER + """
.func f(.param .u64 a)
{
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [a];
    ld.param.u32 %rd2, [%rd1];
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .b64 %rd<2>;
    mov.b64 %rd1, out;
    { .param .b64 p0; st.param.b64 [p0], %rd1; call f, (p0); }
    ret;
}
"""
    r = run(parse(text, "t.ptx"), args={"out": sim.Buffer(8)})
    assert r.outcome == "unsupported" and "ld.param::func through a register" in r.message
