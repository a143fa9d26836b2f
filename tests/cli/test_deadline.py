"""`check --timeout` and Ctrl-C end a check on time even inside the long first state of a kernel of
many threads (`explore.budget.pulse`): incomplete (exit 3), the report saying where it stopped."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from tests.explore.test_deadline import FIRST

from mbarrier.cli import main, progress
from mbarrier.explore.results import Stats


def _kernel(tmp_path: Path) -> str:
    p = tmp_path / "first.ptx"
    p.write_text(FIRST.replace("], 128;", "], 256;"))
    return str(p)


def test_a_tiny_timeout_on_a_multi_warp_kernel_is_incomplete_within_the_bound(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The check of 256 threads takes minutes; 0.3 s is spent inside its first states.
    started = time.monotonic()
    code = main(["check", _kernel(tmp_path), "--grid", "1", "--block", "256", "--timeout", "0.3", "--json"])
    wall = time.monotonic() - started
    assert code == 3
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "incomplete" and d["stopped_by"] == "timeout"
    assert wall < 0.3 + 2.0, wall


def test_ctrl_c_during_the_first_state_reports_where_it_stopped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # A real SIGINT, sent while the first state's futures are being built (the progress line says so).
    sent: list[str] = []
    shown = progress.Progress.states

    def states(self: progress.Progress, s: Stats) -> None:
        shown(self, s)
        if not sent and s.transitions == 0 and s.doing.startswith("futures of thread"):
            sent.append(s.doing)
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(progress, "LINE_EVERY", 0.0)
    monkeypatch.setattr(progress.Progress, "states", states)
    code = main(["check", _kernel(tmp_path), "--grid", "1", "--block", "256", "--progress"])
    out, err = capsys.readouterr()
    assert sent and code == 3, err
    assert "INCOMPLETE: interrupted (Ctrl-C) before every interleaving was explored" in out
    assert "stopped before the first state was explored (futures of thread " in out
    assert "check: first state: futures of thread " in err
    assert "Traceback" not in err
