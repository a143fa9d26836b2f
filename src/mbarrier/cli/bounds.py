"""The bounds `run` and `check` share: `--timeout` over the whole command's wall time (reading, parsing
and launching the module included), and `--max-memory` over the process's resident memory.

The search and the run check both bounds themselves, between two states or chunks of steps
(`explore.budget`). Before they start, the command is parsing and compiling, code that has no such
safe points and that can take minutes on a large module: there an interval timer (SIGALRM) raises
`TimeoutHit` at the deadline, which the command reports as incomplete (exit 3) with the phase it was in.
Away from the main thread, where no signal handler can be set (or without SIGALRM), the deadline is
checked after each phase instead.
"""

from __future__ import annotations

import argparse
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from mbarrier.cli import options
from mbarrier.explore.memory import default_max_memory


class TimeoutHit(BaseException):
    """The --timeout deadline passed while the command was loading the module. A BaseException, like
    KeyboardInterrupt, so that no `except Exception` on the way can take it for a failure of its own."""

    def __init__(self, phase: str, seconds: float) -> None:
        super().__init__(phase)
        self.phase = phase
        self.seconds = seconds

    def message(self) -> str:
        return f"the time bound (--timeout {self.seconds:g} s) was hit while {self.phase}"


def add_bound_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=options.seconds, metavar="S",
                   help="stop after S seconds of wall time, reading and parsing the module included (exit 3)")
    p.add_argument("--max-memory", type=options.size, metavar="SIZE",
                   help="stop when the process's resident memory exceeds SIZE, such as 4G or 512M (exit 3; "
                   "default: half of the memory available when the command starts)")


def memory_bound(args: argparse.Namespace) -> int:
    """--max-memory, or its default (also for a command without the option: `export`)."""
    given: int | None = getattr(args, "max_memory", None)
    return given if given is not None else default_max_memory()


class Deadline:
    """The --timeout of one command (None: no deadline), counted from `started` (`time.monotonic()`;
    default: now)."""

    def __init__(self, timeout: float | None, started: float | None = None) -> None:
        self.timeout = timeout
        start = time.monotonic() if started is None else started
        self.at = None if timeout is None else start + timeout

    def remaining(self) -> float | None:
        return None if self.at is None else self.at - time.monotonic()

    @contextmanager
    def phase(self, what: str) -> Iterator[None]:
        """Raise TimeoutHit(what) if the deadline passes before the block ends."""
        if self.at is None or self.timeout is None:
            yield
            return
        timeout = self.timeout

        def expired(signum: int, frame: FrameType | None) -> None:
            raise TimeoutHit(what, timeout)

        left = self.at - time.monotonic()
        if left <= 0:
            raise TimeoutHit(what, timeout)
        try:
            previous = signal.signal(signal.SIGALRM, expired)
        except (ValueError, AttributeError):  # not the main thread (or no SIGALRM): check at the end
            yield
            if time.monotonic() > self.at:
                raise TimeoutHit(what, timeout) from None
            return
        signal.setitimer(signal.ITIMER_REAL, left)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
