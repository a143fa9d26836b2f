"""Launching a kernel: shapes, cluster, arguments, memory layout, compiled code, and the threads.

A parameter is named by its PTX name or its 0-based position (nvcc mangles names into `_Z..._param_N`).
A 64-bit parameter that is not given is taken for a pointer and gets a zero-filled, lazily backed
buffer of its own (4 GiB of address space, nothing allocated until written); any other parameter that is
not given is an error naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from mbarrier.ptx import ast
from mbarrier.sim import isa  # noqa: F401 - registers the instruction emitters
from mbarrier.sim.address import BUFFER_SLOT_BITS, CODE_BASE
from mbarrier.sim.compile import SPECIAL_SLOT, CompiledFunction, compile_function, source_files
from mbarrier.sim.errors import LaunchError
from mbarrier.sim.frames import Layout, Symbol, plan_frames
from mbarrier.sim.launchspec import Context, Launch, Value, param_bytes
from mbarrier.sim.machine import Cluster, Cta, Machine, Thread, Warp
from mbarrier.sim.memory import Buffer, GlobalMemory, ParamMemory
from mbarrier.sim.types import TYPES
from mbarrier.spec.limits import (
    MAX_CLUSTER_CTAS,
    MAX_LOCAL_PER_THREAD,
    MAX_NCTAID,
    MAX_NTID,
    MAX_SHARED_PER_CTA,
    MAX_THREADS_PER_CTA,
)

Dim3 = tuple[int, int, int]
ArgValue = int | Buffer | bytes | Value

# Allocation granularity: a CTA's shared memory and each module variable are backed in whole units, so
# an access that runs a little past a variable's declared end stays in bounds, as on hardware.
SHARED_GRANULE = 128
GLOBAL_GRANULE = 256
# Dynamic shared memory (`.extern .shared` arrays) when the launch does not say: the default limit a
# kernel gets without opting in to more.
DEFAULT_DYNAMIC_SHARED = 48 * 1024
# The reserved shared memory that %reserved_smem_offset_* name: 16 bytes after the kernel's own.
RESERVED_SMEM = 16
# What a launch costs before its first step, for its check against a memory bound: a thread's object,
# lists and share of its warp (tracemalloc on ring_buffer.ptx, 20 CTAs of 1024 threads: 2,340 bytes a
# thread, 1,400 of them its 175 register slots), and a CTA's objects beside its shared memory.
THREAD_BYTES = 1024
REGISTER_BYTES = 8
CTA_BYTES = 2048


def thread_bytes(nregs: int, local_size: int) -> int:
    """About what one thread of a launch takes in memory before its first step."""
    return THREAD_BYTES + REGISTER_BYTES * nregs + local_size


def dim3(value: int | tuple[int, ...] | list[int], what: str) -> Dim3:
    v = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(v) <= 3 or any(not isinstance(x, int) or x < 1 for x in v):
        raise LaunchError(f"{what} must be 1 to 3 positive integers, got {value!r}")
    return (v + (1, 1))[:3]  # type: ignore[return-value]


def load(path: str | Path) -> ast.Module:
    """Parse a PTX file (raises ptx.diagnostics.PtxSyntaxError on bad input)."""
    from mbarrier.ptx.parser import parse_file
    return parse_file(path)


def load_text(text: str | bytes, name: str = "<string>") -> ast.Module:
    """Parse PTX held in memory, as Triton, Gluon and CuTe DSL hand it out (`name` stands for the file in
    messages; raises ptx.diagnostics.PtxSyntaxError on bad input)."""
    from mbarrier.ptx.parser import parse, parse_bytes
    return parse_bytes(text, name) if isinstance(text, bytes) else parse(text, name)


def listing(names: list[str], first: int = 5) -> str:
    """Names for a message: the first few and how many more (a module may hold hundreds of kernels)."""
    if not names:
        return "none"
    shown = ", ".join(names[:first])
    return shown if len(names) <= first else f"{shown} and {len(names) - first} more"


def pick_kernel(module: ast.Module, name: str | None) -> ast.Function:
    entries = module.entries
    if name is None:
        if len(entries) == 1:
            return entries[0]
        names = listing([f.name for f in entries])
        raise LaunchError(f"the module has {len(entries)} kernels ({names}); choose one with --kernel")
    for f in entries:
        if f.name == name:
            return f
    raise LaunchError(f"no kernel named {name!r} in the module ({len(entries)} kernels: "
                      f"{listing([f.name for f in entries])})")


def _cluster_dims(fn: ast.Function, cluster: Dim3 | None) -> Dim3:
    required = next((tuple(v) for k, v in fn.performance if k == ".reqnctapercluster"), None)
    if required is not None:
        req = dim3(list(required), ".reqnctapercluster")
        if cluster is not None and cluster != req:
            raise LaunchError(f"kernel {fn.name} requires clusters of {req} (.reqnctapercluster), "
                              f"but {cluster} was given")
        return req
    return cluster or (1, 1, 1)


def _size_of(decl: ast.Declaration, d: ast.Declarator, dynamic: int) -> int:
    ty = TYPES.get(decl.type)
    if ty is None:
        raise LaunchError(f"line {decl.pos.line}: variables of type {decl.type} are not supported")
    n = ty.size * (decl.vector or 1)
    for dim in d.dims:
        if dim is None:
            return dynamic
        n *= dim
    return n


def _initial_bytes(decl: ast.Declaration, d: ast.Declarator, size: int, names: dict[str, int]) -> bytes:
    """A variable's initializer as bytes: literals, and names of variables or functions (`names`: their
    addresses; a function's is an opaque code address that only an indirect call could use)."""
    if not d.init:
        return b""
    ty = TYPES[decl.type]
    out = bytearray()
    for op in d.init:
        if isinstance(op, ast.Imm):
            out += (op.value & ty.mask).to_bytes(ty.size, "little")
        elif isinstance(op, ast.FloatImm) and op.bits:
            out += op.raw.to_bytes(ty.size, "little")
        elif isinstance(op, ast.Name) and op.name in names:
            out += (names[op.name] & ty.mask).to_bytes(ty.size, "little")
        else:
            raise LaunchError(f"line {d.pos.line}: initializer {op!r} of {d.name!r} is not supported")
    return bytes(out[:size])


def _product(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _has_extern_shared(module: ast.Module, fn: ast.Function) -> bool:
    return any(decl.space == ".shared" and any(None in d.dims for d in decl.names)
               for decl in list(module.declarations) + _collect_vars(fn.body or ()))


def _collect_vars(body: tuple[ast.Statement, ...]) -> list[ast.Declaration]:
    out: list[ast.Declaration] = []
    for s in body:
        if isinstance(s, ast.Declaration) and s.space in (".shared", ".global", ".const"):
            out.append(s)
        elif isinstance(s, ast.Block):
            out.extend(_collect_vars(s.body))
    return out


def _param_value(p: ast.Param, given: int | Buffer | bytes | None, gmem: GlobalMemory,
                 buffers: dict[str, tuple[int, int]], address_size: int) -> bytes:
    ty = TYPES.get(p.type)
    if ty is None:
        raise LaunchError(f"parameter {p.name!r} of type {p.type} is not supported")
    size = ty.size
    for dim in p.dims:
        size *= dim or 0
    is_pointer_sized = not p.dims and ty.bits == address_size and not ty.float
    if given is None:
        if not is_pointer_sized:
            raise LaunchError(f"missing argument for parameter {p.name!r} ({p.type}"
                              f"{''.join(f'[{d}]' for d in p.dims)}): give it a value")
        given = Buffer(1 << BUFFER_SLOT_BITS, name=p.name)
    if isinstance(given, Buffer):
        if not is_pointer_sized:
            raise LaunchError(f"parameter {p.name!r} ({p.type}) is not a pointer; it takes a value, "
                              "not a buffer")
        if given.size > 1 << BUFFER_SLOT_BITS:
            raise LaunchError(f"parameter {p.name!r}: a buffer of {given.size} bytes is more than the 4 GiB "
                              "of address space a buffer has")
        base = gmem.allocate(given.size, given.name or p.name, given.data)
        buffers[p.name] = (base, given.size)
        _check_pointer(p, base)
        return base.to_bytes(size, "little")
    if isinstance(given, bytes):
        if len(given) != size:
            raise LaunchError(f"parameter {p.name!r} takes {size} bytes, got {len(given)}")
        return given
    if ty.float:
        raise LaunchError(f"parameter {p.name!r} ({p.type}): float arguments are not supported")
    lo = -(1 << (8 * size - 1))
    if not lo <= given < (1 << (8 * size)):
        raise LaunchError(f"argument {given} does not fit parameter {p.name!r} ({p.type})")
    return (given & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def _by_name(fn: ast.Function, given: Mapping[str | int, object]) -> dict[str, ArgValue]:
    """Arguments keyed by parameter name (given by name or 0-based position)."""
    out: dict[str, ArgValue] = {}
    names = [p.name for p in fn.params]
    for key, value in given.items():
        if isinstance(key, int) or key.isdigit() and key not in names:
            if not 0 <= int(key) < len(names):
                raise LaunchError(f"kernel {fn.name} has no parameter {key} ({len(names)} parameters: "
                                  f"{listing(names)})")
            name = names[int(key)]
        elif key in names:
            name = key
        else:
            raise LaunchError(f"kernel {fn.name} has no parameter {key} ({len(names)} parameters: "
                              f"{listing(names)})")
        if name in out:
            raise LaunchError(f"parameter {name!r} is given twice (by name and as {names.index(name)})")
        out[name] = value  # type: ignore[assignment]
    return out


def _check_pointer(p: ast.Param, address: int) -> None:
    """A pointer against the parameter's `.ptr` attribute (PTX ISA 5.1.6.3): the space and alignment it
    promises the compiler."""
    if p.ptr_space not in (None, ".global"):
        raise LaunchError(f"parameter {p.name!r} is declared `.ptr {p.ptr_space}`; a launch's buffers are "
                          "global memory")
    if p.ptr_align and address % p.ptr_align:
        raise LaunchError(f"parameter {p.name!r} is declared `.ptr .align {p.ptr_align}` (PTX ISA 5.1.6.3), "
                          f"but its pointer {address:#x} is not {p.ptr_align}-byte aligned")


def param_align(p: ast.Param) -> int:
    """A kernel parameter's alignment in the parameter memory: its `.align`, else its type's size."""
    ty = TYPES.get(p.type)
    return p.align or (ty.size if ty is not None else 1)


def param_offsets(fn: ast.Function) -> dict[str, tuple[int, int]]:
    """Each kernel parameter's (offset, size) in the parameter memory: in declaration order, each at
    its alignment, as the CUDA driver lays out a kernel's argument buffer."""
    out: dict[str, tuple[int, int]] = {}
    off = 0
    for p in fn.params:
        ty = TYPES.get(p.type)
        size = ty.size if ty is not None else 0
        for dim in p.dims:
            size *= dim or 0
        align = param_align(p)
        off = -(-off // align) * align
        out[p.name] = (off, size)
        off += size
    return out


def param_block(fn: ast.Function, values: Mapping[str, bytes]) -> ParamMemory:
    """The parameter memory of a launch (PTX ISA 5.1.6.1): every parameter's bytes at its offset."""
    names = param_offsets(fn)
    end = max((off + size for off, size in names.values()), default=0)
    data = bytearray(end)
    for name, (off, size) in names.items():
        data[off:off + size] = values[name][:size]
    return ParamMemory(bytes(data), names)


_CACHE: dict[tuple[object, ...], tuple[ast.Module, dict[str, CompiledFunction]]] = {}
_CACHE_SIZE = 64


def _compiled(module: ast.Module, funcs: list[ast.Function], layout: Layout) -> dict[str, CompiledFunction]:
    """Compiled code is immutable: launches of the same kernel with the same layout share it."""
    key = (id(module), funcs[0].name, tuple(sorted(layout.symbols.items())),
           tuple(sorted(layout.params.items())), tuple(sorted(layout.param_at.items())))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is module:
        return hit[1]
    files = source_files(module)
    code = {f.name: compile_function(f, layout, module.source_lines, files) for f in funcs}
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (module, code)
    return code


def _chosen_clusters(ctas: Sequence[tuple[int, ...]] | None, grid: Dim3,
                     cluster: Dim3) -> set[tuple[int, int, int]] | None:
    """The clusters (by cluster coordinates) that hold the CTAs asked for; None for all."""
    if ctas is None:
        return None
    if not ctas:
        raise LaunchError("ctas: give at least one CTA of the grid to run")
    out = set()
    for cta in ctas:
        if not 1 <= len(cta) <= 3 or any(not isinstance(v, int) or v < 0 for v in cta):
            raise LaunchError(f"CTA {cta!r}: expected 1 to 3 non-negative integers")
        x, y, z = (tuple(cta) + (0, 0))[:3]
        if not (x < grid[0] and y < grid[1] and z < grid[2]):
            raise LaunchError(f"CTA ({x}, {y}, {z}) is outside the grid {grid}")
        out.add((x // cluster[0], y // cluster[1], z // cluster[2]))
    return out


def launch(module: ast.Module, kernel: str | None = None, *, grid: int | tuple[int, ...] | None = None,
           block: int | tuple[int, ...] | None = None, cluster: int | tuple[int, ...] | None = None,
           args: Mapping[str | int, ArgValue] | None = None, dynamic_shared: int | None = None,
           max_memory: int | None = None, spec: Launch | None = None,
           envregs: Mapping[int, int] | None = None,
           ctas: Sequence[tuple[int, ...]] | None = None) -> Machine:
    """A machine ready to run `kernel` over the grid (see `mbarrier.explore.run`). `dynamic_shared`:
    bytes of dynamic shared memory for `.extern .shared` arrays (default 48 KiB when the kernel has any).
    `max_memory`: a LaunchError, before any thread is made, if the machine would take more bytes.
    `spec`: a launch described as data (`sim.Launch`, what a launch file holds); the other arguments
    override its fields, and its buffers and tensor maps are there for the arguments to point at. Grid and
    block default to 1. `envregs`: values of %envreg0..31 (32-bit; the others read 0). `ctas`: run only
    the clusters that hold these CTAs (coordinates of 1 to 3 integers) of the grid, which keeps its shape
    (%nctaid, %nclusterid): a part of a large launch (default: the launch file's, else every CTA)."""
    spec = spec or Launch()
    fn = pick_kernel(module, kernel if kernel is not None else spec.kernel)
    if dynamic_shared is None:
        dynamic_shared = spec.dynamic_shared
    if dynamic_shared is None:
        dynamic_shared = DEFAULT_DYNAMIC_SHARED if _has_extern_shared(module, fn) else 0
    g = dim3(grid if grid is not None else spec.grid or 1, "grid")
    b = dim3(block if block is not None else spec.block or 1, "block")
    cluster = cluster if cluster is not None else spec.cluster
    c = _cluster_dims(fn, None if cluster is None else dim3(cluster, "cluster"))
    nthreads = b[0] * b[1] * b[2]
    for directive, dims in fn.performance:
        if directive == ".reqntid" and dim3(list(dims), ".reqntid") != b:
            raise LaunchError(f"kernel {fn.name} requires CTAs of {dim3(list(dims), '.reqntid')} threads "
                              f"(.reqntid), but {b} was given")
        if directive == ".maxntid" and nthreads > _product(dims):
            raise LaunchError(f"kernel {fn.name} takes at most {_product(dims)} threads per CTA (.maxntid), "
                              f"but {nthreads} were given")
    if nthreads > MAX_THREADS_PER_CTA:
        raise LaunchError(f"a CTA of {nthreads} threads is more than {MAX_THREADS_PER_CTA}")
    for what, dims, most in (("block", b, MAX_NTID), ("grid", g, MAX_NCTAID)):
        for axis, n, top in zip("xyz", dims, most, strict=True):
            if n > top:
                raise LaunchError(f"a {what} of {n} along {axis} is more than the {top:,} a launch can have "
                                  f"(%{'ntid' if what == 'block' else 'nctaid'}.{axis}, PTX ISA)")
    if any(gi % ci for gi, ci in zip(g, c, strict=True)):
        raise LaunchError(f"the grid {g} is not a whole number of clusters {c}")
    if c[0] * c[1] * c[2] > MAX_CLUSTER_CTAS:
        raise LaunchError(f"a cluster of {c[0] * c[1] * c[2]} CTAs is more than {MAX_CLUSTER_CTAS}")

    gmem = GlobalMemory()
    buffers: dict[str, tuple[int, int]] = {}
    symbols: dict[str, Symbol] = {}
    shared_names: list[tuple[int, str]] = []
    offset = 0
    for decl in list(module.declarations) + _collect_vars(fn.body or ()):
        for d in decl.names:
            size = _size_of(decl, d, dynamic_shared)
            if decl.space == ".shared":
                align = decl.align or TYPES[decl.type].size
                offset = (offset + align - 1) // align * align
                symbols[d.name] = Symbol("shared", offset, size)
                shared_names.append((offset, d.name))
                offset += size
            else:
                backed = max(1, -(-size // GLOBAL_GRANULE)) * GLOBAL_GRANULE
                names = {**{k: v.address for k, v in symbols.items() if v.space == "global"},
                         **{f.name: CODE_BASE + i for i, f in enumerate(module.functions)}}
                base = gmem.allocate(backed, d.name, _initial_bytes(decl, d, size, names))
                symbols[d.name] = Symbol("global", base, size)
                buffers[d.name] = (base, size)
    if offset > MAX_SHARED_PER_CTA:
        raise LaunchError(f"kernel {fn.name} declares {offset:,} bytes of shared memory"
                          f"{f' ({dynamic_shared:,} of them dynamic)' if dynamic_shared else ''}: more than "
                          f"the {MAX_SHARED_PER_CTA:,} bytes a CTA can have")
    reserved = -(-offset // 16) * 16
    shared_size = -(-(reserved + RESERVED_SMEM) // SHARED_GRANULE) * SHARED_GRANULE

    for name, buf in spec.buffers.items():
        if name in buffers:
            raise LaunchError(f"buffer {name!r}: the module has a variable of that name")
        if buf.size > 1 << BUFFER_SLOT_BITS:
            raise LaunchError(f"buffer {name!r}: {buf.size} bytes is more than the 4 GiB of address space "
                              "a buffer has")
        buffers[name] = (gmem.allocate(buf.size, name, buf.data), buf.size)
    values = {**_by_name(fn, spec.params), **_by_name(fn, args or {})}
    offsets = param_offsets(fn)
    ctx = Context(buffers, spec.tensor_maps, module.address_size)
    params: dict[str, bytes] = {}
    for p in fn.params:
        value = values.get(p.name)
        if value is None or isinstance(value, (int, Buffer, bytes)):
            params[p.name] = _param_value(p, value, gmem, buffers, module.address_size)
        else:
            off, size = offsets[p.name]
            params[p.name] = param_bytes(p, size, off, value, ctx, _check_pointer)
    param_memory = param_block(fn, params)

    funcs = [fn] + [f for f in module.functions if f.kind == "func" and f.body is not None]
    layout = Layout(symbols, params, plan_frames(funcs),
                    {name: off for name, (off, _) in param_memory.names.items()})
    m = Machine(gmem)
    m.params = param_memory
    m.functions = _compiled(module, funcs, layout)
    m.frames = layout.frames
    m.code_names = [f.name for f in module.functions]
    code = m.functions[fn.name]
    if layout.local_size > MAX_LOCAL_PER_THREAD:
        raise LaunchError(f"kernel {fn.name} needs {layout.local_size:,} bytes of local memory per thread "
                          f"(its .local and .param frames): more than the {MAX_LOCAL_PER_THREAD:,} a thread "
                          "can have")
    ncl = (g[0] // c[0], g[1] // c[1], g[2] // c[2])
    chosen = _chosen_clusters(ctas if ctas is not None else spec.ctas, g, c)
    nctas = g[0] * g[1] * g[2] if chosen is None else len(chosen) * c[0] * c[1] * c[2]
    need = nctas * (shared_size + CTA_BYTES) + nctas * nthreads * thread_bytes(code.nregs, layout.local_size)
    if max_memory is not None and need > max_memory:
        raise LaunchError(f"the launch needs about {need:,} bytes before its first step ({nctas:,} CTA"
                          f"{'s' if nctas > 1 else ''} of {nthreads:,} threads, about "
                          f"{thread_bytes(code.nregs, layout.local_size):,} bytes per thread): more than the "
                          f"memory bound of {max_memory:,} bytes")
    m.buffers = buffers

    def symbol_at(off: int) -> str:
        best = None
        for start, name in shared_names:
            if start <= off and (best is None or start >= best[0]):
                best = (start, name)
        if best is None:
            return f"shared[{off:#x}]"
        return best[1] if off == best[0] else f"{best[1]}+{off - best[0]}"

    cluster_objs: dict[tuple[int, int, int], Cluster] = {}
    for cz in range(ncl[2]):
        for cy in range(ncl[1]):
            for cx in range(ncl[0]):
                if chosen is not None and (cx, cy, cz) not in chosen:
                    continue
                cl = Cluster(len(m.clusters))
                m.clusters.append(cl)
                cluster_objs[(cx, cy, cz)] = cl
    for z in range(g[2]):
        for y in range(g[1]):
            for x in range(g[0]):
                cid = (x // c[0], y // c[1], z // c[2])
                if cid not in cluster_objs:
                    continue
                cl = cluster_objs[cid]
                local = (x % c[0], y % c[1], z % c[2])
                rank = local[0] + local[1] * c[0] + local[2] * c[0] * c[1]
                cta = Cta(len(m.ctas), (x, y, z), rank, cl, shared_size, symbol_at)
                m.ctas.append(cta)
                cl.ctas.append(cta)
    for cl in m.clusters:
        cl.ctas.sort(key=lambda ct: ct.rank)
    specials_common = {
        "%ntid.x": b[0], "%ntid.y": b[1], "%ntid.z": b[2], "%nctaid.x": g[0], "%nctaid.y": g[1],
        "%nctaid.z": g[2], "%nclusterid.x": ncl[0], "%nclusterid.y": ncl[1], "%nclusterid.z": ncl[2],
        "%cluster_nctaid.x": c[0], "%cluster_nctaid.y": c[1], "%cluster_nctaid.z": c[2],
        "%cluster_nctarank": c[0] * c[1] * c[2], "%nwarpid": (nthreads + 31) // 32, "%nsmid": 1,
        "%is_explicit_cluster": int(c != (1, 1, 1)
                                    or any(k == ".explicitcluster" for k, _ in fn.performance)),
        "%total_smem_size": shared_size, "%dynamic_smem_size": dynamic_shared,
        "%reserved_smem_offset_begin": reserved, "%reserved_smem_offset_end": reserved + RESERVED_SMEM,
        "%reserved_smem_offset_cap": RESERVED_SMEM, "%reserved_smem_offset_0": reserved,
        "%reserved_smem_offset_1": reserved + 8,
    }
    for i, v in (envregs or {}).items():
        if not 0 <= i < 32 or not 0 <= v < 1 << 32:
            raise LaunchError(f"%envreg{i} = {v}: there are %envreg0..31, each 32 bits")
        specials_common[f"%envreg{i}"] = v
    template: list[object] = [0] * code.nregs
    for name, v in specials_common.items():
        template[SPECIAL_SLOT[name]] = v
    for cta in m.ctas:
        x, y, z = cta.ctaid
        per_cta = {"%ctaid.x": x, "%ctaid.y": y, "%ctaid.z": z, "%cluster_ctarank": cta.rank,
                   "%cluster_ctaid.x": x % c[0], "%cluster_ctaid.y": y % c[1], "%cluster_ctaid.z": z % c[2],
                   "%clusterid.x": x // c[0], "%clusterid.y": y // c[1], "%clusterid.z": z // c[2]}
        warps: list[Warp] = []
        for linear in range(nthreads):
            tx, ty_, tz = linear % b[0], (linear // b[0]) % b[1], linear // (b[0] * b[1])
            lane = linear % 32
            regs = list(template)
            for name, v in per_cta.items():
                regs[SPECIAL_SLOT[name]] = v
            for name, v in (("%tid.x", tx), ("%tid.y", ty_), ("%tid.z", tz), ("%laneid", lane),
                            ("%warpid", linear // 32), ("%lanemask_eq", 1 << lane),
                            ("%lanemask_lt", (1 << lane) - 1), ("%lanemask_le", (2 << lane) - 1),
                            ("%lanemask_gt", 0xFFFFFFFF ^ ((2 << lane) - 1)),
                            ("%lanemask_ge", 0xFFFFFFFF ^ ((1 << lane) - 1))):
                regs[SPECIAL_SLOT[name]] = v
            t = Thread(len(m.threads), code, regs, cta, (tx, ty_, tz), lane, layout.local_size)
            if lane == 0:
                warps.append(Warp())
            t.warp = warps[-1]
            warps[-1].threads.append(t)
            m.threads.append(t)
            cta.threads.append(t)
            m._add(t)
        cta.live = nthreads
        cta.cluster.live += nthreads
    m.next_aid = len(m.threads)
    return m
