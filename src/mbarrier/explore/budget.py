"""The time and memory bounds of a search or a run, checked cheaply between two states or chunks of steps.

Memory is the process's resident memory as the operating system counts it (`explore.memory`), read at
most every `MEMORY_EVERY` seconds: a reading costs a system call, a state or a chunk of steps costs far
less. Between two readings the
process can grow by what that much work allocates (a few megabytes), so the bound is a ceiling to stay
under, not an exact cut.
"""

from __future__ import annotations

import time

from mbarrier.explore.memory import format_size, resident_bytes

MEMORY_EVERY = 0.1  # seconds between two readings of resident memory

# What stopped a search or a run (`stopped_by` of its result): the option that sets each bound.
TIMEOUT = "timeout"
MAX_MEMORY = "max-memory"
# why a search ended at MAX_MEMORY when an allocation failed before the resident size passed the bound
OUT_OF_MEMORY = ("the process ran out of memory (an allocation failed below --max-memory: a ulimit or the "
                 "machine)")
MAX_STATES = "max-states"
MAX_STEPS = "max-steps"


class BoundHit(Exception):
    """A bound hit in the middle of a piece of work that cannot stop between two states or chunks (a
    state's stubborn set over many threads): the work is abandoned. `bound`: what `exceeded()` named."""

    def __init__(self, bound: str) -> None:
        super().__init__(bound)
        self.bound = bound


class Budget:
    """A deadline (`time.monotonic()` seconds) and a memory ceiling (bytes); either may be None.
    `exceeded()` names the bound that was hit (TIMEOUT, MAX_MEMORY) or returns ""."""

    def __init__(self, deadline: float | None = None, max_memory: int | None = None) -> None:
        self.deadline = deadline
        self.max_memory = max_memory
        self.resident = 0          # the last reading, for the report
        self._next_reading = 0.0

    def exceeded(self) -> str:
        if self.deadline is None and self.max_memory is None:
            return ""
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            return TIMEOUT
        if self.max_memory is not None and now >= self._next_reading:
            self._next_reading = now + MEMORY_EVERY
            rss = resident_bytes()
            self.resident = rss[0] if rss is not None else 0
            if self.resident > self.max_memory:
                return MAX_MEMORY
        return ""

    def check(self) -> None:
        """Raise BoundHit when a bound is hit: the check inside long work (`explore.por.stubborn`)."""
        bound = self.exceeded()
        if bound:
            raise BoundHit(bound)

    def detail(self, bound: str) -> str:
        """What the report adds to the name of the bound `exceeded()` returned: the memory measured."""
        if bound == MAX_MEMORY and self.max_memory is not None and self.resident > self.max_memory:
            return (f"{format_size(self.resident)} resident, over the {format_size(self.max_memory or 0)} "
                    "of --max-memory")
        return ""
