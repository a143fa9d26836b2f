"""The PTX input of a command: a file, or standard input for `-` (`nvcc -ptx k.cu -o - | mbarrier check -
...`). A name that cannot be read is a usage error that says why."""

from __future__ import annotations

import sys
from pathlib import Path

from mbarrier.cli import UsageError
from mbarrier.ptx import ast
from mbarrier.ptx.diagnostics import PtxSyntaxError
from mbarrier.ptx.parser import parse_bytes

STDIN = "-"
STDIN_NAME = "<stdin>"  # how diagnostics name standard input


def read_input(name: str) -> bytes:
    """The bytes of FILE, or of standard input for `-`."""
    if name == STDIN:
        return sys.stdin.buffer.read()
    path = Path(name)
    if path.is_dir():
        raise UsageError(f"{name} is a directory, not a PTX file")
    if not path.exists():
        raise UsageError(f"{name}: no such file")
    try:
        return path.read_bytes()
    except OSError as e:
        raise UsageError(f"{name}: cannot read it: {e.strerror or e}") from None


def display_name(name: str) -> str:
    return STDIN_NAME if name == STDIN else name


def read_module(name: str) -> ast.Module:
    """The parsed module of FILE or `-` (a syntax error is a usage error with ptxas-style lines)."""
    data = read_input(name)
    try:
        return parse_bytes(data, display_name(name))
    except PtxSyntaxError as e:
        raise UsageError(f"{display_name(name)} does not parse:\n{e}") from None
