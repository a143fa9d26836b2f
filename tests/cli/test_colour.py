"""Colour on a terminal: NO_COLOR turns it off, FORCE_COLOR on (NO_COLOR wins); JSON never coloured;
input's control characters stay escaped inside the colour."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from mbarrier.cli import main
from mbarrier.cli.colour import Painter, enabled
from mbarrier.examples import HERE

SGR = re.compile(r"\x1b\[[0-9;]*m")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("env", "tty", "on"), [
    ({}, True, True), ({}, False, False), ({"TERM": "dumb"}, True, False),
    ({"NO_COLOR": "1"}, True, False), ({"NO_COLOR": ""}, True, True),
    ({"FORCE_COLOR": "1"}, False, True), ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),
])
def test_when_colour_is_on(env: dict[str, str], tty: bool, on: bool) -> None:
    assert enabled(Tty() if tty else io.StringIO(), env) is on


def test_the_painter_escapes_before_it_colours() -> None:
    assert Painter(True)("a\x1b[2Jb", "error") == "\x1b[1;31ma\\x1b[2Jb\x1b[0m"
    assert Painter(False)("a\x1b[2Jb", "error") == "a\\x1b[2Jb"


def test_lint_check_and_run_in_colour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "k\x1b[2J.ptx"
    bad.write_text((HERE / "ring_buffer.ptx").read_text())
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(["lint", str(bad), "--target", "sm_80"]) == 1
    out = capsys.readouterr().out
    assert "\x1b[1;31merror:\x1b[0m" in out and "k\\x1b[2J.ptx" in out
    assert set(SGR.findall(out)) <= {"\x1b[1m", "\x1b[1;31m", "\x1b[2m", "\x1b[32m", "\x1b[0m"}
    assert main(["check", str(HERE / "corpus" / "ring.ptx"), "--grid", "1", "--block", "3", "-q"]) == 0
    assert "\x1b[1;32mVERIFIED" in capsys.readouterr().out
    mismatch = str(HERE / "corpus" / "ring_tx_mismatch.ptx")
    assert main(["run", mismatch, "--grid", "1", "--block", "3", "-q"]) == 1
    assert "\x1b[1;31moutcome: STUCK" in capsys.readouterr().out
    assert main(["check", str(HERE / "corpus" / "ring.ptx"), "--grid", "1", "--block", "3", "--json"]) == 0
    out = capsys.readouterr().out
    assert not SGR.search(out) and json.loads(out)["verdict"] == "verified"
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["lint", str(bad), "--target", "sm_80"]) == 1
    assert not SGR.search(capsys.readouterr().out)
