"""An instruction whose operands the simulator cannot take apart (too few, too many: ptxas says
"Arguments mismatch") compiles to a step that stops the run with its text and line, like any form the
simulator does not support; loading the module never fails on it (issue 13: IndexError/ValueError)."""

from __future__ import annotations

import pytest

from mbarrier import explore, sim
from mbarrier.explore.code import analyse, shared_symbols

from .helpers import module

MALFORMED = [
    "mbarrier.try_wait.parity.shared::cta.b64;",
    "mbarrier.try_wait.parity.shared::cta.b64 %p1;",
    "mbarrier.test_wait.shared::cta.b64 %p1;",
    "mbarrier.init.shared::cta.b64;",
    "mbarrier.init.shared::cta.b64 [bar];",
    "mbarrier.expect_tx.shared::cta.b64 [bar];",
    "mbarrier.pending_count.b64 %r1;",
    "mbarrier.arrive.shared::cta.b64;",
    "ld.shared.u32 %r1;",
    "st.shared.u32 [bar];",
    "add.u32 %r1;",
    "mov.u32;",
    "setp.eq.u32 %p1;",
    "atom.shared.add.u32 %r1;",
    "cvta.shared.u64 %rd1;",
    "mapa.u64 %rd1;",
    "bra;",
]
DECLS = "\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\t.shared .align 8 .b64 bar;\n"


@pytest.mark.parametrize("ins", MALFORMED)
def test_a_malformed_instruction_stops_the_run_with_its_line(ins: str) -> None:
    mod = module(DECLS + "\t" + ins + "\n\tret;", params="")
    m = sim.launch(mod, grid=1, block=1)
    assert m.functions["k"].unsupported == frozenset({0})
    r = explore.run(m)
    assert r.outcome == "unsupported" and r.site is not None and r.site.line == 11 and r.site.text == ins
    assert f"`{ins.split()[0].rstrip(';')}` is not supported" in r.message


def test_the_message_names_the_operand_count() -> None:
    m = sim.launch(module(DECLS + "\tmbarrier.try_wait.parity.shared::cta.b64;\n\tret;", params=""), grid=1,
                   block=1)
    r = explore.run(m)
    assert r.message == ("`mbarrier.try_wait.parity.shared::cta.b64` is not supported (0 operands: not a "
                         "form of mbarrier the simulator knows; `mbarrier lint` judges it as ptxas does)")


def test_supported_instructions_are_not_marked() -> None:
    m = sim.launch(module(DECLS + "\tmov.u32 %r1, 1;\n\tret;", params=""), grid=1, block=1)
    assert m.functions["k"].unsupported == frozenset()


@pytest.mark.parametrize("ins", ["mul.wide.u64 %rd1, %rd2, 16;", "mad.wide.s64 %rd1, %rd2, %rd3, %rd1;"])
def test_wide_of_64_bit_operands_is_not_supported(ins: str) -> None:
    """The ISA's .wide doubles 16- and 32-bit operands; a 64-bit one (a fuzzer's mutant) was a KeyError."""
    m = sim.launch(module(DECLS + "\t" + ins + "\n\tret;", params=""), grid=1, block=1)
    r = explore.run(m)
    assert r.outcome == "unsupported" and r.message.endswith("is not supported (.wide of 64-bit operands)")


def test_a_label_is_local_to_its_block() -> None:
    """PTX labels in a { } block belong to it (inline asm repeats `waitLoop:` at every use): each branch
    goes to the label of its own block, an inner one hiding an outer one, and the checker's control flow
    agrees. Here the first block's loop runs once and must not fall into the second block's."""
    body = """\t.reg .b32 %r<4>;
\t.reg .pred %p<2>;
\t.reg .b64 %rd<2>;
\tld.param.u64 %rd1, [out];
\tmov.u32 %r1, 0;
L:
\t{
\tL:
\tadd.u32 %r1, %r1, 1;
\tsetp.lt.u32 %p1, %r1, 3;
\t@%p1 bra L;
\t}
\t{
\tL:
\tadd.u32 %r1, %r1, 100;
\tsetp.lt.u32 %p1, %r1, 3;
\t@%p1 bra L;
\t}
\tst.global.u32 [%rd1], %r1;
\tret;"""
    m = sim.launch(module(body), grid=1, block=1, args={"out": sim.Buffer(4)})
    r = explore.run(m)
    assert r.ok, r.message
    assert m.gmem.load(m.buffers["out"][0], 4) == 103
    f = m.functions["k"]
    assert f.targets == {4: 2, 7: 5}  # each bra to the first instruction of its own block
    code = analyse(module(body).functions[0], f, shared_symbols(m))
    assert [x.target for x in code.ins if x.target is not None] == [2, 5]


@pytest.mark.parametrize("ins", ["mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], %p1;",
                                 "add.u32 %r1, %p1, 1;"])
def test_a_predicate_where_a_number_goes_is_not_supported(ins: str) -> None:
    """ptxas refuses it; the simulator passed the bool on (a TypeError in the core: fuzzer, seed 3)."""
    m = sim.launch(module(DECLS + "\t" + ins + "\n\tret;", params=""), grid=1, block=1)
    r = explore.run(m)
    assert r.outcome == "unsupported" and "(predicate %p1 as a " in r.message
