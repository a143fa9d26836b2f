"""Partial-order reduction that knows mbarrier: stubborn sets over footprints (`explore.footprints`).

A stubborn set (Valmari) is closed under: an enabled agent in the set brings in every agent whose
current or *future* operations conflict with its next one; a blocked agent brings in every agent that
could change what it waits for. The futures are those the other agents can reach before the set's seed
moves (`explore.frozen`: cut at barriers and mbarrier waits they cannot pass meanwhile), read from the
code with register values propagated from the thread's registers now (`explore.values`). Exploring only
the set's enabled agents preserves every deadlock and, for every reachable violation, some violation.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from operator import is_not

from mbarrier.explore.code import BAR, MATRIX, MMA, Code, Ins
from mbarrier.explore.conflicts import NOTHING, FutureIndex, Index
from mbarrier.explore.footprints import (
    JOIN,
    WRITE,
    Footprints,
    Future,
    Item,
    conflicts,
    copy_items,
    copy_state,
    flag_read,
    group,
)
from mbarrier.explore.frozen import (
    INF,
    BarFuture,
    Fixpoint,
    Frozen,
    bulk_hold,
    future_at,
    held_by,
    seed_lives,
)
from mbarrier.explore.lastfrozen import LastFrozen
from mbarrier.explore.liveregs import Getter
from mbarrier.explore.quiet import Quiet, no_complete_free, tx_bound
from mbarrier.explore.spin import FlagSpin, Spin
from mbarrier.explore.tally import UNCOUNTED, BarUse
from mbarrier.sim.machine import ARRIVALS, Copy, Machine, Thread
from mbarrier.sim.machine.wgmma import WGMMA
from mbarrier.sim.waits import AtBar, AtCluster, ForCopies, InCollective

QUERIES_KEPT = 4096  # the closure's latest queries by number (`AllFootprints.query`)

# The barrier cut (`_CUT`) a thread blocked for this reason is inside of.
_WAIT_CUT: dict[type, str] = {AtBar: "cta", InCollective: "warp", AtCluster: "cluster"}


class AllFootprints:
    """Footprints of agents in any function: threads inside a call (their return is not modelled) may
    touch anything."""

    def __init__(self, fps: dict[str, Footprints]) -> None:
        self.fps = fps
        self.machine = next(iter(fps.values())).m
        self._anything: Future = {"any": [(("any",), WRITE)]}
        self.frozen = Frozen(len(self.machine.threads))
        self.tx_amount = tx_bound(f.code for f in fps.values())
        self.last_ok = no_complete_free(f.code for f in fps.values())
        # Futures grouped by object and indexed for the closure's queries, by the item list they come
        # from (the plans' lists: as many kept).
        self._indexes: OrderedDict[int, tuple[list[Item], FutureIndex]] = OrderedDict()
        self._anything_index = FutureIndex(self._anything)
        # By thread: its instruction, live register values and their getter, items, snapshot entry.
        self._current: dict[int, tuple[Ins, tuple[object, ...], Getter, list[Item], object]] = {}
        # The closure's queries (item tuples) by number, for the futures' answers (`FutureIndex.memo`);
        # numbers are never reused, so the latest QUERIES_KEPT suffice.
        self._queries: dict[tuple[Item, ...], int] = {}
        self._last: LastFrozen[Kept] = LastFrozen()  # the last state's futures, while only the seed moves
        self._last_index: Index | None = None
        self._next_query = 0
        self.single: int | None = None  # the agent (id) of the last stubborn set of one: tried first
        # The seeds (ids) whose closures grew past the first pass along the chain being expanded and have not
        # closed since: tried last (`seeds.order`; `Explorer.expand` clears it off a chain).
        self.failed: frozenset[int] = frozenset()
        self._uses: Uses = {}  # what `Counted` reads of a future's bar arrivals, by their list (kept)
        # The agents of the state whose stubborn set is being built (`begin`), and the frozen futures of its
        # copy seeds by what they read (`_copy_seed_key`), with the seed they were computed for.
        self._state: list[Thread | Copy] | None = None
        self._by_copy: dict[tuple[object, ...], tuple[int, Kept]] = {}
        # Copies' futures indexed, by their items (`future`): a copy in flight stays state after state.
        self._copies: dict[tuple[Item, ...], FutureIndex] = {}
        self._copy_bytes: dict[int, tuple[Copy, list[Item]]] = {}  # `copy_items`' fixed part, by copy
        # Each copy's indexed future with what else its items read (`copy_state`): the items follow.
        self._copy_index: dict[int, tuple[Copy, tuple[bool, int | None, int | None], FutureIndex]] = {}

    def query(self, items: tuple[Item, ...]) -> int:
        """The number of a query (its items): equal items, equal number, while it is kept."""
        found = self._queries.get(items)
        if found is None:
            if len(self._queries) >= QUERIES_KEPT:
                self._queries.clear()
            found = self._queries[items] = self._next_query
            self._next_query += 1
        return found

    def indexed(self, items: list[Item]) -> FutureIndex:
        """The index (`FutureIndex`) of the future of an item list, built once per list while it is kept
        (the lists are the plans')."""
        if not items:
            return NOTHING
        found = self._indexes.get(id(items))
        if found is None or found[0] is not items:
            found = self._indexes[id(items)] = (items, FutureIndex(group(items)))
            if len(self._indexes) > self.frozen.plans_kept:
                self._indexes.popitem(last=False)
        return found[1]

    def current(self, a: Thread | Copy, entry: object = None) -> list[Item]:
        """The footprint of an agent's next step. A thread's is kept with the values of the registers live
        at its pc, for the steps whose footprint reads nothing else (bar.sync/bar.arrive read the
        barrier's arrivals, wgmma, ldmatrix and stmatrix their warp's): most threads stand still from one
        state to the next.
        `entry`: the thread's entry in a snapshot the machine equals now (`explore.snapshot`): the same
        entry is the same thread state, so the kept items stand without reading the registers."""
        if isinstance(a, Copy):
            return copy_items(a, self.machine, self._copy_bytes)
        last = self._current.get(a.aid)
        if entry is not None and last is not None and last[4] is entry:
            return last[3]  # only kept for the instructions below
        fp = self.fps[a.func.name]
        x = fp.code.ins[a.pc]
        if x.kind in (BAR, MMA, MATRIX):
            return fp.current(a)
        if last is not None and last[0] is x and last[1] == last[2](a):
            if entry is not None:
                self._current[a.aid] = last[:4] + (entry,)
            return last[3]
        getter = self.frozen.regs.of(fp.code)[1][a.pc]
        items = fp.current(a)
        self._current[a.aid] = (x, getter(a), getter, items, entry)
        return items

    def begin(self, agents: list[Thread | Copy] | None) -> None:
        """Start (a list: the state's agents) or end (None) the stubborn set of one state: while it lasts
        the machine stands still, and the frozen futures of its copy seeds are kept (`_futures`)."""
        self._state = agents
        self._by_copy = {}
        self._last.standing(agents is not None)

    def index(self, futures: list[FutureIndex], immortal: frozenset[int]) -> Index:
        """The `Index` of a state's futures: the last one while they are the same list (`LastFrozen`)."""
        last = self._last_index
        if last is None or last.futures is not futures or last.immortal != immortal:
            last = self._last_index = Index(futures, immortal)
        return last

    def code_of(self, a: Thread | Copy) -> Code | None:
        """The code a thread runs (None for a copy)."""
        return self.fps[a.func.name].code if isinstance(a, Thread) else None

    def future(self, a: Copy | Thread) -> FutureIndex:
        """The future of an agent the frozen analysis leaves alone: a copy's landing, or anything for a
        thread inside a call (its return is not modelled)."""
        if isinstance(a, Copy):
            state = copy_state(a, self.machine)
            mine = self._copy_index.get(id(a))
            if mine is not None and mine[0] is a and mine[1] == state:
                return mine[2]
            items = tuple(copy_items(a, self.machine, self._copy_bytes))
            found = self._copies.get(items)
            if found is None:
                if len(self._copies) >= QUERIES_KEPT:
                    self._copies.clear()
                found = self._copies[items] = FutureIndex(group(list(items)))
            if len(self._copy_index) >= QUERIES_KEPT:
                self._copy_index.clear()
            self._copy_index[id(a)] = (a, state, found)
            return found
        assert a.frames
        return self._anything_index

    def frozen_futures(self, m: Machine, agents: list[Thread | Copy], seed: int,
                       blocked_on: dict[int, Spin], check: Callable[[], None] | None = None,
                       entries: Sequence[object] | None = None
                       ) -> tuple[list[Future], frozenset[int], Counted]:
        """Every agent's future while agents[seed] is frozen (`explore.frozen`): threads stop at the
        barrier cuts, at the mbarrier waits they cannot pass before the seed moves and at the counted
        bar.sync barriers that cannot complete meanwhile (a thread waiting at one has none). `check` is
        called between two threads' plans (it raises to abandon the work: a bound was hit). `entries`:
        the threads' entries (by id) in a snapshot the machine equals now (`Frozen.plan`)."""
        indexes, immortal, counted, _ = self.frozen_indexes(m, agents, seed, blocked_on, check, entries)
        return [ix.future for ix in indexes], immortal, counted

    def frozen_indexes(self, m: Machine, agents: list[Thread | Copy], seed: int,
                       blocked_on: dict[int, Spin], check: Callable[[], None] | None = None,
                       entries: Sequence[object] | None = None
                       ) -> tuple[list[FutureIndex], frozenset[int], Counted, Quiet]:
        """`frozen_futures`, each future indexed for the closure (`FutureIndex`); also which mbarrier
        operations cannot complete a phase before the seed moves (`explore.quiet`)."""
        last = self._last
        kept: Kept | None = None
        if entries is not None:
            if last.stands(m, agents, seed, blocked_on, entries):
                kept = last.result
            else:
                kept = self._patched(m, agents, seed, blocked_on, check, entries)
        if kept is None:
            kept = self._futures(m, agents, seed, blocked_on, True, check, entries)
            if not kept.counted.whole_cut_holds(self.fps):
                kept = self._futures(m, agents, seed, blocked_on, False, check, entries)
        if entries is not None:
            last.keep(m, agents, seed, blocked_on, entries, kept)
        home = seed_lives(self.fps, agents[seed], kept.cuts[seed])
        others = kept.immortal
        immortal = others if home is None or home in others else others | {home}
        return kept.indexes, immortal, kept.counted, kept.quiet

    def _futures(self, m: Machine, agents: list[Thread | Copy], seed: int,
                 blocked_on: dict[int, Spin], whole: bool, check: Callable[[], None] | None,
                 entries: Sequence[object] | None) -> Kept:
        """The frozen futures with the barrier cuts (`whole`: also at whole-CTA bar.sync where counted
        barriers exist too, which `Counted.whole_cut_holds` must confirm afterwards), indexed."""
        cuts = self._cuts(agents, seed, whole)
        s = agents[seed]
        key = _copy_seed_key(agents, seed, cuts, whole) if isinstance(s, Copy) and agents is self._state \
            else None
        if key is not None and (found := self._by_copy.get(key)) is not None:
            kept = self._reseeded(agents, seed, cuts, *found)
            if not _opens_flag(blocked_on, kept.fix.shut, kept.indexes[found[0]]):
                return kept
        # Flag spinners stand still unless another's future may write their flag; opening one adds its
        # future, which may write another's: until none more opens (few spinners, rarely a second pass).
        flags_open: frozenset[int] = frozenset()
        while True:
            fix = self.frozen.futures(m, self.fps, agents, seed, cuts, blocked_on, check, entries,
                                      flags_open)
            indexed = self.indexed
            indexes = [(NOTHING if bcut is None else self.future(b)) if items is None else indexed(items)
                       for b, bcut, items in zip(agents, cuts, fix.lists, strict=True)]
            written = flags_written(blocked_on, flags_open, indexes)
            if not written:
                break
            flags_open |= written
        quiet = Quiet(m, self.tx_amount, fix.exact, s, self.last_ok, self.fps)
        kept = Kept(cuts, whole, fix, indexes, Counted(agents, fix.bars, self._uses), quiet, fix.immortal())
        if key is not None:
            self._by_copy[key] = (seed, kept)
        return kept

    def _reseeded(self, agents: list[Thread | Copy], seed: int, cuts: list[frozenset[str] | None], old: int,
                  k: Kept) -> Kept:
        """The frozen futures of copy seed `old` in this state, for copy seed `seed` whose key is the same
        (`_copy_seed_key`): the fixpoint read the same inputs, so only the two copies' own entries change
        (a seed's future is empty; a copy's is its landing, `future`). The copies have no plan, bar
        arrivals or CTA they keep alive, so the tally and the immortal CTAs stand."""
        lists, bars = list(k.fix.lists), list(k.fix.bars)
        lists[old], bars[old] = None, None
        lists[seed], bars[seed] = [], ([], {})
        indexes = list(k.indexes)
        indexes[old] = NOTHING if cuts[old] is None else self.future(agents[old])
        indexes[seed] = NOTHING
        fix = replace(k.fix, lists=lists, bars=bars)
        return Kept(cuts, k.whole, fix, indexes, k.counted, k.quiet.reseeded(agents[seed]), k.immortal)

    def _patched(self, m: Machine, agents: list[Thread | Copy], seed: int,
                 blocked_on: dict[int, Spin], check: Callable[[], None] | None,
                 entries: Sequence[object]) -> Kept | None:
        """The last state's futures with the seed changed, when only the last seed moved since and
        either neither seed's plan holds a source (arrival, tx-count change, reset, bar arrival) or both
        hold the same ones (`Plan.sources`, one object per equal content: lanes of a producer warp, each
        issuing its cp.async and arriving on one mbarrier) in one CTA: then the sources outside the seed,
        so every gate's answer, are the same; only the two seeds' futures change (the new one is frozen,
        the old one's follows from the answers: those its mate had). None otherwise."""
        k = self._last.result
        old = self._last.moved_seed(m, agents, seed, blocked_on, entries)
        if old is None or k is None:
            return None
        was = agents[old]
        p1 = k.fix.plans[seed]
        if p1 is None or not isinstance(was, Thread) or was.frames:
            return None
        now = agents[seed]
        if not p1.pure and (not isinstance(now, Thread) or now.cta is not was.cta):
            return None
        cuts = self._cuts(agents, seed, k.whole)
        cut = cuts[old]
        if not _same_plans(cuts, k, {seed, old}):
            return None
        lists, lives, bars, plans = list(k.fix.lists), list(k.fix.lives), list(k.fix.bars), list(k.fix.plans)
        lists[seed], lives[seed], bars[seed], plans[seed] = [], None, ([], {}), None
        indexes = list(k.indexes)
        indexes[seed] = NOTHING
        opened = list(k.fix.opened)
        if cut is None:  # it waits inside a barrier the new seed must reach: no future, its CTA lives
            if not p1.pure:  # the new seed's sources would leave the fixpoint with nothing in their place
                return None
            lists[old], bars[old], plans[old] = None, None, None
            lives[old], indexes[old], opened[old] = was.cta.index, NOTHING, None
        else:
            p0 = self.frozen.agent_plan(self.fps, was, old, cut, blocked_on, check, entries)
            # The gates its future passes: as the answers say (no sources), or its mate's (the same ones).
            if p1.pure:
                if not p0.pure:
                    return None
                nodes = k.fix.pure_opened(p0)
            elif p0.sources is p1.sources and (mate := opened[seed]) is not None:
                nodes = mate
            else:
                return None
            items, exits, bar_future = future_at(p0, nodes)
            opened[old] = nodes
            lists[old], bars[old], plans[old] = items, bar_future, p0
            lives[old] = None if exits else was.cta.index
            indexes[old] = self.indexed(items)
        opened[seed] = None
        if _opens_flag(blocked_on, k.fix.shut, indexes[old]):  # the old seed, unfrozen, may write a flag
            return None
        fix = replace(k.fix, lists=lists, lives=lives, bars=bars, plans=plans, opened=opened)
        # Neither seed's bar arrivals nor sources changed: the tally and the quiet counts stand.
        return Kept(cuts, k.whole, fix, indexes, k.counted, k.quiet.reseeded(agents[seed]), fix.immortal())

    def _cuts(self, agents: list[Thread | Copy], seed: int, whole: bool) -> list[frozenset[str] | None]:
        """Each agent's barrier cut (`frozen`): None where it waits inside a barrier the seed must reach."""
        s = agents[seed]
        st = s if isinstance(s, Thread) else None
        fps = self.fps
        cuts: list[frozenset[str] | None] = []
        none = _CUT[False, False, False]
        held = _Held()
        # A copy seed's issuer blocked at a wait for it cannot move before the seed does either: it stands
        # for the seed below (it waits inside no barrier), its own future is empty (held).
        if st is None and isinstance(s, Copy) and s.mma is None and s.kind not in ARRIVALS:
            h = s.thread
            if h.wait is not None and not h.frames and held(h, s):
                st = h
        # The barriers an agent cannot pass before the (enabled, so waiting inside none of them) seed
        # moves: whole-CTA bar.sync of the seed's CTA, full-warp bar.warp.sync of its warp,
        # barrier.cluster.wait of its cluster if it has not arrived (for a copy seed, those of its
        # blocked issuer's; none for another copy seed, nor for a thread inside a call).
        if st is not None:
            cta, warp, cluster, open_ = st.cta, st.warp, st.cta.cluster, not st.cl_arrived
        for b in agents:
            cut: frozenset[str] | None = none
            if isinstance(b, Thread) and not b.frames:
                code = fps[b.func.name].code
                if st is not s and b.wait is not None and held(b, s):
                    cut = None  # waiting for its copies, the seed among them
                elif st is not None:
                    cut = _CUT[b.cta is cta and bool(code.cta_barriers_whole), b.warp is warp,
                               b.cta.cluster is cluster and open_]
                    if not whole and code.whole_ids is not None:
                        cut -= {"cta"}
                    if cut and b.wait is not None and _stuck(st, b, cut):
                        cut = None  # inside a barrier that cannot complete before the seed moves
            cuts.append(cut)
        return cuts


def flags_written(blocked_on: dict[int, Spin], flags_open: frozenset[int], indexes: list[FutureIndex]
                  ) -> frozenset[int]:
    """The flag spinners not in `flags_open` whose flag some other agent's future may write."""
    found: set[int] = set()
    for i, why in blocked_on.items():
        if isinstance(why, FlagSpin) and i not in flags_open:
            flag = flag_read(why)
            if any(j != i and conflicts(flag, ix.future) for j, ix in enumerate(indexes)):
                found.add(i)
    return frozenset(found)


def _opens_flag(blocked_on: dict[int, Spin], shut: frozenset[int], future: FutureIndex) -> bool:
    """Whether a future may write the flag of a spinner the fixpoint left standing (`Fixpoint.shut`)."""
    return any(conflicts(flag_read(blocked_on[i]), future.future) for i in shut)  # type: ignore[arg-type]


def _copy_seed_key(agents: list[Thread | Copy], seed: int, cuts: list[frozenset[str] | None], whole: bool
                   ) -> tuple[object, ...]:
    """Everything `Frozen.futures` reads that depends on which copy is the seed, in a state that stands
    still: the cuts (threads held by the seed have none), the threads whose copy gates the seed keeps
    shut (a cp.async seed's issuer, whether the seed's group is committed; a bulk seed's issuer and how
    many of its groups the seed's lies behind) and the sources of the other copies (pending arrive-ons'
    arrivals, bulk copies' complete_tx, summed per barrier in any order), those waiting for the seed left
    out. Two copy seeds of equal keys have the same fixpoint: the pending arrive-ons of three threads on
    one barrier, the cp.async copies of one group."""
    s = agents[seed]
    assert isinstance(s, Copy)
    behind = {id(w) for w in s.watchers}
    mute = s.thread if s.kind == "cp.async" else None
    held = mute is not None and any(c is s for g in mute.cp_groups for c in g)
    holder, ahead = bulk_hold(s)
    sources = sorted((a.kind in ARRIVALS, a.bar_cta.index, a.bar_off, 1 if a.kind in ARRIVALS else a.size)
                     for i, a in enumerate(agents) if i != seed and isinstance(a, Copy)
                     and a.bar_cta is not None and id(a) not in behind)
    return (whole, tuple(cuts), None if mute is None else mute.aid, held,
            None if holder is None else holder.aid, ahead, tuple(sources))


def _same_plans(cuts: list[frozenset[str] | None], k: Kept, skip: set[int]) -> bool:
    """Whether every agent (but `skip`) whose cut changed from `k`'s keeps its plan: the cuts differ only
    in barrier kinds its future never meets (`Plan.meets`)."""
    for i in compress(range(len(cuts)), map(is_not, cuts, k.cuts)):
        new, was = cuts[i], k.cuts[i]
        if i in skip or new == was:
            continue
        p = k.fix.plans[i]
        if new is None or was is None or p is None or new & p.meets != p.cut:
            return False
    return True


@dataclass(frozen=True)
class Kept:
    """One state's frozen futures as the closure reads them, kept for the next (`LastFrozen`): the cuts
    (computed with `whole`), the fixpoint's answer, each agent's indexed future, the bar.sync tally, the
    quiet operations' counts and the CTAs the agents but the seed keep alive."""

    cuts: list[frozenset[str] | None]
    whole: bool
    fix: Fixpoint
    indexes: list[FutureIndex]
    counted: Counted
    quiet: Quiet
    immortal: frozenset[int]


def _stuck(seed: Thread | Copy, t: Thread, cut: frozenset[str]) -> bool:
    """Whether `t` waits inside a barrier of a kind its cut names, which needs the seed: a warp collective
    only when the seed's lane is in its mask (the lanes of a partial mask complete it without the seed),
    a bar.sync only without a thread count (a counted one may complete without the seed: the frozen
    futures' gate decides, `explore.frozen`)."""
    w = t.wait
    if w is None or _WAIT_CUT.get(type(w)) not in cut:
        return False
    if isinstance(w, AtBar):
        nb = t.cta.bars.get(w.ident)
        return nb is None or nb.count is None
    return not isinstance(w, InCollective) or (isinstance(seed, Thread) and bool(w.mask >> seed.lane & 1))


class _Held:
    """`frozen.held_by` for one state and seed, asked once per warp and wait at a wgmma.wait_group: the
    answer reads only the thread's warpgroup-MMA groups (each lane holds its own `WgState`, of the same
    operations as its warp's others), the wait's count, its warpgroup and the other warps' shares
    (`wgmma.shares`): a walk over the shares per thread was a tenth of a CuTe GEMM's time with 512
    threads."""

    def __init__(self) -> None:
        self._mma: dict[tuple[int, int, object], bool] = {}

    def __call__(self, t: Thread, seed: Thread | Copy) -> bool:
        w = t.wait
        if not (isinstance(w, ForCopies) and w.which == WGMMA):
            return held_by(t, seed)
        key = (id(t.warp), w.pending, t.wg.groups)
        found = self._mma.get(key)
        if found is None:
            found = self._mma[key] = held_by(t, seed)
        return found


# The cuts by (cta, warp, cluster): built once, not for every agent of every state.
_CUT = {(c, w, k): frozenset(n for n, on in (("cta", c), ("warp", w), ("cluster", k)) if on)
        for c in (False, True) for w in (False, True) for k in (False, True)}


class Counted:
    """Arrivals at counted bar.sync/bar.arrive barriers (`bar.sync id, count`) in the agents' futures while
    the seed is frozen, per (CTA, id), counted as `frozen.bar_arrivals` does. For a barrier whose arrivals
    so far, `k`, and those of the futures, `n`, leave it short (every arrival with its count c):
    k + 1 + n <= c, n without agent i's own: agent i's arrival now commutes with every sequence of the
    others' steps (neither completes the barrier before the other arrives, so both orders release the
    same threads at the same arrival count): its JOIN stays a JOIN (`adjust`); otherwise a WRITE. (When
    k + n < c, a thread waiting there cannot move before the seed does: the futures' gate, `frozen`.)
    An id with arrivals without a count in the futures is never short (they complete at the live
    threads)."""

    def __init__(self, agents: list[Thread | Copy], bars: list[BarFuture | None], kept: Uses | None = None
                 ) -> None:
        """`kept`: each bar arrivals list's ids and counts (`_uses`), kept between states (the lists are
        the plans' and stay the same while their threads do)."""
        kept = {} if kept is None else kept
        self.agents = agents
        self.total: dict[tuple[int, int], int] = {}     # (cta, id) -> arrivals of agents not waiting there
        self.counts: dict[tuple[int, int], set[int]] = {}
        self.unknown: set[int] = set()                   # CTAs where a future arrives at an unknown barrier
        self.mixed: set[tuple[int, int]] = set()         # (cta, id) with arrivals without a count
        self.own: dict[int, dict[int | None, int]] = {}  # agent -> id -> its arrivals
        for i, (a, found) in enumerate(zip(agents, bars, strict=True)):
            if not isinstance(a, Thread):
                continue
            cta = a.cta.index
            if found is None:
                if a.frames:
                    self.unknown.add(cta)  # inside a call: may do anything
                continue
            uses, mine = found
            if not uses:
                continue
            got = kept.get(id(uses))
            if got is None or got[0] is not uses:
                if len(kept) >= QUERIES_KEPT:
                    kept.clear()
                got = kept[id(uses)] = (uses, *_uses(uses))
            _, unknown, mixed, counted = got
            if unknown:
                self.unknown.add(cta)
            for bid in mixed:
                self.mixed.add((cta, bid))
            for bid, count in counted:
                self.counts.setdefault((cta, bid), set()).add(count)
            self.own[i] = mine
            w = a.wait
            here = w.ident if isinstance(w, AtBar) else None
            for ident, n in mine.items():
                if ident is not None and ident != here:
                    self.total[(cta, ident)] = min(self.total.get((cta, ident), 0) + n, INF)

    def whole_cut_holds(self, fps: dict[str, Footprints]) -> bool:
        """Whether the futures were rightly cut at whole-CTA bar.sync ids of a function that also has
        counted barriers: such a barrier completes only when every live thread arrived (so not before
        the seed moves) unless a counted arrival gives it a count. None is in any future (cut there: the
        first to happen would be before any cut barrier completes), nor in a barrier now."""
        if all(fp.code.whole_ids is None for fp in fps.values()):
            return True  # no whole-CTA cut to confirm
        seen: set[tuple[str, int]] = set()
        for a in self.agents:
            if not isinstance(a, Thread) or (a.func.name, a.cta.index) in seen:
                continue
            seen.add((a.func.name, a.cta.index))
            ids = fps[a.func.name].code.whole_ids if a.func.name in fps else None
            if ids is None:
                continue
            if a.cta.index in self.unknown:
                return False
            if any((a.cta.index, i) in self.counts for i in ids):
                return False
            if any(a.cta.bars[i].count is not None for i in ids if i in a.cta.bars):
                return False
        return True

    def short(self, a: Thread | Copy, ident: int, extra: int) -> bool:
        """Whether barrier `ident` of a's CTA stays short of its count with the futures' arrivals and
        `extra` more (all with one count, none at a barrier the analysis cannot name)."""
        assert isinstance(a, Thread)
        index = a.cta.index
        if index in self.unknown or (index, ident) in self.mixed:
            return False
        nb = a.cta.bars.get(ident)
        seen = self.counts.get((index, ident), set())
        count = nb.count if nb is not None else (next(iter(seen)) if len(seen) == 1 else None)
        if count is None or seen - {count}:
            return False
        arrived = len(nb.arrived) if nb is not None else 0
        return arrived + extra + self.total.get((index, ident), 0) < count

    def adjust(self, i: int, items: list[Item]) -> list[Item]:
        """Agent i's current items, its counted-barrier JOIN made a WRITE unless it commutes (above)."""
        out = items
        for k, (obj, mode) in enumerate(items):
            if obj[0] != "bid" or mode != JOIN:
                continue
            ident = obj[2]
            assert isinstance(ident, int)
            mine = self.own.get(i, {}).get(ident, 0)   # its own arrival now among them: k + 1 + n - mine <= c
            if mine >= INF or not self.short(self.agents[i], ident, -mine):
                if out is items:
                    out = list(items)
                out[k] = (obj, WRITE)
        return out


# A bar arrivals list (`BarFuture`'s first) with what `Counted` reads of it: whether an id is unknown, the
# ids arrived at without a thread count, and the (id, count) pairs of the others.
Uses = dict[int, tuple[list[BarUse], bool, tuple[int, ...], tuple[tuple[int, int], ...]]]


def _uses(uses: list[BarUse]) -> tuple[bool, tuple[int, ...], tuple[tuple[int, int], ...]]:
    unknown, mixed, counted = False, set(), set()
    for u in uses:
        if u[1] is None:
            unknown = True
        elif u[2] == UNCOUNTED:
            mixed.add(u[1])
        else:
            counted.add((u[1], u[2]))
    return unknown, tuple(mixed), tuple(counted)
