"""A cursor over the token list with the error helpers every part of the parser uses."""

from __future__ import annotations

from mbarrier.ptx.diagnostics import Diagnostic, PtxSyntaxError
from mbarrier.ptx.lexer import EOF, IDENT, INT, PUNCT, STRING, Token
from mbarrier.ptx.literals import int_value

# Deeper nesting of `{}`, `()` or unary operators than this is refused rather than risking Python's stack.
MAX_NESTING = 100


class Cursor:
    def __init__(self, tokens: list[Token], end: tuple[int, int], path: str) -> None:
        tokens.append((EOF, "", end[0], end[1]))
        self.toks = tokens
        self.i = 0
        self.path = path
        self.depth = 0

    def fatal(self, message: str, tok: Token | None = None) -> PtxSyntaxError:
        t = self.toks[self.i] if tok is None else tok
        return PtxSyntaxError([Diagnostic("fatal", t[2], t[3], message, "syntax", self.path)])

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

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.fatal(f"Nesting deeper than {MAX_NESTING} levels is not supported")

    def unnest(self) -> None:
        self.depth -= 1
