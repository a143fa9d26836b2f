"""Arrivals at a whole-CTA bar.sync that run eagerly (`Explorer.is_local`).

A bar.sync without a thread count waits for every live thread of its CTA. While no counted
bar.sync/bar.arrive and no bar.arrive can use its id, neither now (the barrier's arrivals so far) nor in
any future of the CTA's live threads that may step before it completes (read from their registers now,
`explore.values`; the arriving thread and those already waiting there take no step until it
completes), every arrival there is one of a thread that then waits until the barrier completes (so it
cannot exit meanwhile),
and the barrier cannot complete before a live thread that has not arrived does. Such an arrival
therefore commutes with every other agent's step: with the other arrivals (the arrived set is the same
in any order; each releases its clock into the barrier's, which every waiter acquires when it
completes, `sim.races`), with exits (an exit lowers the count the barrier needs, which cannot complete
without this arrival either way), and nothing else reads the barrier. It is never disabled. So the
thread alone is a persistent set there, and its arrival runs as part of its step before: no state of
its own.
"""

from __future__ import annotations

from collections import OrderedDict

from mbarrier.explore.code import BAR, Code, Ins
from mbarrier.explore.footprints import Footprints
from mbarrier.explore.liveregs import LiveRegs
from mbarrier.explore.values import unroll, unroll_lanes
from mbarrier.sim.machine import EXITED, Thread
from mbarrier.sim.waits import AtBar, InCollective

IDS_KEPT = 4096  # threads' answers kept (by thread, pc and live registers): more than a CTA's threads


class WholeBars:
    """Which whole-CTA bar.sync arrivals run eagerly, with each thread's answer kept while its pc and
    live registers stay the same."""

    def __init__(self, fps: dict[str, Footprints]) -> None:
        self.fps = fps
        self.regs = LiveRegs()
        self._ids: OrderedDict[tuple[object, ...], frozenset[int] | None] = OrderedDict()
        self._reach: dict[tuple[int, int], tuple[Code, tuple[tuple[int | None, int] | None, ...]]] = {}
        # No function holds a counted bar.sync/bar.arrive, a bar.arrive or a call: no thread may use any
        # id but at a whole-CTA bar.sync, so `may_use` is False for every thread (not asked 128 times).
        self._none = not any(c.code.calls or any(_site(x) for x in c.code.ins) for c in fps.values())

    def eager(self, t: Thread, x: Ins) -> bool:
        """Whether t's arrival at x (a bar instruction it stands at) runs eagerly (the module's words)."""
        ident = self.ident(t, x)
        if x.sync_all != "cta" or ident is None:
            return False
        nb = t.cta.bars.get(ident)
        here = AtBar(ident)
        if nb is not None and (nb.count is not None or any(th.wait != here for th in nb.arrived)):
            return False
        # t and the threads already waiting here take no step before the barrier completes, which needs
        # t's arrival: their futures cannot use the id meanwhile (only those still on their way can).
        return self._none or not any(u.status != EXITED and u is not t and u.wait != here
                                     and self.may_use(u, ident) for u in t.cta.threads)

    def ident(self, t: Thread, x: Ins) -> int | None:
        """The id of the bar instruction t stands at (its register's value now, where one)."""
        return self.fps[t.func.name].operand(t, x.bar_id, t.pc, False, None)

    def may_use(self, u: Thread, ident: int) -> bool:
        """Whether a counted bar.sync/bar.arrive or a bar.arrive of u's future may use barrier `ident`.
        First from the code alone (every such instruction reachable from u's pc, its id an immediate or
        a register no instruction from there writes): a superset, enough where it leaves `ident` out;
        else from u's unrolled future (`shared_ids`). A lane inside a warp collective may use any id (its
        registers wait for the collective's results)."""
        if u.frames:
            return True
        code = self.fps[u.func.name].code
        if code.calls:
            return True
        ids = self._sites(code, u.pc)
        if not ids:
            return False
        if isinstance(u.wait, InCollective):
            return True  # the registers the collective writes when it completes hold stale values now
        if all(i is not None and (i[0] is None or code.fixed(u.pc, i[0])) for i in ids):
            fp = self.fps[u.func.name]
            if ident not in {fp.operand(u, i, u.pc, False, None) for i in ids}:
                return False
        found = self.shared_ids(u)
        return found is None or ident in found

    def _sites(self, code: Code, pc: int) -> tuple[tuple[int | None, int] | None, ...]:
        """The ids (`Ins.bar_id`) of the counted bar.sync/bar.arrive and the bar.arrive reachable from pc,
        whatever the guards (kept per function and pc)."""
        key = (id(code), pc)
        found = self._reach.get(key)
        if found is None or found[0] is not code:
            seen = {pc}
            todo = [pc]
            out: list[tuple[int | None, int] | None] = []
            while todo:
                x = code.ins[todo.pop()]
                if _site(x):
                    out.append(x.bar_id)
                for j in code.succ[x.pc]:
                    if j not in seen:
                        seen.add(j)
                        todo.append(j)
            found = self._reach[key] = (code, tuple(dict.fromkeys(out)))
        return found[1]

    def shared_ids(self, u: Thread) -> frozenset[int] | None:
        """The ids the counted bar.sync/bar.arrive and the bar.arrive of u's unrolled future may use
        (None: one not known). u is in no call, and its function calls none that may run PTX."""
        fp = self.fps[u.func.name]
        code = fp.code
        rel, getters = self.regs.of(code)
        key = (u.func.name, u.aid, u.pc) + getters[u.pc](u)
        if key in self._ids:
            return self._ids[key]
        # With u, the lanes of its warp at its pc not asked yet: their futures in one walk (`unroll_lanes`).
        lanes, keys = [u], [key]
        for s in () if u.warp is None else u.warp.threads:
            if (s is not u and s.pc == u.pc and s.func is u.func and s.status != EXITED and not s.frames
                    and not isinstance(s.wait, InCollective)):
                k = (s.func.name, s.aid, s.pc) + getters[s.pc](s)
                if k not in self._ids:
                    lanes.append(s)
                    keys.append(k)
        graphs = unroll_lanes(fp.m, code, lanes, rel, fp.successors) if len(lanes) > 1 else [None]
        for s, k, g in zip(lanes, keys, graphs, strict=True):
            if g is None and s is not u:
                continue
            if g is None:
                g = unroll(fp.m, code, u, rel, lambda j, env: fp.successors(u, j, u.pc, env))
            out: set[int | None] = set()
            for pc, env in zip(g.pcs, g.envs, strict=True):
                x = code.ins[pc]
                if _site(x) and fp.guard_may(s, x, s.pc, env):
                    out.add(fp.operand(s, x.bar_id, s.pc, True, env))
            self._ids[k] = None if None in out else frozenset(i for i in out if i is not None)
        found = self._ids[key]
        while len(self._ids) > IDS_KEPT:
            self._ids.popitem(last=False)
        return found


def _site(x: Ins) -> bool:
    """A counted bar.sync/bar.arrive or a bar.arrive: a use of a barrier id that is not a whole-CTA
    bar.sync."""
    return x.kind == BAR and (x.counted or x.sync_all != "cta")
