"""What a race state shares with its clones: proxy fences (`sim.hb.Fences`: a fence added after a clone is
the adder's alone, and what a copy issued later sees through the fences is each state's own; PTX ISA
9.7.13.4.4, fence.proxy.async makes generic writes before it visible to the async proxy after it), and a
shadow memory's key (`sim.hb.Shadow.key`, kept until an access changes a page)."""

from __future__ import annotations

from mbarrier.sim.hb import GLOBAL_SPACE, SHARED_SPACE, THREAD, WRITE, Fences, Shadow

BOTH = SHARED_SPACE | GLOBAL_SPACE


def test_a_fence_after_a_clone_is_the_adders_alone() -> None:
    f = Fences()
    f.add(1, 3, {1: 3, 2: 1})
    g = f.clone()
    g.add(1, 5, {1: 5, 2: 2}, SHARED_SPACE)
    f.add(2, 4, {2: 4})
    assert f.key() == ((1, (3,), (BOTH,)), (2, (4,), (BOTH,)))
    assert g.key() == ((1, (3, 5), (BOTH, SHARED_SPACE)),)
    # thread 1's later fence covers shared memory only, and only in g
    assert g.visible({1: 5}) == {1: 5, 2: 2}
    assert g.visible({1: 5}, GLOBAL_SPACE) == {1: 3, 2: 1}
    assert f.visible({1: 5, 2: 4}) == {1: 3, 2: 4}
    assert g.visible({1: 4}) == {1: 3, 2: 1}


def test_a_fences_vector_clock_is_its_own() -> None:
    vc = {1: 3}
    f = Fences()
    f.add(1, 3, vc)
    vc[1] = 9  # the thread's clock moves on
    assert f.visible({1: 3}) == {1: 3}


def _store(agent: int) -> tuple[int, object, int, str, int, int, int, str]:
    return (agent, None, THREAD | WRITE, "shared", -1, 0, 4, "")


def test_a_shadows_kept_key_follows_its_accesses_and_not_its_clones() -> None:
    s = Shadow()
    empty = s.key()
    s.access(0, 4, {1: 1}, 1, 1, _store(1))
    one = s.key()
    assert one != empty and s.key() == one
    t = s.clone()
    t.access(64, 4, {1: 2}, 1, 2, _store(1))  # another page, in the clone only
    assert t.key() not in (one, empty)
    assert s.key() == one
    u = Shadow()  # the same accesses afresh: the same key
    u.access(0, 4, {1: 1}, 1, 1, _store(1))
    u.access(64, 4, {1: 2}, 1, 2, _store(1))
    assert u.key() == t.key()
