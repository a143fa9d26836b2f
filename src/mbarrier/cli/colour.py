"""Colour for the text output on a terminal: the severities of lint, the verdict of check, the outcome
of run. On when stdout is a terminal (and TERM is not `dumb`); `NO_COLOR` (set and not empty, no-color.org)
turns it off, `FORCE_COLOR` (set and not empty) on where stdout is no terminal; NO_COLOR wins over
FORCE_COLOR. JSON, SARIF and GitHub output are never coloured.

The text is escaped (`report.text.printable`) before the colour's escape sequences go around it, and
written past stdout's escaping (`streams.write_styled`), so input can still send nothing to the terminal."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

from mbarrier.report.text import printable

STYLES = {"error": "1;31", "warning": "1;33", "good": "1;32", "note": "2", "bold": "1", "caret": "32"}


def enabled(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and env.get("TERM") != "dumb"


class Painter:
    """`paint(text, style)`: `text` escaped, in colour when on."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, style: str) -> str:
        safe = printable(text)
        return f"\x1b[{STYLES[style]}m{safe}\x1b[0m" if self.on and safe else safe
