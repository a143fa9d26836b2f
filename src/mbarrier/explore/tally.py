"""The frozen futures' count of arrivals at named barriers (bar.sync/bar.arrive), for the counted
bar.sync gates of `explore.frozen`'s fixpoint and for `explore.por.Counted`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mbarrier.explore.code import Ins
from mbarrier.explore.values import Env
from mbarrier.sim.machine import Machine, Thread

if TYPE_CHECKING:
    from mbarrier.explore.footprints import Footprints
    from mbarrier.explore.frozen import Gate, Plan

INF = 1 << 60  # "arbitrarily many arrivals", as explore.frozen's
# An arrival at a bar.sync/bar.arrive: (node, barrier id, thread count, waits, repeats); id None: an
# arrival at a barrier the analysis cannot name (id or count unknown); count UNCOUNTED: one without a
# thread count (the barrier then completes when every live thread of the CTA arrived).
BarUse = tuple[int, int | None, int, bool, bool]
UNCOUNTED = -1


def bar_use(fp: Footprints, t: Thread, x: Ins, pc: int, future: bool, env: Env | None, node: int,
             repeats: bool) -> list[BarUse]:
    """A bar.sync/bar.arrive's arrival, its id None when unknown (or its count, for a counted one)."""
    ident = fp.operand(t, x.bar_id, pc, future, env)
    if not x.counted:
        return [(node, ident, UNCOUNTED, x.bar_waits, repeats)]
    count = fp.operand(t, x.bar_count, pc, future, env)
    if count is None:
        ident = None
    return [(node, ident, count or 0, x.bar_waits, repeats)]


def bar_arrivals(uses: list[BarUse], paths: dict[int | None, int]) -> dict[int | None, int]:
    """Per barrier id, the most arrivals a thread can make there before the barrier completes: once at a
    bar.sync (it then waits), once per bar.arrive of its region (arbitrarily often on a cycle) and no more
    often than one path of its future holds (`paths`). Each node counts once: the regions behind two
    gates may overlap (a spin-wait's gate at the thread's own pc leads back into its start region)."""
    by_id: dict[int | None, list[BarUse]] = {}
    for u in {u[0]: u for u in uses}.values():
        by_id.setdefault(u[1], []).append(u)
    out: dict[int | None, int] = {}
    for ident, us in by_id.items():
        free = [u for u in us if not u[3]]
        n = min(sum(INF if u[4] else 1 for u in free), paths.get(ident, INF)) if free else 0
        out[ident] = min(n + (1 if len(free) < len(us) else 0), INF)
    return out


class Tally:
    """The arrivals at named barriers in the regions opened so far (the fixpoint's count for bar.sync
    gates): per live thread its uses (each node once), per (cta, id) the arrivals all threads can make
    (`bar_arrivals`) and the counts they give; CTAs where some arrival cannot be counted."""

    def __init__(self) -> None:
        self.uses: dict[int, dict[int, BarUse]] = {}   # by thread, its arrivals beyond its start's
        self.own: dict[int, dict[int | None, int]] = {}
        self.total: dict[tuple[int, int], int] = {}    # not capped at INF (a thread's share is taken back)
        self.counts: dict[tuple[int, int], set[int]] = {}
        self.unknown: set[int] = set()

    def start(self, li: int, cta: int, plan: Plan, times: int = 1) -> None:
        """Thread li's region up to its first gates (from the plan's cached tallies); `times`: how many alike
        threads li stands for (`frozen.Frozen.futures`' groups), each arriving as it does."""
        for ident, count in plan.start_counts:
            if ident is None:
                self.unknown.add(cta)
            else:
                self.counts.setdefault((cta, ident), set()).add(count)
        self.own[li] = plan.start_own
        for ident, n in plan.start_own.items():
            if ident is not None:
                self.total[(cta, ident)] = self.total.get((cta, ident), 0) + n * times

    def add(self, li: int, cta: int, plan: Plan, uses: list[BarUse],
            times: int = 1) -> set[tuple[int, int | None]]:
        """Thread li's arrivals in a region behind an opened gate (for `times` alike threads, as `start`); the
        (cta, id) whose count changed, id None where an arrival cannot be counted."""
        if not uses:
            return set()
        mine = self.uses.get(li)
        if mine is None:
            mine = self.uses[li] = {u[0]: u for u in plan.start.bars}
        new = [u for u in uses if u[0] not in mine]
        if not new:
            return set()
        for u in new:
            mine[u[0]] = u
        touched: set[tuple[int, int | None]] = set()
        for u in new:
            if u[1] is None:
                self.unknown.add(cta)
                touched.add((cta, None))
            else:
                self.counts.setdefault((cta, u[1]), set()).add(u[2])
                touched.add((cta, u[1]))
        before = self.own.get(li, {})
        after = self.own[li] = bar_arrivals(list(mine.values()), plan.bar_paths)
        for _, ident in touched:
            if ident is not None:
                key = (cta, ident)
                self.total[key] = self.total.get(key, 0) + (after[ident] - before.get(ident, 0)) * times
        return touched

    def passable(self, m: Machine, g: Gate) -> bool:
        """Whether barrier g.off of CTA g.cta may complete with the arrivals it holds and those counted."""
        if g.cta in self.unknown:
            return True
        nb = m.ctas[g.cta].bars.get(g.off)
        seen = self.counts.get((g.cta, g.off), set())
        count = nb.count if nb is not None else (next(iter(seen)) if len(seen) == 1 else None)
        if count is None or count == UNCOUNTED or seen - {count}:
            return True
        arrived = len(nb.arrived) if nb is not None else 0
        return arrived + self.total.get((g.cta, g.off), 0) >= count
