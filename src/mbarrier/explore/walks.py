"""Bugs first: seeded random walks over the checker's transitions, before the exhaustive search.

A walk starts at the search's first state and fires one enabled agent at a time, chosen by a scheduler,
through the same transitions the search takes (`Explorer.attempt`: eager local steps, the checker's own
rules, race tracking), until every thread exited, nothing can move (a deadlock), a finding, or its
length bound. Every walk is a real execution, so whatever it finds is a real bug with a replayable
schedule; a walk that finds nothing proves nothing: only the exhaustive search may say VERIFIED.

Swarm of schedulers (walk i uses seed i and scheduler i mod 4), since no one scheduler finds every bug
quickly:
  * uniform: at every transition a uniformly random enabled agent;
  * bursts: an agent keeps running for a random number of transitions (1..64) while it can, like
    `mbarrier run`'s random scheduler: long solo runs reach deep states (a consumer racing ahead);
  * priorities: PCT (Burckhardt et al., "A Randomized Scheduler with Probabilistic Guarantees of Finding
    Bugs", ASPLOS 2010): random distinct priorities, the highest-priority enabled agent runs, and at `d`
    random points the running agent drops below every other: an ordering bug of depth d is found with
    probability at least 1/(n k^(d-1)) per walk (n agents, k transitions);
  * late copies: a uniformly random enabled thread, and an asynchronous agent (a copy landing, a pending
    arrive-on) only when no thread can step: the copies nobody waits for stay in flight to the end,
    where a CTA that exits without waiting for them is found (a uniform walk lands them early).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mbarrier.explore import snapshot
from mbarrier.explore.budget import pulse
from mbarrier.explore.results import Finding
from mbarrier.sim.machine import EXITED, Copy, Thread

if TYPE_CHECKING:
    from mbarrier.explore.check import Explorer

Agent = Thread | Copy
MAX_TRANSITIONS = 200_000   # a walk longer than this is cut (a loop that may never end)
PCT_DEPTH = 3


class Uniform:
    name = "uniform"

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def pick(self, agents: list[Agent], step: int) -> Agent:
        return agents[int(self.random.random() * len(agents))]


class Bursts:
    name = "bursts"

    def __init__(self, seed: int, longest: int = 64) -> None:
        self.random = random.Random(seed)
        self.longest = longest
        self.current = -1
        self.left = 0

    def pick(self, agents: list[Agent], step: int) -> Agent:
        if self.left > 0:
            for a in agents:
                if a.aid == self.current:
                    self.left -= 1
                    return a
        a = agents[int(self.random.random() * len(agents))]
        self.current, self.left = a.aid, int(self.random.random() * self.longest)
        return a


class Priorities:
    name = "priorities"

    def __init__(self, seed: int, horizon: int, depth: int = PCT_DEPTH) -> None:
        self.random = random.Random(seed)
        self.prio: dict[int, float] = {}
        self.changes = sorted(self.random.randrange(max(horizon, 1)) for _ in range(depth - 1))
        self.low = 0.0

    def pick(self, agents: list[Agent], step: int) -> Agent:
        prio = self.prio
        for a in agents:
            if a.aid not in prio:
                prio[a.aid] = 1.0 + self.random.random()  # above every lowered priority
        best = max(agents, key=lambda a: prio[a.aid])
        while self.changes and self.changes[0] <= step:
            self.changes.pop(0)
            self.low -= 1.0
            prio[best.aid] = self.low
            best = max(agents, key=lambda a: prio[a.aid])
        return best


class LateCopies:
    name = "late-copies"

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def pick(self, agents: list[Agent], step: int) -> Agent:
        threads = [a for a in agents if isinstance(a, Thread)] or agents
        return threads[int(self.random.random() * len(threads))]


Scheduler = Uniform | Bursts | Priorities | LateCopies


def scheduler(i: int, horizon: int) -> Scheduler:
    """Walk i's scheduler: seed i, the kinds in turn."""
    kind = i % 4
    if kind == 0:
        return Uniform(i)
    if kind == 1:
        return Bursts(i)
    if kind == 2:
        return Priorities(i, horizon)
    return LateCopies(i)


@dataclass
class Walked:
    """What the walks did."""

    walks: int = 0
    transitions: int = 0
    seconds: float = 0.0
    longest: int = 0


def walk(ex: Explorer, root: snapshot.Snapshot, init_aids: list[int], sched: Scheduler, deadline: float,
         limit: int = MAX_TRANSITIONS, ask: bool = False) -> tuple[Finding | None, int, str]:
    """One walk from `root`, cut at `deadline` (`time.monotonic()`): (its finding or None, its
    transitions, the words of what the search cannot go past if the walk met it: the tool's limit, the
    local-step bound). `ask`: a walk cut at `limit` asks whether it ended in a livelock."""
    local_steps = ex.stats.local_steps   # the search's statistic: a walk's eager steps are not counted
    try:
        return _walk(ex, root, init_aids, sched, deadline, limit, ask)
    finally:
        ex.stats.local_steps = local_steps


def _walk(ex: Explorer, root: snapshot.Snapshot, init_aids: list[int], sched: Scheduler, deadline: float,
          limit: int, ask: bool) -> tuple[Finding | None, int, str]:
    m = ex.m
    snapshot.restore(m, root, ex.machine_is)
    ex.machine_is = None   # the walk leaves the saved states
    aids = list(init_aids)
    for n in range(limit):
        if not n & 255 and n and time.monotonic() > deadline:
            return None, n, ""
        pulse()  # the check's own bounds and Ctrl-C end the walk (and the check) at once
        agents, spinning = ex.enabled()
        if not agents:
            if any(t.status != EXITED for t in m.threads):
                return ex.deadlock(aids, spinning), n, ""
            return None, n, ""
        outcome = ex.attempt([sched.pick(agents, n)], aids)
        if isinstance(outcome, Finding):
            return outcome, n + 1, ""
        if isinstance(outcome, str):
            return None, n + 1, outcome
    # Cut at its length: a hang where threads keep moving, perhaps (`Explorer.walk_livelock`).
    return (ex.walk_livelock(aids) if ask else None), limit, ""


class Walks:
    """The walks of one check, taken a few at a time (`Explorer.run` interleaves them with the search:
    they get `share` of the time spent so far). Walk i uses seed i and the schedulers in turn."""

    def __init__(self, ex: Explorer, root: snapshot.Snapshot, init_aids: list[int], count: int,
                 share: float) -> None:
        self.ex, self.root, self.init_aids = ex, root, init_aids
        self.count, self.share = count, share
        self.done = Walked()
        self.over = count <= 0 or share <= 0   # no more walks: the count is reached or a walk met a limit
        # Only the first walk cut at its length asks whether it ended in a livelock: a kernel whose walks
        # are long by design would pay a run of DEAD_END_STEPS for each.
        self.asked = False

    def due(self, elapsed: float) -> bool:
        """Whether a walk is due after `elapsed` seconds of checking."""
        return not self.over and self.done.seconds <= self.share * elapsed

    def one(self, deadline: float) -> Finding | None:
        """The next walk, cut at `deadline`; its finding, if any."""
        done = self.done
        i = done.walks
        started = time.monotonic()
        sched = scheduler(i, max(done.longest, 1000))
        f, n, ended = walk(self.ex, self.root, self.init_aids, sched, deadline, ask=not self.asked)
        self.asked = self.asked or n >= MAX_TRANSITIONS
        done.walks += 1
        done.transitions += n
        done.longest = max(done.longest, n)
        done.seconds += time.monotonic() - started
        self.over = bool(ended) or done.walks >= self.count  # at a limit, the search meets it and says so
        if f is not None:
            f.found_by = f"random walk {i} ({sched.name} scheduler, seed {i})"
        return f
