"""`mbarrier lint`: exit codes, human and JSON output, several files, standard input, --strict,
--target (docs/cli.md)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from mbarrier.cli import main

GOOD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
.reg .b64 %rd<2>;
.reg .pred %p<2>;
.shared .align 8 .b64 bar;
mbarrier.init.shared::cta.b64 [bar], 32;
mbarrier.arrive.shared::cta.b64 %rd1, [bar];
mbarrier.try_wait.shared::cta.b64 %p1, [bar], %rd1;
ret;
}
"""

BAD = GOOD.replace("mbarrier.arrive.shared::cta.b64 %rd1", "mbarrier.arrive.release.shared::cta.b64 %rd1")
WARN = GOOD.replace("[bar], 32;", "[bar], 0;")
SYNTAX = GOOD.replace("[bar], 32;", "[bar 32;")


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_a_clean_file_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", write(tmp_path, "good.ptx", GOOD)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "0 error(s), 0 warning(s)" in err


def test_an_error_exits_1_with_position_rule_source_and_caret(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.ptx", BAD)
    assert main(["lint", path]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f"{path}:10:16: error: Modifier '.release' requires scope with "
                        "'mbarrier.arrive' instruction [ptxas-sem-needs-scope]")
    assert lines[1] == "  mbarrier.arrive.release.shared::cta.b64 %rd1, [bar];"
    assert lines[2] == "  " + " " * 15 + "^"  # under ".release"


def test_warnings_pass_unless_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "warn.ptx", WARN)
    assert main(["lint", path]) == 0
    assert "warning:" in capsys.readouterr().out
    assert main(["lint", "--strict", path]) == 1
    assert "error:" in capsys.readouterr().out


def test_json_is_one_document_for_any_number_of_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "bad.ptx", BAD)
    assert main(["lint", "--json", bad]) == 1
    one = json.loads(capsys.readouterr().out)
    assert one["schema_version"] == 1 and one["command"] == "lint" and one["target"] is None
    (f,) = one["files"]
    assert f["file"] == bad and f["error"] is None
    (d,) = f["diagnostics"]
    assert d == {"severity": "error", "line": 10, "column": 16, "rule": "ptxas-sem-needs-scope",
                 "message": "Modifier '.release' requires scope with 'mbarrier.arrive' instruction"}
    assert one["summary"] == {"files": 1, "errors": 1, "warnings": 0}
    good = write(tmp_path, "good.ptx", GOOD)
    assert main(["lint", "--format", "json", good, bad]) == 1  # one shape for any number of files
    many = json.loads(capsys.readouterr().out)
    assert [m["file"] for m in many["files"]] == [good, bad]
    assert many["files"][0]["diagnostics"] == []
    assert many["summary"] == {"files": 2, "errors": 1, "warnings": 0}


def test_an_unreadable_file_is_in_the_json_with_its_error(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.ptx", GOOD)
    assert main(["lint", "--json", good, str(tmp_path / "missing.ptx")]) == 2
    out, err = capsys.readouterr()
    d = json.loads(out)
    assert d["files"][1]["error"].startswith(f"{tmp_path / 'missing.ptx'}: cannot read")
    assert d["summary"]["files"] == 1 and err == ""


def test_a_syntax_error_is_a_fatal_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--json", write(tmp_path, "syntax.ptx", SYNTAX)]) == 1
    (d,) = json.loads(capsys.readouterr().out)["files"][0]["diagnostics"]
    assert d["severity"] == "fatal" and d["line"] == 9


def test_standard_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(BAD))
    assert main(["lint", "-"]) == 1
    assert capsys.readouterr().out.startswith("<stdin>:10:16: error:")


def test_an_unreadable_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.ptx", GOOD)
    assert main(["lint", str(tmp_path / "missing.ptx"), good]) == 2
    err = capsys.readouterr().err
    assert "missing.ptx: cannot read" in err and "1 file(s): 0 error(s)" in err


def test_a_missing_file_alone_is_not_reported_as_zero_files_linted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(tmp_path / "missing.ptx")]) == 2
    assert main(["lint", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "file(s)" not in err and "missing.ptx: cannot read" in err and "Is a directory" in err


def test_target_overrides_the_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "good.ptx", GOOD)
    assert main(["lint", "--target", "sm_80", path]) == 1
    assert "Feature 'mbarrier.try_wait' requires .target sm_90 or higher" in capsys.readouterr().out
    assert main(["lint", "--target", "sm_42", path]) == 2
    assert "unknown target 'sm_42'" in capsys.readouterr().err


def test_the_bundled_nvcc_modules_lint_clean(capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[1] / "ptx" / "modules"
    files = sorted(str(p) for p in root.glob("*.ptx"))
    assert len(files) >= 10
    assert main(["lint", "--strict", *files]) == 0


def test_json_counts_the_instructions_judged_and_those_left_alone(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Three of the family (judged), ret and two movs outside lint's scope; none after a syntax error."""
    text = GOOD.replace("ret;", "mov.u64 %rd1, 0;\nmov.u64 %rd1, 1;\nret;")
    assert main(["lint", write(tmp_path, "k.ptx", text), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["instructions"] == {
        "judged": 3, "not_judged": 3, "not_judged_by_opcode": {"mov": 2, "ret": 1}}
    assert main(["lint", write(tmp_path, "s.ptx", SYNTAX), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["files"][0]["instructions"] is None
    main(["lint", write(tmp_path, "k.ptx", text)])
    assert "3 instruction(s) judged, 3 outside lint's scope" in capsys.readouterr().err
