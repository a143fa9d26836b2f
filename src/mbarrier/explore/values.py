"""Register values a thread's future instructions will see: constant propagation from its registers now.

`code.fixed` knows a register whose value can no longer change. nvcc and the family generator compute
most addresses, parities and counts just before use (`mov.u32 %r24, empty; add.u32 %r31, %r24, 8`), so
from a thread's pc those registers are not fixed, yet their values at the instruction that uses them
follow from the registers the thread holds now. This is a forward data-flow analysis over the
instructions reachable from the thread's pc: the state at an instruction maps each register that may
still change to its value on *every* path from the pc to it (absent when paths disagree or it is
unknown). Pure local instructions (register arithmetic, `mov`, `cvt`, `setp`, `selp`, `ld.param`...)
are evaluated by running their compiled step on a scratch copy of the thread whose unknown registers
hold a value that raises when used; anything else that writes a register makes it unknown. Guards known
in a state decide branches, so paths that cannot be taken add nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from mbarrier.explore.code import LOCAL, Code, Ins
from mbarrier.sim.compile import SPECIAL_DYNAMIC
from mbarrier.sim.machine import Machine, Thread

Env = dict[int, object]


class Unknown:
    """A register value the analysis does not know: any use in a compiled step raises."""

    __slots__ = ()

    def _fail(self, *_: object) -> NoReturn:
        raise TypeError("unknown register value")

    __bool__ = __int__ = __index__ = __hash__ = _fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _fail
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __neg__ = __invert__ = _fail
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = _fail


UNKNOWN = Unknown()


def value(code: Code, t: Thread, pc: int, env: Env | None, slot: int) -> object | None:
    """The value register `slot` holds at an instruction whose state is `env` (None: unknown)."""
    if code.fixed(pc, slot):
        return t.regs[slot]
    if env is None:
        return None
    return env.get(slot)


def flow(m: Machine, code: Code, t: Thread, live: tuple[int, ...],
         succ: Callable[[int, Env], tuple[int, ...]]) -> dict[int, Env]:
    """The state at each instruction reachable from the thread's pc. `live`: the registers some path
    may read before writing them (the others start unknown: they are written before any use);
    `succ(j, env)` gives the successors of instruction j in state env (known guards followed)."""
    pc = t.pc
    start: Env = {s: t.regs[s] for s in live if not code.fixed(pc, s)}
    envs: dict[int, Env] = {}
    shadow = _shadow(t)
    work: list[tuple[int, Env]] = [(pc, start)]
    while work:
        j, e = work.pop()
        old = envs.get(j)
        if old is None:
            new = dict(e)
        else:
            new = {s: v for s, v in old.items() if s in e and _same(e[s], v)}
            if len(new) == len(old):
                continue
        envs[j] = new
        out = _transfer(m, code, t, shadow, code.ins[j], pc, new)
        for s in succ(j, new):
            work.append((s, out))
    return envs


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


def _shadow(t: Thread) -> Thread:
    shadow = Thread.__new__(Thread)
    for name in ("aid", "func", "code", "cta", "warp", "lane", "tid", "time", "effects", "status"):
        setattr(shadow, name, getattr(t, name))
    shadow.regs = list(t.regs)
    shadow.pc = t.pc
    return shadow


def _transfer(m: Machine, code: Code, t: Thread, shadow: Thread, x: Ins, pc: int, env: Env) -> Env:
    if not x.defs:
        return env
    guard = None if x.guard is None else value(code, t, pc, env, x.guard[0])
    if guard is not None and bool(guard) == x.guard[1]:  # type: ignore[index]
        return env  # the guard is known to be off: the instruction does nothing
    out = dict(env)
    for d in x.defs:
        out.pop(d, None)
    # Evaluated: functions of their register operands (`Facts.pure`), and ld.param (analyse marks it LOCAL).
    if (x.guard is not None and guard is None) or x.kind != LOCAL or not (x.pure or x.op == "ld"):
        return out
    text = code.fn.sites[x.pc].text
    if any(name in text for name in SPECIAL_DYNAMIC):
        return out  # reads a clock: not a function of the registers
    regs = shadow.regs
    for s in x.reads:  # the step reads these (fixed ones already hold their values)
        if not code.fixed(pc, s):
            regs[s] = env.get(s, UNKNOWN)
    shadow.pc = x.pc
    try:
        code.fn.code[x.pc](m, shadow)
    except Exception:  # noqa: BLE001 - an unknown operand (or a faulting instruction): the result is unknown
        return out
    for d in x.defs:
        v = regs[d]
        if not isinstance(v, Unknown):
            out[d] = v
    return out
