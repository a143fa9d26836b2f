"""The syntax tree of a PTX module: what the parser produces and the validator and simulator read.

Positions are 1-based line and column in the source text. Every node is immutable.

Nodes are named tuples (typing.NamedTuple): the parser builds millions of them, and its fast path
builds a tuple in C (tuple.__new__) at about half a frozen dataclass's cost (bench/parse.py measures
it). What a node offers is the contract tests/ptx/test_ast_contract.py checks: construction by
position or keyword with the defaults below, attribute access, immutability, hashing, a repr that
shows the fields, and equality by class and value (a Name never equals a Label, nor a plain tuple,
with the same fields; nodes have no order). That they are also tuples (len, indexing, iteration) is
no part of it. Module, built once per parse, stays a frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class Pos(NamedTuple):
    line: int
    column: int


# -- operands --------------------------------------------------------------------------------------


class Name(NamedTuple):
    """An identifier: a register (`%r1`, `r1`), a variable symbol, a label, a function, or a special
    register with its component (`%tid.x` has name "%tid.x"). What it names is resolved later, from the
    declarations in scope."""

    name: str
    pos: Pos


class Imm(NamedTuple):
    """An integer immediate. `value` is the literal's value; `text` its spelling (`0x10`, `7U`)."""

    value: int
    text: str
    pos: Pos
    unsigned: bool = False


class FloatImm(NamedTuple):
    """A float immediate: `0fXXXXXXXX` (bits=32), `0dXXXXXXXXXXXXXXXX` (bits=64) or a decimal literal
    (bits=0). `raw` is the bit pattern for the hex forms."""

    value: float
    raw: int
    bits: int
    text: str
    pos: Pos


class Sink(NamedTuple):
    """The sink symbol `_`."""

    pos: Pos


class Address(NamedTuple):
    """`[base]`, `[base+offset]`, `[base-offset]` or `[offset]`: base is a Name (register or symbol)
    or None for an absolute immediate address. `items` holds what follows a comma inside the brackets
    (`[tmap, {x, y}]` of tensor copies and textures); it is empty for a plain address."""

    base: Name | None
    offset: int
    pos: Pos
    items: tuple[Operand, ...] = ()


class Vector(NamedTuple):
    """`{a, b, ...}`: a vector operand."""

    items: tuple[Operand, ...]
    pos: Pos


class Not(NamedTuple):
    """`!p`: a negated predicate operand."""

    operand: Operand
    pos: Pos


class ParenList(NamedTuple):
    """`(a, b, ...)`: the return and argument lists of `call`."""

    items: tuple[Operand, ...]
    pos: Pos


class Expr(NamedTuple):
    """A constant expression that is more than one literal (`sym+4`, `(1<<3)`), kept as text with
    its value where it could be computed (None when it names a symbol)."""

    text: str
    value: int | None
    pos: Pos


Operand = Name | Imm | FloatImm | Sink | Address | Vector | Not | ParenList | Expr


# -- statements ------------------------------------------------------------------------------------


class Guard(NamedTuple):
    """`@p` or `@!p` before an instruction."""

    predicate: str
    negated: bool
    pos: Pos


class Instruction(NamedTuple):
    """One instruction. For `mbarrier.arrive.shared::cta.b64`: opcode "mbarrier", qualifiers
    (".arrive", ".shared::cta", ".b64") in source order, text "mbarrier.arrive.shared::cta.b64".
    `pos` is where the opcode starts (a guard has its own); each operand has its own pos."""

    opcode: str
    qualifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Guard | None
    pos: Pos

    @property
    def text(self) -> str:
        return self.opcode + "".join(self.qualifiers)


class Label(NamedTuple):
    name: str
    pos: Pos


class Declarator(NamedTuple):
    """One declared name: `x`, `x[4]`, `x[]`, `%r<10>` (range=10), with an optional initializer."""

    name: str
    dims: tuple[int | None, ...] = ()
    range: int | None = None
    init: tuple[Operand, ...] | None = None
    pos: Pos = Pos(0, 0)


class Declaration(NamedTuple):
    """`.reg .b32 %r<4>;`, `.shared .align 8 .b64 bar[2];`, `.global .u32 g = 5;` ...

    space: ".reg", ".shared", ".global", ".const", ".local", ".param", ".tex"...; type: ".b64", ".pred" ...
    vector: 2 or 4 for `.v2`/`.v4`, else None. linkage: ".extern", ".visible", ".weak" or None."""

    space: str
    type: str
    names: tuple[Declarator, ...]
    pos: Pos
    align: int | None = None
    vector: int | None = None
    linkage: str | None = None
    extra: tuple[str, ...] = ()


class Directive(NamedTuple):
    """Any other directive: `.loc 1 12 3`, `.pragma "nounroll";`, `.file 1 "k.cu"`, `.section` ...
    `args` keeps the tokens' text in order."""

    name: str
    args: tuple[str, ...]
    pos: Pos


class Block(NamedTuple):
    """A `{ ... }` scope inside a function body."""

    body: tuple[Statement, ...]
    pos: Pos


Statement = Instruction | Label | Declaration | Directive | Block


class Param(NamedTuple):
    """A parameter of `.entry`/`.func`: `.param .u64 name`, `.param .align 8 .b8 name[16]`, `.reg .b32 x`."""

    space: str
    type: str
    name: str
    pos: Pos
    align: int | None = None
    dims: tuple[int | None, ...] = ()
    ptr: bool = False


class Function(NamedTuple):
    """`.entry` (kind "entry") or `.func` (kind "func"). `body` is None for a prototype/declaration.
    `performance` holds `.maxntid 128, 1, 1` as (".maxntid", (128, 1, 1)) and the like."""

    kind: str
    name: str
    params: tuple[Param, ...]
    returns: tuple[Param, ...]
    body: tuple[Statement, ...] | None
    pos: Pos
    linkage: str | None = None
    performance: tuple[tuple[str, tuple[int, ...]], ...] = ()


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
