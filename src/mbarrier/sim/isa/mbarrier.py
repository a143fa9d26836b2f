"""The mbarrier instructions (PTX ISA 9.7.13.15.9 to .17): every one goes through core's Barrier.

The machine resolves the address (state space, window, alignment: 9.7.13.15.1, .8, .9) and calls the
Barrier operation; undefined behaviour raises the core Violation.
"""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.sim.compile import Gen
from mbarrier.sim.registry import (
    SPACES,
    Access,
    Facts,
    Kind,
    MbarrierUse,
    Space,
    instruction,
    space_of,
    spaces_of,
)
from mbarrier.sim.types import TYPES
from mbarrier.spec.instructions import INSTRUCTIONS, INSTRUCTIONS_BY_PATH

U32 = TYPES[".u32"]
B64 = TYPES[".b64"]
# The .sem/.scope qualifiers the mbarrier family takes, as the forms table lists them.
_SEM_SCOPE = frozenset(q for i in INSTRUCTIONS if i.path[0] == "mbarrier" for q in (*i.sems, *i.scopes))


def mbar_space(g: Gen, quals: tuple[str, ...]) -> str:
    """The state space of an mbarrier operand (`sim.registry.SPACES`): shared::cta, shared::cluster or
    generic; two spaces, or another one, are refused."""
    spaces = spaces_of(quals)
    if len(spaces) > 1:
        raise g.unsupported("two state spaces")
    space = spaces[0] if spaces else Space.GENERIC
    if space not in (Space.CTA, Space.CLUSTER, Space.GENERIC):
        raise g.unsupported(f"qualifier {next(q for q in quals if q in SPACES)}")
    return space.value


def _check(g: Gen, quals: tuple[str, ...], allowed: set[str]) -> None:
    for q in quals:
        if q not in allowed and q not in _SEM_SCOPE and not q.startswith(".shared") and q != ".b64":
            raise g.unsupported(f"qualifier {q}")


def _raw(g: Gen, op: ast.Operand) -> str:
    """A 64-bit state operand read without masking, so a token keeps its provenance."""
    if isinstance(op, ast.Name):
        reg = g.lookup(op.name)
        if reg is not None and reg.type.bits == 64:
            return f"r[{reg.slot}]"
    return g.src(op, B64)


def mbarrier_facts(ins: ast.Instruction) -> Facts:
    """The operation and its operands' roles, read from the instruction's form in `spec.forms`."""
    q = ins.qualifiers
    op = q[0] if q else ""
    path: tuple[str, ...] = ("mbarrier", op)
    if ".expect_tx" in q[1:] and op in (".arrive", ".arrive_drop"):
        path += (".expect_tx",)
    elif ".parity" in q[1:] and op in (".test_wait", ".try_wait"):
        path += (".parity",)
    form = INSTRUCTIONS_BY_PATH.get(path)
    name = "mbarrier" + op
    if form is None:
        return Facts(Kind.OPAQUE, name)  # no such operation: the emitter refuses it
    slots = next((s for s in form.operands if len(s) == len(ins.operands)), form.operands[0])
    roles = {slot.role: i for i, slot in enumerate(slots) if slot.kind != "dest"}
    dests = {slot.role: i for i, slot in enumerate(slots) if slot.kind == "dest"}
    addr = roles.get("addr")
    sub = op[1:]
    use = MbarrierUse(
        sub, None if addr is None else Access(addr, space_of(q), 8),
        plain=sub in ("arrive", "arrive_drop") and ".expect_tx" not in q and ".noComplete" not in q,
        expect_tx=".expect_tx" in q, no_complete=".noComplete" in q, parity=".parity" in q,
        count=roles.get("count", roles.get("txCount")),
        phase=roles.get("phaseParity", roles.get("state")) if sub in ("test_wait", "try_wait") else None,
        result=dests.get("waitComplete"))
    # pending_count reads its state operand only (9.7.13.15.17): no object is touched.
    kind = Kind.REGISTERS if sub == "pending_count" else Kind.MBARRIER
    return Facts(kind, name, writes=slots[0].kind == "dest", mbarrier=use)


@instruction("mbarrier", facts=mbarrier_facts)
def _mbarrier(g: Gen, ins: ast.Instruction) -> None:
    op = ins.qualifiers[0] if ins.qualifiers else ""
    rest = ins.qualifiers[1:]
    space = mbar_space(g, rest)
    ops = ins.operands
    if op == ".init":
        _check(g, rest, set())
        g.lines.append(f"m.mb_init(t, {space!r}, {g.address(ops[0], space)}, {g.src(ops[1], U32)})")
    elif op == ".inval":
        _check(g, rest, set())
        g.lines.append(f"m.mb_inval(t, {space!r}, {g.address(ops[0], space)})")
    elif op in (".expect_tx", ".complete_tx"):
        _check(g, rest, set())
        g.lines.append(f"m.mb_tx(t, {space!r}, {g.address(ops[0], space)}, {g.src(ops[1], U32)}, "
                       f"{op == '.expect_tx'})")
    elif op in (".arrive", ".arrive_drop"):
        _arrive(g, ins, op == ".arrive_drop", rest, space)
    elif op in (".test_wait", ".try_wait"):
        _check(g, rest, {".parity"})
        parity = ".parity" in rest
        d = g.dst(ops[0])
        value = g.src(ops[2], U32) if parity else _raw(g, ops[2])
        if len(ops) == 4:
            g.src(ops[3], U32)  # suspendTimeHint: how long hardware may suspend; no effect on the result
        addr = g.address(ops[1], space)
        call = f"m.mb_wait(t, {space!r}, {addr}, {value}, {parity}, {op == '.try_wait'})"
        g.lines.append(call if d is None else f"r[{d.slot}] = {call}")
    elif op == ".pending_count":
        _check(g, rest, set())
        g.assign(ops[0], f"m.mb_pending_count(t, {_raw(g, ops[1])})", U32, masked=True)
    else:
        raise g.unsupported()


def _arrive(g: Gen, ins: ast.Instruction, drop: bool, rest: tuple[str, ...], space: str) -> None:
    _check(g, rest, {".expect_tx", ".noComplete"})
    expect = ".expect_tx" in rest
    no_complete = ".noComplete" in rest
    ops = ins.operands
    if len(ops) not in (2, 3):
        raise g.unsupported("operand count")
    d = g.dst(ops[0])
    extra = g.src(ops[2], U32) if len(ops) == 3 else "None"
    count, tx = ("None", extra) if expect else (extra, "None")
    addr = g.address(ops[1], space)
    call = f"m.mb_arrive(t, {space!r}, {addr}, {count}, {tx}, {no_complete}, {drop}, {d is not None})"
    g.lines.append(call if d is None else f"r[{d.slot}] = {call}")
