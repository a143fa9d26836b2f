"""A cursor over the token list with the error helpers every part of the parser uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from mbarrier.ptx.diagnostics import Diagnostic, PtxSyntaxError
from mbarrier.ptx.lexer import EOF, IDENT, INT, PUNCT, STRING, Token
from mbarrier.ptx.literals import int_value
from mbarrier.spec.forms import SYNTAX

# ptxas's parser has a stack of 10,000 entries; nesting that fills it is a fatal "Parsing error near
# 'x': memory exhausted" (measured with ptxas 13.0). What each construct costs there, and what stands
# on it before an expression, was measured on the shapes named: a `{` block 6 entries (1,663 nested
# blocks in a body parse, the 1,664th fails), `(` 1, a unary operator 2, the left side and operator
# of a binary one 2; before an instruction's operand 20 (21 after a guard), a vector's element 23,
# an address's offset 24, an immediate address 21, an initializer's value 10.
T = TypeVar("T")
PARSER_STACK = 10_000
BLOCK_COST = 6
MAX_BLOCKS = 1663
OPERAND_BASE, GUARDED_BASE, VECTOR_BASE, OFFSET_BASE, ADDRESS_BASE, INIT_BASE = 20, 21, 23, 24, 21, 10


class Cursor:
    def __init__(self, tokens: list[Token], end: tuple[int, int], path: str) -> None:
        tokens.append((EOF, "", end[0], end[1]))
        self.toks = tokens
        self.i = 0
        self.path = path
        self.depth = 0  # entries of ptxas's parser stack the open parts of the expression take
        self.blocks = 0  # `{` blocks open in the function body
        self.base = OPERAND_BASE  # entries below the expression being parsed (see PARSER_STACK)

    def fatal(self, message: str, tok: Token | None = None) -> PtxSyntaxError:
        t = self.toks[self.i] if tok is None else tok
        return PtxSyntaxError([Diagnostic("fatal", t[2], t[3], message, SYNTAX, self.path)])

    def error(self, expected: str, tok: Token | None = None) -> PtxSyntaxError:
        """ptxas's wording for a parse error, then what would have been accepted here."""
        t = self.toks[self.i] if tok is None else tok
        near = t[1] if len(t[1]) <= 80 else t[1][:77] + "..."  # a token can be a whole line long
        return self.fatal(f"Parsing error near '{near}': syntax error (expected {expected})", t)

    def at(self, text: str) -> bool:
        """Is the current token the punctuation `text`?"""
        t = self.toks[self.i]
        return t[1] == text and t[0] == PUNCT

    def expect(self, text: str, what: str | None = None) -> Token:
        t = self.toks[self.i]
        if t[1] != text or t[0] == STRING:
            raise self.error(what or f"'{text}'")
        self.i += 1
        return t

    def ident(self, what: str) -> Token:
        """A name; the sink `_` is none (ptxas: "near '_'")."""
        t = self.toks[self.i]
        if t[0] != IDENT or t[1] == "_":
            raise self.error(what)
        self.i += 1
        return t

    def integer(self, what: str) -> int:
        """An integer literal, optionally negated."""
        t = self.toks[self.i]
        neg = t[1] == "-" and t[0] == PUNCT
        if neg:
            self.i += 1
            t = self.toks[self.i]
        if t[0] != INT:
            raise self.error(what)
        self.i += 1
        value = int_value(t[1])
        if value is None:
            raise self.error(what, t)
        return -value if neg else value

    def nest(self, cost: int = 1) -> None:
        self.depth += cost

    def unnest(self, cost: int = 1) -> None:
        self.depth -= cost

    def based(self, base: int, parse: Callable[..., T], *args: object) -> T:
        """`parse(*args)` with `base` entries (of an instruction's operand: more after a guard) below
        the expression on ptxas's stack."""
        saved = self.base
        self.base = base + saved - OPERAND_BASE if saved >= OPERAND_BASE else base
        try:
            return parse(*args)
        finally:
            self.base = saved

    def push(self, more: int, tok: Token | None = None) -> None:
        """ptxas's fatal error when `more` entries on top of what is open fill its parser's stack."""
        if self.base + BLOCK_COST * self.blocks + self.depth + more > PARSER_STACK:
            t = self.toks[self.i] if tok is None else tok
            raise self.fatal(f"Parsing error near '{t[1]}': memory exhausted", t)
