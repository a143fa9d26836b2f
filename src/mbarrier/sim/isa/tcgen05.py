"""tcgen05 (PTX ISA 9.7.16): only the mbarrier side, tcgen05.commit with .mbarrier::arrive::one.

tcgen05.commit (9.7.16.12.5) makes the mbarrier track the completion of every asynchronous tcgen05
operation (mma, cp, shift) the executing thread initiated before it; when they complete, an arrive-on
with count 1 is triggered on it (with .multicast::cluster, on the mbarrier at the same offset of each
CTA of ctaMask). The simulator executes no asynchronous tcgen05 operation (every other tcgen05
instruction is refused by name), so in a kernel it can run the tracked set is empty: the commit leaves
an asynchronous arrive-on behind, an agent the scheduler runs later (as cp.async.mbarrier.arrive.noinc's,
9.7.13.15.15, but tracking no cp.async).
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim.compile import Gen
from mbarrier.sim.isa.mbarrier import mbar_space
from mbarrier.sim.registry import Access, CopyKind, CopyUse, Facts, Kind, instruction, space_of
from mbarrier.sim.types import TYPES

_ARRIVE_ONE = ".mbarrier::arrive::one"
_MULTICAST = ".multicast::cluster"
_CTA_GROUPS = frozenset({".cta_group::1", ".cta_group::2"})


def tcgen05_facts(ins: ast.Instruction) -> Facts:
    """tcgen05.commit: an asynchronous arrive-on (count 1, no increment at the issue) on its mbarrier, in
    every CTA of ctaMask with .multicast::cluster; any other tcgen05 instruction is refused."""
    q = ins.qualifiers
    name = "tcgen05" + "".join(q[:1])
    if q[:1] != (".commit",) or _ARRIVE_ONE not in q:
        return Facts(Kind.OPAQUE, name)  # not executed: the emitter refuses it
    multicast = _MULTICAST in q
    use = CopyUse(CopyKind.TC_COMMIT, Access(0, space_of(q), 8), noinc=True, multicast=multicast,
                  mask=1 if multicast else None)
    return Facts(Kind.COPY_ARRIVE, name, copy=use)


@instruction("tcgen05", facts=tcgen05_facts)
def _tcgen05(g: Gen, ins: ast.Instruction) -> None:
    q = ins.qualifiers
    if q[:1] != (".commit",):
        raise g.unsupported("of tcgen05 only the arrive-on of tcgen05.commit is modelled: the simulator "
                            "executes no tcgen05 operation")
    rest = q[1:]
    if _ARRIVE_ONE not in rest or sum(x in _CTA_GROUPS for x in rest) != 1:
        raise g.unsupported("tcgen05.commit without .cta_group::N or .mbarrier::arrive::one")
    if any(x not in (_ARRIVE_ONE, _MULTICAST, ".b64") and x not in _CTA_GROUPS and not x.startswith(".shared")
           for x in rest):
        raise g.unsupported()
    space = mbar_space(g, rest)
    ops = ins.operands
    multicast = _MULTICAST in rest
    if len(ops) != 1 + multicast:
        raise g.unsupported("operand count")
    mask = g.src(ops[1], TYPES[".u16"]) if multicast else "None"
    g.lines.append(f"m.tc_commit(t, {space!r}, {g.address(ops[0], space)}, {mask})")
