"""Control flow, CTA/cluster/warp barriers, fences, sleeps and warp collectives.

bra, exit, ret, trap, brkpt, bar/barrier (.sync, .arrive), bar.warp.sync, barrier.cluster.arrive/wait,
fence/membar, nanosleep, elect.sync, vote.sync, shfl.sync, match.sync, redux.sync, activemask,
setmaxnreg, griddepcontrol, calls (with vprintf and __assertfail).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from mbarrier.ptx import ast
from mbarrier.sim import warpgroup
from mbarrier.sim.compile import Gen
from mbarrier.sim.errors import KernelFault
from mbarrier.sim.machine import Machine, Thread
from mbarrier.sim.machine.agents import warp_gone
from mbarrier.sim.machine.control import cstring_at
from mbarrier.sim.registry import Facts, FenceKind, Kind, SyncUse, instruction
from mbarrier.sim.types import TYPES
from mbarrier.spec.checks import ASSERTION, BRKPT, SETMAXNREG

U32 = TYPES[".u32"]
PRED = TYPES[".pred"]


@instruction("bra", facts=Kind.BRANCH)
def _bra(g: Gen, ins: ast.Instruction) -> None:
    if len(ins.operands) != 1:
        raise g.unsupported("indirect branch")
    g.lines.append(f"t.pc = {g.label(ins.operands[0])}")
    g.sets_pc = True


@instruction("exit", facts=Kind.EXIT)
def _exit(g: Gen, ins: ast.Instruction) -> None:
    g.lines.append(f"t.pc = {g.next_pc()}")
    g.lines.append("m.exit(t)")
    g.sets_pc = True


@instruction("ret", facts=Kind.EXIT)
def _ret(g: Gen, ins: ast.Instruction) -> None:
    g.lines.append(f"t.pc = {g.next_pc()}")
    g.lines.append("m.ret(t)")
    g.sets_pc = True


@instruction("trap", facts=Kind.EXIT)
def _trap(g: Gen, ins: ast.Instruction) -> None:
    g.lines.append("m.trap(t)")


@instruction("nanosleep", facts=Kind.NOP)
def _nanosleep(g: Gen, ins: ast.Instruction) -> None:
    # A step of its own, with no other effect: the scheduler decides who runs next.
    g.src(ins.operands[0], U32)


def fence_facts(ins: ast.Instruction) -> Facts:
    """Which fence: a proxy fence (the async proxy's, or another), fence.mbarrier_init, or an ordering
    fence whose halves its `.sem` says (membar and fence.sc/.acq_rel: both)."""
    q = ins.qualifiers
    if ".proxy" in q:
        kind = FenceKind.PROXY_OTHER
        if ".async" in q or ".async::generic" in q:  # the state space it covers (PTX ISA, membar/fence)
            kind = FenceKind.PROXY_ASYNC_GLOBAL if ".global" in q else FenceKind.PROXY_ASYNC_SHARED if any(
                x in q for x in (".shared::cta", ".shared::cluster")) else FenceKind.PROXY_ASYNC
    else:
        kind = FenceKind.MBARRIER_INIT if ".mbarrier_init" in q else FenceKind.ORDER
    return Facts(Kind.FENCE, ins.opcode, fence=kind)


@instruction("fence", "membar", facts=fence_facts)
def _fence(g: Gen, ins: ast.Instruction) -> None:
    # Memory is sequentially consistent, so a fence changes no value; with race tracking on,
    # `sim.races` gives it its ordering meaning (proxy, mbarrier_init, acquire/release halves).
    allowed = {".sc", ".acq_rel", ".acquire", ".release", ".cta", ".cluster", ".gpu", ".sys", ".gl",
               ".proxy", ".async", ".async::generic", ".shared::cta", ".shared::cluster", ".global",
               ".mbarrier_init", ".tensormap::generic", ".alias"}
    bad = [q for q in ins.qualifiers if q not in allowed]
    if bad:
        raise g.unsupported(f"qualifier {bad[0]}")
    g.lines.append("m.fence(t)")


def _bar_kind(ins: ast.Instruction) -> list[str]:
    return [x for x in ins.qualifiers if x not in (".aligned", ".cta")]


def bar_facts(ins: ast.Instruction) -> Facts:
    """bar.warp.sync: a warp collective (all lanes when its mask is the immediate 0xffffffff);
    barrier.cluster.arrive/wait: the cluster's barrier; bar/barrier.sync and .arrive: the CTA's, every
    live thread of it unless a thread count is given."""
    q, ops = _bar_kind(ins), ins.operands
    if q[:1] == [".warp"]:
        full = bool(ops) and isinstance(ops[0], ast.Imm) and ops[0].value & 0xFFFFFFFF == 0xFFFFFFFF
        return Facts(Kind.COLLECTIVE, "bar.warp.sync",
                     sync=SyncUse("warp", True, whole=full, uniform=True, lanes=0 if ops else None))
    if q[:1] == [".cluster"]:
        waits = ".wait" in q
        return Facts(Kind.BARRIER, "barrier.cluster." + ("wait" if waits else "arrive"),
                     sync=SyncUse("cluster", waits, whole=waits))
    waits, counted = ".arrive" not in q, len(ops) > 1
    return Facts(Kind.BARRIER, "bar." + ("sync" if waits else "arrive"),
                 sync=SyncUse("cta", waits, counted, whole=waits and not counted))


def collective_facts(ins: ast.Instruction) -> Facts:
    """elect, vote, shfl, match, redux (`.sync`, membermask last): a warp collective, which completes only
    when every live lane of its mask has reached it; with the immediate mask 0xffffffff, every lane of the
    warp meets there (the checker cuts a lane's future at it, as at a full bar.warp.sync). vote.all, .any
    and .uni give every lane the same result (uniform); .ballot and the others tell lanes apart."""
    ops = ins.operands
    full = bool(ops) and isinstance(ops[-1], ast.Imm) and ops[-1].value & 0xFFFFFFFF == 0xFFFFFFFF
    uniform = ins.opcode == "vote" and any(m in ins.qualifiers for m in (".all", ".any", ".uni"))
    return Facts(Kind.COLLECTIVE, ins.opcode, writes=True,
                 sync=SyncUse("warp", True, whole=full, uniform=uniform, lanes=len(ops) - 1 if ops else None))


def _bar_operands(g: Gen, ins: ast.Instruction) -> tuple[str, str]:
    ops = ins.operands
    if not 1 <= len(ops) <= 2:
        raise g.unsupported("operand count")
    count = g.src(ops[1], U32) if len(ops) == 2 else "None"
    return g.src(ops[0], U32), count


@instruction("bar", "barrier", facts=bar_facts)
def _bar(g: Gen, ins: ast.Instruction) -> None:
    q = _bar_kind(ins)
    nxt = g.next_pc()
    if q[:1] == [".warp"]:
        if q[1:] != [".sync"]:
            raise g.unsupported()
        g.lines.append(f"t.pc = {nxt}")
        g.lines.append(f"m.coll(t, 'bar.warp.sync', {g.src(ins.operands[0], U32)}, None, None)")
        g.sets_pc = True
        return
    if q[:1] == [".cluster"]:
        rest = [x for x in q[1:] if x not in (".release", ".relaxed", ".acquire")]
        g.lines.append(f"t.pc = {nxt}")
        if rest == [".arrive"]:
            g.lines.append("m.cluster_arrive(t)")
        elif rest == [".wait"]:
            g.lines.append("m.cluster_wait(t)")
        else:
            raise g.unsupported()
        g.sets_pc = True
        return
    if q in ([".sync"], [], [".arrive"]):
        ident, count = _bar_operands(g, ins)
        g.lines.append(f"t.pc = {nxt}")
        g.lines.append(f"m.bar(t, {ident}, {count}, {q != ['.arrive']})")
        g.sets_pc = True
        return
    raise g.unsupported()


def _split_pair(g: Gen, op: ast.Operand) -> tuple[str | None, str | None]:
    """`d|p` (either may be `_`) or a single destination."""
    if isinstance(op, ast.Expr) and "|" in op.text:
        names = [s.strip() for s in op.text.split("|")]
    elif isinstance(op, ast.Name):
        names = [op.name]
    elif isinstance(op, ast.Sink):
        names = ["_"]
    else:
        raise g.unsupported("destination")
    slots: list[str | None] = []
    for n in names:
        if n == "_":
            slots.append(None)
            continue
        reg = g.lookup(n)
        if reg is None:
            raise g.unsupported(f"unknown register {n!r}")
        slots.append(str(reg.slot))
    return slots[0], (slots[1] if len(slots) > 1 else None)


Finish = Callable[[dict[int, tuple[object, object]], Machine], None]


def collective(g: Gen, kind: str, mask: str, arg: str, finish: Finish) -> None:
    g.lines.append(f"t.pc = {g.next_pc()}")
    g.lines.append(f"m.coll(t, {kind!r}, {mask}, {arg}, {g.const(finish)})")
    g.sets_pc = True


@instruction("elect", facts=collective_facts)
def _elect(g: Gen, ins: ast.Instruction) -> None:
    if ins.qualifiers != (".sync",):
        raise g.unsupported()
    d, p = _split_pair(g, ins.operands[0])
    dslot = None if d is None else int(d)
    pslot = None if p is None else int(p)

    def finish(parts: dict[int, tuple[object, object]], _m: Machine) -> None:
        leader = min(parts)
        for lane, (t, _) in parts.items():
            regs = t.regs  # type: ignore[attr-defined]
            if dslot is not None:
                regs[dslot] = leader
            if pslot is not None:
                regs[pslot] = lane == leader

    collective(g, "elect.sync", g.src(ins.operands[1], U32), "None", finish)


@instruction("vote", facts=collective_facts)
def _vote(g: Gen, ins: ast.Instruction) -> None:
    modes = [q for q in ins.qualifiers if q in (".all", ".any", ".uni", ".ballot")]
    if ".sync" not in ins.qualifiers or len(modes) != 1:
        raise g.unsupported()
    mode = modes[0]
    d, a, mask = ins.operands
    dreg = g.dst(d)
    slot = None if dreg is None else dreg.slot

    def finish(parts: dict[int, tuple[object, object]], _m: Machine) -> None:
        values = {lane: bool(v) for lane, (_, v) in parts.items()}
        if mode == ".ballot":
            result: object = sum(1 << lane for lane, v in values.items() if v)
        elif mode == ".all":
            result = all(values.values())
        elif mode == ".any":
            result = any(values.values())
        else:
            result = len(set(values.values())) == 1
        if slot is not None:
            for t, _ in parts.values():
                t.regs[slot] = result  # type: ignore[attr-defined]

    collective(g, f"vote{mode}", g.src(mask, U32), g.src(a, PRED), finish)


@instruction("shfl", facts=collective_facts)
def _shfl(g: Gen, ins: ast.Instruction) -> None:
    modes = [q for q in ins.qualifiers if q in (".up", ".down", ".bfly", ".idx")]
    if ".sync" not in ins.qualifiers or len(modes) != 1 or len(ins.operands) != 5:
        raise g.unsupported()
    mode = modes[0]
    dst, a, b, c, mask = ins.operands
    d, p = _split_pair(g, dst)
    dslot = None if d is None else int(d)
    pslot = None if p is None else int(p)

    def finish(parts: dict[int, tuple[object, object]], _m: Machine) -> None:
        for lane, (t, raw) in parts.items():
            arg = cast(tuple[int, int, int], raw)
            _, bval, cval = arg
            clamp, seg = cval & 0x1F, (cval >> 8) & 0x1F
            max_lane = (lane & seg) | (clamp & ~seg & 0x1F)
            min_lane = lane & seg
            if mode == ".up":
                j = lane - bval
                ok = j >= max_lane
            elif mode == ".down":
                j = lane + bval
                ok = j <= max_lane
            elif mode == ".bfly":
                j = lane ^ bval
                ok = j <= max_lane
            else:
                j = min_lane | (bval & ~seg & 0x1F)
                ok = j <= max_lane
            src = parts.get(j) if ok else None
            value = cast(tuple[int, int, int], src[1])[0] if src is not None else arg[0]
            regs = t.regs  # type: ignore[attr-defined]
            if dslot is not None:
                regs[dslot] = value
            if pslot is not None:
                regs[pslot] = src is not None

    b32 = TYPES[".b32"]
    arg = f"({g.src(a, b32)}, {g.src(b, U32)}, {g.src(c, U32)})"
    collective(g, f"shfl{mode}", g.src(mask, U32), arg, finish)


@instruction("activemask", facts=Kind.WARP_READ, writes=True)
def _activemask(g: Gen, ins: ast.Instruction) -> None:
    g.assign(ins.operands[0], "m.activemask(t)", TYPES[".b32"], masked=True)


# Calls the simulator runs itself when the module has no body of that name (below): no PTX runs in them.
BUILTIN_CALLS = frozenset({"__assertfail", "vprintf"})
# Those of them that end the launch (a KernelFault, below) and read nothing but their arguments and the
# strings those point to (nvcc's message, file and function names, constants in .global memory).
TRAP_CALLS = frozenset({"__assertfail"})


@instruction("call", facts=Kind.CALL)
def _call(g: Gen, ins: ast.Instruction) -> None:
    """call{.uni} (results), func, (arguments): the arguments are copied into the callee's parameters
    and, at its ret, its return values into the results (all `.param` variables of the frames)."""
    ops = list(ins.operands)
    rets: tuple[ast.Operand, ...] = ()
    args: tuple[ast.Operand, ...] = ()
    if ops and isinstance(ops[0], ast.ParenList):
        rets = ops.pop(0).items  # type: ignore[union-attr]
    target = ops.pop(0) if ops else None
    if not isinstance(target, ast.Name):
        raise g.unsupported("call target")
    name = target.name
    if ops and isinstance(ops[0], ast.ParenList):
        args = ops.pop(0).items  # type: ignore[union-attr]
    reg = g.lookup(name)
    if reg is not None:
        # An indirect call through a function pointer (its prototype operand only restates the types).
        if len(ops) > 1 or (ops and not isinstance(ops[0], ast.Name)):
            raise g.unsupported("call with a target list")
        arg_vars, ret_vars = [_var(g, a) for a in args], [_var(g, x) for x in rets]
        g.lines.append(f"t.pc = {g.next_pc()}")
        g.lines.append(f"m.call_indirect(t, r[{reg.slot}], {arg_vars!r}, {ret_vars!r})")
        g.sets_pc = True
        return
    if ops:
        raise g.unsupported("call with a prototype or target list")
    callee = g.layout.frames.get(name)
    if callee is None and name == "__assertfail" and len(args) == 5:
        # nvcc's device-side assert: (message, file, line, function, charSize), a trap with its text.
        arg_vars = [_var(g, a) for a in args]
        g.lines.append(f"{g.const(_assertfail)}(m, t, {arg_vars!r})")
        return
    if callee is None and name == "vprintf" and len(args) == 2:
        arg_vars, ret_vars = [_var(g, a) for a in args], [_var(g, x) for x in rets]
        g.lines.append(f"m.vprintf(t, {arg_vars!r}, {ret_vars!r})")
        return
    if callee is None:
        raise g.unsupported(f"call to {name!r}, which has no body in this module")
    if len(args) != len(callee.params) or len(rets) != len(callee.returns):
        raise g.unsupported(f"call to {name!r} with {len(args)} arguments and {len(rets)} results")
    copy_in = [(_var(g, a), p[1:]) for a, p in zip(args, callee.params, strict=True)]
    copy_out = [(r[1:], _var(g, x)) for x, r in zip(rets, callee.returns, strict=True)]
    moves_in = [(src[0], dst[0], min(src[1], dst[1])) for src, dst in copy_in]
    moves_out = [(src[0], dst[0], min(src[1], dst[1])) for src, dst in copy_out]
    g.lines.append(f"t.pc = {g.next_pc()}")
    g.lines.append(f"m.call(t, {name!r}, {moves_in!r}, {moves_out!r})")
    g.sets_pc = True


def _assertfail(m: Machine, t: Thread, args: list[tuple[int, int]]) -> None:
    """The call of `__assertfail`: the assertion failed. Its message, file and function are C strings
    at the generic addresses of arguments 0, 1 and 3 (nvcc puts them in .global memory), its line is
    argument 2."""
    def text(i: int) -> str:
        return cstring_at(m, t, m.ld_local(t, args[i][0], 8))

    line = m.ld_local(t, args[2][0], 4)
    raise KernelFault(f"assertion `{text(0)}` failed: {text(1)}:{line}: {text(3)} (__assertfail)", ASSERTION)


def _var(g: Gen, op: ast.Operand) -> tuple[int, int]:
    var = g.var(op.name) if isinstance(op, ast.Name) else None
    if var is None:
        raise g.unsupported(f"call operand {op!r} is not a .param variable")
    return var.address, var.size


def setmaxnreg_facts(_ins: ast.Instruction) -> Facts:
    """setmaxnreg: a collective of its whole warp (every lane waits for the others, all alike), which
    relates the warps of a warpgroup only through its rules (`sim.warpgroup`). Those checks commute:
    two warps' setmaxnreg, or one warp's and a sibling warp's last exit, end in the same state in either
    order, and where the warps' sequences disagree both orders fault (at the later setmaxnreg, or at the
    exit when the setmaxnreg came first). So the checker sees a warp collective, not an opaque step."""
    return Facts(Kind.COLLECTIVE, "setmaxnreg", warpgroup=True,
                 sync=SyncUse("warp", True, whole=True, uniform=True))


@instruction("setmaxnreg", facts=setmaxnreg_facts)
def _setmaxnreg(g: Gen, ins: ast.Instruction) -> None:
    """setmaxnreg.{inc,dec}.sync.aligned.u32 n (PTX ISA, Miscellaneous Instructions: setmaxnreg): the
    register budget it moves between warpgroups changes nothing a simulated thread observes, but its
    rules do (`sim.warpgroup`): the lanes of the warp wait for each other (`.sync`), and the count, the
    warpgroup's uniformity and the .inc/.dec order are checked."""
    actions = [q for q in ins.qualifiers if q in (".inc", ".dec")]
    extra = [q for q in ins.qualifiers if q not in (".inc", ".dec", ".sync", ".aligned", ".u32")]
    if len(actions) != 1 or extra or len(ins.operands) != 1 or not isinstance(ins.operands[0], ast.Imm):
        raise g.unsupported("setmaxnreg takes .inc or .dec and an immediate count")
    count = ins.operands[0].value
    why = warpgroup.count_error(count)
    if why is not None:
        fault = g.const(KernelFault(why, SETMAXNREG))
        g.lines.append(f"raise {fault}")
        return
    entry = (g.index, actions[0], count)

    def finish(parts: dict[int, tuple[object, object]], _m: Machine) -> None:
        lanes = sorted(parts)
        first = cast(Thread, parts[lanes[0]][0])
        warpgroup.completed(first, [cast(tuple[int, str, int], parts[lane][1]) for lane in lanes], warp_gone)

    collective(g, "setmaxnreg", "0xFFFFFFFF", repr(entry), finish)


@instruction("match", facts=collective_facts)
def _match(g: Gen, ins: ast.Instruction) -> None:
    """match.any.sync.{b32,b64} d, a, membermask: d = the lanes of the mask whose `a` equals this lane's;
    match.all.sync.{b32,b64} d{|p}, a, membermask: d = the mask and p = true when every lane of the mask
    has the same `a`, else d = 0 and p = false (PTX ISA, Parallel Synchronization and Communication
    Instructions: match.sync)."""
    modes = [q for q in ins.qualifiers if q in (".any", ".all")]
    types = [q for q in ins.qualifiers if q in (".b32", ".b64")]
    extra = [q for q in ins.qualifiers if q not in (".any", ".all", ".b32", ".b64", ".sync")]
    if ".sync" not in ins.qualifiers or len(modes) != 1 or len(types) != 1 or extra or len(ins.operands) != 3:
        raise g.unsupported("match.{any,all}.sync.{b32,b64} d, a, membermask")
    mode, ty = modes[0], TYPES[types[0]]
    dst, a, mask = ins.operands
    d, p = _split_pair(g, dst)
    if p is not None and mode == ".any":
        raise g.unsupported("match.any has no predicate destination")
    dslot = None if d is None else int(d)
    pslot = None if p is None else int(p)

    def finish(parts: dict[int, tuple[object, object]], _m: Machine) -> None:
        values = {lane: v for lane, (_, v) in parts.items()}
        same = len(set(values.values())) == 1
        members = sum(1 << lane for lane in values)
        for t, v in parts.values():
            regs = t.regs  # type: ignore[attr-defined]
            if mode == ".any":
                result = sum(1 << other for other, w in values.items() if w == v)
            else:
                result = members if same else 0
            if dslot is not None:
                regs[dslot] = result
            if pslot is not None:
                regs[pslot] = same

    collective(g, f"match{mode}", g.src(mask, U32), g.src(a, ty), finish)


@instruction("brkpt", facts=Kind.EXIT)
def _brkpt(g: Gen, ins: ast.Instruction) -> None:
    """brkpt (PTX ISA, Miscellaneous Instructions: brkpt) suspends the thread for a debugger; with none
    attached the launch ends in an error there, as at a trap: a finding of its own."""
    if ins.qualifiers or ins.operands:
        raise g.unsupported()
    fault = g.const(KernelFault("brkpt: the kernel stopped at a breakpoint (without a debugger attached "
                                "the launch ends with an error here)", BRKPT))
    g.lines.append(f"raise {fault}")


@instruction("griddepcontrol", facts=Kind.NOP)
def _griddepcontrol(g: Gen, ins: ast.Instruction) -> None:
    """Programmatic dependent launch: in a simulation of one grid there is no prerequisite grid to wait
    for (`.wait` returns at once) and no dependent grid to release (`.launch_dependents`)."""
    if ins.qualifiers not in ((".wait",), (".launch_dependents",)):
        raise g.unsupported()


@instruction("redux", facts=collective_facts)
def _redux(g: Gen, ins: ast.Instruction) -> None:
    """redux.sync.{add,min,max,and,or,xor}.{u32,s32,b32} d, a, membermask: a warp reduction."""
    ops = [q for q in ins.qualifiers if q in (".add", ".min", ".max", ".and", ".or", ".xor")]
    if ".sync" not in ins.qualifiers or len(ops) != 1 or len(ins.operands) != 3:
        raise g.unsupported()
    op = ops[0]
    ty = g.type_of(ins)
    d, a, mask = ins.operands
    reg = g.dst(d)
    slot = None if reg is None else reg.slot
    signed = ty.signed

    def finish(parts: dict[int, tuple[object, object]], _m: Machine) -> None:
        values = [cast(int, v) for _, v in parts.values()]
        if signed:
            values = [v - (1 << 32) if v >> 31 else v for v in values]
        if op == ".add":
            result = sum(values)
        elif op == ".min":
            result = min(values)
        elif op == ".max":
            result = max(values)
        else:
            result = values[0]
            for v in values[1:]:
                result = result & v if op == ".and" else result | v if op == ".or" else result ^ v
        if slot is not None:
            for t, _ in parts.values():
                t.regs[slot] = result & 0xFFFFFFFF  # type: ignore[attr-defined]

    collective(g, f"redux{op}", g.src(mask, U32), g.src(a, ty), finish)
