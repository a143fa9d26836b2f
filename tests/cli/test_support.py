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


GAP = """.version 8.6
.target sm_100a
.address_size 64
.visible .entry k()
{
    .reg .b32 %r<2>;
    mov.u32 %r1, %tid.x;
    tcgen05.fence::before_thread_sync;
    ret;
}
"""


def test_each_gap_with_line_operation_and_reason_is_exit_1(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    path = tmp_path / "k.ptx"
    path.write_text(GAP)
    code, out, _ = _cli(capsys, str(path))
    assert code == 1
    assert (f"{path}:8: tcgen05: of tcgen05 only the arrive-on of tcgen05.commit is modelled: the simulator "
            "executes no tcgen05 operation") in out
    assert "1 instruction the simulator cannot execute, of 3 instructions in 1 function (tcgen05 1)" in out
    code, out, _ = _cli(capsys, str(path), "--json")
    doc = json.loads(out)
    assert code == 1 and doc["supported"] is False and doc["kernel"] == "k"
    assert doc["unsupported"][0]["line"] == 8 and doc["by_operation"] == {"tcgen05": 1}
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
