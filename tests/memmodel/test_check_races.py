"""Exhaustive checking with race tracking (PTX ISA 9.7.13.15.16, the memory model): every interleaving of
the hand-written race corpus. The correct kernels verify (no race on any interleaving); each planted bug
is found as kind "race" with both accesses and the missing edge, and its schedule replays to the same race
in `mbarrier run`."""

from __future__ import annotations

import pytest

from mbarrier import explore, sim
from mbarrier.examples.races import CASES
from mbarrier.explore.check import Options, check_machine
from mbarrier.sim.races import track

HAND = [n for n in CASES if not n.startswith("nvcc_")]


def _check(name: str, **opts: object) -> object:
    case = CASES[name]
    return check_machine(case.launch(), sim.load(case.path), Options(max_states=20_000, **opts))  # type: ignore


@pytest.mark.parametrize("name", [n for n in HAND if CASES[n].rule is None])
def test_correct_kernels_verify_with_no_race_on_any_interleaving(name: str) -> None:
    r = _check(name)
    assert r.verdict == "verified", [f.message for f in r.findings]  # type: ignore[attr-defined]


def test_cp_async_tracked_verifies() -> None:
    """Regression: restoring a snapshot taken after a cp.async landed left the copy's status from a later
    state, so the thread's cp.async.wait_all blocked forever (a false deadlock) on some branches."""
    r = _check("cp_async_tracked")
    assert r.verdict == "verified", [f.message for f in r.findings]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [n for n in HAND if CASES[n].rule is not None])
def test_each_planted_bug_is_a_race_with_a_replayable_schedule(name: str) -> None:
    case = CASES[name]
    r = _check(name, max_findings=1)
    assert r.verdict == "finding"  # type: ignore[attr-defined]
    f = r.findings[0]  # type: ignore[attr-defined]
    assert (f.kind, f.rule) == ("race", case.rule), f.message
    assert case.edge in f.message and "first:" in f.message and "second:" in f.message
    m = case.launch()
    track(m)
    again = explore.run(m, explore.Replay(f.schedule))
    assert again.outcome == "race" and again.message == f.message


def test_races_off_in_the_checker_leaves_the_plain_machine() -> None:
    r = _check("tma_pipeline_bug_relaxed_wait", races=False)
    assert r.verdict == "verified"  # type: ignore[attr-defined]  # sequentially consistent: no hang, no UB
