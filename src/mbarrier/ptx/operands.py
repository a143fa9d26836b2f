"""Operands and constant expressions, with the shapes ptxas accepts (checked against ptxas 13.0):

- `reg`, `%tid.x` (a special register and its component, written without blanks), `_`, `!p`, `-reg`
- `p|q` (the two destinations of setp, shfl ...)
- constant expressions in C syntax with `?:` (`1<<3`, `-(4)`, `1.5`); a hex float `0f...` only alone
- `sym+expr` (a symbol plus a constant; `sym-4` is an error for ptxas, so it is here)
- `[base]`, `[base+expr]`, `[expr]`, `[base, ...]` (tensor and texture operands)
- `{a, b, ...}` vectors of names, sinks and constants; `(a, b)` lists of `call`
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.ptx.ast import Pos
from mbarrier.ptx.cursor import ADDRESS_BASE, OFFSET_BASE, VECTOR_BASE, Cursor
from mbarrier.ptx.lexer import DOT, FLOAT, IDENT, INT, PUNCT, Token
from mbarrier.ptx.literals import float_imm, int_value
from mbarrier.spec.forms import VARIABLE_TYPES

Value = int | float | None  # None: not a number we can compute (an operation ptxas would reject)

_PRECEDENCE = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7,
               ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
_UNARY = frozenset({"-", "+", "~", "!"})
# Directive keywords: ptxas never reads them as the component of a name (`%r1.shared` is an error;
# `%tid.x`, `%f.foo` and `%r1.shared::cta8` are names).
_RESERVED = frozenset({".reg", ".sreg", ".const", ".global", ".local", ".param", ".shared", ".tex", ".align",
                       ".v2", ".v4", ".v8", ".entry", ".func", ".loc", ".file", ".section", ".pragma",
                       ".version", ".target", ".address_size", ".visible", ".extern", ".weak", ".common",
                       ".callprototype", ".alias", ".branchtargets", ".calltargets", ".maxntid", ".reqntid",
                       ".minnctapersm", ".maxnreg", ".explicitcluster", ".reqnctapercluster",
                       ".maxclusterrank", ".shared::cta", ".shared::cluster"})
_EXPR_START = frozenset({"-", "+", "~", "!", "("})


def _hex_float(text: str) -> bool:
    return len(text) > 1 and text[1] in "fFdD"


class OperandParser(Cursor):
    def operand(self, first: bool = False) -> ast.Operand:
        """One operand; `first`: an instruction's first, the only place a `p|q` pair may stand."""
        toks = self.toks
        t = toks[self.i]
        kind, text = t[0], t[1]
        if kind == IDENT:
            return self.name_operand(t, pair=first)
        if kind == PUNCT:
            if text == "[":
                return self.address()
            if text == "{":
                start = self.i
                vec = self.vector()
                if not first or not self.at("|"):
                    return vec
                # `{a, b, c, d}|p`: a vector and a predicate (tex, tld4 with the residency predicate)
                self.i += 1
                self.ident("a predicate after '|'")
                return ast.Expr(self.text_from(start), None, vec.pos)
            n = toks[self.i + 1]
            if text == "!" and n[0] == IDENT:
                # `!p`: a name alone (no component, pair or offset: ptxas stops at them)
                if n[1] == "_":
                    raise self.error("a predicate after '!'", n)
                self.i += 2
                return ast.Not(ast.Name(n[1], Pos(n[2], n[3])), Pos(t[2], t[3]))
            if text == "-" and n[0] == IDENT:
                # `-%r2`, `-%r3.b2` (the negated operands of vmad)
                if n[1] == "_":
                    raise self.error("a register after '-'", n)
                self.i += 2
                name = n[1]
                c = toks[self.i]
                if c[0] == DOT and c[1] not in _RESERVED:
                    self.i += 1
                    name += c[1]
                return ast.Expr("-" + name, None, Pos(t[2], t[3]))
        if kind == FLOAT and _hex_float(text):
            self.i += 1
            return float_imm(text, Pos(t[2], t[3]))
        if kind in (INT, FLOAT) or (kind == PUNCT and text in _EXPR_START):
            return self.constant()
        raise self.error("an operand")

    def name_operand(self, t: Token, pair: bool = False, offset: bool = True) -> ast.Operand:
        """A register, symbol or label; `%tid.x` (ptxas takes blanks, even a line end, before the
        component); `_`; where `offset`, `sym+expr` and `sym[index]`; where `pair`, `p|q`."""
        toks = self.toks
        self.i += 1
        text = t[1]
        nxt = toks[self.i]
        if nxt[0] == DOT and nxt[1] not in _RESERVED:
            self.i += 1
            return ast.Name(text + nxt[1], Pos(t[2], t[3]))
        if nxt[0] == PUNCT and offset and nxt[1] == "[":
            # `a[1]`, `a[%r1+4]`: an element of an array (PTX ISA 6.4.3), the index an address's contents
            if text == "_":
                raise self.error("an operand (the sink has no elements)", t)
            start = self.i - 1
            self.address()
            return ast.Expr(self.text_from(start), None, Pos(t[2], t[3]))
        if nxt[0] == PUNCT and pair and nxt[1] == "|":
            # `p|q` of setp, shfl, lop3...: either half may be the sink, not both (ptxas 13.0)
            self.i += 1
            other = toks[self.i]
            if other[0] != IDENT or (other[1] == "_" and text == "_"):
                raise self.error("a predicate after '|'")
            self.i += 1
            return ast.Expr(f"{text}|{other[1]}", None, Pos(t[2], t[3]))
        if text == "_":
            return ast.Sink(Pos(t[2], t[3]))
        if nxt[0] == PUNCT and offset:
            if nxt[1] == "+":
                self.i += 1
                start = self.i
                self.expr(0)
                return ast.Expr(text + "+" + self.text_from(start), None, Pos(t[2], t[3]))
        return ast.Name(text, Pos(t[2], t[3]))

    def text_from(self, start: int) -> str:
        return "".join(x[1] for x in self.toks[start:self.i])

    def constant(self) -> ast.Operand:
        """A constant expression: an Imm or FloatImm when it is one literal (maybe negated)."""
        toks = self.toks
        start = self.i
        t = toks[start]
        value = self.expr(0)
        pos = Pos(t[2], t[3])
        n = self.i - start
        lit = toks[self.i - 1]
        if n == 1 or (n == 2 and t[1] == "-"):
            sign = "-" if n == 2 else ""
            if lit[0] == INT and isinstance(value, int):
                return ast.Imm(value, sign + lit[1], pos, lit[1][-1] == "U")
            if lit[0] == FLOAT:
                return float_imm(sign + lit[1], pos)
        return ast.Expr(self.text_from(start), value if isinstance(value, int) else None, pos)

    def expr(self, min_prec: int) -> Value:
        """Precedence climbing over C's operators, `?:` lowest."""
        toks = self.toks
        left = self.unary()
        while True:
            t = toks[self.i]
            if t[0] != PUNCT:
                break
            prec = _PRECEDENCE.get(t[1], 0)
            if prec <= min_prec:
                if t[1] == "?" and min_prec == 0:
                    self.i += 1
                    self.nest(2)  # (for ptxas's stack: the condition and `?`, then `a :`)
                    a = self.expr(0)
                    self.expect(":", "':' of the '?:' expression")
                    self.nest(2)
                    b = self.expr(0)
                    self.unnest(4)
                    left = None if left is None else a if left else b
                break
            self.i += 1
            self.nest(2)  # the left side and the operator
            right = self.expr(prec)
            self.unnest(2)
            left = self.binary(t, left, right)
        return left

    def unary(self) -> Value:
        toks = self.toks
        t = toks[self.i]
        kind, text = t[0], t[1]
        if kind == INT:
            self.push(1)
            self.i += 1
            value = int_value(text)
            if value is None:
                raise self.error("an integer", t)
            return value
        if kind == FLOAT and not _hex_float(text):
            self.push(1)
            self.i += 1
            return float(text)
        if kind == PUNCT:
            if text in _UNARY:
                self.push(2)
                self.i += 1
                self.nest(2)
                v = self.unary()
                self.unnest(2)
                if v is None:
                    return None
                if text == "-":
                    return -v
                if text == "!":
                    return int(not v)
                if text == "~":
                    return ~v if isinstance(v, int) else None
                return v
            if text == "(":
                self.i += 1
                c = toks[self.i]
                if c[0] == DOT and c[1] in VARIABLE_TYPES:
                    # a cast, `(.s64)`, `(.u64)` (PTX ISA 4.6.1; ptxas takes any variable's type)
                    self.i += 1
                    self.expect(")", "')' closing the cast")
                    self.push(3)
                    self.nest(3)  # (not measured: `(`, the type and `)`)
                    v = self.unary()
                    self.unnest(3)
                    return self.cast(c, v)
                self.push(1, t)
                self.nest(1)
                v = self.expr(0)
                self.push(2)  # the expression and `)`
                self.expect(")", "')' closing the expression")
                self.unnest(1)
                return v
        raise self.error("a constant expression")

    def cast(self, t: Token, v: Value) -> Value:
        """The value cast to an integer type (wrapped to its width, signed or not); None for the rest."""
        bits = "".join(ch for ch in t[1] if ch.isdigit())
        if isinstance(v, float):
            raise self.fatal(f"Integer constant expression expected (a cast of {v})", t)
        if v is None or t[1][1] not in "bsu" or not bits:
            return None
        v &= (1 << int(bits)) - 1
        if t[1][1] == "s" and v >> (int(bits) - 1):
            v -= 1 << int(bits)
        return v

    def binary(self, op: Token, a: Value, b: Value) -> Value:
        if a is None or b is None:
            return None
        o = op[1]
        if o in ("/", "%") and b == 0:
            raise self.fatal("Constant expression has division by zero", op)
        if isinstance(a, float) or isinstance(b, float):
            # ptxas types float expressions itself ("type mismatch"); we do not need their value.
            return None
        if o in ("<<", ">>") and not 0 <= b < 128:
            return None
        if o == "+":
            return a + b
        if o == "-":
            return a - b
        if o == "*":
            return a * b if a.bit_length() + b.bit_length() < 256 else None
        if o == "/":
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        if o == "%":
            r = abs(a) % abs(b)
            return r if a >= 0 else -r
        if o == "<<":
            return a << b
        if o == ">>":
            return a >> b
        if o == "&":
            return a & b
        if o == "|":
            return a | b
        if o == "^":
            return a ^ b
        if o == "&&":
            return int(bool(a) and bool(b))
        if o == "||":
            return int(bool(a) or bool(b))
        if o == "==":
            return int(a == b)
        if o == "!=":
            return int(a != b)
        if o == "<":
            return int(a < b)
        if o == ">":
            return int(a > b)
        if o == "<=":
            return int(a <= b)
        return int(a >= b)

    def int_expr(self, what: str) -> int:
        t = self.toks[self.i]
        v = self.expr(0)
        if not isinstance(v, int):
            raise self.fatal(f"Integer constant expression expected ({what})", t)
        return v

    def address(self) -> ast.Address:
        toks = self.toks
        t = toks[self.i]
        self.i += 1
        base: ast.Name | None = None
        offset = 0
        b = toks[self.i]
        if b[0] == IDENT:
            if b[1] == "_":
                raise self.error("an address (the sink '_' is none)")
            self.i += 1
            base = ast.Name(b[1], Pos(b[2], b[3]))
            if self.at("+"):
                self.i += 1
                offset = self.based(OFFSET_BASE, self.int_expr, "an address offset")
        else:
            offset = self.based(ADDRESS_BASE, self.int_expr, "an address")
        items: tuple[ast.Operand, ...] = ()
        if self.at(","):
            # `[tmap, {x, y}]` (tensor copies, textures): the further items of the bracket.
            more: list[ast.Operand] = []
            self.push(1)  # (a bracket in a bracket: its cost on ptxas's stack is not measured)
            self.nest()
            while self.at(","):
                self.i += 1
                more.append(self.operand())
            self.unnest()
            items = tuple(more)
        self.expect("]", "']' closing the address")
        if items:
            return ast.Address(base, offset, Pos(t[2], t[3]), items)
        return ast.Address(base, offset, Pos(t[2], t[3]))

    def vector(self) -> ast.Vector:
        """`{a, b}`: names, sinks and constants (ptxas allows no nesting or addresses here)."""
        toks = self.toks
        t = toks[self.i]
        self.i += 1
        items: list[ast.Operand] = []
        while True:
            x = toks[self.i]
            if x[0] == IDENT:
                items.append(self.name_operand(x, offset=False))
            elif x[0] == FLOAT and _hex_float(x[1]):
                self.i += 1
                items.append(float_imm(x[1], Pos(x[2], x[3])))
            elif x[0] in (INT, FLOAT) or (x[0] == PUNCT and x[1] in _EXPR_START):
                items.append(self.based(VECTOR_BASE, self.constant))
            else:
                raise self.error("a register, a sink or a constant in the vector")
            if self.at(","):
                self.i += 1
                continue
            break
        self.expect("}", "',' or '}' in the vector")
        return ast.Vector(tuple(items), Pos(t[2], t[3]))

    def paren_list(self) -> ast.ParenList:
        """`(a, b)` of `call`: names alone, sinks and constant expressions."""
        toks = self.toks
        t = toks[self.i]
        self.i += 1
        items: list[ast.Operand] = []
        if not self.at(")"):
            while True:
                x = toks[self.i]
                if x[0] == IDENT:  # a name alone: no component, offset or pair (ptxas 13.0)
                    self.i += 1
                    pos = Pos(x[2], x[3])
                    items.append(ast.Sink(pos) if x[1] == "_" else ast.Name(x[1], pos))
                elif x[0] == FLOAT and _hex_float(x[1]):
                    self.i += 1
                    items.append(float_imm(x[1], Pos(x[2], x[3])))
                elif x[0] in (INT, FLOAT) or (x[0] == PUNCT and x[1] in _EXPR_START):
                    items.append(self.constant())
                else:
                    raise self.error("a name or a constant in the call's list")
                if self.at(","):
                    self.i += 1
                    continue
                break
        self.expect(")", "',' or ')' in the call's list")
        return ast.ParenList(tuple(items), Pos(t[2], t[3]))

    def call_operands(self) -> list[ast.Operand]:
        """`call`'s shape: `[(rets),] target [, (args)] [, prototype-or-targets]`."""
        out: list[ast.Operand] = []
        if self.at("("):
            out.append(self.paren_list())
            self.expect(",", "',' after the call's return list")
        out.append(self.call_name("the function called"))
        if self.at(","):
            self.i += 1
            if self.at("("):
                out.append(self.paren_list())
                if self.at(","):
                    self.i += 1
                    out.append(self.call_name("a .callprototype or .calltargets label"))
            else:
                out.append(self.call_name("the argument list or a prototype label"))
        return out

    def call_name(self, what: str) -> ast.Operand:
        """A function, register or label name: no components (`f.x` is an error for ptxas)."""
        t = self.toks[self.i]
        if t[0] != IDENT or t[1] == "_":
            raise self.error(what)
        self.i += 1
        return ast.Name(t[1], Pos(t[2], t[3]))

    def init_item(self) -> ast.Operand:
        """One initializer value (PTX ISA 5.4.4), in the shapes ptxas 13.0 takes: a constant expression,
        an address (`sym`, `sym+4`, `generic(sym)`, `generic(sym)+4`), a byte mask of one (`0xff00(sym)`,
        `0xff(generic(sym)+4)`, `0xff(5)`), or a `{...}` list of them, maybe empty."""
        toks = self.toks
        t = toks[self.i]
        kind = t[0]
        if kind == PUNCT and t[1] == "{":
            self.push(1)  # (braces in an initializer: their cost on ptxas's stack is not measured)
            self.i += 1
            self.nest()
            items: list[ast.Operand] = []
            if not self.at("}"):
                while True:
                    items.append(self.init_item())
                    if self.at(","):
                        self.i += 1
                        continue
                    break
            self.expect("}", "',' or '}' in the initializer")
            self.unnest()
            return ast.Vector(tuple(items), Pos(t[2], t[3]))
        nxt = toks[self.i + 1]
        if kind == INT and nxt[1] == "(" and nxt[0] == PUNCT:
            # `0xff00(sym)`: the byte of an address the mask selects
            start = self.i
            self.i += 2
            if toks[self.i][0] == IDENT:
                self.init_address()
            else:
                self.int_expr("the value a byte mask applies to")
            self.expect(")", "')' closing the byte mask")
            return ast.Expr(self.text_from(start), None, Pos(t[2], t[3]))
        if kind == IDENT:
            return self.init_address()
        if kind == FLOAT and _hex_float(t[1]):
            self.i += 1
            return float_imm(t[1], Pos(t[2], t[3]))
        if kind in (INT, FLOAT) or (kind == PUNCT and t[1] in _EXPR_START):
            return self.constant()
        raise self.error("a constant, an address or '{' in the initializer")

    def init_address(self) -> ast.Operand:
        """`sym`, `sym+expr`, `generic(sym)` or `generic(sym)+expr` in an initializer (the offset an
        integer; no other name may stand before `(`), or `field = value`."""
        toks = self.toks
        t = toks[self.i]
        start = self.i
        nxt = toks[self.i + 1]
        if nxt[1] == "=" and nxt[0] == PUNCT:
            # `filter_mode = nearest`: a field of a .texref/.samplerref/.surfref (PTX ISA 5.3; ptxas
            # reads the form for any type and judges the names later), the value a name or a constant
            self.ident("a field name")
            self.i += 1
            v = toks[self.i]
            if v[0] == IDENT:
                self.ident("a field value")
            elif v[0] == FLOAT and _hex_float(v[1]):
                self.i += 1
            elif v[0] in (INT, FLOAT) or (v[0] == PUNCT and v[1] in _EXPR_START):
                self.expr(0)
            else:
                raise self.error("a field value (a name or a constant)")
            return ast.Expr(self.text_from(start), None, Pos(t[2], t[3]))
        if nxt[1] == "(" and nxt[0] == PUNCT:
            self.i += 2
            self.ident("a symbol")
            self.expect(")", "')' closing generic()")
            if t[1] != "generic":  # ptxas reads `name(sym)`, then refuses the name
                raise self.error("an initializer ('generic(sym)' is the only operator on a name)", t)
        else:
            self.ident("a symbol or a constant")
        if self.at("+"):
            self.i += 1
            self.int_expr("an address offset")
        elif self.i - start == 1:
            return ast.Name(t[1], Pos(t[2], t[3]))
        return ast.Expr(self.text_from(start), None, Pos(t[2], t[3]))
