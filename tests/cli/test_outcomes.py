"""One cause, one outcome class, in `run` and `check` alike (issue 13):

* the simulator cannot run an instruction: outcome/verdict `unsupported`, exit 2, naming the instruction
  and its line, never a finding about the kernel;
* the kernel's own fault (an access outside memory, trap, ...): a finding of kind `violation` with the
  fault's rule, exit 1;
* a bound (steps, states, a local loop of a million instructions): incomplete, exit 3.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from mbarrier.cli import main

HEAD = ".version 8.6\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
REGS = "\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.shared .align 8 .b64 bar;\n"


def _kernel(tmp_path: Path, body: str) -> list[str]:
    f = tmp_path / "k.ptx"
    f.write_text(HEAD + REGS + body + "\tret;\n}\n")
    return [str(f), "--grid", "1", "--block", "2"]


def _check_json(capsys: pytest.CaptureFixture[str], launch: list[str], code: int) -> dict[str, Any]:
    assert main(["check", *launch, "--json"]) == code
    d: dict[str, Any] = json.loads(capsys.readouterr().out)
    return d


UNSUPPORTED = "\tmov.u32 %r1, %tid.x;\n\ttcgen05.fence::before_thread_sync;\n"
# Why: of tcgen05 the simulator runs only tcgen05.commit (sim.isa.tcgen05).
TCGEN05 = ("of tcgen05 only the arrive-on of tcgen05.commit is modelled: the simulator executes no tcgen05 "
           "operation")


def test_an_unsupported_instruction_is_unsupported_in_check(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    launch = _kernel(tmp_path, UNSUPPORTED)
    d = _check_json(capsys, launch, 2)
    assert d["verdict"] == "unsupported" and d["findings"] == [] and d["stopped_by"] == "unsupported"
    u = d["unsupported"]
    assert u["kind"] == "unsupported" and u["line"] == 10
    assert u["instruction"] == "tcgen05.fence::before_thread_sync;"
    assert u["message"] == f"`tcgen05.fence::before_thread_sync` is not supported ({TCGEN05})"
    assert main(["check", *launch]) == 2
    out = capsys.readouterr().out
    assert "UNSUPPORTED: the simulator cannot run line 10" in out and "no finding about the kernel" in out
    assert "FOUND" not in out and "violation" not in out
    assert f"--schedule {shlex.quote(u['schedule'])}" in out


def test_an_unsupported_instruction_is_unsupported_in_run(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *_kernel(tmp_path, UNSUPPORTED)]) == 2
    out = capsys.readouterr().out
    assert "outcome: UNSUPPORTED at step" in out and "line 10: tcgen05.fence::before_thread_sync;" in out
    assert "`tcgen05.fence::before_thread_sync` is not supported" in out


def test_findings_made_before_an_unsupported_instruction_stand(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Thread 1 misuses the barrier in its first steps; thread 0 reaches the unsupported instruction
    later (breadth first, without reductions: the violation comes first): the violation is true whatever
    the rest does, so the verdict is the finding, and the stop is reported."""
    body = ("\tmov.u32 %r1, %tid.x;\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra L;\n"
            "\tmbarrier.arrive.shared::cta.b64 _, [bar];\n\tbra E;\nL:\n"
            "\tmov.u32 %r2, 0;\n\tmov.u32 %r2, 1;\n\tmov.u32 %r2, 2;\n\tmov.u32 %r2, 3;\n"
            "\ttcgen05.fence::before_thread_sync;\nE:\n")
    launch = _kernel(tmp_path, body) + ["--no-reduce"]
    d = _check_json(capsys, launch, 1)
    assert d["verdict"] == "finding" and d["stopped_by"] == "unsupported"
    assert [f["rule"] for f in d["findings"]] == ["uninitialized"]
    assert d["unsupported"]["line"] == 19
    assert main(["check", *launch]) == 1
    out = capsys.readouterr().out
    assert "FOUND 1 problem" in out
    assert "unsupported: `tcgen05.fence::before_thread_sync` is not supported" in out
    assert "the simulator met an instruction it does not support" in out


OUT_OF_BOUNDS = "\tmov.u32 %r1, bar;\n\tst.shared.u32 [%r1+4096], 1;\n"


def test_an_access_outside_memory_is_a_finding_in_run_and_check(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    launch = _kernel(tmp_path, OUT_OF_BOUNDS)
    assert main(["run", *launch]) == 1
    out = capsys.readouterr().out
    assert "outcome: VIOLATION" in out and "rule memory-fault" in out
    assert "a store of 4 bytes at shared offset 0x1000 is outside the 128 bytes of shared memory" in out
    d = _check_json(capsys, launch, 1)
    assert d["verdict"] == "finding"
    f = d["findings"][0]
    assert f["kind"] == "violation" and f["rule"] == "memory-fault" and f["line"] == 10


def test_trap_is_the_kernels_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    launch = _kernel(tmp_path, "\ttrap;\n")
    assert main(["run", *launch]) == 1
    assert "rule trap" in capsys.readouterr().out
    d = _check_json(capsys, launch, 1)
    assert d["findings"][0]["rule"] == "trap"


def test_a_local_loop_past_the_limit_is_a_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from mbarrier.explore import check
    monkeypatch.setattr(check, "LOCAL_LOOP_LIMIT", 1000)
    d = _check_json(capsys, _kernel(tmp_path, "L:\n\tadd.u32 %r1, %r1, 1;\n\tbra L;\n"), 3)
    assert d["verdict"] == "incomplete" and d["stopped_by"] == "local-steps" and d["findings"] == []
    covered = str(d["covered"])
    assert "ran 1,000 instructions in a row without touching shared state (a loop at line" in covered
