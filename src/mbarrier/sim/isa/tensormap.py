"""tensormap.replace and tensormap.cp_fenceproxy (PTX ISA, Data Movement and Conversion Instructions:
tensormap.replace; Parallel Synchronization and Communication Instructions: tensormap.cp_fenceproxy).

A tensor map in memory is 128 bytes in the simulator's encoding of the driver's encode call
(`sim.tensormap`): `tensormap.replace` rewrites one field of it in place (`Machine.tensormap_replace`);
`tensormap.cp_fenceproxy` copies 128 bytes from shared::cta to global memory and then releases them
to the tensormap proxy: a fence the race tracker does not model (the tensormap proxy is not tracked:
a tensor copy reads its map when issued, as an access of no proxy).
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim.compile import Gen
from mbarrier.sim.errors import KernelFault
from mbarrier.sim.isa.control import collective
from mbarrier.sim.machine import Machine, Thread
from mbarrier.sim.registry import Access, Facts, Kind, instruction, space_of
from mbarrier.sim.types import TYPES
from mbarrier.spec.tensormap import TENSOR_MAP_SIZE

_FIELD1 = {".global_address": ".b64", ".rank": ".b32"}
_FIELD2 = {".box_dim": ".b32", ".global_dim": ".b32", ".global_stride": ".b64", ".element_stride": ".b32"}
_FIELD3 = (".elemtype", ".interleave_layout", ".swizzle_mode", ".swizzle_atomicity", ".fill_mode")
_SPACES = {".global": "global", ".shared::cta": "cta"}


def _facts(ins: ast.Instruction) -> Facts:
    """replace: a weak read-modify-write of the 128-byte object at operand 0; cp_fenceproxy: a warp
    collective copying between memories (for the checker, anything)."""
    if ins.qualifiers[:1] == (".replace",):
        return Facts(Kind.STORE, "tensormap.replace", access=Access(0, space_of(ins.qualifiers),
                                                                    TENSOR_MAP_SIZE))
    return Facts(Kind.OPAQUE, "tensormap.cp_fenceproxy")


@instruction("tensormap", facts=_facts)
def _tensormap(g: Gen, ins: ast.Instruction) -> None:
    q = ins.qualifiers
    if q[:1] == (".replace",):
        _replace(g, ins)
    elif q[:1] == (".cp_fenceproxy",):
        _cp_fenceproxy(g, ins)
    else:
        raise g.unsupported()


def _replace(g: Gen, ins: ast.Instruction) -> None:
    """tensormap.replace.tile.field{.ss}.b1024.type [addr], {ord,} new_val."""
    q = ins.qualifiers[1:]
    form = "tensormap" + "".join(ins.qualifiers)
    fields = [x for x in q if x in _FIELD1 or x in _FIELD2 or x in _FIELD3]
    spaces = [x for x in q if x in _SPACES]
    types = [x for x in q if x in (".b32", ".b64")]
    extra = [x for x in q if x not in (".tile", ".b1024", *fields, *spaces, *types)]
    if ".tile" not in q or ".b1024" not in q or len(fields) != 1 or len(types) != 1 or extra \
            or len(spaces) > 1:
        raise g.unsupported(f"{form}: tensormap.replace.tile.field{{.global,.shared::cta}}.b1024.type")
    field = fields[0]
    want = _FIELD1.get(field) or _FIELD2.get(field) or ".b32"
    if types[0] != want:
        raise g.unsupported(f"{form}: .{field[1:]} takes a {want} value (PTX ISA)")
    ops = ins.operands
    ordinal = "0"
    if field in _FIELD2:
        if len(ops) != 3 or not isinstance(ops[1], ast.Imm) or not 0 <= ops[1].value <= 4:
            raise g.unsupported(f"{form} takes [addr], ord (an immediate 0..4), new_val")
        ordinal = str(ops[1].value)
    elif len(ops) != 2:
        raise g.unsupported(f"{form} takes [addr], new_val")
    if field in _FIELD3 and not isinstance(ops[-1], ast.Imm):
        raise g.unsupported(f"{form}: new_val of .{field[1:]} is an immediate (PTX ISA)")
    space = _SPACES[spaces[0]] if spaces else "generic"
    value = g.src(ops[-1], TYPES[types[0]])
    g.lines.append(f"m.tensormap_replace(t, {space!r}, {g.address(ops[0], space)}, {field[1:]!r}, "
                   f"{ordinal}, {value})")


def _cp_fenceproxy(g: Gen, ins: ast.Instruction) -> None:
    """tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned
    [dst], [src], 128: every thread of the warp executes it (`.sync.aligned`); each lane's 128 bytes are
    copied when the last one arrives."""
    q = set(ins.qualifiers[1:])
    scopes = q & {".cta", ".cluster", ".gpu", ".sys"}
    base = {".global", ".shared::cta", ".tensormap::generic", ".release", ".sync", ".aligned"}
    ops = ins.operands
    if q != base | scopes or len(scopes) != 1 or len(ops) != 3 or not isinstance(ops[2], ast.Imm) \
            or ops[2].value != TENSOR_MAP_SIZE:
        raise g.unsupported("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope"
                            ".sync.aligned [dst], [src], 128")
    pc = g.index

    def finish(parts: dict[int, tuple[object, object]], m: Machine) -> None:
        if len({arg[0] for _, arg in parts.values()}) > 1:  # type: ignore[index]
            raise KernelFault("the lanes of the warp reached different tensormap.cp_fenceproxy "
                              "instructions: all must execute the same one (.aligned)")
        for t, arg in parts.values():
            assert isinstance(t, Thread) and isinstance(arg, tuple)
            _, dst, src = arg
            m.st_global(t, dst, TENSOR_MAP_SIZE, m.ld_cta(t, src, TENSOR_MAP_SIZE))

    collective(g, "tensormap.cp_fenceproxy", "0xFFFFFFFF",
               f"({pc}, {g.address(ops[0], 'global')}, {g.address(ops[1], 'cta')})", finish)
