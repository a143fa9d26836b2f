"""What the stubborn sets keep from one state to the next (`explore.lastfrozen`, `Frozen.plan`) changes
no search: with the last state's futures reused while only the seed moved (or patched where the seed
changed and only the last seed moved, neither holding a source), and plans shared by cuts that
differ only in barrier kinds their future never meets (and by where the thread is blocked), every shape
takes the same stubborn sets, states and findings as with everything computed afresh."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore import check as check_module
from mbarrier.explore import conflicts, frozen, lastfrozen, por
from mbarrier.explore.check import Options, check, check_machine
from mbarrier.sim.machine import Copy, Thread

from .helpers import load

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
    monkeypatch.setattr(lastfrozen.LastFrozen, "moved_seed", lambda *a: None)
    monkeypatch.setattr(frozen, "_meets", lambda code, graph: ALL_KINDS)
    monkeypatch.setattr(por.AllFootprints, "index",
                        lambda self, futures, immortal: conflicts.Index(futures, immortal))
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


# Thread 0 stores, then copies into the stage and arrives (its copy's issue touches more than a load, so
# a reader becomes the next seed); threads 1 and 2 read other words, then wait for the phase. When the
# seed moves from thread 0 (its future now holds the copy and the arrival) to a reader, the readers'
# answers must not be kept: thread 0's sources open their gate.
STORE_THEN_ARRIVE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src)
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b64 bar;
	.shared .align 16 .b32 data[16];
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared.b64 [bar], 1;
SYNC:
	bar.sync 0;
	@%p1 bra READ;
	ld.param.u64 %rd1, [src];
	cvta.to.global.u64 %rd2, %rd1;
	st.shared.u32 [data], 1;
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [data+32], [%rd2], 16, [bar];
	mbarrier.arrive.expect_tx.shared.b64 %rd3, [bar], 16;
	ret;
READ:
	ld.shared.u32 %r3, [data+16];
	ld.shared.u32 %r4, [data+20];
WAIT:
	mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
	@!%p2 bra WAIT;
	ld.shared.u32 %r5, [data+32];
	ret;
}
"""


@pytest.mark.parametrize("name,warps", [("ring", 2), ("ring_bug_count", 2), ("cluster", 0), ("named", 2),
                                        ("cpasync", 0), ("branch_bug_skip", 2), ("store_then_arrive", 0)])
@pytest.mark.parametrize("runs", [False, True])
def test_each_kept_or_patched_answer_equals_the_one_computed_afresh(
        name: str, warps: int, runs: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every time a state's futures come from the last state's (kept whole, or patched for a new seed),
    they equal what the frozen analysis computes from scratch: each agent's future, the bar.sync tally,
    the sources outside the seed and the CTAs kept alive. With runs of sets of one (`closure.alone_too`)
    a state's seeds are patched one from the next (mates of one producer warp among them), and the
    state after a run, where many threads moved, is computed afresh."""
    compared = {"kept": 0, "patched": 0}
    stands, patched = lastfrozen.LastFrozen.stands, por.AllFootprints._patched

    def summary(k: por.Kept) -> tuple[object, ...]:
        c = k.counted
        return ([ix.future for ix in k.indexes], k.immortal, k.fix.exact, c.total, c.counts, c.unknown,
                c.mixed, c.own, k.cuts)

    def afresh(fp: por.AllFootprints, m: object, agents: list, seed: int, blocked: dict,  # type: ignore[type-arg]
               whole: bool, entries: object) -> por.Kept:
        return fp._futures(m, agents, seed, blocked, whole, None, entries)  # type: ignore[arg-type]

    def checked_patched(fp: por.AllFootprints, m: object, agents: list, seed: int, blocked: dict,  # type: ignore[type-arg]
                        check: object, entries: object) -> por.Kept | None:
        k = patched(fp, m, agents, seed, blocked, check, entries)  # type: ignore[arg-type]
        if k is not None:
            compared["patched"] += 1
            assert summary(k) == summary(afresh(fp, m, agents, seed, blocked, k.whole, entries))
        return k

    monkeypatch.setattr(por.AllFootprints, "_patched", checked_patched)
    original_frozen_indexes = por.AllFootprints.frozen_indexes

    def checked(fp: por.AllFootprints, m: object, agents: list, seed: int, blocked: dict,  # type: ignore[type-arg]
                check: object = None, entries: object = None) -> object:
        if entries is not None and stands(fp._last, m, agents, seed, blocked, entries):  # type: ignore[arg-type]
            k = fp._last.result
            assert k is not None
            compared["kept"] += 1
            assert summary(k) == summary(afresh(fp, m, agents, seed, blocked, k.whole, entries))
        return original_frozen_indexes(fp, m, agents, seed, blocked, check, entries)  # type: ignore[arg-type]

    monkeypatch.setattr(por.AllFootprints, "frozen_indexes", checked)
    if name == "store_then_arrive":
        r = check(load(tmp_path, STORE_THEN_ARRIVE), block=3, options=Options(walks=0, runs=runs))
        assert r.verdict == "verified"
    else:
        shape = SHAPES[name]
        shape = (shape.with_consumers(warps) if warps else shape).sized(*([2] * len(shape.trips)))
        check_machine(shape.launch(), sim.load(shape.path), Options(walks=0, max_states=1500, runs=runs))
    assert compared["patched"] > 0 and (runs or compared["kept"] > 0)


def test_a_new_seed_whose_future_holds_a_source_is_not_patched(tmp_path: Path) -> None:
    """Thread 0 will arrive on bar0; threads 1 and 2 read, then wait for it. With thread 1 as the seed the
    fixpoint counts thread 0's arrival; with thread 0 as the seed it must not (thread 0 is frozen), so the
    last answers cannot be patched for the new seed although nothing moved: thread 2's gate closes."""
    from mbarrier.explore import snapshot

    from .test_por_mbarrier import _explorer, _to_bar_sync_done, _wait

    reader = ["ld.shared.u32 %r5, [data+4];", *_wait(0, 0, 20), "ld.shared.u32 %r6, [data];"]
    ex = _explorer(tmp_path, (1, 1), [["mbarrier.arrive.shared::cta.b64 _, [bar0];"], reader, list(reader)])
    _to_bar_sync_done(ex)
    m = ex.m
    entries = snapshot.thread_states(snapshot.save(m, ex.tokens))
    everyone = [t for t in m.threads if t.status != 3]
    _, spinning = ex.enabled()
    blocked = {i: spinning[t.aid] for i, t in enumerate(everyone) if t.aid in spinning}
    agents: list[Thread | Copy] = list(everyone)
    ex.fp.frozen_indexes(m, agents, 1, blocked, None, entries)  # thread 1 the seed: thread 0's arrival counts
    got = ex.fp.frozen_indexes(m, agents, 0, blocked, None, entries)[0]
    fresh = ex.fp._futures(m, agents, 0, blocked, True, None, entries).indexes
    assert [ix.future for ix in got] == [ix.future for ix in fresh]
    assert not any(obj[0] == "sm" and obj[2] == 0 for items in got[2].future.values() for obj, _ in items)
