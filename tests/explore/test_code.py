"""The checker's view of the code (`explore.code`) takes every instruction the module holds, those the
simulator does not support or cannot read included: they are steps that stop the run, never a crash of
the analysis (issue 13: an unreached `cp.async.bulk.prefetch.tensor`, FlashAttention-3's forward kernel,
made `check` and `export` fail with an IndexError)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.cli import main
from mbarrier.explore.code import ATOM, analyse, shared_symbols

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


# libcu++'s barrier::wait_parity (CUDA 13.0, nvcc -O3): the failure path counts retries, then reads
# %globaltimer and sleeps, and comes back to the wait either way; the branches on the counter and the
# timer are not derived from the wait's result.
BACKOFF_SPIN = """
.visible .entry k(.param .u64 p)
{
	.reg .pred %p<8>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	.shared .align 8 .b64 bar;
	mov.u32 %r1, bar;
	mov.u32 %r2, 0;
	mov.u64 %rd1, %globaltimer;
	bra.uni WAIT;
RETRY:
	add.s32 %r3, %r3, 1;
WAIT:
	{
	.reg .pred p;
	mbarrier.try_wait.parity.shared.b64 p, [%r1], %r2;
	selp.b32 %r4, 1, 0, p;
	}
	setp.eq.s32 %p1, %r4, 0;
	@%p1 bra FAILED;
	bra.uni DONE;
FAILED:
	setp.lt.s32 %p2, %r3, 16;
	@%p2 bra RETRY;
	mov.u64 %rd2, %globaltimer;
	sub.s64 %rd3, %rd2, %rd1;
	setp.lt.s64 %p3, %rd3, 4000000;
	@%p3 bra WAIT;
	nanosleep.u32 1000;
	bra.uni WAIT;
DONE:
	ret;
}
"""


def test_a_wait_with_a_retry_counter_and_timer_back_off_loops_locally(tmp_path: Path) -> None:
    f = tmp_path / "k.ptx"
    exits = BACKOFF_SPIN.replace("@%p3 bra WAIT;", "@%p3 bra DONE;")
    stores = BACKOFF_SPIN.replace("nanosleep.u32 1000;", "st.shared.u32 [bar], 0;")
    for body, loops in ((BACKOFF_SPIN, True), (exits, False), (stores, False)):
        f.write_text(HEAD + body)
        module = sim.load(f)
        m = sim.launch(module, grid=1, block=1)
        code = analyse(module.functions[0], m.functions["k"], shared_symbols(m))
        wait = next(x for x in code.ins if x.mb_op == "try_wait")
        # Not a spin (the branch on the counter is not the result's), but a wait whose failure paths all
        # come back to it through local code: a gate for the frozen futures. An exit from the failure
        # path, or a store on it, is neither.
        assert (wait.spin, wait.spin_local) == (False, loops), body
