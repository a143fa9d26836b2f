"""The C step of the fast path (mbarrier.ptx._plainline, built by setup.py) and its Python reference
(fastpath.plain_instruction) give the same node, or both None, on every line: real modules, mutations of
their lines, generated lines with every blank, comment, guard and operand shape. Also: the C step keeps
no reference it should not (no leak), and the package uses it unless MBARRIER_PURE_PYTHON=1."""

from __future__ import annotations

import gc
import importlib
import os
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mbarrier.ptx import fastpath
from mbarrier.ptx.parser import parse

ROOT = Path(__file__).resolve().parents[2]
PTX_FILES = sorted((ROOT / "tests" / "ptx" / "modules").glob("*.ptx")) + sorted(
    (ROOT / "src" / "mbarrier" / "examples").rglob("*.ptx"))
REAL_LINES = sorted({line for p in PTX_FILES for line in p.read_text().splitlines()})


def compiler_at_hand() -> bool:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) is not None and Path(sysconfig.get_paths()["include"], "Python.h").exists()


def c_step() -> ModuleType:
    try:
        module = importlib.import_module("mbarrier.ptx._plainline")
    except ImportError:
        if compiler_at_hand():
            pytest.fail("a C compiler and Python.h are here but mbarrier.ptx._plainline was not built: "
                        "reinstall with `python3 -m pip install -e .`")
        cc = sysconfig.get_config_var("CC")
        pytest.skip(f"no {cc} or no Python.h: the package runs the Python step only")
    # as fastpath does at import (it does not when MBARRIER_PURE_PYTHON=1)
    module.configure(fastpath._heads, fastpath._guards, fastpath._pieces, fastpath._head, fastpath._guard,
                     fastpath._piece, fastpath._other_piece, fastpath.plain_instruction, fastpath.Instruction,
                     fastpath.Name, fastpath.Imm, fastpath.Address, fastpath.Guard)
    return module


def same(line: str, lineno: int = 7) -> None:
    c = c_step().plain_instruction(line, lineno)
    py = fastpath.plain_instruction(line, lineno)
    # repr as well: == on named tuples would take True for 1 and a tuple for a node
    assert (c, repr(c)) == (py, repr(py)), line


@pytest.mark.tool("cc")
def test_real_lines() -> None:
    assert len(REAL_LINES) > 2000
    taken = 0
    for n, line in enumerate(REAL_LINES, 1):
        same(line, n)
        taken += fastpath.plain_instruction(line, n) is not None
    assert taken > len(REAL_LINES) // 3, "most lines of real modules are plain instructions"


@pytest.mark.tool("cc")
def test_mutated_real_lines() -> None:
    rng = random.Random(5)
    alphabet = " \t;,[]{}@!_+-|/.%$:0123456789abfxUdrp\r\x0b\x1cé"
    lines = [x for x in REAL_LINES if ";" in x]
    for _ in range(20_000):
        chars = list(rng.choice(lines))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(chars) + 1)
            op = rng.randrange(3)
            if op == 0 or not chars:
                chars.insert(at, rng.choice(alphabet))
            elif op == 1:
                del chars[min(at, len(chars) - 1)]
            else:
                chars[min(at, len(chars) - 1)] = rng.choice(alphabet)
        same("".join(chars), rng.randint(1, 1 << 20))


BLANK = st.sampled_from(["", " ", "\t", "  \t", "\x0b", "\x1f"])
PIECE = st.sampled_from([
    "%r1", "%rd12", "$L__BB0_2", "bar", "_", "%tid.x", "%p1|%p2", "!%p3", "!_", "0", "-1", "017", "09",
    "0x7fU", "0b101", "42U", "0f3F800000", "0dBFF0000000000000", "[%r1]", "[ %r1 + 16 ]", "[%rd3+-8]",
    "[sym]", "[64]", "[-8]", "[%r1+09]", "[%r1-4]", "{%r1, %r2}", "(x)", "1.5", "%", "", "é", "a\nb",
])
HEAD = st.sampled_from(["mov.u32", "bra.uni", "exit", "mbarrier.try_wait.parity.shared::cta.b64", "ret",
                        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                        "ld.global.v4.f32", "Mov.u32", "mov..u32", "wmma.load.a.sync.m16n16k16", "tex.1d",
                        ".reg", "L1:", "mov.u32;"])
GUARD = st.sampled_from(["", "@%p1", "@!%p1", "@_", "@!_", "@", "@%p1|%p2"])
TAIL = st.sampled_from(["", " ", "// c", "\t// c;d", "x", "/", "// a\nb", " ;", "\r"])


@st.composite
def lines(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.tuples(BLANK, PIECE, BLANK), max_size=6))
    ops = ",".join(a + p + b for a, p, b in pieces)
    guard = draw(GUARD)
    line = draw(BLANK) + (guard + draw(BLANK.filter(bool)) if guard else "") + draw(HEAD)
    return line + (draw(BLANK.filter(bool)) + ops if ops else "") + draw(BLANK) + ";" + draw(TAIL)


@pytest.mark.tool("cc")
@settings(max_examples=3000, deadline=None)
@given(lines(), st.integers(1, 1 << 40))
def test_generated_lines(line: str, lineno: int) -> None:
    same(line, lineno)


@pytest.mark.tool("cc")
@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2030), max_size=60))
def test_any_text(line: str) -> None:
    same(line)
    same(line + ";")


@pytest.mark.tool("cc")
def test_no_reference_kept() -> None:
    """Every reference the C step takes is given back: the cached verdicts and the line number are
    referenced as often after many calls (the results dropped) as before."""
    step = c_step()
    line = "\t@!%p1 ld.shared.u32 \t%r1, [%rd2+8], 0x10U, 0f3F800000, _, !%p2, [sym];  // x"
    lineno = 10**9 + 7  # an int object of its own
    assert step.plain_instruction(line, lineno) is not None
    watched = [lineno, *fastpath._pieces.values(), *fastpath._heads.values(), *fastpath._guards.values()]
    before = [sys.getrefcount(x) for x in watched]
    results = [step.plain_instruction(line, lineno) for _ in range(1000)]
    del results
    gc.collect()
    assert [sys.getrefcount(x) for x in watched] == before


@pytest.mark.tool("cc")
def test_package_uses_the_c_step() -> None:
    c_step()  # fails where a compiler is here but the step was not built
    if os.environ.get("MBARRIER_PURE_PYTHON", "") not in ("", "0"):
        assert fastpath.PLAIN is fastpath.plain_instruction
    else:
        assert fastpath.ACCELERATED and fastpath.PLAIN is not fastpath.plain_instruction


def test_pure_python_parses_the_same_trees() -> None:
    """A whole parse with the Python step (another process, MBARRIER_PURE_PYTHON=1) gives the same tree
    as this process's parse, on every real module."""
    script = ("import sys; from mbarrier.ptx import fastpath; from mbarrier.ptx.parser import parse\n"
              "assert not fastpath.ACCELERATED\n"
              "for p in sys.argv[1:]: print(repr(parse(open(p).read(), p)))\n")
    files = [str(p) for p in PTX_FILES]
    out = subprocess.run([sys.executable, "-c", script, *files], capture_output=True, text=True, check=True,
                         env={**os.environ, "MBARRIER_PURE_PYTHON": "1"}).stdout.splitlines()
    assert out == [repr(parse(Path(p).read_text(), p)) for p in files]
