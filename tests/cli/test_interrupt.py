"""Ctrl-C: the first SIGINT stops a check or a run at its next safe point and the report says what was
covered (exit 3); a second one interrupts at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mbarrier import examples
from mbarrier.cli.interrupt import Interrupt

RING = str(examples.path("ring_buffer"))
# Without reductions its check of 160 threads runs for hours: long enough to interrupt (with them it
# verifies in seconds).
LONG = ("--grid", "1", "--block", "160", "--no-reduce")
SPIN = """.version 8.6
.target sm_90
.address_size 64

.visible .entry spin()
{
	.reg .b32 %r<2>;
	mov.u32 %r1, 0;
$L:
	add.u32 %r1, %r1, 1;
	bra $L;
}
"""


def _default_sigint() -> None:
    # as a terminal's foreground job has it: a runner started in the background (CI) hands its
    # children SIGINT ignored, and the signal would be lost before the command installs its handler
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mbarrier", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
                            preexec_fn=_default_sigint)


def _interrupt(p: subprocess.Popen[str], after_header: bool) -> tuple[int, str, str]:
    """SIGINT once the command is under way: after its header line (text), or after its first
    progress line on stderr (JSON has no header; stderr is no terminal, so a line every 5 s)."""
    assert p.stdout is not None and p.stderr is not None
    head = err_head = ""
    if after_header:
        head = p.stdout.readline()
    else:
        err_head = p.stderr.readline()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    return p.returncode, head + out, err_head + err


def test_ctrl_c_during_check_prints_the_partial_report_and_exits_3() -> None:
    code, out, err = _interrupt(_start("check", RING, *LONG), True)
    assert code == 3, err
    assert out.startswith(f"{RING}: kernel ring_buffer, 1 CTA of 160 threads\n")
    assert "INCOMPLETE: interrupted (Ctrl-C) before every interleaving was explored" in out
    # Ctrl-C right after the header may come while the code is analysed, before the first state
    assert ("stopped after" in out and "states were left unexplored" in out) or (
        "stopped while analysing the kernel's code" in out) or "stopped before the first state" in out, out
    assert "Traceback" not in err


def test_ctrl_c_during_check_json_gives_the_partial_json() -> None:
    code, out, err = _interrupt(_start("check", RING, *LONG, "--json"), False)
    assert code == 3, err
    d = json.loads(out)
    assert d["verdict"] == "incomplete" and d["stopped_by"] == "interrupt" and d["findings"] == []
    assert (d["stats"]["states"] >= 1 and "stopped after" in d["covered"]) or d["covered"].startswith(
        ("stopped before the first state was explored", "stopped while analysing the kernel's code")), d


def test_ctrl_c_during_run_reports_where_each_thread_was_and_exits_3(tmp_path: Path) -> None:
    (tmp_path / "spin.ptx").write_text(SPIN)
    spin = str(tmp_path / "spin.ptx")
    code, out, err = _interrupt(_start("run", spin, "--grid", "1", "--block", "2"), True)
    assert code == 3, err
    assert "outcome: INCOMPLETE: interrupted (Ctrl-C) after" in out
    assert "still runnable" in out and "schedule:" in out
    assert "Traceback" not in err


def test_the_first_sigint_only_raises_the_flag_and_a_second_interrupts() -> None:
    # A test runner started in the background inherits SIGINT ignored: what was there comes back.
    before = signal.getsignal(signal.SIGINT)
    with Interrupt() as stop:
        assert not stop()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)  # the handler runs at the next bytecode boundary
        assert stop()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
    assert signal.getsignal(signal.SIGINT) is before


def test_ctrl_c_while_the_commands_are_imported_exits_130_without_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import mbarrier.cli as cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["check", RING]) == cli.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "interrupted\n"
