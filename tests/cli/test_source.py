"""The PTX input of run, check and export: a file or standard input (`-`); a name that cannot be read
says why (exit 2)."""

from __future__ import annotations

import io
import shlex
from pathlib import Path

import pytest

from mbarrier import examples
from mbarrier.cli import main

MISMATCH = examples.HERE / "corpus" / "ring_tx_mismatch.ptx"


def _stdin(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))


def test_check_reads_standard_input(monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    _stdin(monkeypatch, MISMATCH)
    assert main(["check", "-", "--grid", "1", "--block", "3"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("<stdin>: kernel ring, 1 CTA of 3 threads\n")
    assert "[1] deadlock" in out and "replay: mbarrier run - --grid 1 --block 3 --schedule '" in out


def test_run_and_export_read_standard_input(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _stdin(monkeypatch, MISMATCH)
    assert main(["run", "-", "--grid", "1", "--block", "3"]) == 1
    assert capsys.readouterr().out.startswith("<stdin>: kernel ring,")
    _stdin(monkeypatch, MISMATCH)
    assert main(["export", "--promela", "-", "--grid", "1", "--block", "3"]) == 0
    assert "proctype" in capsys.readouterr().out


def test_the_replay_line_of_check_names_the_real_file_and_replays(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(MISMATCH), "--grid", "1", "--block", "3", "--no-races"]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if "replay: " in x)
    words = shlex.split(line.split("replay: ", 1)[1])
    assert words[:3] == ["mbarrier", "run", str(MISMATCH)] and "--no-races" in words
    assert main(words[1:]) == 1
    assert "outcome: STUCK" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["run"], ["check"], ["export", "--promela"]])
def test_a_directory_or_a_missing_file_says_so(command: list[str], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, str(tmp_path), "--grid", "1", "--block", "1"]) == 2
    assert f"{tmp_path} is a directory, not a PTX file" in capsys.readouterr().err
    assert main([*command, str(tmp_path / "no.ptx"), "--grid", "1", "--block", "1"]) == 2
    assert f"{tmp_path / 'no.ptx'}: no such file" in capsys.readouterr().err
