"""Argument types for the command line: a value that makes no sense is a usage error (exit 2) at parse
time, never a silently odd run (a `--max-findings 0` that stops before the first finding and reports
VERIFIED, a `--timeout nan` that never fires).

Each function is an argparse `type=`: it returns the value or raises `argparse.ArgumentTypeError`,
which argparse reports as `argument --NAME: MESSAGE` (exit 2, see `mbarrier.cli._Parser`).
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from mbarrier.cli import UsageError


def _integer(text: str) -> int:
    for base in (0, 10):  # 0x10, 0b11, and also 010 (which base 0 refuses)
        try:
            return int(text, base)
        except ValueError:
            pass
    raise argparse.ArgumentTypeError(f"expected an integer, not {text!r}")


def integer(text: str) -> int:
    """Any integer (decimal, or 0x/0o/0b prefixed)."""
    return _integer(text)


def positive(text: str) -> int:
    """An integer of at least 1."""
    n = _integer(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return n


def non_negative(text: str) -> int:
    """An integer of at least 0."""
    n = _integer(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {text}")
    return n


def seconds(text: str) -> float:
    """A finite number of seconds greater than 0 (not nan, not inf)."""
    try:
        s = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not math.isfinite(s) or s <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds greater than 0, not {text}")
    return s


_UNITS = {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}


def size(text: str) -> int:
    """A positive number of bytes: an integer, or a number with a binary unit K, M, G or T (4G, 512M,
    1.5G; also 4GiB, 4GB, 512k: each unit is a power of 1024)."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1:] if t[-1:] in _UNITS else ""
    try:
        value = float(t[:len(t) - len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a size such as 4G, 512M or 1000000 (bytes), not {text!r}") from None
    n = int(value * (1 << _UNITS[unit])) if math.isfinite(value) else 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a size of at least 1 byte, not {text}")
    return n


DUMP_DEFAULT_WORDS = 16


def dump(text: str) -> tuple[str, int]:
    """NAME[:COUNT] of `run --dump`: a name and a word count of at least 1 (default 16)."""
    name, sep, count = text.partition(":")
    if not name:
        raise argparse.ArgumentTypeError(f"expected NAME[:COUNT], not {text!r}")
    if not sep:
        return name, DUMP_DEFAULT_WORDS
    try:
        n = _integer(count)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r}: COUNT must be an integer of at least 1") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: COUNT must be at least 1")
    return name, n


def output_file(text: str) -> Path:
    """A file the command will write: refused now (not after an hour of checking) when it is a
    directory, its directory does not exist, or either cannot be written."""
    path = Path(text)
    if not text:
        raise argparse.ArgumentTypeError("expected a file name")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: directory {parent} does not exist")
    if path.exists() and not os.access(path, os.W_OK) or not path.exists() and not os.access(parent, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text}: permission denied")
    return path


def output_dir(text: str) -> Path:
    """A directory the command will write files into: refused now when it is a file, or when it does
    not exist and its parent does not either; created when needed (`make_dir`)."""
    path = Path(text)
    if not text:
        raise argparse.ArgumentTypeError("expected a directory name")
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not path.exists() and not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: directory {parent} does not exist")
    return path


def write_output(path: Path, text: str, what: str) -> None:
    """Write a result file; a failure (disk full, the directory removed meanwhile) is the user's to fix."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{what} {path}: cannot write it: {e.strerror or e}") from None
