"""stdout and stderr as the commands write them: no control character from the input, and no end for
a closed pipe.

Source lines, file names and messages quoting the input may hold control characters; every write is
passed through `report.text.printable`, so a terminal shows them escaped instead of acting on them.

`mbarrier run ... | head -1`: once `head` has its line it closes the pipe and the next write raises
BrokenPipeError. The reader has what it wanted; the command still owes its caller the verdict's exit
code, so writes after that point are dropped instead of ending the command.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO, cast

from mbarrier.report.text import printable


class PipeGuard:
    """A text stream that forwards to `inner`, escaped, until the reader goes away, then drops what
    follows. `inner` itself is for the one writer that means its control characters (the live progress
    line)."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self.inner.write(printable(text))
                return len(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def write_styled(self, text: str) -> int:
        """Text already escaped, with colour escape sequences of its own (`cli.colour`)."""
        if not self.broken:
            try:
                self.inner.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self.inner.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        self.broken = True
        # Python flushes the standard streams again at exit: aim the descriptor at /dev/null so that
        # last flush neither fails nor prints "Exception ignored ... BrokenPipeError".
        try:
            fd = self.inner.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
        except (OSError, ValueError):
            return
        os.dup2(null, fd)
        os.close(null)

    def __getattr__(self, name: str) -> object:  # isatty, fileno, encoding ...: the inner stream's
        return getattr(self.inner, name)


@contextmanager
def guarded() -> Iterator[None]:
    """sys.stdout and sys.stderr guarded for the duration (flushed inside the guard at the end)."""
    saved = sys.stdout, sys.stderr
    out, err = PipeGuard(saved[0]), PipeGuard(saved[1])
    sys.stdout, sys.stderr = cast(TextIO, out), cast(TextIO, err)
    try:
        yield
    finally:
        out.flush()
        err.flush()
        sys.stdout, sys.stderr = saved


def write_styled(text: str) -> None:
    """Write to stdout text that `cli.colour.Painter` escaped and coloured."""
    out = sys.stdout
    if isinstance(out, PipeGuard):
        out.write_styled(text)
    else:
        out.write(text)


def raw_stderr() -> TextIO:
    """stderr without the escaping: for the live progress line, whose control characters draw it."""
    err = sys.stderr
    return err.inner if isinstance(err, PipeGuard) else err
