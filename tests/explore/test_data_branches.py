"""Branches that may depend on memory contents (`explore.inputs.data_branches`), and the note a VERIFIED
report then carries: the verdict holds for the launch's memory contents (a release skipped only for some
data is a bug that other contents would show)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mbarrier import sim
from mbarrier.explore.check import Options, check
from mbarrier.explore.code import analyse_module
from mbarrier.explore.inputs import data_branches

from .helpers import load

# Thread 0 arrives on `bar` unless the word at [src] (global memory) is non-zero; thread 1 waits. With zero
# contents both pass; with a non-zero word the waiter hangs.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src)
{
	.reg .pred %p<6>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar], 1;
SYNC:
	bar.sync 0;
	@%p1 bra WAIT;
	ld.param.u64 %rd1, [src];
	cvta.to.global.u64 %rd1, %rd1;
	ld.global.u32 %r2, [%rd1];
	add.u32 %r3, %r2, 1;
	setp.ne.u32 %p2, %r3, 1;
	@%p2 bra DONE;
	mbarrier.arrive.shared::cta.b64 %rd2, [bar];
	bra DONE;
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
	@!%p3 bra WAIT;
DONE:
	ret;
}
"""

# The same decision taken on the thread's id, or on a kernel parameter (the buffer's address, through
# cvta): nothing read from memory decides it.
BY_ID = KERNEL.replace("setp.ne.u32 %p2, %r3, 1;", "setp.ne.u32 %p2, %r1, 0;")
BY_PARAM = KERNEL.replace("setp.ne.u32 %p2, %r3, 1;", "setp.eq.u64 %p2, %rd1, 0;")


def _lines(tmp_path: Path, text: str) -> list[int]:
    module = load(tmp_path, text)
    m = sim.launch(module, grid=1, block=2)
    return sorted({line for c in analyse_module(module, m).values() for line in data_branches(c)})


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_branch_on_loaded_data_is_found_and_others_are_not(tmp_path: Path) -> None:
    assert _lines(tmp_path, KERNEL) == [_line_of(KERNEL, "@%p2 bra DONE")]  # through add and setp
    # branches on %tid, on the try_wait's predicate (the mbarrier's state, not memory contents): none
    assert _lines(tmp_path, BY_ID) == []
    assert _lines(tmp_path, BY_PARAM) == []  # ld.param is no memory contents


def test_verified_says_for_which_contents(tmp_path: Path) -> None:
    module = load(tmp_path, KERNEL)
    r = check(module, grid=1, block=2, options=Options(walks=0))
    assert r.verdict == "verified" and r.data_branches == (_line_of(KERNEL, "@%p2 bra DONE"),)
    quiet = check(load(tmp_path, BY_ID, "by_id"), grid=1, block=2,
                  options=Options(walks=0))
    assert quiet.verdict == "verified" and quiet.data_branches == ()


def test_the_report_and_the_json_carry_the_lines(tmp_path: Path) -> None:
    ptx = tmp_path / "k.ptx"
    ptx.write_text(KERNEL)
    base = [sys.executable, "-m", "mbarrier", "check", str(ptx), "--grid", "1", "--block", "2"]
    text = subprocess.run(base, capture_output=True, text=True).stdout
    line = _line_of(KERNEL, "@%p2 bra DONE")
    assert "VERIFIED" in text and f"may branch on values it loads from memory (line {line})" in text
    doc = json.loads(subprocess.run(base + ["--json"], capture_output=True, text=True).stdout)
    assert doc["verdict"] == "verified" and doc["data_branches"] == [line]
