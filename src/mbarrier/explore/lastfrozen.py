"""The frozen futures of the last state asked, reused when only the seed moved since.

A search expands a state, fires the one agent of its stubborn set and expands the child next, which
most often has the same stubborn set's seed (a consumer thread reading its stage, word after word). The
frozen futures (`explore.frozen`) of every agent but the seed depend on the seed's identity (its barrier
cuts), the other agents' states, the threads' waits (`blocked_on`), the barriers' phases and counts and
the named barriers' arrivals; never on the seed's own position (its future is empty: it is frozen),
except whether it keeps its CTA alive (`frozen.seed_lives`, which the caller adds afresh). When all of
those are the same as in the last state asked, so are the futures, their indexes, the bar.sync tally and
the quiet operations' counts: the work of every other agent is skipped.

Threads are compared by their snapshot entries (`explore.snapshot`: an entry shared with another
snapshot is the same thread state; a thread that changed has a new entry), agents, copies and
barriers by identity, their counts by value.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter, is_
from typing import Generic, TypeVar

from mbarrier.explore.spin import Spin
from mbarrier.sim.machine import Copy, Machine, Thread

T = TypeVar("T")
_COUNTS = attrgetter("valid", "phase", "pending", "tx")  # what the futures' fixpoint reads of a barrier


def barrier_counts(m: Machine) -> tuple[object, ...]:
    """Every CTA's mbarriers (object, phase, counts) and named barriers (arrivals, count), and what the
    copies' futures read of them (`footprints.copy_items`: a cp.async is tracked once watched)."""
    return (tuple((tuple((b, _COUNTS(b)) for b in c.barriers.values()),
                   tuple((i, len(nb.arrived), nb.count) for i, nb in c.bars.items())) for c in m.ctas),
            tuple((c.pc, c.status, tuple(map(id, c.watchers))) for c in m.inflight))


class LastFrozen(Generic[T]):
    """The inputs and result of the last frozen-futures computation."""

    def __init__(self) -> None:
        self._agents: list[Thread | Copy] = []
        self._seed = -1
        self._entries: Sequence[object] = ()
        self._blocked: dict[int, Spin] = {}
        self._counts: tuple[object, ...] = ()
        self._seed_state: tuple[object, ...] = ()
        self.result: T | None = None
        self._still = False  # the machine stands still (`standing`); then its counts, once read (`_now`)
        self._now: tuple[object, ...] | None = None

    def standing(self, still: bool) -> None:
        """Whether the machine stands still from now until told otherwise (while one state's stubborn set
        is built): its barrier counts are then read once, not at every seed's computation."""
        self._still, self._now = still, None

    def _counts_of(self, m: Machine) -> tuple[object, ...]:
        if not self._still:
            return barrier_counts(m)
        if self._now is None:
            self._now = barrier_counts(m)
        return self._now

    @staticmethod
    def _seed_of(s: Thread | Copy) -> tuple[object, ...]:
        """What of a seed thread the others' futures read: its cluster arrival and wait (their cuts).
        (A copy's state is in `barrier_counts`.)"""
        return (s.cl_arrived, s.wait) if isinstance(s, Thread) else ()

    def stands(self, m: Machine, agents: list[Thread | Copy], seed: int,
               blocked_on: dict[int, Spin], entries: Sequence[object]) -> bool:
        """Whether the kept result holds for these inputs (everything but the seed's position equal)."""
        if self.result is None or seed != self._seed or len(agents) != len(self._agents):
            return False
        if not all(map(is_, agents, self._agents)) or len(entries) != len(self._entries):
            return False
        s = agents[seed]
        same = sum(map(is_, entries, self._entries))
        if isinstance(s, Thread):
            same += entries[s.aid] is not self._entries[s.aid]  # the seed's own entry may differ
        if same != len(entries) or blocked_on != self._blocked or self._seed_of(s) != self._seed_state:
            return False
        return self._counts_of(m) == self._counts

    def moved_seed(self, m: Machine, agents: list[Thread | Copy], seed: int,
                   blocked_on: dict[int, Spin], entries: Sequence[object]) -> int | None:
        """The last seed's index when the seed changed and nothing but the last seed (a thread) moved
        since (the same agents, threads' waits, barrier counts, every other thread's entry); else None."""
        if self.result is None or seed == self._seed or len(agents) != len(self._agents):
            return None
        if not all(map(is_, agents, self._agents)) or len(entries) != len(self._entries):
            return None
        was = agents[self._seed]
        if not isinstance(was, Thread):
            return None
        same = sum(map(is_, entries, self._entries)) + (entries[was.aid] is not self._entries[was.aid])
        if same != len(entries) or blocked_on != self._blocked or self._counts_of(m) != self._counts:
            return None
        return self._seed

    def keep(self, m: Machine, agents: list[Thread | Copy], seed: int,
             blocked_on: dict[int, Spin], entries: Sequence[object], result: T) -> None:
        self._agents, self._seed, self._entries = list(agents), seed, entries
        self._blocked = dict(blocked_on)
        self._counts = self._counts_of(m)
        self._seed_state = self._seed_of(agents[seed])
        self.result = result
