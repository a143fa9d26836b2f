"""Proxy fences (`sim.hb.Fences`) shared between a race state and its clones: a fence added after a clone
is the adder's alone, and what a copy issued later sees through the fences (PTX ISA 9.7.13.4.4,
fence.proxy.async: generic writes before the fence are visible to the async proxy after it) is each
state's own."""

from __future__ import annotations

from mbarrier.sim.hb import GLOBAL_SPACE, SHARED_SPACE, Fences

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
