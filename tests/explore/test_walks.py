"""Bugs first (`explore.walks`): seeded random walks beside the search. What they find is real (its
schedule replays to the same outcome), they find bugs the bounded search cannot reach, and they never
make a verdict: a walk that finds nothing leaves an incomplete search incomplete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.cli import main
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore import Replay, run
from mbarrier.explore.check import FOUND, Options, check, check_machine
from mbarrier.explore.results import SEARCH
from mbarrier.explore.walks import Bursts, LateCopies, Priorities, Uniform
from mbarrier.sim.machine import Machine
from mbarrier.sim.races import track

CORPUS = Path(sim.__file__).parent.parent / "examples" / "corpus"
OUTCOME = {"deadlock": "stuck", "race": "race", "violation": "violation"}


def _replayed(m: Machine, schedule: str) -> str:
    return run(m, Replay(schedule)).outcome.value


def test_a_walk_finds_what_the_bounded_search_cannot_and_it_replays() -> None:
    # The ring's count bug deadlocks only at its third iteration, far beyond 40 states of the search.
    shape = SHAPES["ring_bug_count"]
    r = check_machine(shape.launch(), sim.load(shape.path), Options(runs=False, max_states=40))
    assert r.verdict == "finding" and r.stats.states == 40 and r.stats.walks >= 1
    f = r.findings[0]
    assert f.kind == "deadlock" and f.found_by.startswith("random walk 0 (uniform scheduler, seed 0)")
    assert f.waiters and "empty" in f.message
    m = shape.launch()
    track(m)
    assert _replayed(m, f.schedule) == "stuck"


def test_the_search_stops_a_while_after_a_walk_found_a_bug() -> None:
    shape = SHAPES["ring_bug_count"]
    r = check_machine(shape.launch(), sim.load(shape.path), Options(followup=0.0))
    assert r.verdict == "finding" and r.stopped_by == FOUND
    assert r.findings[0].found_by != SEARCH and "left unexplored" in r.covered


def test_walks_never_verify() -> None:
    shape = SHAPES["ring"]   # correct: the walks find nothing, the bounded search cannot finish
    # walk_first: the three first walks get all the time they need on a loaded machine
    r = check_machine(shape.launch(), sim.load(shape.path),
        Options(runs=False, max_states=30, walk_first=600.0))
    assert r.verdict == "incomplete" and r.stats.walks >= 3 and not r.findings


def test_the_search_replaces_a_walks_finding_by_its_shorter_one() -> None:
    mod = sim.load(CORPUS / "ring_count_high.ptx")
    with_walks = check(mod, grid=1, block=3, options=Options(races=False))
    without = check(mod, grid=1, block=3, options=Options(races=False, walks=0))
    assert with_walks.stats.walks >= 3 and without.stats.walks == 0
    assert [(f.kind, f.rule, f.aids, f.found_by) for f in with_walks.findings] == \
        [(f.kind, f.rule, f.aids, SEARCH) for f in without.findings]
    assert (with_walks.stats.states, with_walks.stats.local_steps) == \
        (without.stats.states, without.stats.local_steps)   # walks do not count as the search's work


@pytest.mark.parametrize("make", [Uniform, Bursts, lambda seed: Priorities(seed, 50), LateCopies])
def test_a_scheduler_is_deterministic_and_picks_an_enabled_agent(make: type) -> None:
    m = sim.launch(sim.load(CORPUS / "ring.ptx"), grid=1, block=3)
    agents = list(m.threads)
    picks = [[make(7).pick(agents, n).aid for n in range(20)] for _ in range(2)]
    assert picks[0] == picks[1] and set(picks[0]) <= {0, 1, 2}
    one = make(7)
    assert all(one.pick(agents[1:], n) in agents[1:] for n in range(20))


def test_priorities_lower_the_running_agent_at_its_change_points() -> None:
    m = sim.launch(sim.load(CORPUS / "ring.ptx"), grid=1, block=3)
    p = Priorities(3, horizon=10, depth=3)
    first = p.pick(m.threads, 0)
    later = [p.pick(m.threads, n).aid for n in range(1, 10)]
    assert later[-1] != first.aid   # two change points before step 10: the first agent was lowered


def test_the_cli_reports_which_walk_found_it(capsys: pytest.CaptureFixture[str]) -> None:
    shape = SHAPES["ring_bug_count"]
    code = main(["check", str(shape.path), *shape.words(), "--max-states", "3", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["findings"][0]["found_by"].startswith("random walk")
    assert out["stats"]["walks"] >= 1 and out["stats"]["walk_transitions"] > 0
    main(["check", str(shape.path), *shape.words(), "--max-states", "3", "--walks", "0", "--quiet"])
    text = capsys.readouterr().out
    assert "INCOMPLETE" in text and "random walk" not in text
