"""What the names of one function mean: registers with their types, variables with their state space,
type and alignment, special registers. The validator asks this table what an operand is."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.ptx import ast
from mbarrier.spec.forms import PREDEFINED_IDENTIFIERS, SPECIAL_REGISTERS, SPECIAL_VECTORS

#: Size in bytes of each scalar PTX type (PTX ISA 5.2.2).
TYPE_SIZE: dict[str, int] = {
    ".b8": 1, ".u8": 1, ".s8": 1, ".b16": 2, ".u16": 2, ".s16": 2, ".f16": 2, ".b32": 4, ".u32": 4,
    ".s32": 4, ".f32": 4, ".b64": 8, ".u64": 8, ".s64": 8, ".f64": 8, ".b128": 16, ".pred": 1,
}


@dataclass(frozen=True, slots=True)
class Symbol:
    """A declared name. space ".reg" for registers; `special` for %tid.x and the like."""

    name: str
    space: str
    type: str
    align: int | None = None
    count: int = 1
    vector: int | None = None
    special: bool = False

    @property
    def size(self) -> int:
        return TYPE_SIZE.get(self.type, 0) * (self.vector or 1) * self.count

    @property
    def alignment(self) -> int:
        """The declared `.align`, else the natural alignment of the element type."""
        return self.align or TYPE_SIZE.get(self.type, 1) * (self.vector or 1)


class Scope:
    """Every name visible in one function: module variables, parameters, and the function body's
    declarations (nested blocks included; PTX forbids reusing a name in a nested block for a
    different thing, so one flat table per function is enough for types)."""

    def __init__(self, module: ast.Module, function: ast.Function | None) -> None:
        self._names: dict[str, Symbol] = {}
        self._ranges: list[tuple[str, int, Symbol]] = []
        for decl in module.declarations:
            self._declare(decl)
        if function is not None:
            for p in (*function.params, *function.returns):
                self._names[p.name] = Symbol(p.name, p.space, p.type, p.align,
                                             _count(p.dims))
            for decl in _declarations(function.body or ()):
                self._declare(decl)
        # Names that are no variables but that operands may still name: labels, functions.
        self._other: set[str] = {f.name for f in module.functions} | PREDEFINED_IDENTIFIERS | SPECIAL_VECTORS
        if function is not None:
            self._other.update(_labels(function.body or ()))

    def _declare(self, decl: ast.Declaration) -> None:
        for d in decl.names:
            sym = Symbol(d.name, decl.space, decl.type, decl.align, _count(d.dims), decl.vector)
            if d.range is not None:
                self._ranges.append((d.name, d.range, sym))
            else:
                self._names[d.name] = sym

    def lookup(self, name: str) -> Symbol | None:
        sym = self._names.get(name)
        if sym is not None:
            return sym
        if name in SPECIAL_REGISTERS:
            return Symbol(name, ".reg", SPECIAL_REGISTERS[name], special=True)
        for prefix, n, rsym in self._ranges:
            rest = name[len(prefix):]
            if name.startswith(prefix) and rest.isdigit() and int(rest) < n:
                return Symbol(name, rsym.space, rsym.type, rsym.align, 1, rsym.vector)
        return None


    def known(self, name: str) -> bool:
        """Whether ptxas resolves `name` at all (a variable, register, label, function...)."""
        return name in self._other or self.lookup(name) is not None

    def unknown_names(self, instr: ast.Instruction) -> list[ast.Name]:
        """The names in an instruction (guard and operands) that no declaration gives: ptxas's
        "Unknown symbol", one per occurrence."""
        names: list[ast.Name] = []
        if instr.guard is not None:
            g = instr.guard
            names.append(ast.Name(g.predicate, g.pos))
        for op in instr.operands:
            _names_in(op, names)
        return [n for n in names if not self.known(n.name)]


def _names_in(op: ast.Operand, out: list[ast.Name]) -> None:
    if isinstance(op, ast.Name):
        out.append(op)
    elif isinstance(op, ast.Address):
        if op.base is not None:
            out.append(op.base)
        for item in op.items:
            _names_in(item, out)
    elif isinstance(op, ast.Vector | ast.ParenList):
        for item in op.items:
            _names_in(item, out)
    elif isinstance(op, ast.Not):
        _names_in(op.operand, out)


def _labels(body: tuple[ast.Statement, ...]) -> list[str]:
    out: list[str] = []
    for s in body:
        if isinstance(s, ast.Label):
            out.append(s.name)
        elif isinstance(s, ast.Block):
            out.extend(_labels(s.body))
    return out


def _count(dims: tuple[int | None, ...]) -> int:
    n = 1
    for d in dims:
        n *= d if d is not None else 1
    return n


def _declarations(body: tuple[ast.Statement, ...]) -> list[ast.Declaration]:
    out: list[ast.Declaration] = []
    for s in body:
        if isinstance(s, ast.Declaration):
            out.append(s)
        elif isinstance(s, ast.Block):
            out.extend(_declarations(s.body))
    return out
