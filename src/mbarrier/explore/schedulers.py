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
    """Uniformly random among the runnable agents at every step, from a seed."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.random = random.Random(seed).random

    def pick(self, m: Machine, step: int) -> Agent:
        r = m.runnable
        return r[int(self.random() * len(r))]


class Replay(Scheduler):
    """Follows a schedule string; where it ends, goes on round-robin (so a prefix is a valid input)."""

    def __init__(self, schedule: str) -> None:
        self.schedule = schedule
        self._steps: Iterator[int] | None = None
        self._fallback = RoundRobin()
        self._done = False

    def pick(self, m: Machine, step: int) -> Agent:
        if self._steps is None:
            self._steps = decode(self.schedule, len(m.threads))
        if not self._done:
            aid = next(self._steps, None)
            if aid is not None:
                a = m.agent(aid)
                if a is None or a.ridx < 0:
                    name = agent_name(aid, len(m.threads))
                    raise ScheduleError(f"the schedule runs {name} at step {step}, but it cannot run then")
                self._fallback.last = aid
                return a
            self._done = True
        return self._fallback.pick(m, step)
