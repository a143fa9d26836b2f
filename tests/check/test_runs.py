"""Runs of sets of one (`closure.alone_too`, `Explorer.expand`; docs/checker.md, "Runs of sets of one"):
where a state's stubborn set is one agent, the further agents whose closures hold them alone in that state
step after it as one transition. The verdicts and finding kinds are those of the search without runs and
of the search without reductions; the states between the steps of a run are not stored."""

from __future__ import annotations

import random
import shlex
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.cli.run import parse_dims
from mbarrier.examples import family
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore.check import CheckResult, Options, check, check_machine

from .test_search import _EXPECT, CORPUS_FILES, _random_kernel


def _outcome(r: CheckResult) -> tuple[str, frozenset[tuple[str, str]]]:
    return r.verdict, frozenset((f.kind, f.rule) for f in r.findings)


Dims = int | tuple[int, ...]


def _both(module: object, block: Dims, races: bool, grid: Dims = 1, cluster: Dims | None = None
          ) -> tuple[CheckResult, CheckResult]:
    without, with_runs = (check(module, grid=grid, block=block, cluster=cluster,  # type: ignore[arg-type]
                                options=Options(races=races, runs=runs, max_findings=1000, max_states=100_000,
                                                walks=0))
                          for runs in (False, True))
    assert without.verdict != "incomplete"
    assert _outcome(with_runs) == _outcome(without)
    return without, with_runs


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_runs_keep_the_corpus_outcomes(path: Path) -> None:
    m = _EXPECT.search(path.read_text())
    assert m is not None
    words = shlex.split(m["args"])
    opts = dict(zip(words[::2], words[1::2], strict=True))
    without, _ = _both(sim.load(path), parse_dims(opts["--block"], "block"), races=True,
                       grid=parse_dims(opts["--grid"], "grid"),
                       cluster=parse_dims(opts.get("--cluster"), "cluster"))
    assert without.verdict == m["verdict"]


@pytest.mark.parametrize("bug", [None, *family.BUGS])
def test_runs_keep_the_family_outcomes(tmp_path: Path, bug: str | None) -> None:
    p = tmp_path / "r.ptx"
    p.write_text(family.ring_ptx(1, 2, 1, 2, bug=bug))
    _both(sim.load(p), 3, races=True)


def test_runs_on_random_kernels_agree_with_no_reduction(tmp_path: Path) -> None:
    """Random kernels whose loads decide their stores: the same outcomes as without runs and as the full
    state graph, races tracked or not."""
    rng = random.Random(5)
    for i in range(30):
        text, n = _random_kernel(rng)
        p = tmp_path / f"r{i}.ptx"
        p.write_text(text)
        module = sim.load(p)
        for races in (False, True):
            _, with_runs = _both(module, n, races)
            plain = check(module, grid=1, block=n, options=Options(  # type: ignore[arg-type]
                reductions=False, races=races, max_findings=1000))
            assert _outcome(with_runs)[0] == plain.verdict
            assert {k for k, _ in _outcome(with_runs)[1]} == {f.kind for f in plain.findings}


@pytest.mark.parametrize("name", ["persistent", "named", "warpgroup_bug_count"])
def test_a_chain_of_sets_of_one_is_stored_once_per_run(name: str) -> None:
    """The shapes' searches are chains of sets of one for hundreds of states: with runs the same number
    of moves is taken (each move of a run counts as a transition) and a small part of the states is stored
    (persistent: 478 states without runs, 29 with; named: 265, 13; warpgroup_bug_count: 2,193, 27)."""
    shape = SHAPES[name]
    shape = shape.sized(*([2] * len(shape.trips)))
    without, with_runs = (check_machine(shape.launch(), sim.load(shape.path),
                                        Options(walks=0, runs=runs, max_states=20_000))
                          for runs in (False, True))
    assert without.verdict == with_runs.verdict == "verified"
    assert with_runs.stats.transitions == without.stats.transitions
    assert with_runs.stats.states * 8 < without.stats.states
