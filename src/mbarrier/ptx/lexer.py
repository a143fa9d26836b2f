"""The PTX tokenizer: one compiled regular expression, run line by line.

A token is a plain tuple `(kind, text, line, column)` (1-based line and column): tuples are far cheaper
than objects, and the parser reads millions of them. Comments and whitespace produce no tokens.
"""

from __future__ import annotations

import re
from typing import Final

from mbarrier.ptx.diagnostics import Diagnostic, PtxSyntaxError

Token = tuple[int, str, int, int]

# Token kinds. Their values are the group numbers in _TOKEN below (`m.lastindex`).
DOT: Final = 1  # a directive, type or qualifier: `.reg`, `.shared::cta`, `.mbarrier::complete_tx::bytes`
FLOAT: Final = 2  # `0f3F800000`, `0d3FF0000000000000`, `1.5`, `1e-3`
INT: Final = 3  # `42`, `0x1F`, `017`, `0b101`, `7U`
IDENT: Final = 4  # `%r1`, `$L__BB0_2`, `_Z1kPi`, `mbarrier`, `_` (the sink)
STRING: Final = 5  # `"nounroll"`
COMMENT: Final = 6  # `// ...` up to the end of the line (dropped)
PUNCT: Final = 7  # `,` `;` `[` `<<` ...
BAD: Final = 8  # any other character: always a syntax error
EOF: Final = 9  # the end of the input (made by the parser, never by the regex)

KIND_NAMES: Final = {DOT: "directive", FLOAT: "float", INT: "integer", IDENT: "identifier",
                     STRING: "string", PUNCT: "punctuation", COMMENT: "comment", BAD: "character",
                     EOF: "end of file"}

# PTX ISA 4.3 (identifiers): [a-zA-Z][a-zA-Z0-9_$]* | [_$%][a-zA-Z0-9_$]+ ; `::` joins qualifier parts.
_FOLLOW = r"[A-Za-z0-9_$]"
_TOKEN: Final = re.compile(
    rf"(\.[A-Za-z_$]{_FOLLOW}*(?:::{_FOLLOW}+)*)"
    rf"|(0[fF][0-9A-Fa-f]{{8}}(?!{_FOLLOW})|0[dD][0-9A-Fa-f]{{16}}(?!{_FOLLOW})"
    rf"|[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)"
    rf"|(0[xX][0-9A-Fa-f]+U?|0[bB][01]+U?|[0-9]+U?)"
    rf"|([A-Za-z]{_FOLLOW}*|[_$%]{_FOLLOW}*)"
    r'|("(?:[^"\\\n]|\\.)*")'
    r"|(//.*)"
    r"|(<<|>>|&&|\|\||==|!=|<=|>=|[-+*/%,;:\[\]{}()@!<>=|&^~?])"
    r"|(\S)"
)
_FINDITER: Final = _TOKEN.finditer

# Block comments are blanked out first (newlines kept so positions stay right); strings are matched
# too so that `/*` inside a string is left alone.
_BLOCK: Final = re.compile(r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/|/\*', re.DOTALL)


def _blank_block_comments(text: str, path: str) -> str:
    def repl(m: re.Match[str]) -> str:
        s = m.group()
        if s[0] == '"':
            return s
        if s == "/*" or not s.endswith("*/") or len(s) < 4:
            line = text.count("\n", 0, m.start()) + 1
            column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            raise PtxSyntaxError([Diagnostic("fatal", line, column,
                                             "Parsing error near '': unexpected EOF while scanning "
                                             "(this block comment is never closed)", "syntax", path)])
        return re.sub(r"[^\n]", " ", s)

    return _BLOCK.sub(repl, text)


def tokenize(text: str, path: str = "<input>") -> list[Token]:
    """All tokens of `text`, comments dropped. Raises PtxSyntaxError for an unterminated block comment
    or a character PTX does not allow (ptxas: "Unexpected non-ASCII character")."""
    if "/*" in text:
        text = _blank_block_comments(text, path)
    if not text.isascii():
        _non_ascii(text, path)
    tokens: list[Token] = []
    extend = tokens.extend
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line or line.isspace():
            continue
        toks = [(m.lastindex or BAD, m.group(), lineno, m.start() + 1) for m in _FINDITER(line)]
        if toks and toks[-1][0] == COMMENT:
            toks.pop()
        extend(toks)
    return tokens


def _non_ascii(text: str, path: str) -> None:
    for lineno, line in enumerate(text.split("\n"), 1):
        for col, ch in enumerate(line, 1):
            if not ch.isascii():
                raise PtxSyntaxError([Diagnostic(
                    "fatal", lineno, col,
                    f"Unexpected non-ASCII character encountered on line {lineno} ({ch!r}: PTX is ASCII)",
                    "syntax", path)])
