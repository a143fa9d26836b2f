"""The machine's state is explicit: a copy runs on independently and deterministically; keys hash it."""

from __future__ import annotations

from mbarrier import explore
from mbarrier.examples.cases import CASES


def test_a_copy_continues_exactly_like_the_original_and_independently() -> None:
    case = CASES["ring_buffer"]
    m = case.launch()
    explore.run(m, explore.RandomScheduler(3), max_steps=2000)  # stop part-way
    snapshot = m.copy()
    assert snapshot.key() == m.key()
    assert snapshot.threads[0].code is m.threads[0].code  # compiled code is shared
    a = explore.run(m, explore.RandomScheduler(8))
    assert snapshot.key() != m.key()  # running the original left the copy alone
    b = explore.run(snapshot, explore.RandomScheduler(8))
    assert a.ok and b.ok and a.schedule == b.schedule
    assert case.output(m) == case.output(snapshot)
    assert m.key() == snapshot.key()


def test_keys_tell_states_apart() -> None:
    case = CASES["arrive_drop"]
    m1, m2 = case.launch(), case.launch()
    assert m1.key() == m2.key() and hash(m1.key()) == hash(m2.key())
    explore.run(m1, explore.Replay("0"), max_steps=1)
    assert m1.key() != m2.key()
