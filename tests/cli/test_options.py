"""Option values that make no sense are usage errors (exit 2, the option named, no traceback), for
every command that takes them: none of them may change a verdict (issue 13: `--max-findings 0` made a
deadlocking kernel VERIFIED)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mbarrier import examples
from mbarrier.cli import main

TX_MISMATCH = str(examples.HERE / "corpus" / "ring_tx_mismatch.ptx")
LAUNCH = [TX_MISMATCH, "--grid", "1", "--block", "3"]


def _usage(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and message in err and "Traceback" not in err


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--max-findings", "0", "argument --max-findings: must be at least 1, not 0"),
    ("--max-findings", "-1", "argument --max-findings: must be at least 1, not -1"),
    ("--max-states", "0", "argument --max-states: must be at least 1"),
    ("--max-states", "many", "argument --max-states: expected an integer, not 'many'"),
    ("--timeout", "nan", "argument --timeout: must be a finite number of seconds greater than 0, not nan"),
    ("--timeout", "inf", "not inf"),
    ("--timeout", "-1", "not -1"),
    ("--timeout", "0", "not 0"),
    ("--timeout", "soon", "expected a number of seconds, not 'soon'"),
    ("--dynamic-shared", "-1", "argument --dynamic-shared: must be at least 0, not -1"),
    ("--dynamic-shared", "1.5", "argument --dynamic-shared: expected an integer, not '1.5'"),
])
def test_check_refuses(capsys: pytest.CaptureFixture[str], option: str, value: str, message: str) -> None:
    _usage(capsys, ["check", *LAUNCH, option, value], message)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--max-steps", "-1", "argument --max-steps: must be at least 1, not -1"),
    ("--max-steps", "0", "argument --max-steps: must be at least 1, not 0"),
    ("--burst", "0", "argument --burst: must be at least 1, not 0"),
    ("--seed", "x", "argument --seed: expected an integer, not 'x'"),
    ("--dump", "out:0", "argument --dump: 'out:0': COUNT must be at least 1"),
    ("--dump", "out:-3", "COUNT must be at least 1"),
    ("--dump", "out:lots", "'out:lots': COUNT must be an integer of at least 1"),
    ("--dump", ":4", "expected NAME[:COUNT]"),
    ("--dynamic-shared", "-8", "must be at least 0"),
])
def test_run_refuses(capsys: pytest.CaptureFixture[str], option: str, value: str, message: str) -> None:
    _usage(capsys, ["run", *LAUNCH, option, value], message)


def test_the_smallest_max_findings_still_reports_the_bug(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *LAUNCH, "--max-findings", "1"]) == 1
    assert "FOUND 1 problem" in capsys.readouterr().out


def test_seed_and_dump_count_take_any_integer_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *LAUNCH, "--seed", "0x10", "--dump", "out:0x2"]) == 1
    out = capsys.readouterr().out
    assert "seed 16" in out and "\nout: 0 0\n" in out


def test_an_unknown_dump_name_is_refused_before_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *LAUNCH, "--dump", "nosuch"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--dump nosuch: no buffer of that name (buffers: src, out)" in err


def test_a_buffer_larger_than_its_address_space_is_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *LAUNCH, "--arg", "src=buf:99999999999"]) == 2
    err = capsys.readouterr().err
    assert "parameter 'src': a buffer of 99999999999 bytes is more than the 4 GiB" in err
    assert "internal error" not in err


@pytest.mark.parametrize("command", ["run", "check", "export"])
def test_an_unwritable_output_is_refused_before_any_work(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                         command: str) -> None:
    option = "-o" if command == "export" else "--save-schedule"
    head = ["export", "--promela"] if command == "export" else [command]
    _usage(capsys, [*head, *LAUNCH, option, str(tmp_path / "no" / "dir" / "f")],
           f"argument {option if command != 'export' else '-o/--output'}: {tmp_path}/no/dir/f: directory "
           f"{tmp_path}/no/dir does not exist")
    _usage(capsys, [*head, *LAUNCH, option, str(tmp_path)], f"{tmp_path} is a directory")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere: permissions cannot be tested")
def test_a_read_only_directory_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tmp_path.chmod(0o500)
    try:
        _usage(capsys, ["check", *LAUNCH, "--save-schedule", str(tmp_path / "s")], "permission denied")
    finally:
        tmp_path.chmod(0o700)


def test_a_write_that_fails_late_is_a_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "s.txt"

    def full(self: Path, *args: object, **kwargs: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    assert main(["check", *LAUNCH, "--save-schedule", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"--save-schedule {target}: cannot write it: No space left on device" in err


def test_conform_refuses_an_unwritable_save_before_running_the_gpu(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    _usage(capsys, ["conform", "--gpu", "--save", str(tmp_path / "no" / "r.json")],
           f"argument --save: {tmp_path}/no/r.json: directory {tmp_path}/no does not exist")
