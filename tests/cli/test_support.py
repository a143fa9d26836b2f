"""`mbarrier support`: exit 0 when the simulator can execute everything the kernel reaches, 1 with each
instruction it cannot (line, operation, reason), 2 for input errors; JSON with --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import examples
from mbarrier.cli import main


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["support", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_kernel_in_reach_is_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, str(examples.path("struct_ring")))
    assert code == 0 and "the simulator can execute every instruction it can reach (101 instructions" in out


def test_each_gap_with_line_operation_and_reason_is_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(examples.path("tma_tile"))
    code, out, _ = _cli(capsys, path)
    assert code == 1
    assert f"{path}:62: cp.async.bulk.tensor: a form of `cp` its executor does not implement" in out
    assert ("1 instruction the simulator cannot execute, of 48 instructions in 1 function "
            "(cp.async.bulk.tensor 1)") in out
    code, out, _ = _cli(capsys, path, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["supported"] is False and doc["kernel"] == "tma_tile"
    assert doc["unsupported"][0]["line"] == 62 and doc["by_operation"] == {"cp.async.bulk.tensor": 1}
    assert set(doc) == {"file", "kernel", "functions", "instructions", "supported", "unsupported",
                        "by_operation"}


def test_input_errors_are_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _cli(capsys, str(examples.path("tma_tile")), "--kernel", "nope")
    assert code == 2 and "no kernel named 'nope'" in err
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.6\n.target sm_90\n.address_size 64\n.entry k( {\n")
    code, _, err = _cli(capsys, str(bad))
    assert code == 2 and "does not parse" in err
    code, _, err = _cli(capsys, str(tmp_path / "missing.ptx"))
    assert code == 2 and "no such file" in err
