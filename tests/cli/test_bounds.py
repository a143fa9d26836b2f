"""The bounds of run and check (issue 13, "Bounded memory and time"): each ends the command as
incomplete (exit 3) and the report names the bound that was hit; --timeout covers the whole command,
parsing included."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mbarrier import examples
from mbarrier.cli import build_parser, main

RING = str(examples.path("ring_buffer"))
CORPUS_RING = str(examples.HERE / "corpus" / "ring.ptx")


def _big_module(path: Path, lines: int = 300_000) -> str:
    """A module whose parsing alone takes far longer than the timeouts below (about 7 MB)."""
    body = "\tadd.s32 \t%r1, %r1, 1;\n" * lines
    path.write_text(".version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry big()\n{\n"
                    "\t.reg .b32 %r<4>;\n" + body + "\tret;\n}\n")
    return str(path)


@pytest.mark.parametrize("command", [["run"], ["check"], ["export", "--promela"]])
def test_the_timeout_covers_parsing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    command: list[str]) -> None:
    big = _big_module(tmp_path / "big.ptx")
    build_parser()  # the commands' imports, once: the bound counts them, this test is about parsing
    started = time.monotonic()
    assert main([*command, big, "--grid", "1", "--block", "1", "--timeout", "0.05"]) == 3
    assert time.monotonic() - started < 2.0  # lint parses it in 48 s at load average 11
    out, err = capsys.readouterr()
    assert f"the time bound (--timeout 0.05 s) was hit while reading and parsing {big}" in err
    assert "Traceback" not in err and out == ""


def test_the_export_timeout_covers_the_export(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def slow_export(*args: object) -> str:
        time.sleep(30)
        return "never"

    monkeypatch.setattr("mbarrier.cli.export.export_promela", slow_export)
    out_file = tmp_path / "m.pml"
    started = time.monotonic()
    assert main(["export", "--promela", CORPUS_RING, "--grid", "1", "--block", "3", "--timeout", "1",
                 "-o", str(out_file)]) == 3
    assert time.monotonic() - started < 5.0
    out, err = capsys.readouterr()
    assert err == (f"mbarrier export: incomplete: the time bound (--timeout 1 s) was hit while writing the "
                   f"Promela model of {CORPUS_RING}; nothing was written\n")
    assert out == "" and not out_file.exists()


def test_a_timeout_while_parsing_is_in_the_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = _big_module(tmp_path / "big.ptx")
    assert main(["check", big, "--grid", "1", "--block", "1", "--timeout", "0.05", "--json"]) == 3
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "incomplete" and d["stopped_by"] == "timeout" and d["stats"]["states"] == 0
    assert "while reading and parsing" in d["covered"]


def test_check_names_the_memory_bound(capsys: pytest.CaptureFixture[str]) -> None:
    # 5 MiB: room for the launch (a few KiB), not for the interpreter: the first reading is over it.
    assert main(["check", CORPUS_RING, "--grid", "1", "--block", "3", "--max-memory", "5M"]) == 3
    out = capsys.readouterr().out
    assert "INCOMPLETE: the memory bound (--max-memory) was hit before every interleaving was explored" in out
    assert "resident, over the 5.0 MiB of --max-memory" in out


def test_check_json_names_the_memory_bound(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", CORPUS_RING, "--grid", "1", "--block", "3", "--max-memory", "5M", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["stopped_by"] == "max-memory"


def test_check_names_the_state_bound(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", CORPUS_RING, "--grid", "1", "--block", "3", "--max-states", "5"]) == 3
    assert "INCOMPLETE: the state bound (--max-states) was hit" in capsys.readouterr().out


def test_a_roomy_memory_bound_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", CORPUS_RING, "--grid", "1", "--block", "3", "--max-memory", "64G"]) == 0
    assert "VERIFIED" in capsys.readouterr().out


def test_run_names_the_memory_bound(capsys: pytest.CaptureFixture[str]) -> None:
    # The 160-thread ring runs longer than one chunk of steps between two checks of the bounds.
    assert main(["run", RING, "--grid", "1", "--block", "160", "--max-memory", "5M"]) == 3
    out = capsys.readouterr().out
    assert "outcome: INCOMPLETE: stopped at the memory bound (--max-memory) after" in out
    assert "resident, over the 5.0 MiB of --max-memory" in out


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_launch_past_the_memory_bound_is_refused_before_it_is_made(capsys: pytest.CaptureFixture[str],
                                                                     command: str) -> None:
    assert main([command, RING, "--grid", "100000", "--block", "1024", "--max-memory", "4G"]) == 2
    err = capsys.readouterr().err
    assert "before its first step (100,000 CTAs of 1,024 threads" in err
    assert "more than the memory bound of 4,294,967,296 bytes" in err


def test_run_names_the_step_limit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", RING, "--grid", "1", "--block", "160", "--max-steps", "10"]) == 3
    assert "outcome: INCOMPLETE: stopped at the step limit (--max-steps) after 10 steps" in \
        capsys.readouterr().out


@pytest.mark.parametrize(("value", "message"), [
    ("0", "argument --max-memory: must be a size of at least 1 byte, not 0"),
    ("-4G", "must be a size of at least 1 byte"),
    ("lots", "argument --max-memory: expected a size such as 4G, 512M or 1000000 (bytes), not 'lots'"),
    ("4X", "expected a size"),
])
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_senseless_memory_bound_is_a_usage_error(capsys: pytest.CaptureFixture[str], command: str,
                                                    value: str, message: str) -> None:
    with pytest.raises(SystemExit) as e:
        main([command, CORPUS_RING, "--grid", "1", "--block", "3", f"--max-memory={value}"])
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_an_allocation_failure_in_the_search_is_the_memory_bound(capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A MemoryError (a ulimit, the machine) below --max-memory ends the search as incomplete, named, with
    what it covered: not an internal error. Here the third state's expansion fails."""
    from mbarrier.explore import check as search

    expand = search.Explorer.expand
    calls = [0]

    def failing(self: search.Explorer, *a: object, **k: object) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise MemoryError
        expand(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(search.Explorer, "expand", failing)
    assert main(["check", CORPUS_RING, "--grid", "1", "--block", "3", "--walks", "0", "--json"]) == 3
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "incomplete" and d["stopped_by"] == "max-memory"
    assert "ran out of memory" in d["covered"] and "states were left unexplored" in d["covered"]
    assert "over the" not in d["covered"]  # the resident size was not over the bound


def test_an_allocation_failure_outside_a_search_is_named(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from mbarrier.cli import run as run_cli

    def no_room(*a: object, **k: object) -> None:
        raise MemoryError

    monkeypatch.setattr(run_cli, "load_launch", no_room)
    assert main(["run", CORPUS_RING, "--grid", "1", "--block", "3"]) == 3
    err = capsys.readouterr().err
    assert "out of memory before the command could finish" in err and "internal error" not in err
