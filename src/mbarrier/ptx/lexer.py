"""The PTX tokenizer: one compiled regular expression, run line by line.

A token is a plain tuple `(kind, text, line, column)` (1-based line and column): tuples are far cheaper
than objects, and the parser reads millions of them. Comments and whitespace produce no tokens.
"""

from __future__ import annotations

import re
from typing import Final

from mbarrier.ptx import ast
from mbarrier.ptx.diagnostics import Diagnostic, PtxSyntaxError
from mbarrier.ptx.fastpath import BUILT as BUILT
from mbarrier.ptx.fastpath import NAME
from mbarrier.ptx.fastpath import scan as _fast_scan
from mbarrier.spec.forms import SYNTAX

Token = tuple[int, str, int, int]

# Token kinds. Their values are the group numbers in _TOKEN below (`m.lastindex`).
DOT: Final = 1  # a directive, type or qualifier: `.reg`, `.shared::cta`, `.2d`, `.16x64b`
FLOAT: Final = 2  # `0f3F800000`, `0d3FF0000000000000`, `1.5`, `1e-3`
INT: Final = 3  # `42`, `0x1F`, `017`, `0b101`, `7U`, `WARP_SZ` (the predefined constant 32)
IDENT: Final = 4  # `%r1`, `$L__BB0_2`, `_Z1kPi`, `mbarrier`, `_` (the sink)
STRING: Final = 5  # `"nounroll"`
COMMENT: Final = 6  # `// ...` up to the end of the line (dropped)
PUNCT: Final = 7  # `,` `;` `[` `<<` ...
BAD: Final = 8  # any other character: always a syntax error
EOF: Final = 9  # the end of the input (made by the parser, never by the regex)
# BUILT (from fastpath.py): a run of whole statement lines built by the fast path (scan() only)

# PTX ISA 4.3 (identifiers): [a-zA-Z][a-zA-Z0-9_$]* | [_$%][a-zA-Z0-9_$]+ ; `::` joins qualifier parts.
_FOLLOW = r"[A-Za-z0-9_$]"
_TOKEN: Final = re.compile(
    rf"(\.[A-Za-z]{_FOLLOW}*(?:::{_FOLLOW}+)*|\.[0-9]+(?:d(?:ms)?|x[0-9]+b(?:x[0-9]+)?)(?!{_FOLLOW}))"
    rf"|(0[fF][0-9A-Fa-f]{{8}}|0[dD][0-9A-Fa-f]{{16}}"
    rf"|[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)"
    rf"|(0[xX][0-9A-Fa-f]+U?|0[bB][01]+U?|0[0-7]*U?|[1-9][0-9]*U?|WARP_SZ(?!{_FOLLOW}))"
    rf"|([A-Za-z]{_FOLLOW}*|[_$%]{_FOLLOW}+|_)"
    r'|("(?:[^"\\\n]|\\.)*")'
    r"|(//.*)"
    r"|(<<|>>|&&|\|\||==|!=|<=|>=|[-+*/%,;:\[\]{}()@!<>=|&^~?])"
    r"|([^ \t\n\r\f])"  # (a vertical tab is no blank for ptxas)
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
                                             "(this block comment is never closed)", SYNTAX, path)])
        return re.sub(r"[^\n]", " ", s)

    return _BLOCK.sub(repl, text)


def tokenize(text: str, path: str = "<input>") -> list[Token]:
    """All tokens of `text`, comments dropped. Raises PtxSyntaxError for an unterminated block comment
    or a character PTX does not allow (ptxas: "Unexpected non-ASCII character")."""
    return _scan(text, path, None)


def scan(text: str, path: str = "<input>") -> tuple[list[Token], list[ast.Statement]]:
    """Like tokenize, but lines that are one plain instruction or declaration each become BUILT tokens
    (one per run of them); their statements are the returned list, in source order. Where the parser
    meets a BUILT token where such statements cannot stand it cannot go on, and parse() starts over
    with tokenize(): so the fast path changes the speed, never the result."""
    built: list[ast.Statement] = []
    return _scan(text, path, built), built


_LABEL_MATCH: Final = re.compile(rf"[ \t]*({NAME})[ \t]*(:)").fullmatch
# A line of `.section` data as nvcc writes it (`.b8 95,90,53`): decimal numbers, no blanks between.
_DATA_MATCH: Final = re.compile(
    r"[ \t]*(\.[bsu](?:8|16|32|64))[ \t]+((?:0|[1-9][0-9]*)(?:,(?:0|[1-9][0-9]*))*)[ \t]*(?://.*)?").fullmatch


# A C preprocessor's line marker (`# 12 "k.cu"`, `# 1 "k.cu" 1 3`, `#line 12 "k.cu"`), which ptxas skips
# wherever it stands, up to the end of its line (its line numbers then follow the marker; ours stay the
# file's own).
_MARKER: Final = re.compile(
    r'#[ \t]*(?:line[ \t]+)?[0-9]+[ \t]+"(?:[^"\\\n]|\\.)*"(?:[ \t]+[0-9]+)*[ \t]*$', re.M)


# Characters str.split() (the fast path) takes for blanks and ptxas does not (a syntax error near them);
# one `in` each is a hundred times cheaper than a regular expression's search of the text
_NOT_BLANK: Final = ("\v", "\x1c", "\x1d", "\x1e", "\x1f")


def _scan(text: str, path: str, built: list[ast.Statement] | None) -> list[Token]:
    # before anything is blanked: ptxas refuses a non-ASCII character anywhere, in a comment, a line
    # marker, or a UTF-8 byte order mark at the start (measured, ptxas 13.0)
    if not text.isascii():
        _non_ascii(text, path)
    if "\r\n" in text:  # Windows line ends: the \r is a blank at the end of each line
        text = text.replace("\r\n", "\n")
    if "/*" in text:
        text = _blank_block_comments(text, path)
    if "#" in text:
        text = _MARKER.sub(lambda m: " " * len(m.group()), text)
    # the general tokens say what ptxas says of these (and the fast path would read WARP_SZ as a name;
    # looking for "W" first costs 2 us where "WARP_SZ" costs 100 on 300 kB)
    if any(c in text for c in _NOT_BLANK) or ("W" in text and "WARP_SZ" in text):
        built = None
    lines = text.split("\n")
    if built is not None:
        # A BUILT token is right only where a statement or a module-level declaration starts; the
        # parser falls back to plain tokens when one turns up anywhere else.
        return _fast_scan(lines, _shortcut_or_tokens, built)
    tokens: list[Token] = []
    for lineno, line in enumerate(lines, 1):
        tokens.extend(_line_tokens(line, lineno))
    return tokens


def _line_tokens(line: str, lineno: int) -> list[Token]:
    toks = [(m.lastindex or BAD, m.group(), lineno, m.start() + 1) for m in _FINDITER(line)]
    if toks and toks[-1][0] == COMMENT:
        toks.pop()
    return toks


def _shortcut_or_tokens(line: str, lineno: int) -> list[Token]:
    """The tokens of a line the fast path did not build: label, section data and lone `{`, `}`, `(`, `)`
    lines the short way (exactly the tokens _TOKEN would give), the rest by _TOKEN."""
    s = line.strip()
    if len(s) == 1 and s in "{}()":
        return [(PUNCT, s, lineno, len(line) - len(line.lstrip()) + 1)]
    if s[:2] == ".b" or s[:2] == ".u" or s[:2] == ".s":
        data = _DATA_MATCH(line)
        if data is not None:
            return _data_tokens(data, lineno)
    if s[-1] == ":":
        m = _LABEL_MATCH(line)
        if m is not None:
            return [(IDENT, m.group(1), lineno, m.start(1) + 1), (PUNCT, ":", lineno, m.start(2) + 1)]
    return _line_tokens(line, lineno)


def _data_tokens(m: re.Match[str], lineno: int) -> list[Token]:
    """The tokens of a section data line _DATA_MATCH matched: the type, then numbers and commas."""
    toks: list[Token] = [(DOT, m.group(1), lineno, m.start(1) + 1)]
    col = m.start(2) + 1
    for item in m.group(2).split(","):
        toks.append((INT, item, lineno, col))
        toks.append((PUNCT, ",", lineno, col + len(item)))
        col += len(item) + 1
    toks.pop()  # no comma after the last number
    return toks


def _non_ascii(text: str, path: str) -> None:
    for lineno, line in enumerate(text.split("\n"), 1):
        for col, ch in enumerate(line, 1):
            if not ch.isascii():
                raise PtxSyntaxError([Diagnostic(
                    "fatal", lineno, col,
                    f"Unexpected non-ASCII character encountered on line {lineno}",
                    SYNTAX, path)])
