"""`mbarrier export --promela --threads-per-process N`: the launch's threads grouped N to a process (the
grouped model's faithfulness: tests/explore/test_promela_groups.py); a grouping over SPIN's 255 processes
is a clear error (exit 2)."""

from __future__ import annotations

import pytest

from mbarrier import examples
from mbarrier.cli import main

RING = str(examples.HERE / "corpus" / "ring.ptx")


def test_threads_per_process_groups_the_threads(capsys: pytest.CaptureFixture[str]) -> None:
    launch = ["--grid", "1", "--block", "3"]
    assert main(["export", "--promela", RING, *launch, "--threads-per-process", "2"]) == 0
    out = capsys.readouterr().out
    assert "#define TPP 2 " in out and "#define NP 2 " in out
    assert main(["export", "--promela", RING, *launch]) == 0
    out = capsys.readouterr().out
    assert "#define NP 3 " in out and "#define ME _pid" in out


def test_a_grouping_over_spins_limit_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["export", "--promela", RING, "--grid", "1", "--block", "256", "--threads-per-process", "1"])
    assert code == 2
    assert "SPIN runs at most 255 processes; the model of this launch has 260 (256 threads, 4 bulk copy " \
           "engines)" in capsys.readouterr().err
