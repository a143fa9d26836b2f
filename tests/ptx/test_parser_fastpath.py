"""The line fast path (fastpath.py) builds exactly the tree the general parser builds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mbarrier.ptx import ast, fastpath, lexer
from mbarrier.ptx.diagnostics import PtxSyntaxError
from mbarrier.ptx.parser import _Parser, parse

MODULES = sorted((Path(__file__).parent / "modules").glob("*.ptx"))

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"


def parse_result(text: str, fast: bool) -> object:
    """The module, or the diagnostics when it does not parse."""
    try:
        return parse(text, fast=fast)
    except PtxSyntaxError as e:
        return e.diagnostics


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_same_tree_on_real_modules(path: Path) -> None:
    text = path.read_text()
    assert parse(text, fast=True) == parse(text, fast=False)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_fast_path_needs_no_second_pass_on_real_modules(path: Path) -> None:
    """parse() starts over without the fast path where the parser cannot take its BUILT tokens: that
    must not happen on what tools emit (it would double the time)."""
    text = path.read_text()
    tokens, built = lexer.scan(text)
    assert built
    assert _Parser(tokens, built, text, "<input>").module() == parse(text, fast=False)


LINES = [
    "\tmov.u32 \t%r1, %tid.x;",
    "\t@%p1 bra \t$L__BB0_2;",
    "@!%p2 bra.uni L;",
    "\tld.global.f32 \t%f3016, [%rd3+156];",
    "st.shared.u32 [%r1+-4], %r2; // trailing",
    "st.shared.u32 [%r1 + 0x10], %r2;",
    "ld.shared.u32 %r2, [sym];",
    "ld.shared.u32 %r2, [1024];",
    "ld.shared.u32 %r2, [-8];",
    "mov.f32 %f1, 0f3F800000;",
    "mov.f64 %fd1, 0dBFF0000000000000;",
    "mov.u32 %r1, 0x7fffU;",
    "mov.u32 %r1, 017;",
    "mov.u32 %r1, 0b101;",
    "mov.u32 %r1, -1;",
    "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r6];",
    "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%r9], [%rd8], %r13, [%r11];",
    "mov.b64 {%r1, %r2}, %rd1;",
    "mov.b64 %rd1, {%r1,_};",
    "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];",
    "selp.u32 %r1, 1, 0, !%p1;",
    "exit;",
    "bar.sync 0;",
    "shfl.sync.bfly.b32 %r28|%p6, %r24, %r26, %r25, %r27;",
    "mov.b64 {%r1, %r2}, %rd1; // and a p|q pair: setp.lt.s32 %p1|%p2",
    "mov.b32 %r1, %r2; // mov.b32 %r1, %r2|%p1;",
]


@pytest.mark.parametrize("line", LINES)
def test_same_tree_per_line(line: str) -> None:
    text = HEADER + ".reg .b32 %r<3>;\n" + line + "\n}\n"
    assert fastpath.instruction(line, 1) is not None, "the fast path should take this line"
    fast, slow = parse(text, fast=True), parse(text, fast=False)
    assert fast == slow
    body = fast.entries[0].body
    assert body is not None and isinstance(body[1], ast.Instruction)


@pytest.mark.parametrize("line", [
    "setp.eq.s32 %p1 | %p2, %r1, 1;",  # blanks around `|`
    "mov.u32 %r1, 09;",  # not octal: the general parser reports it
    "mov.f32 %f1, -0f3F800000;",  # ptxas does not negate a hex float
    "st.shared.u32 [%r1 - 0x10], %r2;",  # nor take `[reg-imm]`
    "mov.f32 %f1, 1.5;",  # decimal float
    "add.u32 %r1, %r2, (1<<3);",  # expression
    "call.uni (retval0), f, (param0);",
    "mov .u32 %r1, 1;",  # a blank before a qualifier
    "ld.shared.u32 %r2, [sym+4+4];",
    "mov.u32 %r1, %r2; mov.u32 %r2, %r1;",  # two statements on one line
    "L1: mov.u32 %r1, %r2;",
    "mov.u32 %r1, %;",  # a lone % is no register
    "@_ bra L;",  # the sink is no predicate
    # a p|q pair stands only first (ptxas)
    "mov.b32 %r1,%r2|%p1;", "mov.b32 %r1, %r2|%p1;", "shfl.sync.bfly.b32 %r28|%p6, %r24|%p1, %r26, %r25, 1;",
    "selp.u32 %r1, 1, 0, !_;",  # `!` takes a name alone
    "selp.u32 %r1, 1, 0, !%p1.x;",
    "selp.u32 %r1, 1, 0, !1;",  # (a constant expression)
    "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}|%p1, [%rd1, {%f1, %f2}];",
])
def test_fast_path_declines(line: str) -> None:
    assert fastpath.instruction(line, 1) is None


# `.loc` lines (PTX ISA 11.6, debugging directives), which the fast path builds too
LOC_LINES = [
    "\t.loc\t1 12 3", ".loc 1 12 3 // c",
    "\t.loc\t2 452 10, function_name $L__info_string0, inlined_at 1 29 5",
    ".loc 2 4 1,function_name f,inlined_at 1 2 3 // c", ".loc 2 4 1, function_name f + 4, inlined_at 1 2 3",
    ".loc 1 12 3 // c;", ".loc 0 0 0",
]


@pytest.mark.parametrize("line", LOC_LINES)
def test_same_loc_both_ways(line: str) -> None:
    text = HEADER + line + "\nret;\n}\n"
    assert parse(text, fast=True) == parse(text, fast=False)
    _, built = lexer.scan(line)
    assert len(built) == 1 and isinstance(built[0], ast.Directive), "the fast path should take this line"


@pytest.mark.parametrize("line", [
    ".loc 1 0x1 2", ".loc 2 4 1, function_name f, inlined_at 1 2", ".loc 2 4 1, inlined_at 1 2 3",
    ".loc 01 2 3", ".loc 1 2", ".loc 1 2 3 4", ".local .b8 x;", ".locx 1 2 3",
])
def test_fast_path_leaves_other_loc_like_lines(line: str) -> None:
    _, built = lexer.scan(line)
    assert not any(isinstance(b, ast.Directive) for b in built)


def test_loc_in_a_module_with_a_section() -> None:
    """`.loc` lines in a body and label lines in a `.section` (which the parser reads as tokens): one
    pass of the fast path, the same tree as the general parser."""
    text = (HEADER + ".loc 1 2 3\nL1:\nret;\n}\n.section .debug_str\n{\n$L__info_string0:\n.b8 95,0\n}\n")
    tokens, built = lexer.scan(text)
    assert _Parser(tokens, built, text, "<input>").module() == parse(text, fast=False)


@pytest.mark.parametrize("blank", ["\v", "\x1c", "\x1d", "\x1e", "\x1f", "\f"])
def test_characters_str_split_takes_for_blanks(blank: str) -> None:
    """str.split() (the fast path's) splits at these; ptxas 13.0 stops with a syntax error at all but the
    form feed: both paths give the general tokens' verdict."""
    text = HEADER + ".reg .b32 %r<3>;\n" + f"mov.u32{blank}%r1, 1;\nret;\n}}\n"
    assert parse_result(text, fast=True) == parse_result(text, fast=False)
    assert isinstance(parse_result(text, fast=False), ast.Module) == (blank == "\f")


DECLARATIONS = [
    "\t.reg .b32 \t%r<12>;",
    ".reg .pred %p<3>;",
    "  .shared .align 8 .b64 bar;",
    ".shared .align 16 .b8 buf[1024];",
    ".local .align 4 .b8 __local_depot0[8][2]; // trailing",
    ".reg .v4 .f32 v;",
    ".reg .b32 a, b<2>, c[4];",
    ".param .b64 param0;",
    ".const .align 4 .u32 table[16];",
    ".global .align 4 .b8 g[4];",
]


@pytest.mark.parametrize("line", DECLARATIONS)
def test_same_declaration_both_ways(line: str) -> None:
    """In a body, and at module level (where the parser takes a run of built declarations too)."""
    for text in (HEADER + line + "\n}\n", HEADER.replace(".visible", line + "\n.visible") + "}\n"):
        fast, slow = parse(text, fast=True), parse(text, fast=False)
        assert fast == slow
    assert len(fast.declarations) == 1
    _, built = lexer.scan(line)
    assert len(built) == 1 and isinstance(built[0], ast.Declaration), "the fast path should take this line"


@pytest.mark.parametrize("line", [
    ".global .u32 g = 5;",  # an initializer
    ".extern .shared .align 16 .b8 smem[];",  # linkage, and `[]`
    ".align 8 .shared .b64 bar;",  # .align before the space
    ".shared .b8 buf[0x10];",  # not a decimal size
    ".reg .b32 _;",  # the sink is no name
    ".reg .q32 %r<2>;",  # no such type
    ".reg .b32 %r<2>; .reg .b32 %q<2>;",  # two on one line
    ".reg .b32 %r<2>",  # no `;`
])
def test_fast_path_declines_declarations(line: str) -> None:
    _, built = lexer.scan(line)
    assert built == []
    text = HEADER + line + "\n}\n"
    assert parse_result(text, True) == parse_result(text, False)


def test_built_lines_where_no_statement_stands() -> None:
    """A declaration line inside a parameter list, an instruction line at module level: the parser
    cannot take the built statements there and parses the plain way, with the same result."""
    for text in (".version 8.0\n.target sm_90\n.visible .entry k(\n.reg .b32 x;\n)\n{\nret;\n}\n",
                 ".version 8.0\n.target sm_90\nret;\n"):
        assert parse_result(text, True) == parse_result(text, False)


def test_windows_line_ends() -> None:
    text = (Path(__file__).parent / "modules" / "cluster.sm_90.ptx").read_text()
    crlf = parse(text.replace("\n", "\r\n"))
    assert crlf.functions == parse(text).functions


_OPERAND_PIECES = ["%r1", "%rd2", "%p1", "_", "%tid.x", "%tid.q", "sym", "$L1", "%", "1", "-1", "0x1F", "017",
                   "09", "7U", "0b1", "0f3F800000", "0d3FF0000000000000", "1.5", "[%r1]", "[%r1+4]",
                   "[%r1+-4]", "[%r1-4]", "[sym+0x10]", "[8]", "[-8]", "[]", "{%r1, %r2}", "{%r1,_}", "{}",
                   "!%p1", "!1", "%p1|%p2", "sym+4", "(1)", "-%r1", " ", ""]


@settings(max_examples=int(os.environ.get("FUZZ_N", "300")), deadline=None,
          derandomize="FUZZ_N" not in os.environ)
@given(st.sampled_from(["mov", "ld", "mbarrier", "cp", "bra", "x_1"]),
       st.lists(st.sampled_from([".u32", ".shared::cta", ".mbarrier::complete_tx::bytes", ".2d", ".16x64b",
                                 ".x", "._x", ".5", ".b"]), max_size=4),
       st.lists(st.sampled_from(_OPERAND_PIECES), max_size=4),
       st.sampled_from(["", "@%p1 ", "@!%p1 ", "@_ ", "@ %p1 "]), st.sampled_from([";", " ;", "; // c", ""]))
def test_generated_lines_same_both_ways(opcode: str, quals: list[str], ops: list[str], guard: str,
                                        end: str) -> None:
    """Instruction lines made of the pieces both paths care about: same tree or same diagnostic."""
    line = "\t" + guard + opcode + "".join(quals) + (" " + ", ".join(ops) if ops else "") + end
    text = HEADER + ".reg .b32 %r<3>;\n" + line + "\n}\n"
    assert parse_result(text, True) == parse_result(text, False)
