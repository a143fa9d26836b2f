"""The time and memory bounds of a search or a run, checked cheaply between two states or chunks of steps.

Memory is the process's resident memory as the operating system counts it (`/proc/self/statm` on Linux;
elsewhere the peak `ru_maxrss`, which can only overstate it), read at most every `MEMORY_EVERY` seconds:
a reading costs a system call, a state or a chunk of steps costs far less. Between two readings the
process can grow by what that much work allocates (a few megabytes), so the bound is a ceiling to stay
under, not an exact cut.
"""

from __future__ import annotations

import os
import resource
import sys
import time

MEMORY_EVERY = 0.1  # seconds between two readings of resident memory

# What stopped a search or a run (`stopped_by` of its result): the option that sets each bound.
TIMEOUT = "timeout"
MAX_MEMORY = "max-memory"
MAX_STATES = "max-states"
MAX_STEPS = "max-steps"


def resident_bytes() -> int:
    """The process's resident memory now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def available_bytes() -> int | None:
    """Physical memory the system could give this process now: MemAvailable of /proc/meminfo (Linux),
    else the free physical pages; None where neither can be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


#: With nothing to measure, a bound that fits any machine this tool runs on usefully.
FALLBACK_MAX_MEMORY = 4 << 30


def default_max_memory() -> int:
    """Half of the physical memory available when the command starts: room for the rest of the system
    and for the report that follows the search."""
    avail = available_bytes()
    return avail // 2 if avail else FALLBACK_MAX_MEMORY


def format_size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


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
            self.resident = resident_bytes()
            if self.resident > self.max_memory:
                return MAX_MEMORY
        return ""

    def detail(self, bound: str) -> str:
        """What the report adds to the name of the bound `exceeded()` returned: the memory measured."""
        if bound == MAX_MEMORY:
            return (f"{format_size(self.resident)} resident, over the {format_size(self.max_memory or 0)} "
                    "of --max-memory")
        return ""
