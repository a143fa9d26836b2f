"""The time and memory bounds of a search or a run, checked cheaply between two states or chunks of steps,
and inside the long work of one state (`pulse`).

Memory is the process's resident memory as the operating system counts it (`explore.memory`), read at
most every `MEMORY_EVERY` seconds: a reading costs a system call, a state or a chunk of steps costs far
less. Between two readings the
process can grow by what that much work allocates (a few megabytes), so the bound is a ceiling to stay
under, not an exact cut.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

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
INTERRUPT = "interrupt"  # Ctrl-C (`Budget.stop`)


class BoundHit(Exception):
    """A bound hit in the middle of a piece of work that cannot stop between two states or chunks (a
    state's stubborn set over many threads): the work is abandoned. `bound`: what `exceeded()` named."""

    def __init__(self, bound: str) -> None:
        super().__init__(bound)
        self.bound = bound


class Budget:
    """A deadline (`time.monotonic()` seconds) and a memory ceiling (bytes); either may be None; and
    `stop`, polled for Ctrl-C. `exceeded()` names the bound that was hit (TIMEOUT, MAX_MEMORY,
    INTERRUPT) or returns "". `progress`, when given, is called at most every `every` seconds by
    `pulse` (long work of one state, which shows what it is doing in `doing`)."""

    def __init__(self, deadline: float | None = None, max_memory: int | None = None,
                 stop: Callable[[], bool] | None = None, progress: Callable[[], None] | None = None,
                 every: float = 0.5) -> None:
        self.deadline = deadline
        self.max_memory = max_memory
        self.stop = stop
        self.resident = 0          # the last reading, for the report
        self._next_reading = 0.0
        self.progress = progress
        self.every = every
        self.last_progress = time.monotonic()
        # What long work is doing now, for the progress line: its words, and which of how many
        # (`doing(...)`; "" when no long work is under way).
        self.label = ""
        self.of: tuple[int, int] | None = None

    def exceeded(self) -> str:
        if self.stop is not None and self.stop():
            return INTERRUPT
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
        """Raise BoundHit when a bound is hit: the check inside long work (`explore.closure.stubborn`)."""
        bound = self.exceeded()
        if bound:
            raise BoundHit(bound)
        self.report()

    def report(self) -> None:
        """Call `progress` if it is due."""
        if self.progress is not None and (now := time.monotonic()) - self.last_progress >= self.every:
            self.last_progress = now
            self.progress()

    def doing(self) -> str:
        """What long work is doing now, in words ("" when none is under way)."""
        if not self.label or self.of is None:
            return self.label
        return f"{self.label} {self.of[0] + 1}/{self.of[1]}"

    def detail(self, bound: str) -> str:
        """What the report adds to the name of the bound `exceeded()` returned: the memory measured."""
        if bound == MAX_MEMORY and self.max_memory is not None and self.resident > self.max_memory:
            return (f"{format_size(self.resident)} resident, over the {format_size(self.max_memory or 0)} "
                    "of --max-memory")
        return ""


# The budget of the check under way (`active`), which `pulse` checks: the long loops of one state (a
# future's unrolling, a walk, settling the first state) are far from the search's own safe points.
_active: Budget | None = None
_shielded = 0   # inside `shielded`: pulse shows progress only


@contextmanager
def active(b: Budget) -> Iterator[Budget]:
    """Make `b` the budget `pulse` checks while the block runs."""
    global _active
    before = _active
    _active = b
    try:
        yield b
    finally:
        _active = before


@contextmanager
def shielded() -> Iterator[None]:
    """No BoundHit from `pulse` while the block runs: work whose result must not be lost (the
    explanation of a deadlock already found)."""
    global _shielded
    _shielded += 1
    try:
        yield
    finally:
        _shielded -= 1


def pulse() -> None:
    """A safe point inside long work: raise BoundHit when a bound of the active budget is hit (the work
    is abandoned, and the search stops as at its own safe points), and show progress when due. The
    caller leaves nothing half-made that outlives the BoundHit (a cache entry is stored when complete)."""
    b = _active
    if b is None:
        return
    if _shielded:
        b.report()
    else:
        b.check()


def doing(label: str, i: int | None = None, n: int = 0) -> None:
    """Tell the progress line what long work is under way: `label`, item `i` (from 0) of `n`."""
    b = _active
    if b is not None:
        b.label = label
        b.of = None if i is None else (i, n)
