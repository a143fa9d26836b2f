"""`--format github`: one workflow command per diagnostic or finding, escaped as the Actions runner reads
them (% CR LF in the message; also : and , in properties)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mbarrier.cli import main
from mbarrier.examples import HERE
from mbarrier.report.github import command, escape_data, escape_property

CORPUS = HERE / "corpus"
# A command: ::LEVEL key=value,...::message, no raw CR/LF inside, properties free of : and ,
COMMAND = re.compile(r"::(error|warning|notice)(?: ((?:[a-zA-Z]+=[^,:\r\n]*)(?:,[a-zA-Z]+=[^,:\r\n]*)*))?::"
                     r"([^\r\n]*)")


def _unescape(text: str) -> str:
    return text.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",") \
        .replace("%25", "%")


def _commands(out: str) -> list[tuple[str, dict[str, str], str]]:
    found = []
    for line in out.splitlines():
        m = COMMAND.fullmatch(line)
        assert m, line
        props = dict(p.split("=", 1) for p in m.group(2).split(",")) if m.group(2) else {}
        found.append((m.group(1), {k: _unescape(v) for k, v in props.items()}, _unescape(m.group(3))))
    return found


def test_escaping() -> None:
    assert escape_data("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext: a, b"
    assert escape_property("k:1,2%\n") == "k%3A1%2C2%25%0A"
    assert command("error", "a\nb", file="x,y:z.ptx", line=3, col=4, title="t") == \
        "::error file=x%2Cy%3Az.ptx,line=3,col=4,title=t::a%0Ab"
    assert command("warning", "no file") == "::warning::no file"


def test_lint_annotations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "odd, name: 100%.ptx"
    f.write_text((HERE / "ring_buffer.ptx").read_text())
    assert main(["lint", str(f), "--target", "sm_80", "--format", "github"]) == 1
    found = _commands(capsys.readouterr().out)
    level, props, message = found[0]
    assert level == "error" and props["file"] == str(f) and (props["line"], props["col"]) == ("68", "2")
    assert props["title"] == "mbarrier lint (ptxas-gate-target)" and "requires .target sm_90" in message
    assert len(found) == 33


def test_check_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    f = str(CORPUS / "ring_tx_mismatch.ptx")
    assert main(["check", f, "--grid", "1", "--block", "3", "--format", "github"]) == 1
    ((level, props, message),) = _commands(capsys.readouterr().out)
    # the annotation sits at a wait for the headline's barrier (`full`, whose bytes never land: line 78)
    assert level == "error" and props == {"file": f, "line": "78",
                                          "title": "mbarrier check: deadlock (deadlock)"}
    assert message.startswith("3 threads wait forever") and "\nreplay: mbarrier run " in message
    assert main(["check", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--format", "github"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["check", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--max-states", "5",
                 "--format", "github"]) == 3
    ((level, props, message),) = _commands(capsys.readouterr().out)
    assert level == "warning" and props["title"] == "mbarrier check: incomplete"
