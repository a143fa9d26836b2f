"""What the stubborn sets keep from one state to the next (`explore.lastfrozen`, `Frozen.plan`) changes
no search: with the last state's futures reused while only the seed moved, and plans shared by cuts that
differ only in barrier kinds their future never meets (and by where the thread is blocked), every shape
takes the same stubborn sets, states and findings as with everything computed afresh."""

from __future__ import annotations

import hashlib

import pytest

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore import check as check_module
from mbarrier.explore import frozen, lastfrozen, por
from mbarrier.explore.check import Options, check_machine

ALL_KINDS = frozenset({"cta", "warp", "cluster"})


def _search(name: str) -> tuple[object, ...]:
    """The verdict, counts, findings and a digest of every stubborn set of one shape's search."""
    shape = SHAPES[name]
    if shape.warps:
        shape = shape.with_consumers(1)
    shape = shape.sized(*([2] * len(shape.trips)))
    digest = hashlib.sha1()
    original = check_module.stubborn

    def stubborn(*args: object, **kw: object) -> list[int]:
        out = original(*args, **kw)  # type: ignore[arg-type]
        digest.update(repr(out).encode())
        return out

    check_module.stubborn = stubborn  # type: ignore[assignment]
    try:
        r = check_machine(shape.launch(), sim.load(shape.path), Options(walks=0, max_states=3000))
    finally:
        check_module.stubborn = original
    st = r.stats
    return (r.verdict, st.states, st.transitions, st.pruned, st.full_expansions,
            [(f.kind, f.rule, f.line, f.aids) for f in r.findings], digest.hexdigest())


@pytest.mark.parametrize("name", ["ring_rolled", "cluster", "cpasync_bug_inc", "named", "branch_bug_skip"])
def test_kept_futures_and_shared_plans_change_no_search(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _search(name)
    # Afresh: nothing reused across states, every cut its own plan, no segment shared between plans.
    monkeypatch.setattr(lastfrozen.LastFrozen, "stands", lambda *a: False)
    monkeypatch.setattr(frozen, "_meets", lambda code, graph: ALL_KINDS)
    monkeypatch.setattr(por.AllFootprints, "index", lambda self, futures, immortal: por.Index(futures, immortal))
    original_plan = frozen.Plan

    def fresh_plan(*args: object) -> frozen.Plan:
        return original_plan(*args[:-1], {})  # type: ignore[arg-type]

    monkeypatch.setattr(frozen, "Plan", fresh_plan)
    assert _search(name) == kept


def test_the_kept_futures_stand_only_while_nothing_but_the_seed_moved() -> None:
    from mbarrier.core.barrier import Barrier
    from mbarrier.explore import snapshot
    from mbarrier.sim.machine.agents import NamedBarrier

    m = SHAPES["ring"].with_consumers(1).sized(2).launch()
    cta = m.ctas[0]
    b = cta.barriers[0] = Barrier()
    b.init(2)
    agents = list(m.threads)
    entries = snapshot.thread_states(snapshot.save(m, {}))
    seed = agents[3]
    last = lastfrozen.LastFrozen()
    last.keep(m, agents, 3, {5: (0, 0)}, entries, "futures")
    assert last.stands(m, agents, 3, {5: (0, 0)}, entries)
    moved = list(entries)
    moved[seed.aid] = ("the seed's new state",)
    assert last.stands(m, agents, 3, {5: (0, 0)}, moved)  # only the seed moved
    other = list(entries)
    other[4] = ("another thread's new state",)
    assert not last.stands(m, agents, 3, {5: (0, 0)}, other)
    assert not last.stands(m, agents, 2, {5: (0, 0)}, entries)  # another seed
    assert not last.stands(m, agents, 3, {}, entries)  # a thread stopped spinning
    assert not last.stands(m, agents[:-1], 3, {5: (0, 0)}, entries)  # a thread exited
    b.arrive()  # a barrier's pending count changed
    assert not last.stands(m, agents, 3, {5: (0, 0)}, entries)
    last.keep(m, agents, 3, {5: (0, 0)}, entries, "futures")
    cta.bars[1] = NamedBarrier()  # a named barrier's arrivals
    assert not last.stands(m, agents, 3, {5: (0, 0)}, entries)
    last.keep(m, agents, 3, {5: (0, 0)}, entries, "futures")
    seed.cl_arrived = not seed.cl_arrived  # the seed's cluster arrival changes the others' cuts
    assert not last.stands(m, agents, 3, {5: (0, 0)}, entries)
