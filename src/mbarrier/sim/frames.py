"""Where a launch puts a function's variables: the symbols of the module (`Symbol`), each function's
frame in the thread's local memory (`Frame`: its `.local` and `.param` declarations, a `.func`'s own
parameters and return values), and the `Layout` the compiled code reads them from."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from mbarrier.ptx import ast
from mbarrier.sim.errors import LaunchError
from mbarrier.sim.types import TYPES


@dataclass(frozen=True, slots=True)
class Symbol:
    """A variable's address in its state space (shared offset, generic global address, ...)."""

    space: str
    address: int
    size: int


@dataclass
class Frame:
    """A function's variables in the thread's local memory: its `.local` declarations, the `.param`
    variables it declares for calls it makes, and (for a `.func`) its own parameters and return values.
    Each function has a fixed region: calls copy arguments in and results out (recursion into a
    function that has such variables is not supported). Every declaration gets its own place, so the
    same name declared in two blocks (nvcc's `param0` of each call sequence) never shares bytes."""

    base: int
    params: list[tuple[str, int, int]]   # a .func's parameters, in order: (name, local address, size)
    returns: list[tuple[str, int, int]]  # a .func's return values, in order
    decls: list[tuple[str, int, int]]    # the body's .local/.param declarations, in source order
    size: int


@dataclass(frozen=True, slots=True)
class FrameVar:
    """A name in scope that is a variable of the frame: its local address and size."""

    address: int
    size: int


@dataclass
class Layout:
    """What the compiled code needs from the launch: symbol addresses, kernel parameter values and their
    `.param` addresses (offsets in the parameter memory), and every function's frame."""

    symbols: dict[str, Symbol]
    params: dict[str, bytes]
    frames: dict[str, Frame] = field(default_factory=dict)
    param_at: dict[str, int] = field(default_factory=dict)

    @property
    def local_size(self) -> int:
        return max((f.base + f.size for f in self.frames.values()), default=0)


def _var_size(type_name: str, dims: tuple[int | None, ...], vector: int | None = None) -> int:
    ty = TYPES.get(type_name)
    if ty is None:
        raise LaunchError(f"variables of type {type_name} are not supported")
    n = ty.size * (vector or 1)
    for d in dims:
        n *= d or 0
    return n


class _FrameBuilder:
    def __init__(self, base: int) -> None:
        self.base = base
        self.off = 0

    def put(self, name: str, size: int, align: int) -> tuple[str, int, int]:
        self.off = (self.off + align - 1) // align * align
        place = (name, self.base + self.off, size)
        self.off += size
        return place


def plan_frames(functions: list[ast.Function]) -> dict[str, Frame]:
    """Each function's region of local memory, one after the other, 16-byte aligned."""
    frames: dict[str, Frame] = {}
    base = 0
    for fn in functions:
        assert fn.body is not None
        fb = _FrameBuilder(base)
        params: list[tuple[str, int, int]] = []
        returns: list[tuple[str, int, int]] = []
        if fn.kind == "func":
            for p in fn.params:
                if p.space == ".param":
                    params.append(fb.put(p.name, _var_size(p.type, p.dims), p.align or 8))
            for p in fn.returns:
                if p.space == ".param":
                    returns.append(fb.put(p.name, _var_size(p.type, p.dims), p.align or 8))
        decls = []
        for kind, st in statements(fn.body):
            if kind == "stmt" and isinstance(st, ast.Declaration) and st.space in (".local", ".param"):
                for d in st.names:
                    size = _var_size(st.type, d.dims, st.vector)
                    decls.append(fb.put(d.name, size, st.align or max(1, TYPES[st.type].size)))
        size = (fb.off + 15) // 16 * 16
        frames[fn.name] = Frame(base, params, returns, decls, size)
        base += size
    return frames


def statements(body: tuple[ast.Statement, ...]) -> Iterator[tuple[str, object]]:
    """Flatten a body: ("enter", None) / ("leave", None) around blocks, ("stmt", s) otherwise."""
    for s in body:
        if isinstance(s, ast.Block):
            yield "enter", None
            yield from statements(s.body)
            yield "leave", None
        else:
            yield "stmt", s
