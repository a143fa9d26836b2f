"""Cluster launch control (PTX ISA 9.7.12.21): clusterlaunchcontrol.try_cancel and query_cancel.

try_cancel (9.7.12.21.1) asks, asynchronously, to cancel the launch of a cluster that has not started
running yet, writes a 16-byte opaque response to shared memory [addr] and performs complete-tx of 16
bytes on the mbarrier [mbar] (with .multicast::cluster::all: the response and the complete-tx at the
same offsets in every CTA of the cluster). The simulator launches every cluster of the grid before any
thread runs, so no cluster is ever "not started": every request fails, the one answer the ISA allows
then. The response's layout is the simulator's own (`sim.machine.copies.CANCEL_FAILED`); query_cancel
(9.7.12.21) decodes it: is_canceled false, and get_first_ctaid (undefined after a failed request)
0xFFFFFFFF in every coordinate.
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim.compile import Gen
from mbarrier.sim.registry import Access, CopyKind, CopyUse, Facts, Kind, Space, instruction, spaces_of
from mbarrier.sim.types import TYPES

_BYTES = ".mbarrier::complete_tx::bytes"
_ALL = ".multicast::cluster::all"
B128 = TYPES[".b128"]
U32 = TYPES[".u32"]
_COORDS = {".get_first_ctaid::x": 0, ".get_first_ctaid::y": 1, ".get_first_ctaid::z": 2}


def launchcontrol_facts(ins: ast.Instruction) -> Facts:
    """try_cancel: an asynchronous 16-byte write of the response and its complete-tx (every CTA of the
    cluster with .multicast::cluster::all); query_cancel: a function of its register operand."""
    q = ins.qualifiers
    if q[:2] == (".try_cancel", ".async"):
        spaces = spaces_of(q)
        space = spaces[0] if spaces else Space.GENERIC
        use = CopyUse(CopyKind.LAUNCH_CONTROL, Access(0, space, 16), barrier=Access(1, space, 8),
                      multicast=_ALL in q)
        return Facts(Kind.COPY, "clusterlaunchcontrol.try_cancel", copy=use)
    if q[:1] == (".query_cancel",):
        return Facts(Kind.REGISTERS, "clusterlaunchcontrol.query_cancel", writes=True, total=True)
    return Facts(Kind.OPAQUE, "clusterlaunchcontrol" + "".join(q[:1]))


@instruction("clusterlaunchcontrol", facts=launchcontrol_facts)
def _launchcontrol(g: Gen, ins: ast.Instruction) -> None:
    q = ins.qualifiers
    ops = ins.operands
    if q[:2] == (".try_cancel", ".async"):
        rest = q[2:]
        spaces = spaces_of(rest)
        if _BYTES not in rest or spaces not in ([], [Space.CTA]) or len(ops) != 2 \
                or any(x not in (_BYTES, _ALL, ".b128", ".shared::cta") for x in rest):
            raise g.unsupported()
        space = "cta" if spaces else "generic"
        g.lines.append(f"m.try_cancel(t, {space!r}, {g.address(ops[0], space)}, {g.address(ops[1], space)}, "
                       f"{_ALL in rest})")
        return
    if q[:1] == (".query_cancel",) and len(ops) == 2 and q[-1:] == (".b128",):
        response = g.src(ops[1], B128)
        if q[1:] == (".is_canceled", ".pred", ".b128"):
            g.assign(ops[0], f"bool(({response}) & 1)", TYPES[".pred"])
            return
        if len(q) == 4 and q[1] in _COORDS and q[2] == ".b32":
            g.assign(ops[0], f"(({response}) >> {32 * (1 + _COORDS[q[1]])}) & 0xFFFFFFFF", U32)
            return
        if q[1:] == (".get_first_ctaid", ".v4", ".b32", ".b128") and isinstance(ops[0], ast.Vector) \
                and len(ops[0].items) == 4:
            for i, item in enumerate(ops[0].items[:3]):
                g.assign(item, f"(({response}) >> {32 * (1 + i)}) & 0xFFFFFFFF", U32)
            return
    raise g.unsupported()
