"""`mbarrier check` end to end: verdicts and exit codes, JSON per docs/cli.md, and the schedule of a finding
replayed by `mbarrier run --schedule` to the same end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.cli import main

CORPUS = Path(sim.__file__).parent.parent / "examples" / "corpus"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str], code: int) -> dict[str, object]:
    assert main(argv) == code
    out = capsys.readouterr()
    assert out.err == ""  # no progress line when stderr is not a terminal
    return json.loads(out.out)  # type: ignore[no-any-return]


def test_verified_exits_0_with_design_json(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["check", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--json"], 0)
    assert d["verdict"] == "verified" and d["findings"] == []
    stats = d["stats"]
    assert isinstance(stats, dict) and stats["states"] > 1 and stats["transitions"] >= stats["states"] - 1
    assert isinstance(stats["seconds"], float)


def test_deadlock_exits_1_and_its_schedule_replays_with_run(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    f = str(CORPUS / "ring_missing_arrive.ptx")
    d = _json(capsys, ["check", f, "--grid", "1", "--block", "3", "--json"], 1)
    assert d["verdict"] == "finding"
    finding = d["findings"][0]  # type: ignore[index]
    assert set(finding) >= {"kind", "rule", "message", "schedule"}
    assert finding["kind"] == "deadlock"
    lines = {w["line"] for w in finding["waiters"]}
    sched = tmp_path / "s.txt"
    sched.write_text(finding["schedule"])
    assert main(["run", f, "--grid", "1", "--block", "3", "--schedule", f"@{sched}"]) == 1
    out = capsys.readouterr().out
    assert "STUCK" in out
    for line in lines:
        assert f"line {line}" in out


def test_violation_text_report_names_rule_line_and_replay(capsys: pytest.CaptureFixture[str]) -> None:
    f = str(CORPUS / "stale_token.ptx")
    assert main(["check", f, "--grid", "1", "--block", "2"]) == 1
    out = capsys.readouterr().out
    assert "FOUND 1 problem" in out
    assert "rule wait-stale-token (9.7.13.15.16)" in out
    assert "mbarrier.test_wait.shared::cta.b64" in out and "--schedule '" in out
    sched = out.split("--schedule '")[1].split("'")[0]
    assert main(["run", f, "--grid", "1", "--block", "2", "--schedule", sched]) == 1
    assert "wait-stale-token" in capsys.readouterr().out


def test_deadlock_text_explains_waiters_state_and_arrivers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(CORPUS / "ring_tx_mismatch.ptx"), "--grid", "1", "--block", "3"]) == 1
    out = capsys.readouterr().out
    assert "waits for parity 0 of mbarrier full (shared 0x20, CTA 0)" in out
    assert "4 transaction bytes still outstanding" in out
    assert "who could still arrive on empty" in out


def test_bound_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, ["check", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--max-states", "5",
                       "--json"], 3)
    assert d["verdict"] == "incomplete" and "stopped after 5 states" in str(d["covered"])


def test_input_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check", str(tmp_path / "missing.ptx"), "--grid", "1", "--block", "1"]) == 2
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.0\n.target sm_90\n.entry k( {\n")
    assert main(["check", str(bad), "--grid", "1", "--block", "1"]) == 2
    assert main(["check", str(CORPUS / "ring.ptx"), "--grid", "0", "--block", "1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "no such file" in err
