"""Dead registers: which register slots a thread can still read, so that state hashing can ignore the rest.

A register is *live* at a thread's pc when some path of instructions from there reads it before writing
it; two states whose threads differ only in dead registers have the same future. The special registers
the compiler keeps in slots (%tid.x, %laneid, %warpid, ...: `sim.compile.SPECIAL_CONSTANTS`) are
registers like the others here, so a thread whose identity is dead carries none in its key.

The paths are those the thread can still take: a guard register that no instruction reachable from
the pc writes (`Code.fixed`) keeps its current value, so a branch on it goes one way only, and a
guarded instruction whose fixed guard is false reads and writes nothing but its guard. (nvcc keeps
`warp == 1` and `lane == 0` in such predicates: a lane that will never store `out[lane]` does not keep
the address alive.) The result depends on the pc and the values of those fixed guards, which are
themselves live; it is cached under them.

Conservative where unsure: an instruction whose reads cannot be told (`RegisterFlow.everything`) reads
every slot; only unguarded writes, or writes under a fixed true guard, kill.
"""

from __future__ import annotations

from mbarrier.explore.code import BRANCH, EXIT, LOCAL, Code, RegisterFlow, register_flow
from mbarrier.ptx import ast
from mbarrier.sim.machine import Machine, Thread


class Liveness:
    """Live register slots of one function, per pc and values of the fixed guards."""

    def __init__(self, fn: ast.Function, code: Code) -> None:
        self.code = code
        flow = register_flow(fn)
        flow.append(RegisterFlow(frozenset(), frozenset()))  # the implicit return
        self.flow = flow
        self.nregs = code.fn.nregs
        guards = sorted({x.guard[0] for x in code.ins if x.guard is not None})
        # Per pc: the guard slots whose value is fixed from there on (a superset of those that matter).
        self.fixed_guards: list[tuple[int, ...]] = [tuple(g for g in guards if code.fixed(pc, g))
                                                    for pc in range(len(code.ins))]
        self._cache: dict[tuple[int, tuple[bool, ...]], tuple[int, ...]] = {}

    def live(self, pc: int, regs: tuple[object, ...] | list[object]) -> tuple[int, ...]:
        """The live slots (sorted) of a thread at `pc` with registers `regs`."""
        fixed = self.fixed_guards[pc]
        key = (pc, tuple(bool(regs[g]) for g in fixed))
        out = self._cache.get(key)
        if out is None:
            out = self._cache[key] = self._compute(pc, dict(zip(fixed, key[1], strict=True)))
        return out

    def _compute(self, start: int, known: dict[int, bool]) -> tuple[int, ...]:
        code, flow = self.code, self.flow
        # The instructions the thread can still reach, with each one's successors and effect.
        succ: dict[int, tuple[int, ...]] = {}
        effect: dict[int, tuple[frozenset[int], frozenset[int]]] = {}
        everything = frozenset(range(self.nregs))
        todo = [start]
        while todo:
            pc = todo.pop()
            if pc in succ:
                continue
            x, f = code.ins[pc], flow[pc]
            on: bool | None = None  # the guard's value when fixed
            if x.guard is not None and x.guard[0] in known:
                on = known[x.guard[0]] != x.guard[1]
            nxt = code.succ[pc]
            if on is not None and x.kind in (BRANCH, EXIT):
                if x.kind == BRANCH:
                    taken = x.target if x.target is not None and x.target >= 0 else pc + 1
                    nxt = (taken,) if on else (pc + 1,)
                else:
                    nxt = () if on else (pc + 1,)
                nxt = tuple(p for p in nxt if p < len(code.ins))
            uses: frozenset[int]
            kills: frozenset[int]
            if on is False:
                uses, kills = frozenset({x.guard[0]}) if x.guard else frozenset(), frozenset()
            else:
                uses = everything if f.everything else f.uses
                kills = f.kills if (x.guard is None or on) else frozenset()
            succ[pc] = nxt
            effect[pc] = (uses, kills)
            todo.extend(nxt)
        # Backward data flow to a fixpoint over the reachable part.
        live: dict[int, frozenset[int]] = {pc: frozenset() for pc in succ}
        order = sorted(succ, reverse=True)
        changed = True
        while changed:
            changed = False
            for pc in order:
                uses, kills = effect[pc]
                out: set[int] = set()
                for s in succ[pc]:
                    out |= live[s]
                new = uses | (frozenset(out) - kills)
                if new != live[pc]:
                    live[pc] = new
                    changed = True
        return tuple(sorted(live[start]))


# -- what a thread's registers decide -------------------------------------------------------------------
# An abstract register value: (known, value, deps). known: the value is a function of the registers at the
# start alone, and is `value`; otherwise it also depends on what the thread will read from shared state
# (loads, waits, arrivals' tokens, collectives). deps: the start registers it was computed from.
Value = tuple[bool, object, frozenset[int]]


class Residual:
    """What a thread's future depends on, for the state key: its pc and a *residual signature*.

    From the thread's pc, constant propagation runs over the code with every register known (its current
    value): local instructions whose inputs are known are evaluated (with the compiled step, on a scratch
    thread), branches on known guards go one way, loads and other shared-state instructions give unknown
    results. The signature lists, for every instruction the thread can still reach that another agent can
    observe (every non-local one, every branch), the known values of its operands and guard, or that they
    are unknown; `needed` is the start registers that unknown operands were computed from. Two thread
    states with equal pc, signature and values of `needed` do the same things for the same inputs from
    the shared state: the same future. (nvcc's ring buffer: `lane` is live in a waiting consumer lane,
    but only decides `lane == 0` and addresses that `warp == 1` guards; so lanes 1..31 of warps 2..4
    have one signature.)"""

    def __init__(self, fn: ast.Function, code: Code, template: Thread, m: Machine) -> None:
        self.liveness = Liveness(fn, code)
        self.code = code
        self.flow = self.liveness.flow
        self.m = m
        self.template = template
        # Evaluated on known inputs: local instructions that read registers only (ld.param and ld.local
        # read the thread's local memory, the clock registers its clock, addc/subc/madc the carry flag:
        # their results count as unknown; st.local writes the memory, so its operands are signature).
        self.evaluable = [x.kind == LOCAL and x.op != "ld" and not x.local and (x.pure or not x.defs)
                          and not f.everything and not f.clocked
                          for x, f in zip(code.ins, self.flow, strict=True)]
        self._raised: dict[int, bool] = {}
        self._cache: dict[tuple[object, ...], tuple[int, tuple[int, ...]]] = {}
        self._sigs: dict[tuple[object, ...], int] = {}

    def key(self, pc: int, regs: tuple[object, ...] | list[object]) -> tuple[object, ...]:
        """(pc, signature id, values of the needed registers)."""
        live = self.liveness.live(pc, regs)
        ck = (pc, live, tuple(regs[i] for i in live))
        hit = self._cache.get(ck)
        if hit is None:
            sig, needed = self._analyse(pc, regs)
            sid = self._sigs.setdefault((sig, needed), len(self._sigs))
            hit = self._cache[ck] = (sid, needed)
        return (pc, hit[0], tuple(regs[i] for i in hit[1]))

    def _analyse(self, start: int, regs: tuple[object, ...] | list[object]) -> tuple[tuple[object, ...],
                                                                                     tuple[int, ...]]:
        code, flow = self.code, self.flow
        end = len(code.ins)
        self._raised = {}

        def init(s: int) -> Value:
            return (True, regs[s], frozenset((s,)))

        def get(st: dict[int, Value], s: int) -> Value:
            v = st.get(s)
            return init(s) if v is None else v

        def guard(st: dict[int, Value], x: object) -> Value | None:
            g = x.guard  # type: ignore[attr-defined]
            if g is None:
                return None
            v = get(st, g[0])
            return (True, bool(v[1]) != g[1], v[2]) if v[0] else v

        shadow = Thread.__new__(Thread)
        for name in ("aid", "func", "code", "cta", "warp", "lane", "tid", "time", "effects", "status",
                     "local", "frames"):
            setattr(shadow, name, getattr(self.template, name))
        shadow.regs = list(regs)

        ins_state: dict[int, dict[int, Value]] = {start: {}}
        todo = [start]
        while todo:
            pc = todo.pop()
            st = ins_state[pc]
            x, f = code.ins[pc], flow[pc]
            gv = guard(st, x)
            out = dict(st)
            if x.kind == BRANCH or x.kind == EXIT:
                nxt = _successors(code, pc, gv)
            else:
                nxt = code.succ[pc]
                if gv is None or gv[0] is False or gv[1]:
                    new = self._transfer(pc, st, get, shadow)
                    gdeps = gv[2] if gv is not None and not gv[0] else frozenset()
                    for s, v in new.items():
                        if gv is not None and not gv[0]:  # the write may or may not happen
                            v = _join(get(st, s), v, gdeps)
                        out[s] = v
            for p in nxt:
                if p >= end:
                    continue
                old = ins_state.get(p)
                if old is None:
                    ins_state[p] = out
                    todo.append(p)
                    continue
                merged = _merge(old, out, init)
                if merged is not None:
                    ins_state[p] = merged
                    todo.append(p)
        # The signature, from the fixpoint.
        sig: list[object] = []
        needed: set[int] = set()
        for pc in sorted(ins_state):
            x, f = code.ins[pc], flow[pc]
            st = ins_state[pc]
            gv = guard(st, x)
            if gv is not None:
                if gv[0]:
                    sig.append((pc, "guard", gv[1]))
                    if not gv[1]:
                        continue
                else:
                    sig.append((pc, "guard", None))
                    needed |= gv[2]
            if x.kind == BRANCH:
                continue
            if self.evaluable[pc]:
                if self._raised.get(pc):
                    sig.append((pc, "raises"))
                elif not self.code.fn.sites[pc].facts.total:
                    # It may raise on some inputs: whatever its inputs came from decides that.
                    for s in f.uses:
                        v = get(st, s)
                        if not v[0]:
                            needed |= v[2]
                continue
            slots = range(self.liveness.nregs) if f.everything else sorted(f.uses)
            for s in slots:
                v = get(st, s)
                if v[0]:
                    sig.append((pc, s, v[1]))
                else:
                    sig.append((pc, s, None))
                    needed |= v[2]
        return tuple(sig), tuple(sorted(needed))

    def _transfer(self, pc: int, st: dict[int, Value], get: object, shadow: Thread) -> dict[int, Value]:
        """The values the instruction at pc writes (its guard taken as true)."""
        f = self.flow[pc]
        ins_vals = [get(st, s) for s in f.uses]  # type: ignore[operator]
        deps = frozenset().union(*(v[2] for v in ins_vals)) if ins_vals else frozenset()
        if self.evaluable[pc] and all(v[0] for v in ins_vals):
            for s, v in zip(f.uses, ins_vals, strict=True):
                shadow.regs[s] = v[1]
            shadow.pc = pc
            try:
                self.code.fn.code[pc](self.m, shadow)
            except Exception:  # noqa: BLE001 - the thread raises it when it runs: part of the signature
                self._raised[pc] = True
                return {s: (False, None, deps) for s in f.kills}
            self._raised[pc] = False
            return {s: (True, shadow.regs[s], deps) for s in f.kills}
        if self.evaluable[pc]:
            return {s: (False, None, deps) for s in f.kills}
        # A shared-state instruction: its results come from outside (the operands are in the signature).
        return {s: (False, None, frozenset()) for s in f.kills}


def _successors(code: Code, pc: int, gv: Value | None) -> tuple[int, ...]:
    x = code.ins[pc]
    if gv is None or not gv[0]:
        return code.succ[pc]
    on = bool(gv[1])
    if x.kind == BRANCH:
        taken = x.target if x.target is not None and x.target >= 0 else pc + 1
        return (taken,) if on else (pc + 1,)
    return () if on else (pc + 1,)


def _join(a: Value, b: Value, extra: frozenset[int] = frozenset()) -> Value:
    if a[0] and b[0] and a[1] == b[1] and type(a[1]) is type(b[1]):
        return (True, a[1], a[2] | b[2] | extra)
    return (False, None, a[2] | b[2] | extra)


def _merge(old: dict[int, Value], new: dict[int, Value], init: object) -> dict[int, Value] | None:
    """old ⊔ new, or None when that is old."""
    out: dict[int, Value] | None = None
    for s in set(old) | set(new):
        a = old.get(s) or init(s)  # type: ignore[operator]
        b = new.get(s) or init(s)  # type: ignore[operator]
        if a == b and type(a[1]) is type(b[1]):
            continue
        j = _join(a, b)
        if j != a:
            if out is None:
                out = dict(old)
            out[s] = j
    return out
