"""Snapshots of threads inside calls: a register slot that holds a token means something only in the
function that wrote it (issue 13: nvcc's -G build indexed the kernel's token slots into a callee's
shorter register list)."""

from __future__ import annotations

from mbarrier import examples, sim
from mbarrier.explore.check import Options, check_machine


def test_the_debug_build_of_the_ring_is_checked_through_its_calls() -> None:
    module = sim.load(examples.path("ring_buffer.G"))
    m = sim.launch(module, grid=1, block=160)
    r = check_machine(m, module, Options(max_states=400))
    assert r.verdict == "incomplete", [f.message for f in r.findings]
    assert r.stats.states == 400


def test_a_failed_wait_enters_the_key_by_the_effects_since_it() -> None:
    """A thread whose wait failed is keyed by that wait and the effects since (the simulator parks it at a
    second failure with none between), not by its running count of effects; restoring gives the wait
    back with its own count, so the parking works as before."""
    from mbarrier.explore import snapshot
    module = sim.load(examples.path("ring_buffer.G"))
    m = sim.launch(module, grid=1, block=2)
    t = m.threads[0]
    t.effects, t.last_fail = 7, ("k", 3, 0, 8, 0, 0, True, 5)
    first = snapshot.save(m, {})
    t.effects, t.last_fail = 12, ("k", 3, 0, 8, 0, 0, True, 10)
    shifted = snapshot.save(m, {})
    t.last_fail = ("k", 3, 0, 8, 0, 0, True, 12)
    other = snapshot.save(m, {})
    assert snapshot.key(first) == snapshot.key(shifted) != snapshot.key(other)
    snapshot.restore(m, first)
    assert (t.effects, t.last_fail) == (7, ("k", 3, 0, 8, 0, 0, True, 5))
