"""Schedulers: who runs the next step. All are deterministic given their inputs."""

from __future__ import annotations

import random
from collections.abc import Iterator

from mbarrier.explore.schedule import ScheduleError, agent_name, decode
from mbarrier.sim.machine import Copy, Machine, Thread

Agent = Thread | Copy


class Scheduler:
    """Picks one of `m.runnable` (never empty when asked)."""

    def pick(self, m: Machine, step: int) -> Agent:
        raise NotImplementedError


class RoundRobin(Scheduler):
    """One step each, in agent order: threads by global index, then copy engines by issue order."""

    def __init__(self) -> None:
        self.last = -1

    def pick(self, m: Machine, step: int) -> Agent:
        after = [a for a in m.runnable if a.aid > self.last]
        chosen = min(after or m.runnable, key=lambda a: a.aid)
        self.last = chosen.aid
        return chosen


class RandomScheduler(Scheduler):
    """Seeded random bursts: a uniformly random runnable agent runs for a uniformly random number of
    steps in [1, burst] (fewer if it blocks, parks, exits or lands first). `burst=1` draws at every step.
    Every interleaving has a nonzero chance with any burst."""

    def __init__(self, seed: int = 0, burst: int = 8) -> None:
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.seed = seed
        self.burst = burst
        self.random = random.Random(seed).random
        self._current: Agent | None = None
        self._left = 0

    def pick(self, m: Machine, step: int) -> Agent:
        a = self._current
        if a is None or self._left == 0 or a.status:
            r = m.runnable
            a = self._current = r[int(self.random() * len(r))]
            self._left = int(self.random() * self.burst) + 1
        self._left -= 1
        return a


class Replay(Scheduler):
    """Follows a schedule string; where it ends, goes on round-robin (so a prefix is a valid input).
    `ended_at`: the step at which it ran out while agents could still run (None while it lasts)."""

    def __init__(self, schedule: str) -> None:
        self.schedule = schedule
        self._steps: Iterator[int] | None = None
        self._fallback = RoundRobin()
        self.ended_at: int | None = None

    def pick(self, m: Machine, step: int) -> Agent:
        if self._steps is None:
            self._steps = decode(self.schedule, len(m.threads))
        if self.ended_at is None:
            aid = next(self._steps, None)
            if aid is not None:
                a = m.agent(aid)
                if a is None or a.ridx < 0:
                    name = agent_name(aid, len(m.threads))
                    raise ScheduleError(f"the schedule runs {name} at step {step}, but it cannot run then")
                self._fallback.last = aid
                return a
            self.ended_at = step
        return self._fallback.pick(m, step)

    def unused(self, nthreads: int) -> int:
        """How many steps of the schedule were not taken (the run ended first)."""
        steps = self._steps if self._steps is not None else decode(self.schedule, nthreads)
        return sum(1 for _ in steps)
