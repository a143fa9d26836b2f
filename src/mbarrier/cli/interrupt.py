"""Ctrl-C as a request to stop and report.

While a search or a simulation runs, the first SIGINT only raises a flag that the loop polls at its next
safe point (between two states, or between two chunks of steps), so the machine is never left halfway
through an instruction and the report of what was covered is exact. A second SIGINT interrupts at once
(KeyboardInterrupt: exit 130), for a loop that does not come back to a safe point soon enough.
"""

from __future__ import annotations

import signal
from types import FrameType, TracebackType
from typing import Any


class Interrupt:
    """A context manager; calling it tells whether a stop was requested."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None
        self._installed = False

    def __call__(self) -> bool:
        return self.requested

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __enter__(self) -> Interrupt:
        try:
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        except ValueError:  # not the main thread: Ctrl-C keeps its usual meaning
            pass
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
