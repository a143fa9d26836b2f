"""The fast path for the common lines: one whole instruction with plain operands, or one plain
declaration, as tools emit them.

`mov.u32 %r1, %tid.x;`, `@%p1 bra $L__BB0_2;`, `ld.global.f32 %f1, [%rd3+156];`, `.reg .b32 %r<9>;` ...
are split by string methods or one regular expression and built straight into an ast.Instruction or
ast.Declaration, skipping the token stream. Anything the patterns do not cover (expressions, `p|q`,
parenthesised lists, two statements on one line, an instruction split over lines, initializers) goes
through the general lexer and parser, which build the same tree; tests/ptx/test_parser_fastpath.py
checks that both paths agree.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Final

from mbarrier.ptx import ast
from mbarrier.ptx.literals import float_imm, int_value
from mbarrier.spec.forms import VARIABLE_TYPES, VECTORS

NAME = r"(?:[A-Za-z][\w$]*|[_$%][\w$]+)"  # an identifier (PTX ISA 4.3), as in lexer.py's _TOKEN
_IDENT = rf"(?:{NAME}|_)"  # or the sink
_PAIR = rf"{NAME}\|{NAME}"  # `%r1|%p1` of setp, shfl
# An instruction's head: the opcode (group 1) and its qualifiers (group 2)
_HEAD_TEXT = (r"([a-z][a-z0-9_]*)"
              r"((?:\.[A-Za-z][\w$]*(?:::[\w$]+)*|\.[0-9]+(?:d(?:ms)?|x[0-9]+b(?:x[0-9]+)?)(?![\w$]))*)")
_NAME = rf"{_IDENT}(?:\.[xyzw](?![\w$]))?"
_INT = r"-?(?:0[xX][0-9A-Fa-f]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)U?(?![\w$.])"
_FLT = r"(?:0[fF][0-9A-Fa-f]{8}|0[dD][0-9A-Fa-f]{16})(?![\w$])"
_ITEM = rf"(?:{_FLT}|{_INT}|{_NAME})"
_ADDR = rf"\[[ \t]*(?:{NAME}(?:[ \t]*\+[ \t]*{_INT})?|{_INT})[ \t]*\]"  # (the sink is no address)
_VEC = rf"\{{[ \t]*{_ITEM}(?:[ \t]*,[ \t]*{_ITEM})*[ \t]*\}}"
_NOT = rf"!{NAME}"  # `!p`: a name alone (ptxas reads `!` before anything else as a constant expression)
_OP = rf"(?:{_ADDR}|{_VEC}|{_NOT}|{_ITEM})"

# (a `p|q` pair only as the first operand, as in ptxas)
LINE: Final = re.compile(
    rf"[ \t]*(?:(@)(!?)({_IDENT})[ \t]+)?{_HEAD_TEXT}"
    rf"(?:[ \t]+((?:{_PAIR}|{_OP})(?:[ \t]*,[ \t]*{_OP})*))?"
    r"[ \t]*;[ \t]*(?://.*)?"
)
LINE_MATCH: Final = LINE.fullmatch

# A plain declaration on a line of its own, as tools emit them: `.reg .b32 %r<12>;`,
# `.shared .align 8 .b64 bar;`, `.local .align 16 .b8 buf[64];`, names with `<N>` or `[N]...`, no
# initializer, linkage or `.align` before the space (the general parser takes those).
_DECIMAL = r"(?:0|[1-9][0-9]*)"
_DECLARATOR = rf"{NAME}(?:<{_DECIMAL}>|(?:\[{_DECIMAL}\])*)"
_DECLARATION: Final = re.compile(
    rf"[ \t]*(\.reg|\.shared|\.local|\.const|\.global|\.param)(?:[ \t]+\.align[ \t]+({_DECIMAL}))?"
    rf"(?:[ \t]+(\.v[24]))?[ \t]+(\.[a-z0-9]+)[ \t]+({_DECLARATOR}(?:[ \t]*,[ \t]*{_DECLARATOR})*)"
    r"[ \t]*;[ \t]*(?://.*)?"
).fullmatch
# `.loc F L C` (PTX ISA 11.6, debugging directives), and the inlined form -lineinfo writes for most lines:
# `.loc F L C, function_name label[+n], inlined_at F L C`; every token a group.
_DEC = r"(0|[1-9][0-9]*)"
_LOC: Final = re.compile(
    rf"[ \t]*(\.loc)[ \t]+{_DEC}[ \t]+{_DEC}[ \t]+{_DEC}(?:[ \t]*(,)[ \t]*(function_name)[ \t]+"
    rf"({NAME})(?:[ \t]*(\+)[ \t]*{_DEC})?[ \t]*(,)[ \t]*(inlined_at)[ \t]+{_DEC}[ \t]+{_DEC}[ \t]+{_DEC})?"
    r"[ \t]*(?://.*)?").fullmatch
_DECLARATORS: Final = re.compile(r"([^\s,<\[]+)(?:<([0-9]+)>|((?:\[[0-9]+\])*))").finditer
_DIMS: Final = re.compile(r"[0-9]+").findall

# One operand of the operand text of a line with vectors: an address, a vector (group 1) or an item.
_OPERAND: Final = re.compile(rf"{_ADDR}|(\{{[^}}]*\}})|{_PAIR}|{_NOT}|{_ITEM}")
_OPERANDS: Final = _OPERAND.finditer
_ITEMS: Final = re.compile(_ITEM).finditer

# The same lines, found in cheaper steps: string methods split a line into guard, head and operand
# text (scan() below); then the head (`opcode.quals`), the guard and each operand are checked against
# LINE's parts, each distinct text once (the dictionaries below remember the verdicts). Lines with
# braces take LINE itself.
_TAIL: Final = re.compile(r"[ \t]*(?://.*)?").fullmatch  # what may follow the `;`
_HEAD: Final = re.compile(_HEAD_TEXT).fullmatch
# (a `p|q` pair stands only first, but a piece's verdict does not know its place: scan() checks)
_PIECE: Final = re.compile(rf"{_ADDR}|{_PAIR}|{_NOT}|{_ITEM}").fullmatch
_PRED: Final = re.compile(_IDENT).fullmatch
_NAME_ONLY: Final = re.compile(_NAME).fullmatch
_CACHE_MAX: Final = 1 << 16  # real modules have tens of thousands of distinct register names at most

# What the operand loop needs to build an operand from its text between commas, blanks included:
# (kind, text, blanks before it, its length plus the comma, base name of an address, value or offset,
# unsigned or the base's column relative to the `[`).
_Piece = tuple[int, str, int, int, str | None, int, int]
_K_NAME, _K_IMM, _K_ADDRESS, _K_OTHER, _K_BAD = 0, 1, 2, 3, 4
_heads: dict[str, tuple[str, tuple[str, ...]]] = {}  # opcode "" for a head LINE does not accept
_guards: dict[str, tuple[str, bool]] = {}  # `@!%p1` -> ("%p1", True); ("", False): not a plain guard
_pieces: dict[str, _Piece] = {}
_pairs: list[tuple[int, int]] = []  # (line, column) of each `p|q` pair built (see _pairs_first)

Token = tuple[int, str, int, int]  # as in lexer.py
# The token kind of a run of lines that the fast path built, each one statement (one of lexer.py's token
# kinds): (BUILT, "", the first one's line, how many statements).
BUILT: Final = 10

Pos = ast.Pos
Name = ast.Name
Imm = ast.Imm
Address = ast.Address
Guard = ast.Guard
Instruction = ast.Instruction
_new = tuple.__new__  # builds a node in C from a tuple of its flat fields (ast.py's nodes are named tuples)


class _NotPlain(Exception):
    """An integer the pattern accepted but that has no value (`09` is not octal): leave the line to the
    general parser, which reports it."""


def _int(text: str) -> int:
    v = int_value(text)
    if v is None:
        raise _NotPlain
    return v


def _head(head: str) -> tuple[str, tuple[str, ...]]:
    m = _HEAD(head)
    out: tuple[str, tuple[str, ...]] = ("", ())
    if m is not None:
        quals = m.group(2)
        out = m.group(1), tuple("." + x for x in quals[1:].split(".")) if quals else ()
    if len(_heads) > _CACHE_MAX:  # fuzzed input has no end of spellings
        _heads.clear()
    _heads[head] = out
    return out


def _guard(word: str) -> tuple[str, bool]:
    negated = word[1:2] == "!"
    pred = word[1 + negated:]
    # (the sink `_` is no predicate: the general parser says so)
    out = (pred, negated) if pred != "_" and _PRED(pred) is not None else ("", False)
    if len(_guards) > _CACHE_MAX:
        _guards.clear()
    _guards[word] = out
    return out


def _piece(piece: str) -> _Piece:
    text = piece.strip(" \t")
    lead = len(piece) - len(piece.lstrip(" \t"))
    advance = len(piece) + 1
    out: _Piece = (_K_BAD, text, lead, advance, None, 0, 0)
    if _NAME_ONLY(text) is not None and text != "_":  # most pieces: a register or a symbol
        out = (_K_NAME, text, lead, advance, None, 0, 0)
    elif _PIECE(text) is not None:
        c = text[0]
        if c == "[":
            base, delta, offset = _address_parts(text)
            if offset is not None:
                out = (_K_ADDRESS, text, lead, advance, base, offset, delta)
        elif c in "0123456789-":
            if text[1:2] in ("f", "F", "d", "D"):
                out = (_K_OTHER, text, lead, advance, None, 0, 0)
            else:
                value = int_value(text)
                if value is not None:
                    out = (_K_IMM, text, lead, advance, None, value, text[-1] == "U")
        elif c == "!" or text == "_" or "|" in text:
            out = (_K_OTHER, text, lead, advance, None, 0, 0)
        else:
            out = (_K_NAME, text, lead, advance, None, 0, 0)
    if len(_pieces) > _CACHE_MAX:
        _pieces.clear()
    _pieces[piece] = out
    return out


def instruction(line: str, lineno: int) -> ast.Instruction | None:
    """The instruction on `line` if the whole line is one plain instruction, else None."""
    built: list[ast.Statement] = []
    scan([line], _no_tokens, built, lineno)
    return built[0] if built and isinstance(built[0], ast.Instruction) else None


def _no_tokens(line: str, lineno: int) -> list[Token]:
    return []


def plain_instruction(line: str, lineno: int) -> ast.Instruction | None:
    """The instruction on `line` if the whole line is one plain instruction (`[@[!]p] head [operands] ;`
    and maybe a `//` comment), else None. The parser's innermost step; _plainline.c does the same in C."""
    body, semi, tail = line.partition(";")
    if not semi or (tail and _TAIL(tail) is None):
        return None
    # blanks anywhere between the parts: `rest` starts at the head, and each part's column is where it
    # starts in `body` (split keeps a remainder's end)
    rest = body.lstrip()
    guard = None
    if rest[:1] == "@":
        at = len(body) - len(rest) + 1
        word, rest = (rest.split(None, 1) + [""])[:2]
        g = _guards.get(word) or _guard(word)
        if not g[0] or not rest:
            return None
        guard = _new(Guard, (g[0], g[1], lineno, at))
    words = rest.split(None, 1)
    if not words:
        return None
    column = len(body) - len(rest) + 1
    head = words[0]
    oq = _heads.get(head) or _head(head)
    opcode = oq[0]
    if not opcode:
        return None
    if len(words) == 1:
        return _new(Instruction, (opcode, oq[1], (), guard, lineno, column))
    ops = words[1]
    operands: list[ast.Operand] = []
    append = operands.append
    col = len(body) - len(ops) + 1
    for piece in ops.split(","):
        e = _pieces.get(piece) or _piece(piece)
        k = e[0]
        if k == _K_NAME:  # the common case
            append(_new(Name, (e[1], lineno, col + e[2])))
        elif k == _K_IMM:
            append(_new(Imm, (e[5], e[1], lineno, col + e[2], e[6] == 1)))
        elif k == _K_ADDRESS:
            start = col + e[2]
            b = e[4]
            base = None if b is None else _new(Name, (b, lineno, start + e[6]))
            append(_new(Address, (base, e[5], lineno, start, ())))
        elif k == _K_OTHER:
            op = _other_piece(e[1], lineno, col + e[2])
            if op is None:
                return None
            append(op)
        else:
            return None
        col += e[3]
    return _new(Instruction, (opcode, oq[1], tuple(operands), guard, lineno, column))


def _other_piece(text: str, lineno: int, col: int) -> ast.Operand | None:
    """`!p`, the sink, a float bit pattern or a `p|q` pair; None for an integer with no value."""
    try:
        if text[0] == "!":
            return _new(ast.Not, (_single(text[1:], lineno, col + 1), lineno, col))
        if "|" in text:
            if len(_pairs) > _CACHE_MAX:  # (calls outside scan() do not clear it)
                del _pairs[:]
            _pairs.append((lineno, col))
        return _single(text, lineno, col)
    except _NotPlain:
        return None


# plain_instruction in C where the package was built with a C compiler (setup.py) and the environment
# does not ask for the Python version (MBARRIER_PURE_PYTHON=1: tests and bench/parse.py compare the two).
PLAIN: Callable[[str, int], ast.Instruction | None] = plain_instruction
ACCELERATED = False
if os.environ.get("MBARRIER_PURE_PYTHON", "") in ("", "0"):
    try:
        from mbarrier.ptx import _plainline
    except ImportError:
        pass
    else:
        _plainline.configure(_heads, _guards, _pieces, _head, _guard, _piece, _other_piece, plain_instruction,
                             Instruction, Name, Imm, Address, Guard)
        PLAIN = _plainline.plain_instruction
        ACCELERATED = True


def scan(lines: list[str], other: Callable[[str, int], list[Token]], built: list[ast.Statement],
         first: int = 1) -> list[Token]:
    """The tokens of `lines` (numbered from `first`). Each line that is one plain instruction or
    declaration has its statement appended to `built`, and each run of such lines (blank and comment
    lines between them give nothing) becomes one BUILT token; every other line gives other(line, lineno).
    One pass over the module."""
    tokens: list[Token] = []
    keep = built.append
    plain = PLAIN
    del _pairs[:]
    run = 0  # statements built since the last token
    for lineno, line in enumerate(lines, first):
        if not line:
            continue
        insn = plain(line, lineno)
        if insn is not None:
            keep(insn)
            run += 1
            continue
        s = line.lstrip()
        if not s or s[:2] == "//":
            continue
        stmt = _other_statement(line, s, lineno)
        if stmt is not None:
            keep(stmt)
            run += 1
            continue
        if run:
            tokens.append((BUILT, "", built[-run].line, run))
            run = 0
        tokens.extend(other(line, lineno))
    if run:
        tokens.append((BUILT, "", built[-run].line, run))
    if _pairs and not _pairs_first(lines, first):
        # a syntax error: the plain tokens of every line, for the general parser's diagnostic
        del built[:]
        tokens = []
        for lineno, line in enumerate(lines, first):
            if line.strip():
                tokens.extend(other(line, lineno))
    return tokens


def _pairs_first(lines: list[str], first: int) -> bool:
    """Is each `p|q` pair built since the scan began its instruction's first operand (what ptxas takes)?
    A piece's verdict does not know its place, so _other_piece notes where it built each pair: the first
    operand follows the opcode's blanks, a later one a comma."""
    for lineno, col in _pairs:
        if lines[lineno - first][:col - 1].rstrip()[-1:] == ",":
            return False
    return True


def _other_statement(line: str, s: str, lineno: int) -> ast.Statement | None:
    """The statement of a line (`s`: the line without its leading blanks) that is one plain declaration,
    `.loc` directive or instruction with a vector operand, else None. (Not labels: a `.section` holds
    label lines too, and the parser reads its tokens.)"""
    if s[0] == ".":
        m = _LOC(line) if s[:4] == ".loc" else None  # (or `.local`)
        if m is not None:
            # the args are the directive's token texts, as the general parser keeps them
            return _new(ast.Directive, (".loc", tuple(filter(None, m.groups()[1:])), lineno, m.start(1) + 1))
        d = _DECLARATION(line)
        return None if d is None else _declaration(d, lineno)
    if "{" in line:  # a vector operand (its pieces are no plain operands): LINE decides
        full = LINE_MATCH(line)
        if full is not None:
            try:
                return _build(full, lineno)
            except _NotPlain:
                return None
    return None


def _build(m: re.Match[str], lineno: int) -> ast.Instruction:
    """The instruction LINE matched (a line with a vector operand)."""
    at, bang, pred, opcode, quals, ops = m.groups()
    q = tuple("." + x for x in quals[1:].split(".")) if quals else ()
    guard = None
    if at is not None:
        if pred == "_":  # the sink is no predicate: the general parser reports it
            raise _NotPlain
        guard = ast.Guard(pred, bang == "!", Pos(lineno, m.start(1) + 1))
    return ast.Instruction(opcode, q, _with_vectors(ops, lineno, m.start(6) + 1), guard,
                           Pos(lineno, m.start(4) + 1))


def _declaration(m: re.Match[str], lineno: int) -> ast.Declaration | None:
    """The declaration _DECLARATION matched, or None when its type is no type."""
    space, align, vector, type_, names = m.groups()
    if type_ not in VARIABLE_TYPES:
        return None
    start = m.start(5) + 1
    declarators = tuple(
        _new(ast.Declarator, (d[1], tuple(map(int, _DIMS(d[3]))) if d[3] else (),
                              None if d[2] is None else int(d[2]), None, lineno, start + d.start()))
        for d in _DECLARATORS(names))
    return _new(ast.Declaration, (space, type_, declarators, lineno, m.start(1) + 1,
                                  None if align is None else int(align),
                                  None if vector is None else VECTORS[vector], None, ()))


def _single(text: str, lineno: int, col: int) -> ast.Operand:
    """A name, the sink, an integer, a float bit pattern or a `p|q` pair."""
    c = text[0]
    if c in "0123456789-":
        if text[1:2] in ("f", "F", "d", "D"):
            return float_imm(text, Pos(lineno, col))
        return Imm(_int(text), text, Pos(lineno, col), text[-1] == "U")
    if text == "_":
        return ast.Sink(Pos(lineno, col))
    if "|" in text:
        return ast.Expr(text, None, Pos(lineno, col))
    return Name(text, Pos(lineno, col))



def _address_parts(text: str) -> tuple[str | None, int, int | None]:
    """`[base+offset]` as (base or None, the base's column relative to the `[`, offset or None when it has
    no value)."""
    inner = text[1:-1]
    body = inner.lstrip()
    lead = len(inner) - len(body)
    if body[0] in "0123456789-":
        return None, 0, int_value(body.rstrip())
    plus = body.find("+")
    if plus < 0:
        return body.rstrip(), 1 + lead, 0
    return body[:plus].rstrip(), 1 + lead, int_value("".join(body[plus + 1:].split()))


def _address(text: str, lineno: int, col: int) -> ast.Address:
    base, delta, offset = _address_parts(text)
    if offset is None:
        raise _NotPlain
    return Address(None if base is None else Name(base, Pos(lineno, col + delta)), offset, Pos(lineno, col))


def _with_vectors(ops: str, lineno: int, base_col: int) -> tuple[ast.Operand, ...]:
    """The operands of a line with a `{...}` vector, found by _OPERAND."""
    operands: list[ast.Operand] = []
    for o in _OPERANDS(ops):
        col = o.start() + base_col
        if o.lastindex == 1:
            vcol = o.start(1) + base_col
            items = tuple(_single(i.group(), lineno, vcol + i.start()) for i in _ITEMS(o.group(1)))
            operands.append(ast.Vector(items, Pos(lineno, col)))
        else:
            text = o.group()
            if text[0] == "[":
                operands.append(_address(text, lineno, col))
            elif text[0] == "!":
                operands.append(ast.Not(_single(text[1:], lineno, col + 1), Pos(lineno, col)))
            else:
                operands.append(_single(text, lineno, col))
    return tuple(operands)
