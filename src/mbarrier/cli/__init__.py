"""The `mbarrier` command line. Exit codes: 0 clean or verified, 1 findings, 2 usage or input error,
3 incomplete (a bound was hit, or Ctrl-C), 130 Ctrl-C before anything could be reported.

Each subcommand is a module of this package with `register(subparsers)` and `main(args) -> int`;
`COMMANDS` lists them in the order `--help` shows them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Sequence
from typing import NoReturn

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130  # Ctrl-C while reading input, before anything could be reported

COMMANDS: tuple[str, ...] = ("demo", "lint", "run", "check", "support", "export", "conform", "capture")


class UsageError(Exception):
    """An error the user caused (bad arguments, unreadable or malformed input): exit 2, no traceback."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    from mbarrier import __version__

    parser = _Parser(prog="mbarrier", description="The executable reference for PTX mbarrier.")
    parser.add_argument("--version", action="version", version=f"mbarrier {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(f"mbarrier.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    started = time.monotonic()  # --timeout counts the command's whole wall time from here
    try:
        parser = build_parser()  # imports every command's modules: a noticeable fraction of a second
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    args = parser.parse_args(argv)
    args.started = started
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    from mbarrier.cli.streams import guarded

    with guarded():
        code = _dispatch(args)
    if argv is None and args.command in ("check", "run"):
        _end(code)
    return code


def _end(code: int) -> NoReturn:
    """End the program now, its output flushed: the interpreter's own ending would free a large search's
    objects one by one (a second and more after a check of a kernel of hundreds of threads, past its
    --timeout). Only for the program (`main()` without arguments), never for a caller of `main(argv)`."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader went away: the exit code is still the verdict's
            pass
    os._exit(code)


def _dispatch(args: argparse.Namespace) -> int:
    try:
        code: int = args.handler(args)
        return code
    except UsageError as e:
        sys.stderr.write(f"mbarrier {args.command}: error: {e}\n")
        return EXIT_USAGE
    except MemoryError:  # outside a search (which reports what it covered): a ulimit or the machine
        sys.stderr.write(f"mbarrier {args.command}: out of memory before the command could finish (the "
                         "process's limit or the machine's memory); nothing was verified\n")
        return EXIT_INCOMPLETE
    except KeyboardInterrupt:  # outside a search or run (those report what they covered: exit 3)
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as e:  # the last line of defence: never a traceback for a user
        if os.environ.get("MBARRIER_DEBUG"):
            raise
        sys.stderr.write(f"mbarrier {args.command}: internal error: {type(e).__name__}: {e}\n"
                         "(this is a bug in mbarrier; set MBARRIER_DEBUG=1 to see the traceback)\n")
        return EXIT_USAGE
