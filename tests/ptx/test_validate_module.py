"""The module rules ptxas enforces, whole modules against ptxas 13.0: the address size (a 32- or
16-bit generic or global address, `.address_size 32`), non-ASCII characters and the UTF-8 byte order
mark, and the nesting its parser's stack holds. Every message counts here, ptxas's warnings too."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

import pytest

from mbarrier.cli.lint import lint_text

pytestmark = pytest.mark.skipif(
    shutil.which("ptxas") is None and not os.environ.get("MBARRIER_REQUIRE_TOOLS"),
    reason="ptxas (CUDA 13.0) is not on PATH")

_MESSAGE = re.compile(r"ptxas (?:\S+, line \d+; )?(error|fatal|warning)\s*:\s*(.*)")
DECLS = (".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .b16 %h<4>;\n.reg .pred %p<2>;\n.shared .b64 bar;\n"
         ".global .b64 gbar;\n.global .b32 garr[4];\n")


def module(body: str, target: str = "sm_90", version: str = "8.0", size: str | None = "64") -> str:
    head = f".version {version}\n.target {target}\n" + (f".address_size {size}\n" if size else "")
    return head + ".visible .entry k()\n{\n" + DECLS + body + "\nret;\n}\n"


def ptxas(data: bytes, target: str) -> set[tuple[str, str]]:
    """Every message of ptxas, warnings and those without a line too (but its closing 'aborted')."""
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "m.ptx")
        with open(f, "wb") as fh:
            fh.write(data)
        r = subprocess.run(["ptxas", f"-arch={target}", f, "-o", os.devnull], capture_output=True, text=True,
                           timeout=60)
    lines = (r.stdout + r.stderr).splitlines()
    said = {(m.group(1), m.group(2).strip()) for m in map(_MESSAGE.match, lines) if m}
    return said - {("fatal", "Ptx assembly aborted due to errors")}


def ours(text: str) -> set[tuple[str, str]]:
    return {(d.severity, d.message) for d in lint_text(text, "m.ptx").diagnostics}


ADDRESS_BODIES = (
    "ld.u32 %r1, [%r2];", "ld.u32 %r1, [%r2+8];", "@%p1 st.u32 [%r2], %r1;", "ld.global.nc.u32 %r1, [%r2];",
    "atom.global.cas.b32 %r1, [%r2], 1, 2;", "red.add.u32 [%r2], 1;", "prefetch.global.L2 [%r2];",
    "ld.shared.u32 %r1, [%r2];", "ld.u64 %rd1, [%rd2];", "ld.u32 %r1, [%h2];", "mov.u32 %r1, garr;",
    "mov.u16 %h1, gbar;", "mov.u32 %r1, gbar+4;", "mov.b64 %rd1, gbar;", "cvta.to.local.u32 %r1, %r2;",
    "cvta.global.u64 %rd1, %rd2;", "mbarrier.init.b64 [%r2], 1;", "mbarrier.init.shared.b64 [%r2], 1;",
    "mbarrier.try_wait.parity.b64 %p1, [%r2], 0;", "mbarrier.pending_count.b64 %r1, %rd1;",
    "cp.async.mbarrier.arrive.b64 [%r2];", "cp.async.ca.shared.global [%r1], [%r2], 4;",
    "ld.u32 %r1, [%r2];\nld.u32 %r1, [%h2];", "ld.u32 %r1, [%rd2];\nld.u32 %r1, [%r2];",
    "ld.u32 %r1, [%h2];\nmov.u32 %r1, gbar;", "cvta.global.u32 %r1, %r2;\nld.u32 %r1, [%rd2];",
    "ld.u32 %r1, [%r2];\nmbarrier.init.b64 [bar], 0x1, 2;",  # another error: ptxas stops before
)


@pytest.mark.parametrize("size", ["64", None, "32"])
def test_address_size_as_ptxas(size: str | None) -> None:
    """Each body under each .address_size (none written too), before sm_90 and from it on."""
    bad = []
    for target, version in (("sm_80", "7.0"), ("sm_90", "7.8"), ("sm_100a", "8.6")):
        for body in ADDRESS_BODIES:
            text = module(body, target, version, size)
            if ptxas(text.encode(), target) != ours(text):
                bad.append((size, target, body, ptxas(text.encode(), target), ours(text)))
    assert not bad, bad[:3]


def test_a_32_bit_address_is_fatal_in_words_of_the_target() -> None:
    text = module("ld.u32 %r1, [%r2];", "sm_80", "7.0")
    assert ("fatal", "32-Bit compilation is no longer supported") in ours(text)
    text = module("ld.u32 %r1, [%r2];", "sm_120", "8.7")
    assert ("fatal", "32-Bit ABI (--machine 32 or 32-Bit addressing) is not supported on sm_90 or higher "
                     "architectures.") in ours(text)


@pytest.mark.parametrize("data", [
    b"\xef\xbb\xbf" + module("ret;").encode(),  # a UTF-8 byte order mark: refused, as any non-ASCII
    module("ret;").replace(".target", "\ufeff.target").encode(),
    module("/* \u00e9 */").encode(), module("// \u00e9").encode(), module('# 1 "\u00e9.cu"').encode(),
    module('# 100 "a.cu"\n// \u00e9').encode(), module("mov.u32\u00a0%r1, 1;").encode(),
    module("mov.u32 %r1 %r2;\n// \u00e9").encode(),  # before a syntax error on an earlier line
], ids=["bom", "bom-line-2", "block-comment", "line-comment", "line-marker", "after-marker", "nbsp",
        "after-syntax-error"])
def test_non_ascii_as_ptxas(data: bytes) -> None:
    assert ours(data.decode()) == ptxas(data, "sm_90")


def _nested(n: int, inner: str) -> str:
    return module("{\n" * n + inner + "}\n" * n)


@pytest.mark.parametrize("text", [
    *(_nested(n, inner) for n in (1663, 1664) for inner in (
        "{\n}\n", "L1:\nret;\n", "@%p1 bra L1;\nL1:\n", "mov.u32 %r1, -1;\n", "mov.u32 %r1, (1);\n",
        "mbarrier.init.shared.b64 [bar], 1;\n", ".reg .b32 q;\n")),
    _nested(1000, "mov.u32 %r1, " + "(" * 3978 + "1" + ")" * 3978 + ";\n"),
    _nested(1000, "mov.u32 %r1, " + "(" * 3979 + "1" + ")" * 3979 + ";\n"),
    *(module(body) for n in (9978, 9979) for body in (
        "mov.u32 %r1, " + "(" * n + "1" + ")" * n + ";",
        "ld.shared.u32 %r1, [%r2+" + "(" * (n - 4) + "1" + ")" * (n - 4) + "];",
        "mov.b64 %rd1, {%r1, " + "(" * (n - 3) + "1" + ")" * (n - 3) + "};",
        "@%p1 add.u32 %r1, %r2, " + "(" * (n - 1) + "1" + ")" * (n - 1) + ";")),
    *(module("mov.u32 %r1, " + "~" * n + "1;") for n in (4989, 4990)),
    *(module("").replace(".visible", ".global .u32 g = " + "(" * n + "1" + ")" * n + ";\n.visible")
      for n in (9988, 9989)),
], ids=lambda t: f"{t.count('{')}x{{-{t.count('(')}x(-{t.count('~')}x~")
def test_nesting_as_ptxas(text: str) -> None:
    """ptxas's parser stack: 1,663 blocks in a body, about 10,000 parentheses (fewer in deep blocks)."""
    assert ours(text) == ptxas(text.encode(), "sm_90")


#: Opcode words that run on past an instruction's name, and words of cp.async after `.mbarrier`.
MISSPELLED = (
    "mbarrier.test_wait.parityx %p1, [bar], 1;", "mbarrier.test_wait.parityx [bar], 1;", "mbarrier.initx;",
    "mbarrier.initx.b64.foo [bar], 1;", "mbarrier.initx.b64;", "mbarrier.initx [bar], 1;",
    "mbarrier.initx _, 1;", "mbarrier.initx 1;", "cp.async.bulkx [bar], [gbar], 16, [bar];",
    "cp.async.bulk.tensorx [bar], [gbar, {%r1}], [bar];", "mbarrier.initx.x [bar], 1;",
    "mbarrier.arrive_dropx [bar];", "@%p1 mbarrier.initx [bar], 1;", "mbarrier.init1 [bar], 1;",
    "mbarrier.init$ [bar], 1;", "mbarrier.inval_ [bar];", "mbarrier.arrivee.shared.b64 %rd1, [bar];",
    "mbarrier.inits.b64 [bar], 1;", "mbarrier.pending_countx %r1, %rd1;", "mbarrier.init12x [bar], 1;",
    "mbarrier.arrive.expect_txx %rd1, [bar], 1;", "cp.async.mbarrier.arrive_drop [bar];",
    "cp.async.mbarrier.arrive_drop.shared.b64 [bar];", "cp.async.mbarrier.arrivee [bar];",
    "mbarrier.initx [nob], 1;", "mbarrier.test_waitx.parity %p1, [bar], 1;", "mbarrier.initx.shared [bar];",
    # cp.async.mbarrier.WORD, WORD no name of the family: ptxas judges the copy cp.async
    "cp.async.mbarrier.arive.b64 [bar];", "cp.async.mbarrier.arive.noinc.shared.b64 [bar];",
    "cp.async.mbarrier.ariv.shared::cta.b64 [bar];", "cp.async.mbarrier.arive [%rd1];",
    "cp.async.mbarrier.noinc.b64 [bar];", "cp.async.mbarrier.test_wait.b64 %p1, [bar], %rd1;",
    "cp.async.mbarrier [bar];", "cp.async.mbarrier.arive %rd1, [bar];", "cp.async.mbarrier.wait_group 1;",
    "cp.async.mbarrier.ca.shared.global [bar], [gbar], 4;", "cp.async.mbarrier.arive [bar], [gbar], 4, 4;",
    "cp.async.mbarrier.arive.ca [bar], [gbar], 4;",
    "cp.async.mbarrier.ca.shared.global [bar], [gbar], 4, 4, %rd1;",
    "cp.async.mbarrier.ca.shared.global.L2::128B [bar], [gbar], 4;",
    "mbarrier.arrive.mbarrier.shared.b32 %rd1, [bar];",
)


@pytest.mark.parametrize("target,version", [("sm_90", "8.0"), ("sm_80", "7.0"), ("sm_75", "6.3"),
                                            ("sm_100a", "8.6")])
def test_misspelled_opcodes_as_ptxas(target: str, version: str) -> None:
    """One module each: ptxas names no unknown symbol in a file with a fatal error."""
    bad = []
    for body in MISSPELLED:
        text = module(body, target, version)
        if ours(text) != ptxas(text.encode(), target):
            bad.append((body, ours(text), ptxas(text.encode(), target)))
    assert not bad, bad[:3]
