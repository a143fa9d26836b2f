"""Why a deadlocked state cannot move: each waiting thread, what it waits for, which mbarrier phase
starves (`explore.stuck`, the words `mbarrier run` prints for a stuck run too), and who could still help."""

from __future__ import annotations

from mbarrier.explore.code import BAR, BULK, CP_MB, MB, Code, Ins, analyse_module
from mbarrier.explore.footprints import READ, Footprints
from mbarrier.explore.liveregs import LiveRegs
from mbarrier.explore.por import AllFootprints
from mbarrier.explore.results import Waiter
from mbarrier.explore.spin import FlagSpin, Spin
from mbarrier.explore.stuck import Starved, blocked, cause, starved
from mbarrier.explore.values import Env, Unrolled, future_start, unroll, unroll_lanes
from mbarrier.explore.who import Layout, plural, ranges
from mbarrier.ptx import ast
from mbarrier.sim.machine import EXITED, Copy, Machine, Thread
from mbarrier.sim.waits import OnMbarrier, Wait


def explain(m: Machine, codes: dict[str, Code], fp: AllFootprints, spinning: dict[int, Spin]
            ) -> tuple[list[Waiter], dict[str, list[str]], list[Starved], str]:
    """The waiting threads of a deadlocked machine, who could still arrive on the barriers they wait on,
    the starved mbarrier phases (likeliest cause first) and the finding's message. `spinning`: the threads
    the checker found spinning (thread -> barrier), which the machine has not parked."""
    waiters: list[Waiter] = []
    waits: list[tuple[Thread, Wait | None]] = []
    barriers: dict[tuple[int, int], str] = {}
    for t in m.threads:
        if t.status == EXITED:
            continue
        wait: OnMbarrier | None = None
        spin = spinning.get(t.aid)
        if isinstance(spin, tuple):
            x = codes[t.func.name].ins[t.pc]
            slot, const = x.wait_arg
            value = t.regs[slot] if slot is not None else const
            wait = OnMbarrier(t.pc, *spin, x.wait_parity, value)
        why = blocked(m, t, spin if isinstance(spin, FlagSpin) else wait)
        w = wait if wait is not None else t.wait
        waits.append((t, w))
        if isinstance(w, OnMbarrier):
            assert why.barrier is not None
            barriers[(w.cta, w.off)] = why.barrier
        waiters.append(Waiter(t.aid, t.name, why.site.line, why.site.text, why.what, why.barrier, why.address,
                              why.cta, why.wants, why.state, why.reason))
    layout = Layout.of(m)
    ahead = FootprintsAhead(fp)
    arrivers: dict[str, list[str]] = {}
    for (cta_i, off), sym in barriers.items():
        arrivers[sym] = _who_could_arrive(m, ahead, cta_i, off, {w.thread for w in waiters}, layout)
    found = starved(m, waits, ahead)
    n = len(waiters)
    what = sorted({w.barrier for w in waiters if w.barrier} | {w.what for w in waiters if not w.barrier
                                                               and w.what != "flag"}
                  | {f"the flag at {f.where()}" for f in spinning.values() if isinstance(f, FlagSpin)})
    message = f"{n} thread{'s' if n != 1 else ''} wait{'s' if n == 1 else ''} forever (on {', '.join(what)})"
    headline = cause(m, found, layout)
    # A flag no one can write is the first cause: the threads a barrier lacks may be its spinners.
    flags: dict[str, list[int]] = {}
    for aid, f in spinning.items():
        if isinstance(f, FlagSpin):
            flags.setdefault(f.where(), []).append(aid)
    causes = [f"{layout.threads(ids)} {plural(ids, 'spins', 'spin')} on the flag at {where}, which no "
              "thread can write any more" for where, ids in sorted(flags.items())]
    if headline:
        causes.append(headline)
    if causes:
        message += ": " + "; ".join(causes)
    return waiters, arrivers, found, message


class FootprintsAhead:
    """What a live thread's remaining code may still do, read from its unrolled future (`values.unroll`:
    the register values each instruction will see): an instruction it may still reach names the object,
    or one whose operand is not known there (a thread inside a call: anything)."""

    def __init__(self, fps: AllFootprints | None) -> None:
        self._fps = fps
        self._regs = LiveRegs()
        self._nodes: dict[int, tuple[Footprints, Thread, list[tuple[Ins, Env]]]] = {}

    def footprints(self) -> AllFootprints:
        assert self._fps is not None
        return self._fps

    def _ahead(self, t: Thread) -> tuple[Footprints, Thread, list[tuple[Ins, Env]]]:
        found = self._nodes.get(t.aid)
        if found is None:
            self._unroll_warp(t)
            found = self._nodes[t.aid]
        return found

    def _unroll_warp(self, t: Thread) -> None:
        """t's unrolled future, and with it in one walk (`values.unroll_lanes`) those of the lanes of its
        warp at its pc: a deadlock's explanation asks about every live thread, and a walk per thread of
        a 512-thread kernel costs tens of seconds."""
        fp = self.footprints().fps[t.func.name]
        code = fp.code
        rel = self._regs.of(code)[0]
        u = future_start(code, t)
        lanes = [u]
        for s in () if t.warp is None else t.warp.threads:
            if s is t or s.aid in self._nodes or s.status == EXITED or s.frames or s.func is not t.func:
                continue
            v = future_start(code, s)
            if v.pc == u.pc:
                lanes.append(v)
        graphs: list[Unrolled | None] = unroll_lanes(fp.m, code, lanes, rel, fp.successors) \
            if len(lanes) > 1 else [None]
        for v, g in zip(lanes, graphs, strict=True):
            if g is None and v is not u:
                continue
            if g is None:
                g = unroll(fp.m, code, u, rel, lambda j, env: fp.successors(u, j, u.pc, env))
            nodes = [(code.ins[pc], env) for pc, env in zip(g.pcs, g.envs, strict=True)]
            self._nodes[v.aid] = (fp, v, [(x, env) for x, env in nodes if fp.guard_may(v, x, v.pc, env)])

    def reaches_bar(self, t: Thread, ident: int) -> bool:
        if t.frames:
            return True
        fp, u, nodes = self._ahead(t)
        return any(x.kind == BAR and fp.operand(u, x.bar_id, u.pc, True, env) in (None, ident)
                   for x, env in nodes)

    def arrives_on(self, t: Thread, cta: int, off: int) -> bool:
        return bool(t.frames) or bool(self.writes(t, cta, off, (MB, CP_MB), arrivals_only=True))

    def writes(self, t: Thread, cta: int, off: int, kinds: tuple[int, ...] = (MB, CP_MB, BULK),
               arrivals_only: bool = False) -> list[int]:
        """The lines of the instructions (of `kinds`) in t's future that may change the mbarrier at
        shared offset `off` of CTA index `cta`: arrive, expect_tx, complete_tx, a copy completing on it
        (`arrivals_only`: an arrival, cp.async.mbarrier.arrive included). A thread inside a call: none
        (the caller says "anything")."""
        if t.frames:
            return []
        fp, u, nodes = self._ahead(t)
        lines: list[int] = []
        for x, env in nodes:
            if x.kind not in kinds or (arrivals_only and x.kind == MB and x.mb_op not in MB_ARRIVALS):
                continue
            if any(obj[0] == "mb" and obj[1] in (None, cta) and obj[2] in (None, off) and mode != READ
                   for obj, mode in fp.of_ins(u, x, u.pc, True, env)):
                lines.append(x.line)
        return sorted(set(lines))


class ModuleAhead(FootprintsAhead):
    """`FootprintsAhead` for a machine `module` runs (`mbarrier run`'s stuck report): the module's code
    is analysed at the first question only."""

    def __init__(self, module: ast.Module, m: Machine) -> None:
        super().__init__(None)
        self.module, self.m = module, m

    def footprints(self) -> AllFootprints:
        if self._fps is None:
            codes = analyse_module(self.module, self.m)
            self._fps = AllFootprints({name: Footprints(self.m, c) for name, c in codes.items()})
        return self._fps


# The lines a thread's future may still arrive from, at most this many named ("and N more").
LINES_SHOWN = 6
# An mbarrier instruction that is an arrival (the others change the tx-count or the object).
MB_ARRIVALS = ("arrive", "arrive_drop")


def _who_could_arrive(m: Machine, ahead: FootprintsAhead, cta_i: int, off: int, waiting: set[int],
                      layout: Layout) -> list[str]:
    """Agents whose remaining code may still write this barrier (arrive, expect_tx, complete_tx, ...),
    threads alike (at the same line, waiting or not, reaching the same lines) together."""
    copies: list[str] = []
    calls: list[int] = []
    alike: dict[tuple[int, bool, tuple[int, ...]], list[int]] = {}
    for a in [t for t in m.threads if t.status != EXITED] + list(m.inflight):
        if isinstance(a, Copy):
            if a.bar_cta is not None and a.bar_cta.index == cta_i and a.bar_off == off:
                copies.append(f"{a.name} (in flight)")
            continue
        assert isinstance(a, Thread)
        if a.frames:
            calls.append(a.aid)
            continue
        lines = ahead.writes(a, cta_i, off)
        if lines:
            alike.setdefault((a.func.sites[a.pc].line, a.aid in waiting, tuple(lines)), []).append(a.aid)
    said = [(first, f"{layout.threads(range(first, last + 1))} (inside a call: anything)")
            for first, last in ranges(calls)]
    for (line, stuck, reached), ids in alike.items():
        shown = ", ".join(f"line {n}" for n in reached[:LINES_SHOWN])
        if len(reached) > LINES_SHOWN:
            shown += f" and {len(reached) - LINES_SHOWN} more"
        for first, last in ranges(ids):
            run = [i for i in ids if first <= i <= last]
            verb = plural(run, "waits itself", "wait themselves")
            said.append((first, f"{layout.threads(run)} at line {line}{' but ' + verb if stuck else ''} "
                                f"({plural(run, 'its', 'their')} code still reaches {shown})"))
    return [text for _, text in sorted(said)] + copies
