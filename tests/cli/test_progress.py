"""Progress on stderr: a live line on a terminal, a plain line every few seconds elsewhere (CI logs);
`--progress/--no-progress` and `--quiet` choose."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from mbarrier import examples
from mbarrier.cli import main, progress
from mbarrier.cli.progress import Progress
from mbarrier.explore.results import Stats

RING = str(examples.HERE / "corpus" / "ring.ptx")
SPIN = (".version 8.6\n.target sm_90\n.address_size 64\n.visible .entry spin()\n{\n.reg .b32 %r<2>;\n"
        "$L:\nadd.u32 %r1, %r1, 1;\nbra $L;\n}\n")


@pytest.fixture
def every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line at every report (not every 5 s), so a short check shows them."""
    monkeypatch.setattr(progress, "LINE_EVERY", 0.0)


def test_check_writes_plain_lines_when_stderr_is_not_a_terminal(
        every_time: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", RING, "--grid", "1", "--block", "3", "--json"]) == 0
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert lines and all(line.startswith("check: ") for line in lines)
    assert " states, " in lines[-1] and " moves (" in lines[-1] and "/s), depth " in lines[-1] \
        and ", queue " in lines[-1]
    assert "RSS " in lines[-1] and "MiB" in lines[-1]
    assert out.startswith("{")  # stdout keeps only the report
    for quiet in (["--no-progress"], ["--quiet"]):
        assert main(["check", RING, "--grid", "1", "--block", "3", *quiet]) == 0
        assert capsys.readouterr().err == ""


def test_run_writes_a_steps_line(every_time: None, capsys: pytest.CaptureFixture[str],
                                 tmp_path: Path) -> None:
    (tmp_path / "spin.ptx").write_text(SPIN)
    spin = str(tmp_path / "spin.ptx")
    assert main(["run", spin, "--grid", "1", "--block", "2", "--max-steps", "40000"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("run: 8,") and " steps (" in err and "/s)" in err


def test_nothing_is_written_by_a_short_command_at_the_default_interval(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert progress.LINE_EVERY == 5.0
    assert main(["check", RING, "--grid", "1", "--block", "3"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("flags", "tty", "mode"), [
    ([], False, "lines"), ([], True, "live"), (["--no-progress"], True, "off"), (["--quiet"], True, "off"),
    (["--quiet", "--progress"], False, "lines"),
])
def test_the_mode_follows_the_options_and_the_terminal(flags: list[str], tty: bool, mode: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    p = argparse.ArgumentParser()
    progress.add_progress_options(p)
    monkeypatch.setattr("sys.stderr.isatty", lambda: tty)
    assert Progress.of("check", p.parse_args(flags)).mode == mode


def test_the_live_line_starts_and_goes_away(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "LIVE_EVERY", 0.0)
    p = Progress("check", "live")
    p.states(Stats(states=10, depth=3, queue=4))
    assert p._status is not None
    p.close()
    assert p._status is None
