"""The tokenizer (PTX ISA 4: identifiers, constants, comments) and literal values (4.5)."""

from __future__ import annotations

import math

import pytest

from mbarrier.ptx import ast, lexer
from mbarrier.ptx.diagnostics import PtxSyntaxError
from mbarrier.ptx.lexer import BAD, BUILT, DOT, FLOAT, IDENT, INT, PUNCT, STRING, scan, tokenize
from mbarrier.ptx.literals import float_imm, int_value
from mbarrier.ptx.parser import parse


def kinds(text: str) -> list[tuple[int, str]]:
    return [(k, t) for k, t, _, _ in tokenize(text)]


def test_qualifiers_keep_their_double_colons() -> None:
    assert kinds("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes") == [
        (IDENT, "cp"), (DOT, ".async"), (DOT, ".bulk"), (DOT, ".shared::cta"), (DOT, ".global"),
        (DOT, ".mbarrier::complete_tx::bytes")]
    assert kinds(".L2::256B") == [(DOT, ".L2::256B")]


@pytest.mark.parametrize("text,kind", [
    ("%r1", IDENT), ("$L__BB0_2", IDENT), ("_Z1kPi", IDENT), ("_", IDENT), ("%tid", IDENT), ("sm_90a", IDENT),
    ("0f3F800000", FLOAT), ("0D3FF0000000000000", FLOAT), ("1.5", FLOAT), (".5", FLOAT), ("1e-3", FLOAT),
    ("1.", FLOAT), (".2d", DOT), (".2dms", DOT), (".16x64b", DOT), (".5e3", FLOAT), ("0x1F", INT),
    ("0X1fU", INT), ("017", INT), ("0b101", INT), ("7U", INT), ("0", INT),
    ('"nounroll"', STRING), ('"a\\"b"', STRING), ("<<", PUNCT), ("@", PUNCT), ("#", BAD), ("`", BAD),
])
def test_one_token(text: str, kind: int) -> None:
    assert kinds(text) == [(kind, text)]


@pytest.mark.parametrize("text,tokens", [
    ("09", ["0", "9"]),  # not octal: ptxas reports "near '9'"
    ("0xU", ["0", "xU"]),  # ptxas: "near 'xU'"
    ("% r1", ["%", "r1"]),  # a lone % is the modulo operator, not a register
    ("%tid.x", ["%tid", ".x"]),
    ("[%rd1+-4]", ["[", "%rd1", "+", "-", "4", "]"]),
    ("0f3F80000", ["0", "f3F80000"]),  # seven hex digits: not a float
    ("0f3F8000001", ["0f3F800000", "1"]),  # ptxas takes exactly eight
    (".0xparam", [".0", "xparam"]),  # a qualifier starts with a letter, or is a shape such as .2d
    ("._x", [".", "_x"]),
])
def test_splits(text: str, tokens: list[str]) -> None:
    assert [t for _, t in kinds(text)] == tokens


def test_positions_are_one_based_and_survive_comments() -> None:
    toks = tokenize("a /* one\ntwo */ b // c\n\n  \"//x\" d")
    assert [(t, line, col) for _, t, line, col in toks] == [
        ("a", 1, 1), ("b", 2, 8), ('"//x"', 4, 3), ("d", 4, 9)]


def test_unterminated_block_comment() -> None:
    with pytest.raises(PtxSyntaxError) as e:
        tokenize("a\n  /* never closed\nb", "f.ptx")
    (d,) = e.value.diagnostics
    assert (d.severity, d.line, d.column, d.file) == ("fatal", 2, 3, "f.ptx")
    assert "unexpected EOF while scanning" in d.message


def test_non_ascii_even_in_a_comment() -> None:
    """ptxas: "Unexpected non-ASCII character encountered on line N", also inside comments."""
    with pytest.raises(PtxSyntaxError) as e:
        tokenize("a\n// h\u00e9llo\n")
    (d,) = e.value.diagnostics
    assert (d.line, d.column) == (2, 5)
    assert d.message.startswith("Unexpected non-ASCII character encountered on line 2")


def test_scan_builds_plain_instruction_and_declaration_lines() -> None:
    toks, built = scan("{\n\tmov.u32 %r1, %tid.x;\n\tfoo: ret;\n\t@%p1 bra L;\n}")
    assert [t[0] for t in toks].count(BUILT) == 2
    assert [i.text for i in built if isinstance(i, ast.Instruction)] == ["mov.u32", "bra"]
    # a run of such lines is one token: (BUILT, "", the first one's line, how many)
    assert toks[1] == (BUILT, "", 2, 1)
    assert toks[-2] == (BUILT, "", 4, 1)
    toks, built = scan("{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, %tid.x;\n\n// c\n\t@%p1 bra L;\n}")
    assert toks[1] == (BUILT, "", 2, 3) and len(toks) == 3 and len(built) == 3
    assert isinstance(built[0], ast.Declaration) and built[0].names[0].range == 2


def test_scan_takes_any_line_that_looks_like_an_instruction() -> None:
    """scan() does not know the context: `foo;` below is an operand, not an instruction. parse() then
    meets a BUILT token where an operand belongs and starts over without the fast path."""
    text = (".version 8.0\n.target sm_90\n.visible .entry k()\n{\n.reg .b32 %r<3>;\n"
            "add.s32 %r1, %r2,\nfoo;\n}\n")
    _, built = scan(text)
    assert [type(i) for i in built] == [ast.Declaration, ast.Instruction]
    assert isinstance(built[1], ast.Instruction) and built[1].opcode == "foo"
    m = parse(text)
    assert m == parse(text, fast=False)
    body = m.entries[0].body
    assert body is not None and isinstance(body[1], ast.Instruction)
    assert body[1].operands[2] == ast.Name("foo", ast.Pos(7, 1))


@pytest.mark.parametrize("text,value", [
    ("0", 0), ("42", 42), ("0x1F", 31), ("0X1fU", 31), ("017", 15), ("0b101", 5), ("7U", 7), ("-1", -1),
    ("-0x10", -16), ("09", None), ("0x", None),
])
def test_int_value(text: str, value: int | None) -> None:
    assert int_value(text) == value


def test_float_imm() -> None:
    p = ast.Pos(1, 1)
    one = float_imm("0f3F800000", p)
    assert (one.value, one.raw, one.bits) == (1.0, 0x3F800000, 32)
    tenth = float_imm("0d3FB999999999999A", p)
    assert (tenth.value, tenth.bits) == (0.1, 64)
    assert float_imm("-1.5", p).value == -1.5 and float_imm("-1.5", p).bits == 0
    assert math.isnan(float_imm("0f7FC00000", p).value)
    assert float_imm("0fFF800000", p).value == -math.inf


@pytest.mark.parametrize("line", [
    "{", "\t}", " ( ", ")", "$L__BB0_2:", "\t.loc\t1 12 3", ".loc 1 12 3 // c", "\t.b8 95,90,53",
    ".b32 38253", ".b8 0 // c", ".u8 7,0,12", ".s16 5", ".b64 $L__tmp19", ".b8 08", ".b8 1, 2", ".b8 0,0,",
    ".b8 1,0x2", ".loc 1 0x1 2", "L1: ret;",
    "\t.loc\t2 452 10, function_name $L__info_string0, inlined_at 1 29 5",
    ".loc 2 4 1,function_name f,inlined_at 1 2 3 // c", ".loc 2 4 1, function_name f+4, inlined_at 1 2 3",
    ".loc 2 4 1, function_name f, inlined_at 1 2", ".loc 2 4 1, inlined_at 1 2 3",
])
def test_shortcut_lines_give_the_general_tokens(line: str) -> None:
    """The lines the scanner takes the short way (`.loc`, labels, lone braces, section data) get
    exactly the tokens the general pattern gives, and any other line goes to it."""
    assert lexer._shortcut_or_tokens(line, 4) == lexer._line_tokens(line, 4)
