"""`mbarrier.testing`: assertions for kernel authors' suites. A verified kernel passes; a finding, an
incomplete or unsupported check fails with what was found and a replay command that works."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

import mbarrier
from mbarrier.cli import main
from mbarrier.examples import HERE
from mbarrier.examples.races import HERE as RACES
from mbarrier.testing import assert_lints_clean, assert_verifies

RING = (HERE / "corpus" / "ring.ptx").read_text()
RACE = (RACES / "cluster_exchange_bug_cta_scope.ptx").read_text()


def test_a_verified_kernel_passes() -> None:
    report = assert_verifies(RING, mbarrier.Launch(grid=1, block=3))
    assert report.verified and report.stats.states > 1
    assert not assert_lints_clean(RING).failed


def test_a_finding_fails_with_a_replay_command_that_works(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(AssertionError) as e:
        assert_verifies(RACE, mbarrier.Launch(grid=2, block=2, cluster=2))
    text = str(e.value)
    assert "race [data-race] at line 56" in text and "missing edge" in text
    command = re.search(r"replay \(the PTX saved as KERNEL\.ptx\): (.*)", text)
    assert command is not None
    (tmp_path / "KERNEL.ptx").write_text(RACE)
    os.chdir(tmp_path)
    argv = shlex.split(command.group(1))
    assert argv[:2] == ["mbarrier", "run"]
    assert main(argv[1:]) == 1
    assert "RACE at step" in capsys.readouterr().out


def test_a_bound_or_an_unsupported_instruction_is_no_verification() -> None:
    with pytest.raises(AssertionError, match="not every interleaving was explored"):
        assert_verifies(RING, mbarrier.Launch(block=3), max_states=5)
    wg = RING.replace("\texit;", "\ttcgen05.fence::before_thread_sync;\n\texit;", 1)
    with pytest.raises(AssertionError, match="does not support line"):
        assert_verifies(wg, mbarrier.Launch(block=3))


def test_lint_failures_name_each_diagnostic() -> None:
    bad = RING.replace("mbarrier.init.shared::cta.b64", "mbarrier.init.shared::cta.b32", 1)
    with pytest.raises(AssertionError, match=r"mbarrier lint: line \d+:\d+: error: .*\[ptxas-"):
        assert_lints_clean(bad)
