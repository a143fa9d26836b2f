"""Loads, stores, atomics and address conversion: ld, st, atom, red, cvta, mapa.

The memory model is sequentially consistent here: a load sees the latest store. Ordering qualifiers
(`.volatile`, `.relaxed`, `.acquire`, `.release`, scopes) and cache qualifiers therefore change nothing
about the value read or written; the memory-model layer (issue 7) gives them their meaning.
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim import registry
from mbarrier.sim.address import LOCAL_GENERIC, PARAM_GENERIC, SHARED_GENERIC, address_mask
from mbarrier.sim.compile import Gen, sext
from mbarrier.sim.registry import (
    SPACES,
    Access,
    CopyKind,
    CopyUse,
    Facts,
    Kind,
    Space,
    instruction,
    spaces_of,
)
from mbarrier.sim.types import TYPES, Scalar

# Qualifiers with no effect on the value: ordering (modelled by the memory-model layer) and caching.
_NEUTRAL = frozenset({
    ".volatile", ".relaxed", ".acquire", ".release", ".weak", ".mmio", ".cta", ".cluster", ".gpu", ".sys",
    ".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt", ".nc", ".L1::evict_normal", ".L1::evict_unchanged",
    ".L1::evict_first", ".L1::evict_last", ".L1::no_allocate", ".L2::evict_normal", ".L2::evict_first",
    ".L2::evict_last", ".L2::64B", ".L2::128B", ".L2::256B", ".aligned",
})
_VECTOR = {".v2": 2, ".v4": 4}
_WINDOWS = {"cta": SHARED_GENERIC, "cluster": SHARED_GENERIC, "local": LOCAL_GENERIC, "param": PARAM_GENERIC}


def space_of(g: Gen, ins: ast.Instruction) -> str:
    """The state space of a load, store or atomic (`sim.registry.SPACES`); two of them are refused."""
    spaces = spaces_of(ins.qualifiers)
    if len(spaces) > 1:
        raise g.unsupported("more than one state space")
    return (spaces[0] if spaces else Space.GENERIC).value


def memory_facts(ins: ast.Instruction) -> Facts:
    """ld, st, atom, red: the address operand, its space and the bytes; st.async/red.async issue a store
    that an engine lands later, completing its bytes of tx on the mbarrier operand (in the same CTA)."""
    q, op = ins.qualifiers, ins.opcode
    types = [TYPES[t].size for t in q if t in TYPES]
    n = next((_VECTOR[x] for x in q if x in _VECTOR), 1)
    size = types[-1] * n if types else None
    if ".async" in q and op in ("st", "red"):
        dst = Access(0, registry.space_of(q), size)
        return Facts(Kind.COPY, op, copy=CopyUse(CopyKind.STORE_ASYNC, dst, barrier=Access(2, dst.space, 8)))
    kind = {"ld": Kind.LOAD, "st": Kind.STORE}.get(op, Kind.ATOMIC)
    address = Access(1 if op in ("ld", "atom") else 0, registry.space_of(q), size)
    return Facts(kind, op, writes=op in ("ld", "atom"), access=address)


def _check_quals(g: Gen, ins: ast.Instruction, allowed: frozenset[str]) -> None:
    for q in ins.qualifiers:
        known = q in _NEUTRAL or q in SPACES or q in TYPES or q in _VECTOR
        if q not in allowed and not known:
            raise g.unsupported(f"qualifier {q}")


def load_expr(space: str, addr: str, size: int) -> str:
    if space == "global":
        return f"m.ld_global(t, {addr}, {size})"
    return f"m.ld_{space if space != 'generic' else 'gen'}(t, {addr}, {size})"


def store_stmt(space: str, addr: str, size: int, value: str) -> str:
    if space == "global":
        return f"m.st_global(t, {addr}, {size}, {value})"
    return f"m.st_{space if space != 'generic' else 'gen'}(t, {addr}, {size}, {value})"


def _single(op: ast.Operand, n: int) -> ast.Operand:
    """`{ %r1 }` without a vector qualifier (Triton writes these) is the register itself."""
    if n == 1 and isinstance(op, ast.Vector) and len(op.items) == 1:
        return op.items[0]
    return op


def _set_loaded(g: Gen, d: ast.Operand, value: str, ty: Scalar) -> None:
    """A loaded value into a register that may be wider than the type (sign- or zero-extended)."""
    reg = g.dst(d)
    if reg is None:
        return
    if ty.signed and reg.type.bits > ty.bits:
        g.lines.append(f"r[{reg.slot}] = {sext(value, ty.bits)} & {reg.type.mask:#x}")
    else:
        g.lines.append(f"r[{reg.slot}] = {value}")


@instruction("ld", facts=memory_facts)
def _ld(g: Gen, ins: ast.Instruction) -> None:
    _check_quals(g, ins, frozenset())
    ty = g.type_of(ins)
    d, a = ins.operands[:2]
    if len(ins.operands) != 2:
        raise g.unsupported("cache-hint operand")
    space = space_of(g, ins)
    n = next((_VECTOR[q] for q in ins.qualifiers if q in _VECTOR), 1)
    d = _single(d, n)
    if space == "param":
        if _frame_var(g, a):
            space = "local"
        elif _kernel_param(g, a):
            _ld_param(g, d, a, ty, n)
            return
        elif not g.entry and ".param::entry" not in ins.qualifiers:
            # In a .func, .param means .param::func: its own parameters, whose address is a local one.
            raise g.unsupported("ld.param::func through a register")
    addr = g.address(a, space)
    if n == 1:
        _set_loaded(g, d, load_expr(space, addr, ty.size), ty)
        return
    if not isinstance(d, ast.Vector) or len(d.items) != n:
        raise g.unsupported("vector destination")
    g.lines.append(f"v = {load_expr(space, addr, ty.size * n)}")
    for i, item in enumerate(d.items):
        if not isinstance(item, ast.Sink):
            _set_loaded(g, item, f"((v >> {i * ty.bits}) & {ty.mask:#x})", ty)


def _frame_var(g: Gen, a: ast.Operand) -> bool:
    """A `.param` variable of the function's frame (a call's argument or result, a .func's parameter)."""
    return isinstance(a, ast.Address) and a.base is not None and g.var(a.base.name) is not None


def _kernel_param(g: Gen, a: ast.Operand) -> bool:
    """`[name+offset]` where name is a kernel parameter (otherwise the address is in a register)."""
    return isinstance(a, ast.Address) and a.base is not None and a.base.name in g.layout.params \
        and g.lookup(a.base.name) is None


def _ld_param(g: Gen, d: ast.Operand, a: ast.Operand, ty: Scalar, n: int) -> None:
    """Kernel parameters are read-only launch constants (PTX ISA 5.1.6.1): a load by the parameter's
    name compiles to its value; one through a register reads the parameter memory (`m.ld_param`)."""
    assert isinstance(a, ast.Address) and a.base is not None
    blob = g.layout.params[a.base.name]
    items = d.items if isinstance(d, ast.Vector) else (d,)
    for i, item in enumerate(items[:n]):
        off = a.offset + i * ty.size
        if off + ty.size > len(blob):
            raise g.unsupported(f"read past the end of parameter {a.base.name!r}")
        if not isinstance(item, ast.Sink):
            _set_loaded(g, item, f"{int.from_bytes(blob[off:off + ty.size], 'little'):#x}", ty)


_ASYNC = frozenset({".async", ".weak", ".release", ".relaxed", ".mbarrier::complete_tx::bytes"})


def _store_async(g: Gen, ins: ast.Instruction, op: str | None) -> None:
    """st.async / red.async to distributed shared memory: an engine lands the store (or reduction) later
    and performs complete-tx of its size on the mbarrier of the destination CTA."""
    spaces = spaces_of(ins.qualifiers)
    if spaces not in ([Space.CLUSTER], []) or ".mbarrier::complete_tx::bytes" not in ins.qualifiers:
        raise g.unsupported("st.async/red.async form")
    ty = g.type_of(ins)
    n = next((_VECTOR[q] for q in ins.qualifiers if q in _VECTOR), 1)
    a, v, bar = ins.operands
    if isinstance(v, ast.Vector):
        value = " | ".join(f"({g.src(x, ty)} << {i * ty.bits})" for i, x in enumerate(v.items))
    else:
        value = g.src(v, ty)
    kind = "f" if ty.float else ("s" if ty.signed else "u")
    g.lines.append(f"m.st_async(t, {g.address(a, 'cluster')}, {value}, {ty.size * n}, "
                   f"{g.address(bar, 'cluster')}, {op!r}, {kind!r})")


@instruction("st", facts=memory_facts)
def _st(g: Gen, ins: ast.Instruction) -> None:
    if ".async" in ins.qualifiers:
        _check_quals(g, ins, _ASYNC)
        _store_async(g, ins, None)
        return
    _check_quals(g, ins, frozenset())
    ty = g.type_of(ins)
    if len(ins.operands) != 2:
        raise g.unsupported("cache-hint operand")
    a, v = ins.operands
    v = _single(v, next((_VECTOR[q] for q in ins.qualifiers if q in _VECTOR), 1))
    space = space_of(g, ins)
    if space == "param" and _frame_var(g, a):
        space = "local"  # a call's argument or a .func's parameter: a variable of the frame
    addr = g.address(a, space)
    if isinstance(v, ast.Vector):
        parts = [f"({g.src(x, ty)} << {i * ty.bits})" for i, x in enumerate(v.items)]
        g.lines.append(store_stmt(space, addr, ty.size * len(v.items), " | ".join(parts)))
    else:
        g.lines.append(store_stmt(space, addr, ty.size, g.src(v, ty)))


_ATOM_OPS = ("add", "inc", "dec", "min", "max", "and", "or", "xor", "exch", "cas")


@instruction("atom", "red", facts=memory_facts)
def _atom(g: Gen, ins: ast.Instruction) -> None:
    ops = [q[1:] for q in ins.qualifiers if q[1:] in _ATOM_OPS]
    if len(ops) != 1:
        raise g.unsupported("atomic operation")
    if ins.opcode == "red" and ".async" in ins.qualifiers:
        _check_quals(g, ins, _ASYNC | frozenset("." + o for o in _ATOM_OPS))
        _store_async(g, ins, ops[0])
        return
    _check_quals(g, ins, frozenset("." + o for o in _ATOM_OPS))
    op = ops[0]
    ty = g.type_of(ins)
    if ty.float and not (op in ("add", "exch") and ty.bits in (32, 64)):
        raise g.unsupported(f"float atomic .{op}")
    space = space_of(g, ins)
    if space == "param":
        raise g.unsupported("atomics on .param")
    operands = list(ins.operands)
    d = operands.pop(0) if ins.opcode == "atom" else None
    a = operands.pop(0)
    b = g.src(operands[0], ty)
    c = g.src(operands[1], ty) if op == "cas" else "0"
    if op == "cas" and len(operands) != 2 or op != "cas" and len(operands) != 1:
        raise g.unsupported("operand count")
    kind = "f" if ty.float else ("s" if ty.signed else "u")
    call = f"m.atom(t, {space!r}, {g.address(a, space)}, {ty.size}, {op!r}, {kind!r}, {b}, {c})"
    if d is None:
        g.lines.append(call)
    else:
        g.assign(d, call, ty, masked=True)


@instruction("cvta", facts=Kind.REGISTERS, writes=True)
def _cvta(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a = ins.operands
    to = ".to" in ins.qualifiers
    spaces = spaces_of(ins.qualifiers)
    if not spaces or ty.bits != 64:
        raise g.unsupported()
    space = spaces[0].value
    v = g.src(a, ty)
    if space in ("cta", "cluster", "local", "param"):
        if to:  # the generic address must lie in the window (the machine checks)
            g.assign(d, f"m.cvta_to(t, {space!r}, {v})", ty)
        else:  # an address of these spaces is 32 bits wide (PTX ISA 6.4.1): the rest of a register is not.
            # cvta.param: a kernel parameter's generic address (PTX ISA 5.1.6.1, kernel parameters by
            # generic addressing); the .param address is the offset in the parameter memory.
            g.assign(d, f"({v} & {address_mask(space):#x}) + {_WINDOWS[space]:#x}", ty)
    elif space == "global":
        g.assign(d, v, ty, masked=True)
    else:
        raise g.unsupported(f"the {space} state space")


@instruction("mapa", facts=Kind.REGISTERS, writes=True)
def _mapa(g: Gen, ins: ast.Instruction) -> None:
    ty = g.type_of(ins)
    d, a, b = ins.operands
    generic = not spaces_of(ins.qualifiers)
    rank = g.src(b, TYPES[".u32"])
    g.assign(d, f"m.mapa(t, {g.src(a, ty)}, {rank}, {generic})", ty)


@instruction("isspacep", facts=Kind.REGISTERS, writes=True)
def _isspacep(g: Gen, ins: ast.Instruction) -> None:
    """isspacep.space p, a: whether the generic address a falls in the window of that state space."""
    spaces = spaces_of(ins.qualifiers)
    if len(spaces) != 1:
        raise g.unsupported()
    p, a = ins.operands
    g.assign(p, f"m.isspace(t, {g.src(a, TYPES['.u64'])}, {spaces[0].value!r})", TYPES[".pred"])


@instruction("prefetch", "prefetchu", facts=Kind.NOP)
def _prefetch(g: Gen, ins: ast.Instruction) -> None:
    """A cache hint: it moves no data the program can observe, so it is a step with no effect (its
    address is still evaluated). `prefetch{.const,.param}.tensormap [a]` (PTX ISA, Data Movement and
    Conversion Instructions: prefetch) brings a tensor map into the cache: no effect either."""
    if len(ins.operands) != 1 or ins.opcode == "prefetchu" and ".tensormap" in ins.qualifiers:
        raise g.unsupported()
    g.address(ins.operands[0], space_of(g, ins))


@instruction("getctarank", facts=Kind.OPAQUE, writes=True)
def _getctarank(g: Gen, ins: ast.Instruction) -> None:
    """getctarank{.shared::cluster}.u32 d, a: the rank of the CTA whose shared memory `a` is in."""
    generic = not any(q.startswith(".shared") for q in ins.qualifiers)
    d, a = ins.operands
    g.assign(d, f"m.ctarank(t, {g.src(a, TYPES['.u64'])}, {generic})", TYPES[".u32"])
