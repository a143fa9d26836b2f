"""The checker's view of the code (`explore.code`) takes every instruction the module holds, those the
simulator does not support or cannot read included: they are steps that stop the run, never a crash of
the analysis (issue 13: an unreached `cp.async.bulk.prefetch.tensor`, FlashAttention-3's forward kernel,
made `check` and `export` fail with an IndexError)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.cli import main
from mbarrier.explore.check import shared_symbols
from mbarrier.explore.code import ATOM, analyse

HEAD = ".version 8.6\n.target sm_90\n.address_size 64\n"
BODY = """
.visible .entry k(.param .u64 p)
{{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 7;
	@%p1 bra SKIP;
	bra DONE;
SKIP:
	ld.param.u64 %rd1, [p];
	{0}
DONE:
	ret;
}}
"""
UNREACHED = [
    "tcgen05.fence::before_thread_sync;",
    "mbarrier.try_wait.parity.shared::cta.b64;",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1];",
    "bra;",
]


@pytest.mark.parametrize("ins", UNREACHED)
def test_an_unreached_instruction_the_simulator_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           ins: str) -> None:
    f = tmp_path / "k.ptx"
    f.write_text(HEAD + BODY.format(ins))
    module = sim.load(f)
    m = sim.launch(module, grid=1, block=2)
    code = analyse(module.functions[0], m.functions["k"], shared_symbols(m))
    line = next(i for i, text in enumerate(f.read_text().splitlines(), 1) if text.strip() == ins)
    assert [x.kind for x in code.ins if x.line == line] == [ATOM]
    launch = [str(f), "--grid", "1", "--block", "2"]
    assert main(["check", *launch]) == 0
    assert "VERIFIED" in capsys.readouterr().out
    assert main(["export", "--promela", *launch]) == 2
    err = capsys.readouterr().err
    name = ins.split()[0].rstrip(";")
    assert f"line {line}: `{name}` cannot be exported to Promela (the simulator does not support it)" in err


# nvcc copies inline asm as written: a wait, the selp of its result and the closing brace on one line
# (`asm("{ .reg .pred p; mbarrier.test_wait... p, [%1], %2; selp.u32 %0, 1, 0, p; }")`), then its own
# setp/bra loop. The spin analysis reads each instruction's operands, not the line's text.
ONE_LINE_SPIN = """
.visible .entry k(.param .u64 p)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b64 bar;
	mov.u32 %r1, bar;
	mbarrier.arrive.shared::cta.b64 %rd1, [%r1];
WAIT:
	{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%r1], %rd1; selp.u32 %r2, 1, 0, p; }
	setp.eq.s32 %p1, %r2, 0;
	@%p1 bra WAIT;
	ret;
}
"""


@pytest.mark.parametrize("compare", ["setp.eq.s32 %p1, %r2, 0;", "setp.ne.s32 %p1, %r2, 1;"])
def test_a_wait_written_on_one_line_with_its_selp_is_a_spin(tmp_path: Path, compare: str) -> None:
    f = tmp_path / "k.ptx"
    f.write_text(HEAD + ONE_LINE_SPIN.replace("setp.eq.s32 %p1, %r2, 0;", compare))
    module = sim.load(f)
    m = sim.launch(module, grid=1, block=1)
    code = analyse(module.functions[0], m.functions["k"], shared_symbols(m))
    assert [x.spin for x in code.ins if x.mb_op == "test_wait"] == [True]
    # A compare that does not tell the result apart is no spin.
    f.write_text(HEAD + ONE_LINE_SPIN.replace("setp.eq.s32 %p1, %r2, 0;", "setp.eq.s32 %p1, %r2, 7;"))
    module = sim.load(f)
    code = analyse(module.functions[0], sim.launch(module, grid=1, block=1).functions["k"], shared_symbols(m))
    assert [x.spin for x in code.ins if x.mb_op == "test_wait"] == [False]
