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
