"""An opcode word that runs on past the name of an instruction of the family (`mbarrier.inits`,
`cp.async.mbarrier.arrive_drop`, `mbarrier.try_waitx`): ptxas's lexer reads the longest name it
knows as one token (`mbarrier.init`) and the rest of the word as the start of the operands (`s`),
then judges what that makes (measured with ptxas 13.0):

- the rest is an identifier: with a modifier after it, that is a field of the identifier ("Unknown
  field '.b64'", or a syntax error near a directive word such as `.shared`), and whatever follows
  the field is a syntax error; else the identifier and a first operand `[...]` are an element of an
  array ("Array indexing on non-array"), any other first operand is a syntax error; the
  identifier is an unknown symbol; the instruction is judged with these operands and no modifier;
- the rest starts with a digit (an integer) or is `_` (the sink): a syntax error at the next token;
  a character that starts no token (`$`): a syntax error there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mbarrier.ptx import ast
from mbarrier.ptx.operands import _RESERVED
from mbarrier.spec.instructions import INSTRUCTIONS_BY_PATH

_IDENTIFIER = re.compile(r"[A-Za-z][\w$]*|[_$%][\w$]+")


@dataclass(frozen=True, slots=True)
class Split:
    """The instruction as ptxas reads it: `path` its name, `rest` what the word has past the name."""

    path: tuple[str, ...]
    rest: str
    after: tuple[str, ...]
    """The modifiers written after the word."""


def split_opcode(instr: ast.Instruction) -> Split | None:
    words = (instr.opcode, *instr.qualifiers)
    best: Split | None = None
    for path in INSTRUCTIONS_BY_PATH:
        n = len(path)
        if n < 2 or len(words) < n or words[:n - 1] != path[:n - 1]:
            continue
        word = words[n - 1]
        if word != path[-1] and word.startswith(path[-1]) and (
                best is None or (n, len(word) - len(path[-1])) > (len(best.path), -len(best.rest))):
            best = Split(path, word[len(path[-1]):], words[n:])
    if best is None or best.path[:-1] + (best.path[-1] + best.rest,) in INSTRUCTIONS_BY_PATH:
        return None
    return best


def _first_token(op: ast.Operand) -> str:
    if isinstance(op, ast.Address | ast.Vector):
        return "[" if isinstance(op, ast.Address) else "{"
    if isinstance(op, ast.Imm | ast.FloatImm):
        return op.text
    if isinstance(op, ast.Sink):
        return "_"
    if isinstance(op, ast.Name):
        return op.name
    if isinstance(op, ast.Not):
        return "!"
    if isinstance(op, ast.Expr):
        return re.split(r"(?<=\w)(?=\W)|(?<=\W)", op.text, maxsplit=1)[0] or op.text[:1]
    return "("


@dataclass(frozen=True, slots=True)
class Reading:
    """What ptxas makes of a split instruction: its fatal syntax error's token, or the errors before
    it ("Unknown field", "Array indexing"), the unknown identifier and the instruction to judge."""

    near: str | None
    field: str | None
    indexed: bool
    identifier: str | None
    judged: ast.Instruction | None


def read(instr: ast.Instruction, split: Split) -> Reading:
    rest, after, ops = split.rest, split.after, instr.operands
    nxt = (after[0] if after else _first_token(ops[0]) if ops else ";")
    m = _IDENTIFIER.match(rest)
    if m is None or m.end() != len(rest):
        # an integer or the sink, then the next token; or a character no token starts with
        start = re.match(r"0[xX][0-9A-Fa-f]+|[0-9]+|_", rest)
        if start is None:
            return Reading(rest[:1], None, False, None, None)
        tail = rest[start.end():]
        return Reading(tail[:1] if tail else nxt, None, False, None, None)
    if after:
        if after[0] in _RESERVED:
            return Reading(after[0], None, False, None, None)
        if len(after) > 1 or ops:
            return Reading(after[1] if len(after) > 1 else _first_token(ops[0]), after[0], False, None, None)
        name = ast.Name(rest, instr.pos)
        return Reading(None, after[0], False, rest, _judged(instr, split, (name,)))
    if not ops:
        return Reading(None, None, False, rest, _judged(instr, split, (ast.Name(rest, instr.pos),)))
    if not isinstance(ops[0], ast.Address):
        return Reading(_first_token(ops[0]), None, False, None, None)
    element = ast.Expr(rest + "[...]", None, instr.pos)
    return Reading(None, None, True, rest, _judged(instr, split, (element, *ops[1:])))


def _judged(instr: ast.Instruction, split: Split, ops: tuple[ast.Operand, ...]) -> ast.Instruction:
    return instr._replace(opcode=split.path[0], qualifiers=split.path[1:], operands=ops)
