"""Progress of a long check or run on stderr: a live status line on a terminal (rich), and on anything
else (a CI log, a file) one plain line every LINE_EVERY seconds, so that a job that runs for an hour
shows it is alive and how fast it goes. `--progress/--no-progress` overrides the choice; `--quiet` turns
progress and warnings off."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from mbarrier.cli.streams import raw_stderr
from mbarrier.explore.memory import resident_bytes
from mbarrier.explore.results import Stats

if TYPE_CHECKING:
    from rich.status import Status

LINE_EVERY = 5.0   # seconds between two lines when stderr is not a terminal
LIVE_EVERY = 0.25  # seconds between two updates of the live line


def add_progress_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress on stderr: a live line on a terminal, else a line every "
                   f"{LINE_EVERY:g} s (default: on, unless --quiet)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="nothing on stderr but errors: no progress (unless --progress), no warnings")


def _memory() -> str:
    rss = resident_bytes()
    if rss is None:
        return ""
    size, current = rss
    return f", {'RSS' if current else 'peak RSS'} {size / 2**20:,.0f} MiB"


class Progress:
    """Reports for one command (`what`: "check" or "run"): `mode` is "live", "lines" or "off"."""

    def __init__(self, what: str, mode: str) -> None:
        self.what = what
        self.mode = mode
        self.started = time.monotonic()
        self.last = self.started
        self._status: Status | None = None

    @classmethod
    def of(cls, what: str, args: argparse.Namespace) -> Progress:
        on = args.progress if args.progress is not None else not args.quiet
        if not on:
            return cls(what, "off")
        return cls(what, "live" if sys.stderr.isatty() else "lines")

    @property
    def every(self) -> float:
        """Seconds between two reports."""
        return LIVE_EVERY if self.mode == "live" else LINE_EVERY

    def _due(self) -> bool:
        now = time.monotonic()
        if now - self.last < self.every:
            return False
        self.last = now
        return True

    def states(self, s: Stats) -> None:
        """A check's figures (the search calls it every `every` seconds)."""
        if self.mode == "off" or not self._due():
            return
        elapsed = time.monotonic() - s.started
        if s.transitions == 0:  # the first state of a large kernel can take a minute: say what it does
            self._show(f"first state: {s.doing or 'preparing'}{_memory()}, {elapsed:.0f} s")
            return
        # Moves, not states, say how fast the search goes: a run of sets of one is one state for many
        # moves (docs/checker.md, "Runs of sets of one").
        rate = s.transitions / elapsed if elapsed > 0 else 0.0
        self._show(f"{s.states:,} states, {s.transitions:,} moves ({rate:,.0f}/s), depth {s.depth:,}, "
                   f"queue {s.queue:,}{_memory()}, {elapsed:.0f} s")

    def steps(self, steps: int) -> None:
        """A run's step count (called every few thousand steps)."""
        if self.mode == "off" or not self._due():
            return
        elapsed = time.monotonic() - self.started
        rate = steps / elapsed if elapsed > 0 else 0.0
        self._show(f"{steps:,} steps ({rate:,.0f}/s){_memory()}, {elapsed:.0f} s")

    def _show(self, text: str) -> None:
        if self.mode == "lines":
            sys.stderr.write(f"{self.what}: {text}\n")
            sys.stderr.flush()
            return
        if self._status is None:
            from rich.console import Console  # only a terminal pays for importing it
            # rich's own escape sequences draw the line: it writes past the escaping of cli.streams, and
            # the figures it shows come from no input.
            self._status = Console(file=raw_stderr()).status("")
            self._status.start()
        self._status.update(f"{self.what}: {text}; Ctrl-C reports")

    def close(self) -> None:
        """Take the live line away (the report follows on stdout)."""
        if self._status is not None:
            self._status.stop()
            self._status = None
