"""One explanation of why a thread waits (`explore.stuck`) serves `mbarrier run` and `mbarrier check`."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import examples, sim
from mbarrier.explore import Outcome, Replay, run
from mbarrier.explore.check import Options, check
from mbarrier.explore.results import FindingKind, Verdict
from mbarrier.sim.waits import AtBar, OnMbarrier, wants

CORPUS = Path(examples.__file__).parent / "corpus"


@pytest.mark.parametrize("name", ["ring_missing_arrive", "ring_wrong_parity", "exit_no_drop"])
def test_a_deadlock_replayed_by_run_is_explained_in_the_checks_words(name: str) -> None:
    module = sim.load(CORPUS / f"{name}.ptx")
    r = check(module, grid=1, block=3, options=Options(max_states=50_000))
    assert r.verdict == Verdict.FINDING and r.verdict == "finding"
    f = next(f for f in r.findings if f.kind == FindingKind.DEADLOCK)
    replay = run(sim.launch(module, grid=1, block=3), Replay(f.schedule))
    assert replay.outcome == Outcome.STUCK and replay.outcome == "stuck"
    by_check = {(w.thread, w.line, w.detail) for w in f.waiters}
    by_run = {(s.thread, s.site.line, s.reason) for s in replay.stuck}
    assert by_check == by_run
    assert all(w.detail.startswith("waits") for w in f.waiters)


def test_wait_reasons_are_values_compared_by_what_releases_the_thread() -> None:
    assert AtBar(1) == AtBar(1) != AtBar(2)
    # The operand is left out: the object's state already decides the wait.
    assert OnMbarrier(4, 0, 8, True, 0) == OnMbarrier(4, 0, 8, True, 1)
    assert hash(OnMbarrier(4, 0, 8, True, 0)) == hash(OnMbarrier(4, 0, 8, False, 7))
    assert wants(True, 3) == "parity 1"
    assert wants(False, 0x20) == "the phase of token 0x0000000000000020"
