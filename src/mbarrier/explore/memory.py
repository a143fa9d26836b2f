"""How much memory this process holds: for progress reports and memory bounds."""

from __future__ import annotations

import os
import sys


def resident_bytes() -> tuple[int, bool] | None:
    """(bytes, current): the resident set size now (Linux: /proc/self/statm), else the peak so far
    (`current` False), or None where neither can be read."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"), True
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak * (1 if sys.platform == "darwin" else 1024), False


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
    """Bytes in the largest binary unit that keeps the figure at least 1 (`4.0 GiB`)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"
