"""The syntax tree of a PTX module: what the parser produces and the validator and simulator read.

Positions are 1-based line and column in the source text. Every node is immutable.

What a node offers is the contract tests/ptx/test_ast_contract.py checks: construction by position or
keyword with the fields and defaults below (`Name(name, pos)`), attribute access, `pos` (a Pos) and
its parts `line` and `column`, immutability, hashing, copying and pickling, a repr that shows the
fields, and equality by class and value (a Name never equals a Label, nor a plain tuple, with the same
fields; nodes have no order). Module, built once per parse, is a frozen dataclass.

How nodes are made, which is no part of the contract: each is a named tuple (the private `_Name` ...)
that stores its position flat, as `line` and `column`, under a public class that takes and gives a
Pos. The parser builds millions of nodes, and its fast path builds each with one tuple.__new__ call
in C on the flat fields: a Pos object per node would double the objects to build (bench/parse.py
measures it). That they are tuples (len, indexing, iteration) is no part of the contract either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

_new = tuple.__new__


class Pos(NamedTuple):
    line: int
    column: int


_NOWHERE = Pos(0, 0)  # a Declarator made by hand, not parsed


class _Located(Protocol):
    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...


class _Node:
    """What every node class has beside its fields: `pos`, and the repr, copy and pickle of the
    public fields (each class's __match_args__) rather than the flat ones."""

    __slots__ = ()
    __match_args__: tuple[str, ...]

    @property
    def pos(self: _Located) -> Pos:
        return _new(Pos, (self.line, self.column))

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__match_args__)
        return f"{type(self).__name__}({fields})"

    def __getnewargs__(self) -> tuple[Any, ...]:
        return tuple(getattr(self, k) for k in self.__match_args__)


# -- operands --------------------------------------------------------------------------------------


class _Name(NamedTuple):
    name: str
    line: int
    column: int


class Name(_Node, _Name):
    """An identifier: a register (`%r1`, `r1`), a variable symbol, a label, a function, or a special
    register with its component (`%tid.x` has name "%tid.x"). What it names is resolved later, from the
    declarations in scope."""

    __slots__ = ()
    __match_args__ = ("name", "pos")

    def __new__(cls, name: str, pos: Pos) -> Name:
        return _new(cls, (name, *pos))


class _Imm(NamedTuple):
    value: int
    text: str
    line: int
    column: int
    unsigned: bool = False


class Imm(_Node, _Imm):
    """An integer immediate. `value` is the literal's value; `text` its spelling (`0x10`, `7U`)."""

    __slots__ = ()
    __match_args__ = ("value", "text", "pos", "unsigned")

    def __new__(cls, value: int, text: str, pos: Pos, unsigned: bool = False) -> Imm:
        return _new(cls, (value, text, *pos, unsigned))


class _FloatImm(NamedTuple):
    value: float
    raw: int
    bits: int
    text: str
    line: int
    column: int


class FloatImm(_Node, _FloatImm):
    """A float immediate: `0fXXXXXXXX` (bits=32), `0dXXXXXXXXXXXXXXXX` (bits=64) or a decimal literal
    (bits=0). `raw` is the bit pattern for the hex forms."""

    __slots__ = ()
    __match_args__ = ("value", "raw", "bits", "text", "pos")

    def __new__(cls, value: float, raw: int, bits: int, text: str, pos: Pos) -> FloatImm:
        return _new(cls, (value, raw, bits, text, *pos))


class _Sink(NamedTuple):
    line: int
    column: int


class Sink(_Node, _Sink):
    """The sink symbol `_`."""

    __slots__ = ()
    __match_args__ = ("pos",)

    def __new__(cls, pos: Pos) -> Sink:
        return _new(cls, (*pos,))


class _Address(NamedTuple):
    base: Name | None
    offset: int
    line: int
    column: int
    items: tuple[Operand, ...] = ()


class Address(_Node, _Address):
    """`[base]`, `[base+offset]`, `[base-offset]` or `[offset]`: base is a Name (register or symbol)
    or None for an absolute immediate address. `items` holds what follows a comma inside the brackets
    (`[tmap, {x, y}]` of tensor copies and textures); it is empty for a plain address."""

    __slots__ = ()
    __match_args__ = ("base", "offset", "pos", "items")

    def __new__(cls, base: Name | None, offset: int, pos: Pos, items: tuple[Operand, ...] = ()) -> Address:
        return _new(cls, (base, offset, *pos, items))


class _Vector(NamedTuple):
    items: tuple[Operand, ...]
    line: int
    column: int


class Vector(_Node, _Vector):
    """`{a, b, ...}`: a vector operand."""

    __slots__ = ()
    __match_args__ = ("items", "pos")

    def __new__(cls, items: tuple[Operand, ...], pos: Pos) -> Vector:
        return _new(cls, (items, *pos))


class _Not(NamedTuple):
    operand: Operand
    line: int
    column: int


class Not(_Node, _Not):
    """`!p`: a negated predicate operand."""

    __slots__ = ()
    __match_args__ = ("operand", "pos")

    def __new__(cls, operand: Operand, pos: Pos) -> Not:
        return _new(cls, (operand, *pos))


class _ParenList(NamedTuple):
    items: tuple[Operand, ...]
    line: int
    column: int


class ParenList(_Node, _ParenList):
    """`(a, b, ...)`: the return and argument lists of `call`."""

    __slots__ = ()
    __match_args__ = ("items", "pos")

    def __new__(cls, items: tuple[Operand, ...], pos: Pos) -> ParenList:
        return _new(cls, (items, *pos))


class _Expr(NamedTuple):
    text: str
    value: int | None
    line: int
    column: int


class Expr(_Node, _Expr):
    """A constant expression that is more than one literal (`sym+4`, `(1<<3)`), kept as text with
    its value where it could be computed (None when it names a symbol)."""

    __slots__ = ()
    __match_args__ = ("text", "value", "pos")

    def __new__(cls, text: str, value: int | None, pos: Pos) -> Expr:
        return _new(cls, (text, value, *pos))


Operand = Name | Imm | FloatImm | Sink | Address | Vector | Not | ParenList | Expr


# -- statements ------------------------------------------------------------------------------------


class _Guard(NamedTuple):
    predicate: str
    negated: bool
    line: int
    column: int


class Guard(_Node, _Guard):
    """`@p` or `@!p` before an instruction."""

    __slots__ = ()
    __match_args__ = ("predicate", "negated", "pos")

    def __new__(cls, predicate: str, negated: bool, pos: Pos) -> Guard:
        return _new(cls, (predicate, negated, *pos))


class _Instruction(NamedTuple):
    opcode: str
    qualifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Guard | None
    line: int
    column: int


class Instruction(_Node, _Instruction):
    """One instruction. For `mbarrier.arrive.shared::cta.b64`: opcode "mbarrier", qualifiers
    (".arrive", ".shared::cta", ".b64") in source order, text "mbarrier.arrive.shared::cta.b64".
    `pos` is where the opcode starts (a guard has its own); each operand has its own pos."""

    __slots__ = ()
    __match_args__ = ("opcode", "qualifiers", "operands", "guard", "pos")

    def __new__(cls, opcode: str, qualifiers: tuple[str, ...], operands: tuple[Operand, ...],
                guard: Guard | None, pos: Pos) -> Instruction:
        return _new(cls, (opcode, qualifiers, operands, guard, *pos))

    @property
    def text(self) -> str:
        return self.opcode + "".join(self.qualifiers)


class _Label(NamedTuple):
    name: str
    line: int
    column: int


class Label(_Node, _Label):
    __slots__ = ()
    __match_args__ = ("name", "pos")

    def __new__(cls, name: str, pos: Pos) -> Label:
        return _new(cls, (name, *pos))


class _Declarator(NamedTuple):
    name: str
    dims: tuple[int | None, ...] = ()
    range: int | None = None
    init: tuple[Operand, ...] | None = None
    line: int = 0
    column: int = 0


class Declarator(_Node, _Declarator):
    """One declared name: `x`, `x[4]`, `x[]`, `%r<10>` (range=10), with an optional initializer."""

    __slots__ = ()
    __match_args__ = ("name", "dims", "range", "init", "pos")

    def __new__(cls, name: str, dims: tuple[int | None, ...] = (), range: int | None = None,
                init: tuple[Operand, ...] | None = None, pos: Pos = _NOWHERE) -> Declarator:
        return _new(cls, (name, dims, range, init, *pos))


class _Declaration(NamedTuple):
    space: str
    type: str
    names: tuple[Declarator, ...]
    line: int
    column: int
    align: int | None = None
    vector: int | None = None
    linkage: str | None = None
    extra: tuple[str, ...] = ()


class Declaration(_Node, _Declaration):
    """`.reg .b32 %r<4>;`, `.shared .align 8 .b64 bar[2];`, `.global .u32 g = 5;` ...

    space: ".reg", ".shared", ".global", ".const", ".local", ".param", ".tex"...; type: ".b64", ".pred" ...
    vector: 2 or 4 for `.v2`/`.v4`, else None. linkage: ".extern", ".visible", ".weak" or None.
    extra: the variable's attributes as written, without blanks (`.attribute(.managed)`)."""

    __slots__ = ()
    __match_args__ = ("space", "type", "names", "pos", "align", "vector", "linkage", "extra")

    def __new__(cls, space: str, type: str, names: tuple[Declarator, ...], pos: Pos,
                align: int | None = None, vector: int | None = None, linkage: str | None = None,
                extra: tuple[str, ...] = ()) -> Declaration:
        return _new(cls, (space, type, names, *pos, align, vector, linkage, extra))


class _Directive(NamedTuple):
    name: str
    args: tuple[str, ...]
    line: int
    column: int


class Directive(_Node, _Directive):
    """Any other directive: `.loc 1 12 3`, `.pragma "nounroll";`, `.file 1 "k.cu"`, `.section` ...
    `args` keeps the tokens' text in order."""

    __slots__ = ()
    __match_args__ = ("name", "args", "pos")

    def __new__(cls, name: str, args: tuple[str, ...], pos: Pos) -> Directive:
        return _new(cls, (name, args, *pos))


class _Block(NamedTuple):
    body: tuple[Statement, ...]
    line: int
    column: int


class Block(_Node, _Block):
    """A `{ ... }` scope inside a function body."""

    __slots__ = ()
    __match_args__ = ("body", "pos")

    def __new__(cls, body: tuple[Statement, ...], pos: Pos) -> Block:
        return _new(cls, (body, *pos))


Statement = Instruction | Label | Declaration | Directive | Block


def instructions(body: tuple[Statement, ...]) -> list[Instruction]:
    """The instructions of a function body in order, those of its `{ }` blocks in place."""
    out: list[Instruction] = []
    for s in body:
        if isinstance(s, Instruction):
            out.append(s)
        elif isinstance(s, Block):
            out.extend(instructions(s.body))
    return out


class _Param(NamedTuple):
    space: str
    type: str
    name: str
    line: int
    column: int
    align: int | None = None
    dims: tuple[int | None, ...] = ()
    ptr: bool = False
    ptr_space: str | None = None
    ptr_align: int | None = None


class Param(_Node, _Param):
    """A parameter of `.entry`/`.func`: `.param .u64 name`, `.param .align 8 .b8 name[16]`, `.reg .b32 x`.
    A kernel pointer parameter's `.ptr` attribute (PTX ISA 5.1.6.3) may name the state space and the
    alignment of what it points to (`ptr_space`, `ptr_align`); `align` is the parameter's own."""

    __slots__ = ()
    __match_args__ = ("space", "type", "name", "pos", "align", "dims", "ptr", "ptr_space", "ptr_align")

    def __new__(cls, space: str, type: str, name: str, pos: Pos, align: int | None = None,
                dims: tuple[int | None, ...] = (), ptr: bool = False, ptr_space: str | None = None,
                ptr_align: int | None = None) -> Param:
        return _new(cls, (space, type, name, *pos, align, dims, ptr, ptr_space, ptr_align))


class _Function(NamedTuple):
    kind: str
    name: str
    params: tuple[Param, ...]
    returns: tuple[Param, ...]
    body: tuple[Statement, ...] | None
    line: int
    column: int
    linkage: str | None = None
    performance: tuple[tuple[str, tuple[int, ...]], ...] = ()


class Function(_Node, _Function):
    """`.entry` (kind "entry") or `.func` (kind "func"). `body` is None for a prototype/declaration.
    `performance` holds `.maxntid 128, 1, 1` as (".maxntid", (128, 1, 1)) and the like."""

    __slots__ = ()
    __match_args__ = ("kind", "name", "params", "returns", "body", "pos", "linkage", "performance")

    def __new__(cls, kind: str, name: str, params: tuple[Param, ...], returns: tuple[Param, ...],
                body: tuple[Statement, ...] | None, pos: Pos, linkage: str | None = None,
                performance: tuple[tuple[str, tuple[int, ...]], ...] = ()) -> Function:
        return _new(cls, (kind, name, params, returns, body, *pos, linkage, performance))


@dataclass(frozen=True, slots=True)
class Module:
    """A whole PTX file. `version` is (major, minor) of `.version`; `targets` the `.target` list as
    written ("sm_90a", "texmode_independent", ...); `address_size` 32 or 64 (64 when absent)."""

    version: tuple[int, int] | None
    targets: tuple[str, ...]
    address_size: int
    functions: tuple[Function, ...]
    declarations: tuple[Declaration, ...]
    directives: tuple[Directive, ...]
    path: str = "<input>"
    source_lines: tuple[str, ...] = field(default=(), repr=False)

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name and f.body is not None:
                return f
        raise KeyError(name)

    @property
    def entries(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.kind == "entry" and f.body is not None)


def _equal(self: tuple[object, ...], other: object) -> bool:
    return type(self) is type(other) and tuple.__eq__(self, other)


def _unequal(self: tuple[object, ...], other: object) -> bool:
    return type(self) is not type(other) or tuple.__ne__(self, other)


def _unordered(self: tuple[object, ...], other: object) -> bool:
    raise TypeError(f"syntax-tree nodes have no order ({type(self).__name__})")


# A tuple's own comparisons look at the items only, and order them.
for _node in (Pos, Name, Imm, FloatImm, Sink, Address, Vector, Not, ParenList, Expr, Guard, Instruction,
              Label, Declarator, Declaration, Directive, Block, Param, Function):
    _node.__eq__ = _equal  # type: ignore[method-assign]
    _node.__ne__ = _unequal  # type: ignore[method-assign,assignment]
    _node.__hash__ = tuple.__hash__  # type: ignore[method-assign]
    for _op in ("__lt__", "__le__", "__gt__", "__ge__"):
        setattr(_node, _op, _unordered)
