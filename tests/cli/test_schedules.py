"""Saved schedules carry the fingerprint of their launch: replaying one on another module, kernel or
launch is an error naming the difference; a plain (old) string still replays, and where it parts from
the run is said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import examples
from mbarrier.cli import main

CORPUS = examples.HERE / "corpus"
RING, MISMATCH = str(CORPUS / "ring.ptx"), str(CORPUS / "ring_tx_mismatch.ptx")
LAUNCH = ["--grid", "1", "--block", "3"]


def _saved(capsys: pytest.CaptureFixture[str], tmp_path: Path, *argv: str) -> Path:
    path = tmp_path / "s.txt"
    main([*argv, "--save-schedule", str(path)])
    capsys.readouterr()
    return path


def test_a_schedule_replayed_on_another_module_is_an_error_naming_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    saved = _saved(capsys, tmp_path, "check", MISMATCH, *LAUNCH)
    assert saved.read_text().startswith("v1 module=")
    assert main(["run", RING, *LAUNCH, "--schedule", f"@{saved}"]) == 2  # was: exit 0, round-robin
    err = capsys.readouterr().err
    assert "the schedule was recorded on another launch; it differs in the module's text" in err
    assert main(["run", MISMATCH, *LAUNCH, "--schedule", f"@{saved}"]) == 1
    assert "outcome: STUCK" in capsys.readouterr().out


def test_another_launch_shape_or_argument_is_named(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    saved = _saved(capsys, tmp_path, "check", MISMATCH, *LAUNCH)
    assert main(["run", MISMATCH, "--grid", "3", "--block", "1", "--schedule", f"@{saved}"]) == 2
    assert "grid 1,1,1 (this launch: 3,1,1); block 3,1,1 (this launch: 1,1,1)" in capsys.readouterr().err
    # The same shape written differently is the same launch.
    assert main(["run", MISMATCH, "--grid", "1,1,1", "--block", "3,1", "--schedule", f"@{saved}"]) == 1
    capsys.readouterr()
    ring = str(examples.path("ring_buffer"))
    saved = _saved(capsys, tmp_path, "run", ring, "--grid", "1", "--block", "160", "--arg", "1=buf:768")
    by_name = ["--arg", "ring_buffer_param_1=buf:768"]
    assert main(["run", ring, "--grid", "1", "--block", "160", *by_name, "--schedule", f"@{saved}"]) == 0
    capsys.readouterr()
    assert main(["run", ring, "--grid", "1", "--block", "160", "--arg", "1=buf:1024",
                 "--schedule", f"@{saved}"]) == 2
    assert "differs in the kernel's arguments" in capsys.readouterr().err


def test_check_stamps_its_replay_line_json_and_saved_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", MISMATCH, *LAUNCH, "--json"]) == 1
    sched = json.loads(capsys.readouterr().out)["findings"][0]["schedule"]
    assert sched.startswith("v1 module=") and " kernel=ring grid=1,1,1 block=3,1,1 cluster=1,1,1 " in sched
    assert main(["check", MISMATCH, *LAUNCH]) == 1
    assert f"--schedule '{sched}'" in capsys.readouterr().out


def test_a_plain_schedule_still_replays_and_where_it_ends_is_said(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    plain = _saved(capsys, tmp_path, "check", MISMATCH, *LAUNCH).read_text().split("; ", 1)[1].strip()
    assert main(["run", MISMATCH, *LAUNCH, "--schedule", plain]) == 1
    out = capsys.readouterr().out
    # A deadlock's schedule ends where check saw every thread wait; in a run they spin until they park.
    assert "outcome: STUCK" in out and "note: the given schedule covers the first 66 of the 75 steps" in out
    # The same plain string on the correct ring: nothing can check it, but the run says it went on alone.
    assert main(["run", RING, *LAUNCH, "--schedule", plain]) == 0
    assert "note: the given schedule covers the first 66 of the 140 steps" in capsys.readouterr().out


def test_a_schedule_the_run_does_not_use_up_is_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", MISMATCH, *LAUNCH, "--seed", "2"]) == 1
    plain = capsys.readouterr().out.split("schedule: ")[1].split("; ", 1)[1].strip()
    assert main(["run", MISMATCH, *LAUNCH, "--schedule", plain]) == 1
    assert "left unused" not in capsys.readouterr().out
    assert main(["run", MISMATCH, *LAUNCH, "--schedule", plain + ",0*4"]) == 1  # no thread can run by then
    assert "with 4 steps of the given schedule left unused" in capsys.readouterr().out


def test_a_malformed_header_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", RING, *LAUNCH, "--schedule", "v9 x=1; 0*3"]) == 2
    assert "is not of format v1" in capsys.readouterr().err
