"""Fuzzing the parser: token soups and mutated real modules. For every input the parser returns a Module
or raises PtxSyntaxError whose last diagnostic is fatal and points inside the file; it never raises
anything else, never hangs (a per-example alarm), and the fast path and the general parser agree."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbarrier.ptx import ast
from mbarrier.ptx.diagnostics import PtxSyntaxError
from mbarrier.ptx.parser import parse

MODULES = sorted((Path(__file__).parent / "modules").glob("*.ptx"))
TEXTS = [p.read_text() for p in MODULES]
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

PER_EXAMPLE_SECONDS = 2


class Hang(Exception):
    pass


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"parse took more than {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def outcome(text: str, fast: bool, seconds: float = PER_EXAMPLE_SECONDS) -> ast.Module | tuple[int, int, str]:
    """The tree, or where and what the fatal diagnostic is; checks the diagnostic's invariants."""
    with time_limit(seconds):
        try:
            return parse(text, "fuzz.ptx", fast=fast)
        except PtxSyntaxError as e:
            assert e.diagnostics, "a syntax error must carry diagnostics"
            d = e.diagnostics[-1]
            assert d.severity == "fatal" and d.rule == "syntax" and d.file == "fuzz.ptx"
            lines = text.split("\n")
            assert 1 <= d.line <= len(lines), (d, len(lines))
            assert 1 <= d.column <= len(lines[d.line - 1]) + 1, (d, lines[d.line - 1])
            assert d.message
            return d.line, d.column, d.message


def check(text: str) -> None:
    fast = outcome(text, True)
    slow = outcome(text, False)
    assert fast == slow, "the fast path and the general parser disagree"


# FUZZ_N=5000 for a longer, randomized run; CI runs a fixed 150 examples per property.
_N = os.environ.get("FUZZ_N")
FUZZ = settings(max_examples=int(_N or 150), deadline=None, derandomize=_N is None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

PIECES = [
    ".version", ".target", ".address_size", ".entry", ".func", ".visible", ".extern", ".weak", ".reg",
    ".shared", ".global", ".const", ".local", ".param", ".b32", ".b64", ".u32", ".pred", ".v2", ".v4",
    ".align", ".loc", ".file", ".section", ".pragma", ".maxntid", ".reqnctapercluster", ".callprototype",
    ".shared::cta", ".shared::cluster", ".mbarrier::complete_tx::bytes", ".arrive", ".try_wait", ".parity",
    "mbarrier", "mov", "ld", "bra", "call", "ret", "%r1", "%rd2", "%p1", "%tid", ".x", "_", "sym", "$L0",
    "0", "1", "-1", "017", "09", "0x1F", "0xU", "7U", "0b10", "0f3F800000", "0d3FF0000000000000", "1.5",
    ".5", "1e3", "sm_90", "sm_100a", "debug", "8.0", "9.0", "64", '"s"', '"un', "(", ")", "[", "]", "{",
    "}", ",", ";", ":", "@", "!", "+", "-", "*", "/", "%", "<", ">", "<<", "|", "?", "=", "//c\n",
    "/*c*/", "/*", "\n", "\t", " ", "#", "\\",
]


@FUZZ
@given(st.booleans(), st.lists(st.sampled_from(PIECES), max_size=60), st.lists(st.sampled_from(" \n"),
                                                                                min_size=60, max_size=60))
def test_token_soup(with_header: bool, pieces: list[str], gaps: list[str]) -> None:
    text = (HEADER if with_header else "") + "".join(p + g for p, g in zip(pieces, gaps, strict=False))
    check(text)


@FUZZ
@given(st.lists(st.sampled_from(PIECES[:60]), max_size=40))
def test_token_soup_in_a_body(pieces: list[str]) -> None:
    check(HEADER + ".visible .entry k()\n{\n" + " ".join(pieces) + "\n}\n")


@st.composite
def mutated_module(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(TEXTS))
    lines = text.split("\n")
    # a window of the module (the whole of a small one) keeps each example fast
    start = draw(st.sampled_from([0, 0, draw(st.integers(0, max(0, len(lines) - 1)))]))
    lines = lines[start:start + 300]
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["del_char", "dup_char", "swap_chars", "del_line", "dup_line",
                                   "swap_lines", "insert"]))
        if not lines:
            break
        n = draw(st.integers(0, len(lines) - 1))
        m = draw(st.integers(0, len(lines) - 1))
        line = lines[n]
        k = draw(st.integers(0, max(0, len(line) - 1)))
        if op == "del_char" and line:
            lines[n] = line[:k] + line[k + 1:]
        elif op == "dup_char" and line:
            lines[n] = line[:k] + line[k] + line[k:]
        elif op == "swap_chars" and len(line) > k + 1:
            lines[n] = line[:k] + line[k + 1] + line[k] + line[k + 2:]
        elif op == "del_line":
            del lines[n]
        elif op == "dup_line":
            lines.insert(m, line)
        elif op == "swap_lines":
            lines[n], lines[m] = lines[m], lines[n]
        elif op == "insert":
            lines[n] = line[:k] + draw(st.sampled_from(PIECES)) + line[k:]
    return "\n".join(lines)


@FUZZ
@given(mutated_module())
def test_mutated_real_modules(text: str) -> None:
    check(text)


def test_deep_nesting_is_ptxas_s_diagnostic() -> None:
    """Nesting past what ptxas's parser stack holds is its fatal "memory exhausted" (measured with ptxas
    13.0; tests/ptx/test_validate_module.py compares the limits with ptxas), never a RecursionError;
    nesting up to there parses."""
    for body in ("{" * 20000 + "}" * 20000, "mov.u32 %r1, " + "(" * 20000 + "1" + ")" * 20000 + ";",
                 "mov.u32 %r1, " + "-" * 20000 + "1;", "mov.u32 %r1, " + "!" * 20000 + "%r1;"):
        result = outcome(HEADER + ".visible .entry k()\n{\n" + body + "\n}\n", True)
        assert isinstance(result, tuple) and result[2].endswith("': memory exhausted"), result
    for body in ("{" * 1663 + "}" * 1663, "mov.u32 %r1, " + "(" * 9978 + "1" + ")" * 9978 + ";",
                 "mov.u32 %r1, " + "~" * 4989 + "1;"):
        assert isinstance(outcome(HEADER + ".visible .entry k()\n{\n.reg .b32 %r1;\n" + body + "\n}\n",
                                  True), ast.Module)


def test_long_inputs_stay_linear() -> None:
    """25,000 statements parse in well under 15 s (about 0.5 s here; quadratic work would take minutes)."""
    body = "add.s32 %r1, %r1, 1;\n" * 20000 + "{ mov.u32 %r1, (1+2)*3; }\n" * 5000
    result = outcome(HEADER + ".visible .entry k()\n{\n.reg .b32 %r<2>;\n" + body + "}\n", True, 15)
    assert isinstance(result, ast.Module)
    body_stmts = result.entries[0].body
    assert body_stmts is not None and len(body_stmts) == 1 + 20000 + 5000


@pytest.mark.parametrize("body", [
    "mov.u32 " + ", ".join(["%r1"] * 20000) + "\n",  # no `;`: the line pattern must fail fast
    "mov.b64 {" + ", ".join(["%r1"] * 20000) + "}, %rd1;\n",
    "mov.u32 %r1, " + "+".join(["1"] * 20000) + ";\n",
    "mov.u32" + " " * 200000 + "%r1 %r2;\n",
    "mov.u32 %r1, " + "1" * 200000 + "\n",
    '.pragma "' + "x" * 100000 + "\n",
    "ld.u32 %r1, [%r1" + "+1" * 20000 + "];\n",
], ids=["operands-no-semicolon", "long-vector", "long-expression", "blanks", "long-number",
        "unterminated-string", "long-offset"])
def test_pathological_lines(body: str) -> None:
    """Long lines parse or fail in linear time; a diagnostic quotes at most 80 characters of a token."""
    result = outcome(HEADER + ".visible .entry k()\n{\n" + body + "}\n", True, 15)
    if isinstance(result, tuple):
        assert len(result[2]) < 200
