"""The stubborn set of one state (`stubborn`): each seed's closure over conflicts and enabling
(`explore.por`'s futures and index), the smallest kept."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from mbarrier.explore.code import EXIT, Code
from mbarrier.explore.conflicts import Index
from mbarrier.explore.footprints import Item, awaited
from mbarrier.explore.por import AllFootprints
from mbarrier.explore.seeds import alike_first, more, order
from mbarrier.explore.spin import Spin
from mbarrier.sim.machine import Copy, Machine, Thread

# The first pass over the seeds stops each closure past this many enabled agents; closures paused so are
# resumed, in order, only where none closed within it (`stubborn`).
FIRST_PASS = 4
# Where every seed `order` gives pauses there, this many more, each of a kind not tried (`seeds.more`).
MORE_SEEDS = 8
# A set of one may start a run (`alone_too`): up to RUN further agents, out of RUN_TRIES seeds tried, the
# run ending at the RUN_MISSES-th seed that does not close alone.
RUN, RUN_TRIES, RUN_MISSES = 128, 192, 8


class _Closure:
    """One seed's closure, resumable: `run` stops once it holds `limit` enabled agents or more."""

    def __init__(self, m: Machine, fp: AllFootprints, agents: list[Thread | Copy], enabled: dict[int, bool],
                 blocked_on: dict[int, Spin], seed: int,
                 current: Callable[[Thread | Copy], list[Item]], check: Callable[[], None] | None,
                 entries: Sequence[object] | None) -> None:
        self.m, self.fp, self.agents, self.enabled, self.blocked_on = m, fp, agents, enabled, blocked_on
        self.seed, self.current = seed, current
        self.indexes, immortal, self.counted, self.quiet = fp.frozen_indexes(m, agents, seed, blocked_on,
                                                                              check, entries)
        self.index = self.own = fp.index(self.indexes, immortal)
        s = agents[seed]
        if isinstance(s, Thread) and s.cta.index not in immortal:
            # The seed is in the set, so along any sequence of steps outside it the seed stays alive, and
            # so does its CTA: for every other member's conflicts it is immortal. Only the seed's own next
            # step (an exit, or one inside a call) may be its CTA's last, so it alone asks without that.
            self.index = self.own.like(immortal | {s.cta.index})
        self.in_set = {seed}
        self.work = [seed]
        self.count = 1
        # Agents alike ask alike (the threads of a warpgroup waiting at one barrier): one query each.
        self.asked: dict[tuple[Item, ...], set[int]] = {}
        self.outlived: dict[int, Index] = {}  # by CTA: the index that also leaves its liveness out

    def run(self, limit: int) -> bool:
        """Close further until done (True) or until it holds `limit` enabled agents (False)."""
        agents, enabled, fp, in_set, work = self.agents, self.enabled, self.fp, self.in_set, self.work
        index, outlived = self.index, self.outlived
        while work:
            if self.count >= limit:
                return False
            i = work.pop()
            a = agents[i]
            ask = index if i != self.seed else self.own
            if enabled.get(i):
                items = self.quiet.adjust(a, fp.code_of(a), self.counted.adjust(i, self.current(a)),
                                          partial(self._writers, i))
                if isinstance(a, Thread) and _outlived_exit(a, fp.code_of(a)) \
                        and a.cta.index not in ask.immortal:
                    cta = a.cta.index
                    ask = index if cta in index.immortal else outlived.get(cta) or outlived.setdefault(
                        cta, index.like(index.immortal | {cta}))
            else:
                items = awaited(self.m, a, self.blocked_on.get(i))
            key = tuple(items)
            found = self.asked.get(key) if ask is index else None
            if found is None:
                found = ask.conflicting(items, fp.query(key))
                if ask is index:
                    self.asked[key] = found
            for j in found:
                if j not in in_set:
                    in_set.add(j)
                    work.append(j)
                    if enabled.get(j):
                        self.count += 1
        return self.count < limit

    def _writers(self, i: int, item: Item) -> list[Thread | Copy]:
        """The agents but agent i whose futures conflict with `item` (`Quiet.wait_quiet`)."""
        found = self.index.conflicting([item], self.fp.query((item,)))
        return [self.agents[j] for j in found if j != i]

    def members(self) -> list[int]:
        return sorted(k for k in self.in_set if self.enabled.get(k))


def _outlived_exit(a: Thread, code: Code | None) -> bool:
    """Whether `a` is a thread whose next step is its exit (outside calls) while another thread of its CTA
    is alive: that exit is not the CTA's last, so it conflicts with no step that reads the CTA's liveness
    (a copy's landing or a pending arrive-on in it, a remote access to it). If, along steps outside the
    set, the other threads exit too and such a step follows, then with the exit first that order ends in
    a violation (the CTA's last exit with a copy into it in flight, a landing or remote access into an
    exited CTA: `exit-with-copies-in-flight`, `remote-cta-exited`), a real one: the search then reports a
    violation of the kernel (docs/checker.md, "Exits that are not their CTA's last")."""
    return code is not None and not a.frames and a.cta.live >= 2 and code.ins[a.pc].kind == EXIT


def stubborn(m: Machine, fp: AllFootprints, agents: list[Thread | Copy], enabled: dict[int, bool],
             blocked_on: dict[int, Spin], max_seeds: int = 3,
             check: Callable[[], None] | None = None, entries: Sequence[object] | None = None) -> list[int]:
    """Indices (into `agents`) of the enabled agents of a small stubborn set. `check` is called between
    two threads' plans: with many threads a state's set can take seconds, longer than a time bound.
    `entries`: the threads' entries (by id) in a snapshot the machine equals now (`explore.snapshot`):
    what depends on a thread alone is kept while its entry stays the same.
    The set is the smallest of the seeds' closures, the first of them where several are: the seeds'
    closures first go only as far as FIRST_PASS enabled agents (a closure of hundreds of agents is
    most of a state's cost where another seed's is one agent). Where none closed within it, up to
    MORE_SEEDS seeds of kinds not tried yet go as far (`seeds.more`), and only where none of those closed
    either are the paused closures resumed, in order, each until it holds as many as the best so far."""
    seeds = [i for i, a in enumerate(agents) if enabled.get(i)]
    current = _current(fp, entries)
    fp.begin(agents)
    try:
        best = _smallest(m, fp, agents, enabled, blocked_on, seeds, max_seeds, current, check, entries)
    finally:
        fp.begin(None)
    fp.single = agents[best[0]].aid if best is not None and len(best) == 1 else None
    return best if best is not None else []


def alone_too(m: Machine, fp: AllFootprints, agents: list[Thread | Copy], enabled: dict[int, bool],
              blocked_on: dict[int, Spin], first: int, check: Callable[[], None] | None = None,
              entries: Sequence[object] | None = None) -> list[int]:
    """Where `stubborn` gave a set of one, `[first]`: further enabled agents (indices into `agents`) each
    of whose closures holds it alone in this state too, in the order they may step after `first`.

    A set of one stays a stubborn set of one after steps outside it (docs/checker.md, "Runs of sets of
    one"): its closure says no sequence of the other agents' steps from this state, before it moves,
    conflicts with its step or enables what it waits for, and every sequence from a later state reached
    by such steps continues one from this state. So after `first` steps, the next agent found here is
    again a set of one, and so on: `Explorer.expand` takes the run as one transition without the states
    between, which the search would have expanded one by one, each to that same set of one."""
    seeds = [i for i, a in enumerate(agents) if enabled.get(i)]
    current = _current(fp, entries)
    out: list[int] = []
    misses = 0
    fp.begin(agents)
    try:
        for seed in alike_first(agents, seeds, first)[:RUN_TRIES]:
            c = _Closure(m, fp, agents, enabled, blocked_on, seed, current, check, entries)
            if c.run(2) and c.members() == [seed]:
                out.append(seed)
                if len(out) == RUN:
                    break
            else:
                misses += 1
                if misses == RUN_MISSES:
                    break
    finally:
        fp.begin(None)
    return out


def _current(fp: AllFootprints, entries: Sequence[object] | None) -> Callable[[Thread | Copy], list[Item]]:
    """An agent's next step's items, read through its snapshot entry where `entries` has one."""
    def current(a: Thread | Copy) -> list[Item]:
        return fp.current(a, entries[a.aid] if entries is not None and isinstance(a, Thread) else None)
    return current


def _smallest(m: Machine, fp: AllFootprints, agents: list[Thread | Copy], enabled: dict[int, bool],
              blocked_on: dict[int, Spin], seeds: list[int], max_seeds: int,
              current: Callable[[Thread | Copy], list[Item]], check: Callable[[], None] | None,
              entries: Sequence[object] | None) -> list[int] | None:
    """`stubborn`'s search over the seeds: the smallest closure, None where no seed closed."""
    best: list[int] | None = None
    paused: list[_Closure] = []
    sizes = {i: len(current(agents[i])) for i in seeds}
    tried = order(agents, seeds, max_seeds, sizes, fp.single, fp.code_of, fp.failed)
    for first in (True, False):
        for seed in tried if first else more(agents, seeds, tried, MORE_SEEDS, sizes):
            c = _Closure(m, fp, agents, enabled, blocked_on, seed, current, check, entries)
            if not c.run(FIRST_PASS if best is None else min(FIRST_PASS, len(best))):
                paused.append(c)
                fp.failed |= {agents[seed].aid}
                continue
            best = c.members()
            fp.failed -= {agents[seed].aid}
            if len(best) == 1:
                break
        if best is not None:
            break
    if best is not None and len(best) > 1 and first:
        # One of `order`'s seeds closed, none alone, and `more`'s kinds were not tried: one may (a wgmma
        # engine, which holds its warpgroup's waiting threads, beside tensor loads into a CTA that may
        # exit before they land).
        for seed in more(agents, seeds, tried, MORE_SEEDS, sizes):
            c = _Closure(m, fp, agents, enabled, blocked_on, seed, current, check, entries)
            if c.run(len(best)):
                best = c.members()
                if len(best) == 1:
                    break
    if best is None:
        for c in paused:
            if c.run(len(best)) if best is not None else c.run(len(agents) + 1):
                best = c.members()
    return best
