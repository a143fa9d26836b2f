"""`mbarrier capture` and `run --compare` as a user meets their errors: exit 2 with a message, never a
traceback. (The capture itself: tests/capture/.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.cli import main
from mbarrier.examples import HERE


def test_capture_without_a_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "-o", str(tmp_path)]) == 2
    assert "no command to run" in capsys.readouterr().err


@pytest.mark.tool("cc")
def test_capture_of_a_program_that_cannot_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "-o", str(tmp_path), "--", str(tmp_path / "no-such-program")]) == 2
    assert "cannot run" in capsys.readouterr().err


@pytest.mark.tool("cc")
def test_capture_of_a_failing_program_without_launches(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "-o", str(tmp_path), "--", "false"]) == 2
    captured = capsys.readouterr()
    assert "0 launch files" in captured.out
    assert "false exited with status 1" in captured.err
    assert not (tmp_path / "raw").exists()   # the interposer's records are removed unless --keep-raw


def test_a_cta_option_that_is_no_cta(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(HERE / "struct_ring.ptx"), "--launch", str(HERE / "struct_ring.launch.json"),
                 "--cta", "1,x", "-q"]) == 2
    assert "--cta '1,x': expected X[,Y,Z] with non-negative integers" in capsys.readouterr().err
    assert main(["run", str(HERE / "struct_ring.ptx"), "--launch", str(HERE / "struct_ring.launch.json"),
                 "--cta", "1", "-q"]) == 2
    assert "CTA (1, 0, 0) is outside the grid (1, 1, 1)" in capsys.readouterr().err


def test_a_captured_launch_names_its_module(capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(__file__).parents[1] / "capture" / "data"
    launch = data / "triton_tma_matmul" / "000-matmul_tma.launch.json"
    assert main(["run", "--launch", str(launch), "--compare", "-q"]) == 0
    out = capsys.readouterr().out
    assert "module-" in out.splitlines()[0] and "compare b2:" in out and "the same bytes" in out
    assert main(["run", "--launch", str(HERE / "struct_ring.launch.json"), "-q"]) == 2
    assert "FILE.ptx is required (or a launch file written by mbarrier capture" in capsys.readouterr().err


def test_compare_needs_a_captured_launch(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(HERE / "struct_ring.ptx"), "--launch", str(HERE / "struct_ring.launch.json"),
                 "--compare", "-q"])
    assert code == 2
    assert "--compare: the launch file holds no buffers as the GPU left them" in capsys.readouterr().err
