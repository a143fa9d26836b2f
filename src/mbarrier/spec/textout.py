"""Standard output for the documents the packages generate (`python -m mbarrier.spec.rulesdoc --markdown`,
`mbarrier.spec.forms`, `.checks`, `.memmodel`, `mbarrier.report.schema`, `mbarrier.hw.doc`): a reader
that stops early (`| head -3`) ends the output quietly with exit 0, as the `mbarrier` commands do, not
with a BrokenPipeError traceback. Here, the lowest layer, so that every package can use it (stdlib only)."""

from __future__ import annotations

import os
import sys


def emit(text: str) -> None:
    """Write `text` to standard output and flush it; a closed pipe drops the rest."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # The interpreter flushes stdout again at exit: point it at /dev/null so that flush is quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
