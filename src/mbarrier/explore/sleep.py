"""Sleep sets (Godefroid) on top of the stubborn sets, for the checker's breadth-first search with state
hashing.

A state is expanded with a *sleep set*: agents whose next step from here is already covered by a sibling
branch. After the search took step `t` from state s, every agent `u` that was explored from s before `t`
(or was asleep in s) and whose step is independent of `t` is asleep in s.t: the interleaving "u after t"
equals "t after u", which the sibling branch explores. Independence is por's: the two steps' current
footprints (`Footprints.current`) have no conflicting items (`conflict` and `matches`), so either order
gives the same state, and an agent enabled before the other's step stays enabled after it.

With state hashing a state can be reached again with a sleep set that is not a superset of the one it was
(or will be) expanded with; the agents in the difference were never explored from it along the new path.
Godefroid's rule (Partial-Order Methods for the Verification of Concurrent Systems, LNCS 1032, 1996,
section 5.3): while the state waits in the queue its pending sleep set is intersected with the new one;
once it was expanded, the agents of its stored sleep set that are missing from the new one are explored
from it (a re-expansion, queued like a state), starting from the new sleep set, and the stored sleep set
becomes the intersection. Each agent is explored from a state at most once, so the search ends.

Agents are named by what they are, not by issue order, so that names agree between two visits of one
state: a thread by its id, a copy by `snapshot.copy_id` (its issuer, line, addresses, size, barrier).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from mbarrier.explore.footprints import Item, conflict, matches
from mbarrier.explore.por import AllFootprints
from mbarrier.explore.snapshot import copy_id
from mbarrier.sim.machine import Copy, Thread

Name = Hashable
Sleep = frozenset[Name]
EMPTY: Sleep = frozenset()


def names(groups: Sequence[Sequence[Thread | Copy]]) -> list[Name]:
    """A name for each group of agents that step together (one agent, or the lanes of a warp). Two
    identical copies in flight (same issuer, addresses, size, barrier) are told apart by their rank."""
    out: list[Name] = []
    seen: dict[Name, int] = {}
    for g in groups:
        base = tuple(("t", a.aid) if isinstance(a, Thread) else ("c",) + copy_id(a) for a in g)
        rank = seen.get(base, 0)
        seen[base] = rank + 1
        out.append((base, rank))
    return out


def footprint(fp: AllFootprints, group: Sequence[Thread | Copy]) -> list[Item]:
    """What a group's step touches now."""
    return [item for a in group for item in fp.current(a)]


def independent(a: list[Item], b: list[Item]) -> bool:
    """Two steps commute: no item of one conflicts with an item of the other."""
    for obj, mode in a:
        for obj2, mode2 in b:
            if conflict(mode, mode2) and matches(obj, obj2):
                return False
    return True


class Expansion:
    """The sleep-set bookkeeping of one state's expansion: which agents are asleep, and the sleep set of
    each successor."""

    def __init__(self, fp: AllFootprints, groups: Sequence[Sequence[Thread | Copy]], sleep: Sleep) -> None:
        self.fp = fp
        self.groups = groups
        self._names: list[Name] | None = None  # computed when first needed (most sleep sets are empty)
        self.asleep: list[int] = []
        if sleep:
            # An agent asleep in the parent is enabled here (its step commutes with the one taken); a name
            # that matches no enabled group is dropped (dropping only ever explores more).
            index = {n: i for i, n in enumerate(self.names)}
            self.asleep = [index[n] for n in sleep if n in index]
        self.sleep: Sleep = frozenset(self.names[i] for i in self.asleep) if self.asleep else EMPTY
        self._items: dict[int, list[Item]] = {}

    @property
    def names(self) -> list[Name]:
        if self._names is None:
            self._names = names(self.groups)
        return self._names

    def is_asleep(self, gi: int) -> bool:
        return bool(self.sleep) and self.names[gi] in self.sleep

    def items(self, gi: int) -> list[Item]:
        found = self._items.get(gi)
        if found is None:
            found = self._items[gi] = footprint(self.fp, self.groups[gi])
        return found

    def child(self, gi: int) -> Sleep:
        """The sleep set of the successor by group `gi`; then `gi` itself counts as explored (asleep for
        the later siblings whose steps commute with it)."""
        out = EMPTY
        if self.asleep:
            mine = self.items(gi)
            out = frozenset(self.names[u] for u in self.asleep if independent(self.items(u), mine))
        self.asleep.append(gi)
        return out

    def after(self, sleep: Sleep, run: Sequence[int]) -> Sleep:
        """The sleep set after a run of groups (`Explorer.expand`) from a child whose sleep set is `sleep`:
        those of its agents whose steps commute with every step of the run (each step's footprint is the
        same where it comes as here: the steps before it conflict with none of it)."""
        if not sleep:
            return EMPTY
        index = {n: i for i, n in enumerate(self.names)}
        return frozenset(n for n in sleep
                         if all(independent(self.items(index[n]), self.items(r)) for r in run))

    def indices(self, wanted: frozenset[Name]) -> list[int]:
        """The groups named in `wanted` (a re-expansion's agents), in group order."""
        return [i for i, n in enumerate(self.names) if n in wanted]


__all__ = ["EMPTY", "Expansion", "Name", "Sleep", "footprint", "independent", "names"]
