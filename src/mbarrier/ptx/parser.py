"""The PTX parser: tokens (lexer.py) to the syntax tree (ast.py).

Recursive descent over a flat token list. Instructions are parsed generically (opcode, qualifiers in
source order, operands), so every real module parses; what an instruction means is the validator's
and the simulator's business. Errors raise PtxSyntaxError with one fatal Diagnostic worded like ptxas
("Parsing error near 'x': syntax error"), followed by what was expected.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from mbarrier.ptx import ast
from mbarrier.ptx.ast import Pos
from mbarrier.ptx.cursor import GUARDED_BASE, INIT_BASE, MAX_BLOCKS
from mbarrier.ptx.debug import DebugParser
from mbarrier.ptx.diagnostics import Diagnostic, PtxSyntaxError
from mbarrier.ptx.lexer import BUILT, DOT, EOF, FLOAT, IDENT, INT, PUNCT, STRING, Token, scan, tokenize
from mbarrier.spec.forms import STATE_SPACES, SYNTAX, TYPES, VARIABLE_TYPES, VECTORS
from mbarrier.spec.instructions import INSTRUCTIONS_BY_PATH

# ptxas takes nearly 10,000 nested parentheses (cursor.PARSER_STACK) and the expression parser
# recurses twice per level; Python 3.11 makes Python-to-Python calls without the C stack.
_RECURSION = 30_000
if sys.getrecursionlimit() < _RECURSION:
    sys.setrecursionlimit(_RECURSION)
_new = tuple.__new__  # builds a node from a tuple of its flat fields in C (ast.py's nodes are named tuples)
_LINKAGES = frozenset({".visible", ".extern", ".weak", ".common"})
# Directives kept as their token text up to a `;` (`.pragma` is checked for its strings).
_SEMI_DIRECTIVES = frozenset({".pragma", ".alias", ".callprototype", ".branchtargets", ".calltargets"})
# Those of them that stand only in a body, after a label (PTX ISA 10.2.2, 11.3; ptxas 13.0)
_LABELED = frozenset({".callprototype", ".branchtargets", ".calltargets"})
# What may stand between a function's header and its body (checked with ptxas 13.0): performance
# tuning and cluster directives for kernels (PTX ISA 11.4, 11.5), ABI attributes for functions.
# Each with how many integers it takes at most, and at least one where it takes any (ptxas 13.0).
_ENTRY_ATTRIBUTES = {".maxntid": 3, ".reqntid": 3, ".minnctapersm": 1, ".maxnctapersm": 1, ".maxnreg": 1,
                     ".explicitcluster": 0, ".reqnctapercluster": 3, ".maxclusterrank": 1,
                     ".blocksareclusters": 0}
_FUNC_ATTRIBUTES = {".noreturn": 0, ".abi_preserve": 1, ".abi_preserve_control": 1}
# A variable's vector length: .v2 or .v4 (PTX ISA 5.4.2; .v8 only qualifies ld/st, ptxas 13.0)
_VAR_VECTORS = {k: n for k, n in VECTORS.items() if n <= 4}


def parse(text: str, path: str = "<input>", *, fast: bool = True) -> ast.Module:
    """Parse a whole PTX module. Raises PtxSyntaxError (one fatal Diagnostic) if it cannot be parsed.
    `fast=False` turns off the line fast path (fastpath.py); the tree is the same, only slower."""
    # The tree has no reference cycles, so the cycle collector only costs time here (a quarter of it
    # on large modules, re-scanning the young nodes again and again).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if fast:
            try:
                tokens, built = scan(text, path)
                return _Parser(tokens, built, text, path).module()
            except PtxSyntaxError:
                # The fast path's BUILT tokens are right wherever a statement starts: a module that
                # parses with them parses the same without. One that does not (a line that looks like
                # a statement inside some other construct, or a real error) is parsed again the
                # plain way, which gives the exact diagnostic.
                pass
        return _Parser(tokenize(text, path), [], text, path).module()
    finally:
        if was_enabled:
            gc.enable()


def parse_file(path: str | Path) -> ast.Module:
    """Read a file as UTF-8 and parse it; bytes that do not decode are a fatal diagnostic."""
    return parse_bytes(Path(path).read_bytes(), str(path))


def parse_bytes(data: bytes, path: str) -> ast.Module:
    """Parse PTX given as bytes (a file's, standard input's) named `path` in diagnostics; bytes that
    do not decode as UTF-8 are a fatal diagnostic."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise PtxSyntaxError([Diagnostic(
            "fatal", line, column,
            f"Unexpected non-ASCII character encountered on line {line}", SYNTAX, path)]) from None
    return parse(text, path)


def _end_position(text: str) -> tuple[int, int]:
    """Where the input ends, as ptxas counts it: a final newline starts one more (empty) line."""
    last = text.rfind("\n")
    return text.count("\n") + 1, len(text) - last


class _Parser(DebugParser):
    def __init__(self, tokens: list[Token], built: list[ast.Statement], text: str, path: str) -> None:
        super().__init__(tokens, _end_position(text), path)
        self.built = built
        self.next_built = 0
        self.text = text

    def take_built(self, t: Token) -> list[ast.Statement]:
        """The statements of the BUILT token t, the current one."""
        self.i += 1
        j = self.next_built
        self.next_built = j + t[3]
        return self.built[j:j + t[3]]

    def up_to_semicolon(self, t: Token) -> ast.Directive:
        """A directive kept as its token text up to `;` (`.pragma "a", "b";` must hold strings)."""
        toks = self.toks
        self.i += 1
        start = self.i
        if t[1] == ".pragma":
            while True:
                if toks[self.i][0] != STRING:
                    raise self.error("a string such as \"nounroll\"")
                self.i += 1
                if not self.at(","):
                    break
                self.i += 1
            if not self.at(";"):
                raise self.error("';' after the .pragma strings")
        while not self.at(";"):
            if toks[self.i][0] == EOF:
                raise self.error("';'")
            self.i += 1
        self.i += 1
        return ast.Directive(t[1], tuple(x[1] for x in toks[start:self.i - 1]), Pos(t[2], t[3]))

    # -- module ------------------------------------------------------------------------------------

    def module(self) -> ast.Module:
        version: tuple[int, int] | None = None
        targets: tuple[str, ...] = ()
        address_size = 64
        functions: list[ast.Function] = []
        declarations: list[ast.Declaration] = []
        directives: list[ast.Directive] = []
        toks = self.toks
        first = toks[0]
        if first[1] != ".version" and any(x[1] == ".version" and x[0] == DOT for x in toks):
            if first[1] == ".target":  # ptxas reads the whole directive before it complains
                self.i += 1
                self.targets()
                first = toks[self.i]
            raise self.fatal(f"Missing .version directive at start of file '{self.path}'", first)
        # ptxas: .target and .address_size (once, after the targets) stand only in the header, before
        # anything else
        header, sized = True, False
        while True:
            t = toks[self.i]
            kind, text = t[0], t[1]
            if kind == EOF:
                break
            if text == ".target" or text == ".address_size":
                if not header or sized:
                    raise self.error("a module-level item (.target and .address_size come first, once)")
                sized = text == ".address_size"
            elif text != ".version":
                header = False
            if kind == BUILT:  # module-level declarations the fast path built
                built = self.take_built(t)
                decls = [x for x in built if isinstance(x, ast.Declaration)]
                if len(decls) != len(built):
                    raise self.error("a directive at module level (.version, .target, .entry, .func, ...)")
                declarations += decls
                continue
            if text == "@" and self.dwarf(t):
                # `@@DWARF ...` (PTX ISA 11.6, deprecated): ptxas skips the rest of the line
                i = self.i
                self.i += 3
                if toks[self.i][2] != t[2] or toks[self.i][0] == EOF:
                    raise self.error("the rest of the @@DWARF line")
                while toks[self.i][2] == t[2] and toks[self.i][0] != EOF:
                    self.i += 1
                directives.append(ast.Directive("@@DWARF", tuple(x[1] for x in toks[i + 3:self.i]),
                                                Pos(t[2], t[3])))
                continue
            if kind != DOT:
                raise self.error("a directive at module level (.version, .target, .entry, .func, ...)")
            if text == ".version":
                # ptxas: `.version` comes first and once, and `.target` right after it. (A module
                # without any `.version` parses; the validator reports it as ptxas does.)
                if self.i != 0:
                    nxt = toks[self.i + 1]
                    raise self.fatal(f"Parsing error near '.version {nxt[1]}': syntax error "
                                     "(.version may appear only once, at the start of the file)")
                self.i += 1
                version = self.version()
                if toks[self.i][1] != ".target":
                    raise self.fatal(f"Missing .target directive at start of file '{self.path}' "
                                     "(.target must follow .version)")
            elif text == ".target":
                self.i += 1
                targets += self.targets()
            elif text == ".address_size":
                self.i += 1
                address_size = self.integer("an address size (32 or 64)")
            elif text == ".section":
                directives.append(self.section(t))
            elif text == ".file":
                directives.append(self.file(t))
            elif text in _SEMI_DIRECTIVES:
                if text in _LABELED:
                    raise self.error("a module-level directive (this one stands after a label in a body)")
                directives.append(self.up_to_semicolon(t))
            else:
                item = self.linked(t, "a module-level directive")
                if isinstance(item, ast.Function):
                    functions.append(item)
                else:
                    declarations.append(item)
        return ast.Module(version, targets, address_size, tuple(functions), tuple(declarations),
                          tuple(directives), self.path, tuple(self.text.split("\n")))

    def dwarf(self, t: Token) -> bool:
        """Does `@@DWARF` start at t (written without blanks)?"""
        if self.i + 3 >= len(self.toks):
            return False
        a, d = self.toks[self.i + 1], self.toks[self.i + 2]
        return (a[1] == "@" and d[1] == "DWARF" and a[2] == d[2] == t[2] and a[3] == t[3] + 1
                and d[3] == t[3] + 2)

    def version(self) -> tuple[int, int]:
        t = self.toks[self.i]
        major, _, minor = t[1].partition(".")
        if t[0] != FLOAT or not major.isdigit() or not minor.isdigit():
            raise self.fatal(f"Missing .version directive at start of file '{self.path}' "
                             "(the version is MAJOR.MINOR, such as 8.0)", t)
        self.i += 1
        return int(major), int(minor)

    def targets(self) -> tuple[str, ...]:
        out = [self.ident("a target such as sm_90")[1]]
        while self.toks[self.i][1] == "," and self.toks[self.i][0] == PUNCT:
            self.i += 1
            out.append(self.ident("a target such as sm_90")[1])
        return tuple(out)

    def linked(self, t: Token, expected: str, in_body: bool = False) -> ast.Function | ast.Declaration:
        """What may follow `.visible`/`.extern`/`.weak`/`.common` and `.align N`: a function or a
        variable declaration. A type without a state space parses, then stops as in ptxas."""
        toks = self.toks
        linkage = None
        if t[1] in _LINKAGES:
            linkage = t[1]
            self.i += 1
        text = toks[self.i][1]
        if toks[self.i][0] != DOT:
            raise self.error(expected)
        if text in (".entry", ".func"):
            return self.function(linkage, t, in_body)
        if (text in STATE_SPACES or text == ".align" or text in TYPES or text in VECTORS
                or text == ".attribute"):
            return self.declaration(linkage, t)
        raise self.error(expected)

    # -- functions ---------------------------------------------------------------------------------

    def function(self, linkage: str | None, start: Token, in_body: bool = False) -> ast.Function:
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
        pragmas: list[ast.Statement] = []  # a kernel's `.pragma "...";` before `{` joins its body
        attributes = _ENTRY_ATTRIBUTES if kind == "entry" else _FUNC_ATTRIBUTES
        toks = self.toks
        while True:
            performance += self.attributes(attributes)
            d = toks[self.i]
            if kind != "entry" or d[1] != ".pragma" or d[0] != DOT:
                break
            pragmas.append(self.up_to_semicolon(d))
        body: tuple[ast.Statement, ...] | None = None
        nxt = toks[self.i]
        if nxt[1] == ";" and nxt[0] == PUNCT:
            self.i += 1
        elif in_body:
            raise self.error("';' ending the prototype (no function is defined inside another)")
        elif nxt[1] == "{" and nxt[0] == PUNCT:
            self.i += 1
            body = tuple(pragmas) + self.statements()
        elif kind == "entry":
            raise self.error("'{' starting the kernel's body or ';'")
        # else: a .func prototype that the next item ends (ptxas needs no `;` after one)
        pos = Pos(start[2], start[3])
        return ast.Function(kind, name[1], params, returns, body, pos, linkage, tuple(performance))

    def attributes(self, allowed: dict[str, int]) -> list[tuple[str, tuple[int, ...]]]:
        """A function's (or prototype's) attributes and their integer arguments: `.maxntid 128, 1`,
        `.noreturn`. ptxas takes each again, but not .noreturn."""
        toks = self.toks
        out: list[tuple[str, tuple[int, ...]]] = []
        while toks[self.i][0] == DOT:
            d = toks[self.i]
            if d[1] not in allowed or (d[1] == ".noreturn" and (".noreturn", ()) in out):
                break
            self.i += 1
            values: list[int] = []
            while len(values) < allowed[d[1]]:
                if values:
                    if not self.at(","):
                        break
                    self.i += 1
                if toks[self.i][0] != INT:
                    raise self.error(f"an integer after {d[1]}")
                values.append(self.integer("an integer"))
            out.append((d[1], tuple(values)))
        return out

    def params(self, sink: bool = False) -> tuple[ast.Param, ...]:
        """`(.param .b32 a, ...)`; where `sink`, a name may be `_` (a prototype's)."""
        self.expect("(")
        out: list[ast.Param] = []
        toks = self.toks
        if toks[self.i][1] == ")":
            self.i += 1
            return ()
        while True:
            out.append(self.param(sink))
            t = toks[self.i]
            if t[1] == ",":
                self.i += 1
                continue
            self.expect(")", "',' or ')' in the parameter list")
            return tuple(out)

    def param(self, sink: bool = False) -> ast.Param:
        toks = self.toks
        t = toks[self.i]
        if t[1] not in (".param", ".reg"):
            raise self.error("a parameter (.param or .reg)")
        self.i += 1
        type_ = ""
        align: int | None = None
        ptr = False
        ptr_space: str | None = None
        ptr_align: int | None = None
        while toks[self.i][0] == DOT:
            q = toks[self.i][1]
            self.i += 1
            if q == ".align":
                if ptr:  # `.ptr .space .align N`: the pointee's alignment (PTX ISA 5.1.6.3)
                    ptr_align = self.integer("an alignment")
                else:
                    align = self.integer("an alignment")
            elif q == ".attribute":
                self.i -= 1
                self.attribute()
            elif q == ".ptr":
                ptr = True
            elif q in VARIABLE_TYPES and not type_:
                type_ = q
            elif q in STATE_SPACES or q in _VAR_VECTORS:
                if ptr and q in STATE_SPACES:
                    ptr_space = q
                continue
            else:
                raise self.error("a parameter type", toks[self.i - 1])
        if not type_:
            raise self.error("a parameter type such as .u64")
        name = toks[self.i]
        if sink and name[1] == "_" and name[0] == IDENT:
            self.i += 1
        else:
            name = self.ident("a parameter name")
        dims = self.dims(1)
        return ast.Param(t[1], type_, name[1], Pos(t[2], t[3]), align, dims, ptr, ptr_space, ptr_align)

    def dims(self, most: int = 1 << 30) -> tuple[int | None, ...]:
        """`[4][8]`, `[][8]`: sizes are integer literals, only the first may be left out (ptxas 13.0),
        at most `most` of them (a parameter has one)."""
        toks = self.toks
        dims: list[int | None] = []
        while toks[self.i][1] == "[" and len(dims) < most:
            self.i += 1
            if toks[self.i][1] == "]" and not dims:
                dims.append(None)
            else:
                if toks[self.i][0] != INT:
                    raise self.error("an array size")
                dims.append(self.integer("an array size"))
            self.expect("]")
        return tuple(dims)

    # -- statements --------------------------------------------------------------------------------

    def statements(self) -> tuple[ast.Statement, ...]:
        """Statements up to and including the closing `}` (the `{` is already consumed). Nested
        blocks are kept on a list of their own, not on Python's stack: ptxas takes 1,663 of them."""
        body: list[ast.Statement] = []
        append = body.append
        toks = self.toks
        outer: list[tuple[list[ast.Statement], Pos]] = []  # the enclosing blocks' bodies, and where
        while True:
            t = toks[self.i]
            kind = t[0]
            if kind == BUILT:  # a run of statements the fast path built
                body += self.take_built(t)
            elif kind == IDENT:
                nxt = toks[self.i + 1]
                if nxt[1] == ":" and nxt[0] == PUNCT:
                    self.i += 2
                    append(_new(ast.Label, (t[1], t[2], t[3])))
                elif t[1] == "_":
                    raise self.error("an instruction (the sink '_' is only an operand)")
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
                    self.open_block()
                    outer.append((body, Pos(t[2], t[3])))
                    body = []
                    append = body.append
                elif text == "}":
                    self.i += 1
                    if not outer:
                        return tuple(body)
                    self.blocks -= 1
                    inner = tuple(body)
                    body, pos = outer.pop()
                    append = body.append
                    append(ast.Block(inner, pos))
                else:
                    raise self.error("an instruction, a declaration, a label or '}'")
            else:
                raise self.error("an instruction, a declaration, a label or '}'")

    def open_block(self) -> None:
        """ptxas's fatal error for a block nested once more than its parser's stack holds (measured):
        at the block's first token, or its second after a name or `@`."""
        self.blocks += 1
        if self.built and self.blocks >= MAX_BLOCKS - 1:
            # so deep, even a fast-path line (`mov.u32 %r1, -1;`) may fill ptxas's stack: the plain
            # path, which sees every token, takes over
            raise self.fatal("a block too deep for the fast path")
        if self.blocks <= MAX_BLOCKS:
            return
        toks, i = self.toks, self.i
        second = toks[i]
        if second[0] == IDENT or second[1] == "@":
            # (ptxas reads an instruction's name, `mbarrier.init`, as one token: the longest it knows)
            words = [second[1]]
            while toks[i + len(words)][0] == DOT:
                words.append(toks[i + len(words)][1])
            n = max((len(p) for p in INSTRUCTIONS_BY_PATH if tuple(words[:len(p)]) == p), default=1)
            second = toks[i + n]
        raise self.fatal(f"Parsing error near '{second[1]}': memory exhausted", second)

    def body_directive(self, t: Token) -> ast.Declaration | ast.Directive:
        text = t[1]
        if text in STATE_SPACES:
            return self.declaration(None, t)
        if text == ".loc":
            return self.loc(t)
        if text in _LABELED:
            return self.labeled(t)
        if text in _SEMI_DIRECTIVES:
            return self.up_to_semicolon(t)
        # in a body a linkage goes only with a .func prototype, and there is no .entry (ptxas 13.0)
        if text == ".common" or text == ".entry":
            raise self.error("an instruction, a declaration, a label or '}' (no .entry inside a function)")
        if text in _LINKAGES:
            nxt = self.toks[self.i + 1]
            if nxt[1] != ".func" or nxt[0] != DOT:
                raise self.error("'.func' (in a function a linkage goes only with a prototype)", nxt)
        start = self.i
        item = self.linked(t, "an instruction, a declaration, a label or '}'", in_body=True)
        if isinstance(item, ast.Function):
            # a prototype inside a body (ptxas accepts `.extern .func f(...);` here), kept as text
            return ast.Directive("." + item.kind, tuple(x[1] for x in self.toks[start:self.i - 1]),
                                 Pos(t[2], t[3]))
        return item

    def labeled(self, t: Token) -> ast.Directive:
        """`L: .callprototype [(rets)] _ [(params)] [attributes];`, `L: .branchtargets L1, L2;`,
        `L: .calltargets f, g;` (the label is the previous statement); kept as its token texts."""
        toks = self.toks
        prev = toks[self.i - 1]
        if prev[1] != ":" or prev[0] != PUNCT:
            raise self.error(f"a label before {t[1]}")
        self.i += 1
        start = self.i
        if t[1] == ".callprototype":
            if self.at("("):
                self.params(sink=True)
            nxt = toks[self.i]
            if nxt[1] != "_" or nxt[0] != IDENT:
                raise self.error("'_' (a prototype has no name)")
            self.i += 1
            if self.at("("):
                self.params(sink=True)
            self.attributes(_FUNC_ATTRIBUTES)
        else:
            while True:
                self.ident("a label" if t[1] == ".branchtargets" else "a function")
                if not self.at(","):
                    break
                self.i += 1
        self.expect(";", "';' ending the directive")
        return ast.Directive(t[1], tuple(x[1] for x in toks[start:self.i - 1]), Pos(t[2], t[3]))

    def guarded(self) -> ast.Instruction:
        toks = self.toks
        at = toks[self.i]
        self.i += 1
        negated = toks[self.i][1] == "!" and toks[self.i][0] == PUNCT
        if negated:
            self.i += 1
        p = self.ident("a predicate after '@'")
        guard = ast.Guard(p[1], negated, Pos(at[2], at[3]))
        if toks[self.i][0] != IDENT or toks[self.i][1] == "_":
            raise self.error("an instruction after the guard")
        return self.based(GUARDED_BASE, self.instruction, guard)

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
        if t[1] == "call":
            operands = self.call_operands()
            self.expect(";", "';' after the call")
        elif nxt[1] != ";" or nxt[0] != PUNCT:
            operands.append(self.operand(True))
            while True:
                nxt = toks[self.i]
                if nxt[1] == "," and nxt[0] == PUNCT:
                    self.i += 1
                    operands.append(self.operand())
                    continue
                break
            if nxt[1] != ";" or nxt[0] != PUNCT:
                raise self.error("',' or ';' after an operand")
            self.i += 1
        else:
            self.i += 1
        return ast.Instruction(t[1], tuple(quals), tuple(operands), guard, Pos(t[2], t[3]))

    # -- declarations ------------------------------------------------------------------------------

    def declaration(self, linkage: str | None, start: Token) -> ast.Declaration:
        """`[.align N] .space [.align N] [.vN] .type name...;` (ptxas's order; `.b32 .v2` is an error)."""
        toks = self.toks
        align: int | None = None
        vector: int | None = None
        space: str | None = None
        attributes: tuple[str, ...] = ()
        while True:
            q = toks[self.i]
            if q[0] != DOT:
                break
            if q[1] == ".align":
                self.i += 1
                align = self.integer("an alignment")
            elif q[1] == ".attribute":
                attributes += (self.attribute(),)
            elif q[1] in STATE_SPACES and space is None:
                self.i += 1
                space = q[1]
            else:
                break
        q = toks[self.i]
        if q[1] in _VAR_VECTORS and q[0] == DOT:
            vector = _VAR_VECTORS[q[1]]
            self.i += 1
        type_ = toks[self.i][1]
        if type_ not in VARIABLE_TYPES or toks[self.i][0] != DOT:
            raise self.error("a type such as .b32 in the declaration")
        self.i += 1
        names: list[ast.Declarator] = []
        more = not self.at(";")  # `.reg .b32;` declares nothing (ptxas takes it)
        while more:
            names.append(self.declarator())
            t = toks[self.i]
            more = t[1] == "," and t[0] == PUNCT
            self.i += more
        self.expect(";", "',' or ';' after the declared name")
        if space is None:
            raise self.fatal("No variable storage specified (a declaration needs a state space such as "
                             ".global or .shared)", start)
        return ast.Declaration(space, type_, tuple(names), Pos(start[2], start[3]), align, vector, linkage,
                               attributes)

    def attribute(self) -> str:
        """`.attribute(.managed)`, `.attribute(.unified(uuid1, uuid2))` (PTX ISA 5.4.8), several
        separated by commas, before a variable's type; kept as its text without blanks."""
        toks = self.toks
        start = self.i
        self.i += 1
        self.expect("(", "'(' after .attribute")
        while True:
            a = toks[self.i]
            if a[0] != DOT or a[1] not in (".managed", ".unified"):
                raise self.error("a variable attribute (.managed or .unified(uuid1, uuid2))")
            self.i += 1
            if a[1] == ".unified":
                self.expect("(", "'(uuid1, uuid2)' after .unified")
                self.int_token("the first half of the UUID")
                self.expect(",", "',' and the second half of the UUID")
                self.int_token("the second half of the UUID")
                self.expect(")", "')' after the UUID")
            if not self.at(","):
                break
            self.i += 1
        self.expect(")", "',' or ')' in the attribute list")
        return self.text_from(start)

    def declarator(self) -> ast.Declarator:
        toks = self.toks
        t = self.ident("a name to declare")
        rng: int | None = None
        if toks[self.i][1] == "<" and toks[self.i][0] == PUNCT:
            self.i += 1
            c = toks[self.i]
            if c[0] != INT:
                raise self.error("a register count")
            rng = self.integer("a register count")
            self.expect(">", "'>' closing the register range")
            dims: tuple[int | None, ...] = ()
        else:
            dims = self.dims()
        init: tuple[ast.Operand, ...] | None = None
        if toks[self.i][1] == "=" and toks[self.i][0] == PUNCT:
            self.i += 1
            item = self.based(INIT_BASE, self.init_item)
            init = item.items if isinstance(item, ast.Vector) else (item,)
        return ast.Declarator(t[1], dims, rng, init, Pos(t[2], t[3]))
