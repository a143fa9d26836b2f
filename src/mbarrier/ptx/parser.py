"""The PTX parser: tokens (lexer.py) to the syntax tree (ast.py).

Recursive descent over a flat token list. Instructions are parsed generically (opcode, qualifiers in
source order, operands), so every real module parses; what an instruction means is the validator's
and the simulator's business. Errors raise PtxSyntaxError with one fatal Diagnostic worded like ptxas
("Parsing error near 'x': syntax error"), followed by what was expected.
"""

from __future__ import annotations

import gc
from pathlib import Path

from mbarrier.ptx import ast
from mbarrier.ptx.ast import Pos
from mbarrier.ptx.diagnostics import Diagnostic, PtxSyntaxError
from mbarrier.ptx.lexer import DOT, EOF, FLOAT, IDENT, INSN, INT, PUNCT, STRING, Token, scan, tokenize
from mbarrier.ptx.literals import float_imm, int_value

# Deeper nesting of `{}`, `()` or vectors than this is refused rather than risking Python's stack.
MAX_NESTING = 100

_LINKAGES = frozenset({".visible", ".extern", ".weak", ".common"})
_SPACES = frozenset({".reg", ".sreg", ".const", ".global", ".local", ".param", ".shared", ".tex"})
# Fundamental and opaque types (PTX ISA 5.2); alternate float formats too, for declarations of them.
_TYPES = frozenset(
    f".{k}{w}" for k in "bsu" for w in (8, 16, 32, 64, 128)
) | frozenset({".f16", ".f16x2", ".f32", ".f64", ".bf16", ".bf16x2", ".tf32", ".pred", ".e4m3", ".e5m2",
               ".e4m3x2", ".e5m2x2", ".texref", ".samplerref", ".surfref"})
_VECTORS = {".v2": 2, ".v4": 4, ".v8": 8}
# Directives that take the rest of their line (no `;`): PTX ISA 11.
_LINE_DIRECTIVES = frozenset({".loc", ".file"})
# Directives that run up to a `;`.
_SEMI_DIRECTIVES = frozenset({".pragma", ".alias", ".callprototype", ".branchtargets", ".calltargets"})
# Performance-tuning directives (PTX ISA 11.4) and other function attributes between header and body.
_FUNC_ATTRIBUTES = frozenset({".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg",
                              ".explicitcluster", ".reqnctapercluster", ".maxclusterrank",
                              ".blocksareclusters", ".noreturn", ".abi_preserve",
                              ".abi_preserve_control"})
_BINARY_OPS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||", "==", "!=",
                         "<", ">", "<=", ">="})
_PRECEDENCE = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7,
               ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


def parse(text: str, path: str = "<input>", *, fast: bool = True) -> ast.Module:
    """Parse a whole PTX module. Raises PtxSyntaxError (one fatal Diagnostic) if it cannot be parsed.
    `fast=False` turns off the line fast path (fastpath.py); the tree is the same, only slower."""
    # The tree has no reference cycles, so the cycle collector only costs time here (a quarter of it
    # on large modules, re-scanning the young nodes again and again).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if fast:
            tokens, built = scan(text, path)
        else:
            tokens, built = tokenize(text, path), []
        return _Parser(tokens, built, text, path).module()
    finally:
        if was_enabled:
            gc.enable()


def parse_file(path: str | Path) -> ast.Module:
    """Read a file as UTF-8 and parse it; bytes that do not decode are a fatal diagnostic."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise PtxSyntaxError([Diagnostic(
            "fatal", line, column,
            f"Unexpected non-ASCII character encountered on line {line} (byte 0x{data[e.start]:02x} "
            "is not UTF-8; PTX is ASCII)", "syntax", str(path))]) from None
    return parse(text, str(path))


def _end_position(text: str) -> tuple[int, int]:
    """Where the input ends: after the last character of the last line that has any."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return len(lines), len(lines[-1]) + 1


class _Parser:
    def __init__(self, tokens: list[Token], built: list[ast.Instruction], text: str, path: str) -> None:
        line, column = _end_position(text)
        tokens.append((EOF, "", line, column))
        self.toks = tokens
        self.built = iter(built)
        self.i = 0
        self.path = path
        self.text = text
        self.depth = 0

    # -- helpers -----------------------------------------------------------------------------------

    def error(self, expected: str, tok: Token | None = None) -> PtxSyntaxError:
        t = self.toks[self.i] if tok is None else tok
        return PtxSyntaxError([Diagnostic("fatal", t[2], t[3],
                                          f"Parsing error near '{t[1]}': syntax error (expected {expected})",
                                          "syntax", self.path)])

    def expect(self, text: str, what: str | None = None) -> Token:
        t = self.toks[self.i]
        if t[1] != text or t[0] == STRING:
            raise self.error(what or f"'{text}'")
        self.i += 1
        return t

    def ident(self, what: str) -> Token:
        t = self.toks[self.i]
        if t[0] != IDENT:
            raise self.error(what)
        self.i += 1
        return t

    def integer(self, what: str) -> int:
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
            raise self.error(f"at most {MAX_NESTING} levels of nesting")

    def rest_of_line(self, line: int) -> tuple[str, ...]:
        toks, i = self.toks, self.i
        start = i
        while toks[i][2] == line and toks[i][0] != EOF:
            i += 1
        self.i = i
        return tuple(t[1] for t in toks[start:i])

    def up_to_semicolon(self) -> tuple[str, ...]:
        toks, i = self.toks, self.i
        start = i
        while toks[i][1] != ";" or toks[i][0] != PUNCT:
            if toks[i][0] == EOF:
                self.i = i
                raise self.error("';'")
            i += 1
        self.i = i + 1
        return tuple(t[1] for t in toks[start:i])

    # -- module ------------------------------------------------------------------------------------

    def module(self) -> ast.Module:
        version: tuple[int, int] | None = None
        targets: tuple[str, ...] = ()
        address_size = 64
        functions: list[ast.Function] = []
        declarations: list[ast.Declaration] = []
        directives: list[ast.Directive] = []
        toks = self.toks
        while True:
            t = toks[self.i]
            kind, text = t[0], t[1]
            if kind == EOF:
                break
            if kind != DOT:
                raise self.error("a directive at module level (.version, .target, .entry, .func, ...)")
            if text == ".version":
                self.i += 1
                version = self.version()
            elif text == ".target":
                self.i += 1
                targets = self.targets(t[2])
            elif text == ".address_size":
                self.i += 1
                address_size = self.integer("an address size (32 or 64)")
            elif text in _LINKAGES or text in (".entry", ".func") or text in _SPACES:
                linkage = None
                if text in _LINKAGES:
                    linkage = text
                    self.i += 1
                    text = toks[self.i][1]
                if text in (".entry", ".func"):
                    functions.append(self.function(linkage, t))
                elif text in _SPACES:
                    declarations.append(self.declaration(linkage, t))
                else:
                    raise self.error(".entry, .func or a state space after a linkage directive")
            elif text == ".section":
                directives.append(self.section())
            elif text in _LINE_DIRECTIVES:
                self.i += 1
                directives.append(ast.Directive(text, self.rest_of_line(t[2]), Pos(t[2], t[3])))
            elif text in _SEMI_DIRECTIVES:
                self.i += 1
                directives.append(ast.Directive(text, self.up_to_semicolon(), Pos(t[2], t[3])))
            else:
                raise self.error("a module-level directive")
        return ast.Module(version, targets, address_size, tuple(functions), tuple(declarations),
                          tuple(directives), self.path, tuple(self.text.split("\n")))

    def version(self) -> tuple[int, int]:
        t = self.toks[self.i]
        major, _, minor = t[1].partition(".")
        if t[0] != FLOAT or not major.isdigit() or not minor.isdigit():
            raise self.error("a version number such as 8.0")
        self.i += 1
        return int(major), int(minor)

    def targets(self, line: int) -> tuple[str, ...]:
        out = [self.ident("a target such as sm_90")[1]]
        while self.toks[self.i][1] == "," and self.toks[self.i][0] == PUNCT:
            self.i += 1
            out.append(self.ident("a target such as sm_90")[1])
        return tuple(out)

    def section(self) -> ast.Directive:
        """`.section .debug_info { ... }`: the DWARF data nvcc -G emits, kept as token text."""
        t = self.toks[self.i]
        self.i += 1
        name = self.toks[self.i]
        if name[0] not in (DOT, IDENT):
            raise self.error("a section name such as .debug_info")
        self.i += 1
        self.expect("{")
        toks, i = self.toks, self.i
        start = i
        while toks[i][1] != "}":
            if toks[i][0] == EOF or toks[i][1] == "{":
                self.i = i
                raise self.error("'}' closing the .section")
            i += 1
        self.i = i + 1
        return ast.Directive(".section", (name[1],) + tuple(x[1] for x in toks[start:i]), Pos(t[2], t[3]))

    # -- functions ---------------------------------------------------------------------------------

    def function(self, linkage: str | None, start: Token) -> ast.Function:
        t = self.toks[self.i]
        kind = t[1][1:]
        self.i += 1
        returns: tuple[ast.Param, ...] = ()
        if self.toks[self.i][1] == "(":
            if kind == "entry":
                raise self.error("the kernel name (an .entry has no return values)")
            returns = self.params()
        name = self.ident("a function name")
        params: tuple[ast.Param, ...] = ()
        if self.toks[self.i][1] == "(":
            params = self.params()
        performance: list[tuple[str, tuple[int, ...]]] = []
        toks = self.toks
        while toks[self.i][0] == DOT and toks[self.i][1] in _FUNC_ATTRIBUTES:
            d = toks[self.i]
            self.i += 1
            values: list[int] = []
            if toks[self.i][0] == INT:
                values.append(self.integer("an integer"))
                while toks[self.i][1] == "," and toks[self.i][0] == PUNCT:
                    self.i += 1
                    values.append(self.integer("an integer"))
            performance.append((d[1], tuple(values)))
        body: tuple[ast.Statement, ...] | None = None
        nxt = toks[self.i]
        if nxt[1] == ";" and nxt[0] == PUNCT:
            self.i += 1
        elif nxt[1] == "{" and nxt[0] == PUNCT:
            self.i += 1
            body = self.statements()
        else:
            raise self.error("'{' starting the body or ';'")
        pos = Pos(start[2], start[3])
        return ast.Function(kind, name[1], params, returns, body, pos, linkage, tuple(performance))

    def params(self) -> tuple[ast.Param, ...]:
        self.expect("(")
        out: list[ast.Param] = []
        toks = self.toks
        if toks[self.i][1] == ")":
            self.i += 1
            return ()
        while True:
            out.append(self.param())
            t = toks[self.i]
            if t[1] == ",":
                self.i += 1
                continue
            self.expect(")", "',' or ')' in the parameter list")
            return tuple(out)

    def param(self) -> ast.Param:
        toks = self.toks
        t = toks[self.i]
        if t[1] not in (".param", ".reg"):
            raise self.error("a parameter (.param or .reg)")
        self.i += 1
        type_ = ""
        align: int | None = None
        ptr = False
        while toks[self.i][0] == DOT:
            q = toks[self.i][1]
            self.i += 1
            if q == ".align":
                align = self.integer("an alignment")
            elif q == ".ptr":
                ptr = True
            elif q in _TYPES:
                type_ = q
            elif q in _SPACES or q in _VECTORS:
                continue
            else:
                raise self.error("a parameter type", toks[self.i - 1])
        if not type_:
            raise self.error("a parameter type such as .u64")
        name = self.ident("a parameter name")
        dims = self.dims()
        return ast.Param(t[1], type_, name[1], Pos(t[2], t[3]), align, dims, ptr)

    def dims(self) -> tuple[int | None, ...]:
        toks = self.toks
        dims: list[int | None] = []
        while toks[self.i][1] == "[":
            self.i += 1
            if toks[self.i][1] == "]":
                dims.append(None)
            else:
                dims.append(self.integer("an array size"))
            self.expect("]")
        return tuple(dims)

    # -- statements --------------------------------------------------------------------------------

    def statements(self) -> tuple[ast.Statement, ...]:
        """Statements up to and including the closing `}` (the `{` is already consumed)."""
        self.nest()
        body: list[ast.Statement] = []
        append = body.append
        toks = self.toks
        while True:
            t = toks[self.i]
            kind = t[0]
            if kind == INSN:
                self.i += 1
                append(next(self.built))
            elif kind == IDENT:
                nxt = toks[self.i + 1]
                if nxt[1] == ":" and nxt[0] == PUNCT:
                    self.i += 2
                    append(ast.Label(t[1], Pos(t[2], t[3])))
                else:
                    append(self.instruction(None))
            elif kind == DOT:
                append(self.body_directive(t))
            elif kind == PUNCT:
                text = t[1]
                if text == "@":
                    append(self.guarded())
                elif text == "{":
                    self.i += 1
                    append(ast.Block(self.statements(), Pos(t[2], t[3])))
                elif text == "}":
                    self.i += 1
                    self.depth -= 1
                    return tuple(body)
                else:
                    raise self.error("an instruction, a declaration, a label or '}'")
            else:
                raise self.error("an instruction, a declaration, a label or '}'")

    def body_directive(self, t: Token) -> ast.Declaration | ast.Directive:
        text = t[1]
        if text in _SPACES:
            return self.declaration(None, t)
        if text in _LINE_DIRECTIVES:
            self.i += 1
            return ast.Directive(text, self.rest_of_line(t[2]), Pos(t[2], t[3]))
        if text in _SEMI_DIRECTIVES or text in _FUNC_ATTRIBUTES:
            self.i += 1
            return ast.Directive(text, self.up_to_semicolon_or_line(t[2]), Pos(t[2], t[3]))
        if text in _LINKAGES:
            self.i += 1
            nxt = self.toks[self.i]
            if nxt[1] not in _SPACES:
                raise self.error("a state space after a linkage directive")
            return self.declaration(text, nxt)
        raise self.error("an instruction, a declaration, a label or '}'")

    def up_to_semicolon_or_line(self, line: int) -> tuple[str, ...]:
        """`.pragma "x";` ends at `;`; `.maxnreg 32` inside a body ends with its line."""
        toks, i = self.toks, self.i
        while toks[i][2] == line and toks[i][0] != EOF and toks[i][1] != ";":
            i += 1
        if toks[i][1] == ";" and toks[i][0] == PUNCT:
            out = tuple(x[1] for x in toks[self.i:i])
            self.i = i + 1
            return out
        return self.rest_of_line(line)

    def guarded(self) -> ast.Instruction:
        toks = self.toks
        at = toks[self.i]
        self.i += 1
        negated = toks[self.i][1] == "!" and toks[self.i][0] == PUNCT
        if negated:
            self.i += 1
        p = self.ident("a predicate after '@'")
        guard = ast.Guard(p[1], negated, Pos(at[2], at[3]))
        if toks[self.i][0] != IDENT:
            raise self.error("an instruction after the guard")
        return self.instruction(guard)

    def instruction(self, guard: ast.Guard | None) -> ast.Instruction:
        toks = self.toks
        i = self.i
        t = toks[i]
        i += 1
        quals: list[str] = []
        while toks[i][0] == DOT:
            quals.append(toks[i][1])
            i += 1
        self.i = i
        operands: list[ast.Operand] = []
        nxt = toks[i]
        if nxt[1] != ";" or nxt[0] != PUNCT:
            is_call = t[1] == "call"
            while True:
                operands.append(self.operand(is_call))
                nxt = toks[self.i]
                if nxt[1] == "," and nxt[0] == PUNCT:
                    self.i += 1
                    continue
                break
            if nxt[1] != ";" or nxt[0] != PUNCT:
                raise self.error("',' or ';' after an operand")
        self.i += 1
        return ast.Instruction(t[1], tuple(quals), tuple(operands), guard, Pos(t[2], t[3]))

    # -- operands ----------------------------------------------------------------------------------

    def operand(self, is_call: bool = False) -> ast.Operand:
        toks = self.toks
        t = toks[self.i]
        kind, text = t[0], t[1]
        nxt = toks[self.i + 1]
        if kind == IDENT and not (nxt[0] == PUNCT and nxt[1] in _BINARY_OPS):
            self.i += 1
            if text == "_":
                return ast.Sink(Pos(t[2], t[3]))
            if nxt[0] == DOT and nxt[2] == t[2] and nxt[3] == t[3] + len(text):
                # `%tid.x`, `%ctaid.y`: a special register and its component are one name.
                self.i += 1
                return ast.Name(text + nxt[1], Pos(t[2], t[3]))
            return ast.Name(text, Pos(t[2], t[3]))
        if kind == PUNCT:
            if text == "[":
                return self.address()
            if text == "{":
                return self.vector()
            if text == "!":
                self.i += 1
                return ast.Not(self.operand(), Pos(t[2], t[3]))
            if text == "(" and is_call:
                return self.paren_list()
        if kind == INT and not (nxt[0] == PUNCT and nxt[1] in _BINARY_OPS):
            self.i += 1
            value = int_value(text)
            if value is None:
                raise self.error("an integer", t)
            return ast.Imm(value, text, Pos(t[2], t[3]), text[-1] == "U")
        if kind == FLOAT:
            self.i += 1
            return float_imm(text, Pos(t[2], t[3]))
        if kind == PUNCT and text == "-" and nxt[0] == FLOAT:
            self.i += 2
            return float_imm("-" + nxt[1], Pos(t[2], t[3]))
        if kind in (IDENT, INT) or (kind == PUNCT and text in ("-", "~", "(", "!")):
            return self.expression()
        raise self.error("an operand")

    def expression(self) -> ast.Operand:
        t = self.toks[self.i]
        start = self.i
        value = self.expr(0)
        text = " ".join(x[1] for x in self.toks[start:self.i])
        pos = Pos(t[2], t[3])
        if self.i == start + 1 and t[0] == INT and value is not None:
            return ast.Imm(value, t[1], pos, t[1][-1] == "U")
        if self.i == start + 2 and t[1] == "-" and self.toks[start + 1][0] == INT and value is not None:
            return ast.Imm(value, "-" + self.toks[start + 1][1], pos, self.toks[start + 1][1][-1] == "U")
        return ast.Expr(text, value, pos)

    def expr(self, min_prec: int) -> int | None:
        """Precedence climbing over C operators; None when the value depends on a symbol."""
        left = self.unary()
        toks = self.toks
        while True:
            t = toks[self.i]
            prec = _PRECEDENCE.get(t[1], 0) if t[0] == PUNCT else 0
            if prec <= min_prec:
                return left
            self.i += 1
            right = self.expr(prec)
            left = _binary(t[1], left, right)

    def unary(self) -> int | None:
        toks = self.toks
        t = toks[self.i]
        kind, text = t[0], t[1]
        if kind == INT:
            self.i += 1
            value = int_value(text)
            if value is None:
                raise self.error("an integer", t)
            return value
        if kind == IDENT:
            self.i += 1
            if text != "_" and toks[self.i][1] == "(" and toks[self.i][0] == PUNCT:
                # `generic(sym)`, `mask(...)` in initializers
                self.i += 1
                self.nest()
                self.expr(0)
                self.expect(")")
                self.depth -= 1
            return None
        if kind == PUNCT:
            if text in ("-", "~", "!", "+"):
                self.i += 1
                self.nest()
                v = self.unary()
                self.depth -= 1
                if v is None:
                    return None
                return -v if text == "-" else ~v if text == "~" else int(not v) if text == "!" else v
            if text == "(":
                self.i += 1
                self.nest()
                v = self.expr(0)
                self.expect(")")
                self.depth -= 1
                return v
        raise self.error("an operand")

    def address(self) -> ast.Address:
        toks = self.toks
        t = toks[self.i]
        self.i += 1
        base: ast.Name | None = None
        offset = 0
        b = toks[self.i]
        if b[0] == IDENT:
            self.i += 1
            base = ast.Name(b[1], Pos(b[2], b[3]))
            op = toks[self.i]
            if op[0] == PUNCT and op[1] in ("+", "-"):
                self.i += 1
                offset = self.integer("an integer offset")
                if op[1] == "-":
                    offset = -offset
        elif b[0] == INT or (b[0] == PUNCT and b[1] == "-"):
            offset = self.integer("an address")
        else:
            raise self.error("a register, a symbol or an integer address")
        items: tuple[ast.Operand, ...] = ()
        if toks[self.i][1] == "," and toks[self.i][0] == PUNCT:
            # `[tmap, {x, y}]` (tensor copies, textures): the further items of the bracket.
            more: list[ast.Operand] = []
            while toks[self.i][1] == "," and toks[self.i][0] == PUNCT:
                self.i += 1
                self.nest()
                more.append(self.operand())
                self.depth -= 1
            items = tuple(more)
        self.expect("]", "']' closing the address")
        if items:
            return ast.Address(base, offset, Pos(t[2], t[3]), items)
        return ast.Address(base, offset, Pos(t[2], t[3]))

    def vector(self) -> ast.Vector:
        toks = self.toks
        t = toks[self.i]
        self.i += 1
        self.nest()
        items: list[ast.Operand] = []
        if not (toks[self.i][1] == "}" and toks[self.i][0] == PUNCT):
            while True:
                items.append(self.operand())
                if toks[self.i][1] == "," and toks[self.i][0] == PUNCT:
                    self.i += 1
                    continue
                break
        self.expect("}", "',' or '}' in the vector")
        self.depth -= 1
        return ast.Vector(tuple(items), Pos(t[2], t[3]))

    def paren_list(self) -> ast.ParenList:
        toks = self.toks
        t = toks[self.i]
        self.i += 1
        self.nest()
        items: list[ast.Operand] = []
        if not (toks[self.i][1] == ")" and toks[self.i][0] == PUNCT):
            while True:
                items.append(self.operand())
                if toks[self.i][1] == "," and toks[self.i][0] == PUNCT:
                    self.i += 1
                    continue
                break
        self.expect(")", "',' or ')' in the call's list")
        self.depth -= 1
        return ast.ParenList(tuple(items), Pos(t[2], t[3]))

    # -- declarations ------------------------------------------------------------------------------

    def declaration(self, linkage: str | None, start: Token) -> ast.Declaration:
        toks = self.toks
        sp = toks[self.i]
        space = sp[1]
        self.i += 1
        type_ = ""
        align: int | None = None
        vector: int | None = None
        extra: list[str] = []
        while toks[self.i][0] == DOT:
            q = toks[self.i][1]
            self.i += 1
            if q == ".align":
                align = self.integer("an alignment")
            elif q in _TYPES:
                type_ = q
            elif q in _VECTORS:
                vector = _VECTORS[q]
            else:
                extra.append(q)
        if not type_:
            raise self.error("a type such as .b32 in the declaration")
        names: list[ast.Declarator] = []
        while True:
            names.append(self.declarator())
            t = toks[self.i]
            if t[1] == "," and t[0] == PUNCT:
                self.i += 1
                continue
            break
        self.expect(";", "',' or ';' after the declared name")
        return ast.Declaration(space, type_, tuple(names), Pos(start[2], start[3]), align, vector, linkage,
                               tuple(extra))

    def declarator(self) -> ast.Declarator:
        toks = self.toks
        t = self.ident("a name to declare")
        rng: int | None = None
        if toks[self.i][1] == "<" and toks[self.i][0] == PUNCT:
            self.i += 1
            rng = self.integer("a register count")
            self.expect(">", "'>' closing the register range")
        dims = self.dims()
        init: tuple[ast.Operand, ...] | None = None
        if toks[self.i][1] == "=" and toks[self.i][0] == PUNCT:
            self.i += 1
            item = self.init_item()
            init = item.items if isinstance(item, ast.Vector) else (item,)
        return ast.Declarator(t[1], dims, rng, init, Pos(t[2], t[3]))

    def init_item(self) -> ast.Operand:
        toks = self.toks
        t = toks[self.i]
        if t[1] == "{" and t[0] == PUNCT:
            self.i += 1
            self.nest()
            items: list[ast.Operand] = []
            while True:
                items.append(self.init_item())
                if toks[self.i][1] == "," and toks[self.i][0] == PUNCT:
                    self.i += 1
                    continue
                break
            self.expect("}", "',' or '}' in the initializer")
            self.depth -= 1
            return ast.Vector(tuple(items), Pos(t[2], t[3]))
        if t[0] == STRING:
            self.i += 1
            return ast.Expr(t[1], None, Pos(t[2], t[3]))
        return self.operand()


def _binary(op: str, a: int | None, b: int | None) -> int | None:
    if a is None or b is None:
        return None
    if op in ("/", "%") and b == 0:
        return None
    if op in ("<<", ">>") and not 0 <= b < 128:
        return None
    match op:
        case "+":
            return a + b
        case "-":
            return a - b
        case "*":
            return a * b
        case "/":
            return int(a / b)
        case "%":
            return a - int(a / b) * b
        case "<<":
            return a << b
        case ">>":
            return a >> b
        case "&":
            return a & b
        case "|":
            return a | b
        case "^":
            return a ^ b
        case "&&":
            return int(bool(a and b))
        case "||":
            return int(bool(a or b))
        case "==":
            return int(a == b)
        case "!=":
            return int(a != b)
        case "<":
            return int(a < b)
        case ">":
            return int(a > b)
        case "<=":
            return int(a <= b)
        case _:
            return int(a >= b)
