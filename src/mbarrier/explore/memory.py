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
