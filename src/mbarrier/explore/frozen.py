"""What the other agents can do while the stubborn set's seed is frozen: regions cut at mbarrier waits.

Stubborn-set condition D1 (Valmari) asks that every transition of the set commute with every sequence
of transitions *outside* the set. An agent outside the set therefore matters only for what it can do
before any agent of the set moves. Freezing just the seed over-approximates that for the whole closure
(a bigger frozen set only removes arrivals, so it can only stop more threads), so one computation per
seed serves every agent the closure adds.

A thread's *region* is what it can execute from its pc without passing a *gate*: a spin-wait
(`Ins.spin_local`: a test_wait/try_wait whose False result leads back to it through local instructions
only, retry counters and timer back-off included) on a barrier of its own
CTA, with a known parity in {0, 1} and a guard known to be on, that it cannot pass before the seed moves,
or a counted `bar.sync id, count` (known id and count, guard known to be on) that cannot complete before
the seed moves (below). A wait can be passed when

  (a) it would succeed now: parity p and the barrier's current phase has the other parity (if the
      phase cannot complete, it keeps its parity, so the wait still succeeds when the thread gets there);
  (b) the barrier's current phase can complete with operations outside the frozen set: the arrive-like
      operations on it in the regions of all non-frozen threads (their count operand; infinitely many
      when the count is unknown or the arrival sits on a cycle of the thread's unrolled future,
      `values.Unrolled`), plus pending cp.async.mbarrier.arrive
      agents, reach its pending count (a cp.async.mbarrier.arrive without .noinc in a region counts
      none: its issue raises the pending count before its arrive-on lowers it, 9.7.13.15.15, so the
      pair never brings the count nearer 0), and the operations outside that move its tx-count towards 0
      can together move it by at least its size (for a positive count: complete_tx, bulk copies in
      flight or issued in a region, each of its byte count in every CTA a multicast names; for a
      negative one: expect_tx and arrive.expect_tx). Moves the other way are ignored, and a byte count
      that is not known (or an operation that may repeat, on a cycle of the unrolled future) counts as
      infinitely many bytes: this over-approximates completion, the sound direction (9.7.13.15.6: a
      phase completes when its pending count and its tx-count are both 0). A copy whose size is not
      known moves at most its CTA's shared memory (one writing past it faults first); a tensor load's
      box is known from a tensor map in kernel parameter memory (`Footprints.tensor_box`). So a phase
      armed for both halves of a 2-CTA multicast stays closed while only one half can land. Plain
      arrivals and arrive.expect_tx are tallied apart: where the pending count needs more arrivals than
      the plain ones (plain arrives, arrive-ons, resets), the rest are arrive.expect_tx, each raising
      the tx-count by at least the fewest bytes one of them names before its arrive-on (9.7.13.15.13),
      and those bytes too must land: a phase whose tx-count is 0 now and whose only arrival left is a
      producer's arrive.expect_tx for both halves stays closed while one half can land;
  (c) something may re-initialize or invalidate the barrier (init/inval on it, or an arrive-like,
      init or inval operation whose address is unknown, or an instruction the checker cannot see into);
  (d) the barrier is not a valid object now (the wait would raise, so it runs), the parity is not 0 or
      1 (it raises too), or anything about the wait is unknown.

(a) holds only where no wait on the same barrier comes first on every path to this one with the current
phase's parity (or without a parity: the wait the thread is blocked at now, a token wait): such a wait
passes only once the current phase completed, so the barrier is at least one phase further when the
thread gets here, and a wait with the other parity then passes only once that next phase completes too:

  (e) (b) with one arrival more (every phase expects at least one, 9.7.13.15.14), or (c), or (d).

Without (e) a consumer's next-round wait looked passable while its first wait was not yet passed, and its
releases further on opened the producer's gates, whose next copies counted towards the current phase
(`Gate.prior`, `Plan._priors`).

Waits never change a phase, its counts or the object's validity, so they never make a gate passable
(and neither does a wait whose address is unknown). A thread blocked *now* at a wait (the checker's
`blocked_on`) passes exactly when the phase completes: (b) or (c). So does a future token wait whose token
comes from an arrive on the same barrier earlier in the thread's future (`values.FutureToken`): while the
phase cannot complete the arrive falls in it, and the token names it. Other token waits in the future
are treated as passable.

A counted bar.sync gate: the thread arrives (the arrival is in its region), what follows waits for the
barrier. Barrier `id` of a CTA can complete before the seed moves only with arrivals outside the frozen
set: those it holds now (k) and those in the regions (n: a thread that waits there, bar.sync, arrives once
until the barrier completes, wherever its region holds one; one that does not wait, bar.arrive, once per
arrival of its region, arbitrarily often on a cycle, and no more often than one path of its future holds
them, `Plan.bar_paths`). Every bar.sync at that id is passable when k + n reaches the barrier's count (its
current one, or the one every arrival in the regions gives), and whenever the analysis cannot count: an
arrival in the CTA's regions with an unknown id or count, or without a count (which completes at the CTA's
live threads), two different counts, a thread inside a call. A thread already waiting at a counted
bar.sync (its pc past it) is at such a gate. One gate for every use of the id over-approximates (the first
completion opens them all), the sound direction.

Regions only grow when a gate opens, so the fixpoint starts from every thread's region up to its first
gates and opens gates until nothing changes: the least fixpoint, a sound over-approximation of what the
others can do while the seed is frozen (by induction over any sequence of steps of the other agents: the
first step past a closed gate would need a phase completion or a barrier completion, whose arrivals all
come from steps inside the regions, which the fixpoint counted, so it would have opened that gate). A
thread blocked at a gate that stays closed can do nothing before the seed moves: its future is empty, so
it never joins the set (not even as a disabled member).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from mbarrier.core.encoding import token_parity
from mbarrier.explore.budget import doing
from mbarrier.explore.code import ATOM, BAR, BULK, CP_MB, CP_WAIT, EXIT, MB, Addr, Code, Ins
from mbarrier.explore.liveregs import Getter, LiveRegs
from mbarrier.explore.spin import FlagSpin, Spin
from mbarrier.explore.tally import BarUse, Tally, bar_arrivals, bar_use
from mbarrier.explore.tries import frontier
from mbarrier.explore.values import (
    Env,
    FutureToken,
    Shared,
    Unrolled,
    future_start,
    resume,
    unroll,
    unroll_lanes,
    value,
)
from mbarrier.sim.machine import ARRIVALS, EXITED, Copy, Machine, Thread
from mbarrier.sim.machine.wgmma import WGMMA, shares
from mbarrier.sim.waits import AtBar, ForCopies

_K = TypeVar("_K")

if TYPE_CHECKING:
    from mbarrier.explore.footprints import Footprints, Item

INF = 1 << 60  # "arbitrarily many arrivals"
WAITS = ("test_wait", "try_wait")
Key = tuple[int | None, int | None]  # (cta index, offset) of a barrier; None: unknown
# A gate's (cta, offset or id, parity, bar, prior): alike gates pass or not together.
GateKind = tuple[int, int, int | None, bool, frozenset[int]]
# What an operation may do to a barrier's current phase: arrive (lower pending by n), raise or lower the
# tx-count; a reset (init, inval, an unknown instruction) is all three, infinitely.
ARRIVE, TX_UP, TX_DOWN = range(3)
# A cp.async.mbarrier.arrive's arrive-on, counted as ARRIVE; it watches its thread's cp.async copies not
# yet landed, so none comes from the thread whose copy is the frozen seed.
ARRIVE_ON = 3
# The issue of a cp.async.mbarrier.arrive without .noinc raises the pending count by one, before its
# arrive-on lowers it: the pair is no arrival for the current phase, only a rise (which bounds the
# count's growth for `explore.quiet`).
INC = 4
# Of the arrivals (ARRIVE counts them all), those that leave the tx-count alone (plain arrives,
# arrive-ons, resets: PLAIN); and the fewest bytes an arrive.expect_tx among them raises it by (XMIN,
# 0 where unknown: combined by min, not summed). A phase that needs more arrivals than the plain ones
# must take arrive.expect_tx arrivals, whose bytes must land before it completes (rule (b)).
PLAIN, XMIN = 5, 6
# Of the tx-count rises (TX_UP counts them all), those that come without an arrival (expect_tx, resets):
# where there are none, a part of the sources that holds every arrival holds every rise (`explore.quiet`).
UP_ALONE = 7
Source = tuple[int, int, Key, int]  # (node of the unrolled future, what, barrier, count)
Count = tuple[int, int | None, int | None]  # what (ARRIVE_ON as ARRIVE), cta, offset: a key of `exact`
# Sources outside the frozen seed, by Count: ARRIVE/TX_UP/TX_DOWN/INC/PLAIN counts, INF: unbounded;
# XMIN a least byte count.
Exact = dict[Count, int]
# A source as counted once per thread: one instruction (node) may act on several barriers (a multicast's
# complete_tx on each CTA of its mask), each its own source.
Counted = tuple[int, int, Key]
AT_BAR = -2  # the node of the gate of a thread waiting at a counted bar.sync now (its pc is past it)
# A copy gate's offset (no barrier's), and what it waits for: every cp.async copy of its thread
# (cp.async.wait_all commits the open group first), every committed group (cp.async.wait_group 0), or
# every committed bulk group but the `Gate.keep` most recent (cp.async.bulk.wait_group{.read} N).
COPIES = -1
ALL, COMMITTED, BULK_GROUPS = 1, 2, 3
# A thread's bar arrivals in its region, and per id the most it can make before the barrier completes
# (`bar_arrivals`).
BarFuture = tuple[list[BarUse], dict[int | None, int]]
# Per barrier (a Count of ARRIVE or PLAIN), a plan's arrival nodes that lie on no common path, each
# (node, count, the later ones it reaches as a bit mask), in an order where a node comes before those it
# reaches (`Plan._alternatives`); at most MAX_ALTERNATIVES nodes per barrier.
Alternatives = dict[Count, tuple[tuple[int, int, int], ...]]
MAX_ALTERNATIVES = 16
# A plan's gates: its first ones and, per gate's node, the gates behind it (`Plan.shape`).
Shape = tuple[tuple[tuple[int, GateKind], ...], tuple[tuple[int, tuple[tuple[int, GateKind], ...]], ...]]


@dataclass(frozen=True)
class Gate:
    """A spin-wait a thread may be unable to pass: node `node` of its unrolled future (`values.Unrolled`)
    at `pc`, on barrier (cta, off), waiting with `parity` (None: the wait the thread is blocked at now, or
    a token wait (`gate`), which passes only when the current phase completes). With `bar`: a counted
    bar.sync on barrier id `off` of CTA `cta` (node AT_BAR: the one the thread waits at now). With
    `copies`: a cp.async.wait_all (ALL) or cp.async.wait_group 0 (COMMITTED) of the thread (`off` is
    COPIES), shut only for the thread whose cp.async copy is the seed (`shut`), or a
    cp.async.bulk.wait_group{.read} `keep` (BULK_GROUPS), shut only for the thread whose bulk-group copy
    is the seed, with more than `keep` groups from the seed's on. `prior`: the parities of
    the waits on the same mbarrier that every path of the thread's future passes before this one
    (PRIOR_COMPLETES for one without a parity), `Plan._priors`. `tried`: a wait tried once, no spin
    (`explore.tries`): the thread runs it and goes on along its failure way whatever happens; only its
    success way lies behind the gate."""

    node: int
    pc: int
    cta: int
    off: int
    parity: int | None
    bar: bool = False
    copies: int = 0
    keep: int = 0
    prior: frozenset[int] = frozenset()
    tried: bool = False
    kind: GateKind = field(init=False, repr=False, compare=False)  # gates alike pass or not together

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", (self.cta, self.off, self.parity, self.bar, self.prior))


PRIOR_COMPLETES = 2  # in `Gate.prior`: a wait that passes only once the phase current now completed
Passed = frozenset[tuple[int, int, int]]  # waits passed before a gate: (cta, offset, parity or the above)


@dataclass
class Segment:
    """What a thread may do between entering a region (its pc, or just past a gate) and its next gates."""

    items: list[Item]
    gates: tuple[Gate, ...]
    arrivals: list[Source]
    exits: bool  # whether the thread may exit in it
    bars: list[BarUse]
    # `arrivals` summed per barrier (without and with the ARRIVE_ON ones, which a `mute` thread leaves
    # out), and the keys `_add` marks counted: computed once, `_sums`.
    sums: tuple[dict[Count, int], dict[Count, int], frozenset[Counted]] | None = field(
        default=None, repr=False, compare=False)


class Plan:
    """One thread's future at one pc and register file, split at its gates (all computed up front from
    the unrolled future, `values.Unrolled`, which is dropped afterwards)."""

    def __init__(self, frozen: Frozen, fp: Footprints, t: Thread, cut: frozenset[str], blocked: Gate | None,
                 graph: Unrolled, walks: dict[tuple[int, bool], Segment]):
        """`walks`: the segments behind gates (by node and bar) of the plans of this future and cut that
        stand alike, shared: they do not depend on where the thread is blocked now."""
        self.fp = fp
        self.frozen = frozen
        self.t = t
        self.pc = t.pc
        self.cut = cut
        self.meets = cut  # the barrier kinds its future meets (`_meets`: the cut holds no others)
        self.graph = graph
        self.after: dict[int, Segment] = {}
        # By opened gates: items, whether it may exit, its bar arrivals and their count per id.
        self.futures: dict[frozenset[int], tuple[list[Item], bool, BarFuture]] = {}
        # Whether the thread stands at its pc (a visible instruction, its guard on), not past a bar.sync.
        self.standing = blocked is None or not blocked.bar
        first, x = graph.start, fp.code.ins[t.pc]
        here = bar_use(fp, t, x, t.pc, False, None, first, graph.on_cycle[first]) if x.kind == BAR else []
        if blocked is not None:   # the wait it is blocked at is the first node of its future
            node = AT_BAR if blocked.bar else first
            self.start = Segment([], (replace(blocked, node=node),), [], False, [])
        elif (g := frozen.bar_gate(fp, t, x, t.pc, False, None, first)
              or frozen.copy_gate(fp, t, x, t.pc, None, first)) is not None:
            # It arrives, or waits for its copies; the rest waits.
            self.start = Segment(frozen.interned(fp.current(t) + fp.left_behind(t)), (g,), [], False, here)
        else:
            # A wait tried once (no spin) runs either way; its success way may lie behind a gate.
            g = frozen.gate(fp, t, x, t.pc, graph.envs[first], first) if x.kind == MB else None
            tried = g if g is not None and g.tried else None
            self.start = self._walk([], self._tried(first) if tried else self._next(first),
                                    frozen.interned(fp.current(t) + fp.left_behind(t)),
                                    frozen.arrival(fp, t, x, t.pc, False, None, first, graph.on_cycle[first]),
                                    here, x.kind == EXIT, tried)
        todo = list(self.start.gates)
        while todo:
            g = todo.pop()
            if g.node not in self.after:
                seg = walks.get((g.node, g.bar))
                if seg is None:
                    if g.node == AT_BAR:
                        seg = self._walk([], [first], [], [], [], False)
                    elif g.bar or (g.copies and g.node == first):  # its arrival (wait, standing) lies before
                        seg = self._walk([], self._next(g.node), [], [], [], False)
                    elif g.tried:  # the try itself lies before: its success way is behind
                        seg = self._walk([], self._tried(g.node, True), [], [], [], False)
                    else:         # passing the wait is the first step behind the gate
                        seg = self._walk([g.node], self._next(g.node), [], [], [], False)
                    walks[(g.node, g.bar)] = seg
                self.after[g.node] = seg
                todo.extend(seg.gates)
        self._priors()
        self.bar_paths = self._bar_paths()
        self.alts = self._alternatives()
        # The start's arrivals per id and the (id, count) pairs they give (the fixpoint's tally of every
        # state starts from these).
        self.start_own = bar_arrivals(self.start.bars, self.bar_paths)
        self.start_counts = sorted({(u[1], u[2]) for u in self.start.bars}, key=repr)
        self.start_future = (list(self.start.items), self.start.exits, (list(self.start.bars),
                                                                       self.start_own))
        # A plan with no sources (no arrival, no tx-count change, no reset, no bar arrival) adds nothing
        # to the fixpoint: its opened gates follow from the fixpoint's answers and its gates' shape alone,
        # the same for every plan of that shape (the waiting threads of a warpgroup).
        segs = (self.start, *self.after.values())
        self.pure = not any(seg.arrivals or seg.bars for seg in segs)
        self.shape = frozen.shape(((g.node, g.kind) for g in self.start.gates),
                                  ((n, tuple((h.node, h.kind) for h in seg.gates))
                                   for n, seg in sorted(self.after.items())))
        # Everything of the plan the fixpoint reads (sources, bar arrivals, gates, segments behind them),
        # one object per equal content: threads of one CTA whose plans have it take part in the fixpoint
        # as one, their counts multiplied (a warpgroup's consumers at one pc: `Frozen.futures`).
        self.sources = frozen.sources(self)
        del self.graph

    def _bar_paths(self) -> dict[int | None, int]:
        """Per counted barrier id, the most arrivals without a wait (bar.arrive) one path of the future can
        make (INF when one lies on a cycle): the path-sensitive graph may hold one instruction of one
        iteration as several nodes, on alternative paths, which a count of nodes would add up."""
        fp, code, t, pc, graph = self.fp, self.fp.code, self.t, self.pc, self.graph
        own: dict[int, tuple[int | None, int]] = {}
        for n, j in enumerate(graph.pcs):
            x = code.ins[j]
            if x.kind == BAR and x.counted and not x.bar_waits and (n == graph.start or fp.guard_may(
                    t, x, pc, graph.envs[n])):
                use = bar_use(fp, t, x, pc, n != graph.start, None if n == graph.start else graph.envs[n],
                               n, graph.on_cycle[n])[0]
                own[n] = (use[1], INF if use[4] else 1)
        if not own:
            return {}
        best: dict[int, dict[int | None, int]] = {}
        state: dict[int, int] = {}   # 1: on the DFS stack, 2: done
        stack: list[tuple[int, int]] = [(graph.start, 0)]
        while stack:
            n, k = stack.pop()
            if k == 0:
                if n in state:
                    continue
                state[n] = 1
            nxt = self._next(n)
            if k < len(nxt):
                stack.append((n, k + 1))
                c = nxt[k]
                if c not in state:
                    stack.append((c, 0))
                continue
            acc: dict[int | None, int] = {}
            for c in nxt:
                if state.get(c) == 2:  # a child still on the stack closes a cycle: its arrivals are INF
                    for ident, v in best[c].items():
                        acc[ident] = max(acc.get(ident, 0), v)
            if n in own:
                ident, v = own[n]
                acc[ident] = min(acc.get(ident, 0) + v, INF)
            best[n] = acc
            state[n] = 2
        return best[graph.start]

    def _alternatives(self) -> Alternatives:
        """Per barrier (ARRIVE, PLAIN), where two of the nodes of the future that arrive on it lie on no
        common path (neither reaches the other: the two ways of a branch on loaded data, a warp vote, each
        with its own release), those nodes with their counts and, as a bit mask over them, which of them
        each one reaches; in an order where a node comes before those it reaches. A sum over nodes counts
        such arrivals twice where one path makes one (heldout2's `branch`: a producer's wait for the
        consumers' release opened without the seed's, stubborn sets of 34 of 127 agents); the fixpoint
        counts the longest chain instead (`_chain`). Left out: a barrier with a node on a cycle (INF
        anyway) or with more than MAX_ALTERNATIVES nodes."""
        graph = self.graph
        weights: dict[Count, dict[int, int]] = {}
        for seg in (self.start, *self.after.values()):
            for node, what, k, n in seg.arrivals:
                for w in (ARRIVE, PLAIN) if what == ARRIVE_ON else (what,) if what in (ARRIVE, PLAIN) else ():
                    at = weights.setdefault((w, k[0], k[1] if k[0] is not None else None), {})
                    at[node] = max(at.get(node, 0), n)
        out: Alternatives = {}
        reached: dict[int, set[int]] = {}
        for key, at in weights.items():
            if not 1 < len(at) <= MAX_ALTERNATIVES or any(n < 0 or graph.on_cycle[n] for n in at):
                continue
            nodes = sorted(at)
            reach = []
            for n in nodes:
                seen = reached.get(n)
                if seen is None:
                    seen = reached[n] = self._reach(n)
                reach.append(sum(1 << j for j, m in enumerate(nodes) if m != n and m in seen))
            if all(i == j or reach[i] >> j & 1 or reach[j] >> i & 1
                   for i in range(len(nodes)) for j in range(len(nodes))):
                continue  # one path holds them all: the sum is the longest chain
            order = sorted(range(len(nodes)), key=lambda i: -reach[i].bit_count())
            index = {i: p for p, i in enumerate(order)}
            later = [sum(1 << index[j] for j in range(len(nodes)) if r >> j & 1) for r in reach]
            out[key] = tuple((nodes[i], at[nodes[i]], later[i]) for i in order)
        return out

    def _reach(self, n: int) -> set[int]:
        """The nodes reachable from node n along `_next` (n itself only through a cycle)."""
        seen: set[int] = set()
        todo = list(self._next(n))
        while todo:
            c = todo.pop()
            if c not in seen:
                seen.add(c)
                todo.extend(self._next(c))
        return seen

    def _priors(self) -> None:
        """Give each mbarrier gate the parities of the waits on its barrier that every path to it passes
        first (`Gate.prior`): the intersection over the gates it lies behind (a greatest fixpoint, over
        the gates of a loop too). The segments get new gates where they change (walks are shared)."""
        segs: dict[int | None, Segment] = {None: self.start}
        for node, seg in self.after.items():
            segs[node] = seg
        gates = {g.node: g for seg in segs.values() for g in seg.gates}
        parents: dict[int, list[int | None]] = {}
        for where, seg in segs.items():
            for g in seg.gates:
                parents.setdefault(g.node, []).append(where)
        passed: dict[int, Passed | None] = dict.fromkeys(parents)  # None: not known yet (everything)
        changed = True
        while changed:
            changed = False
            for node, froms in parents.items():
                acc: Passed | None = None
                for where in froms:
                    if where is None:
                        here: Passed = frozenset()
                    else:
                        before = passed[where]
                        if before is None:
                            continue
                        g = gates[where]
                        here = before if g.bar or g.copies else before | {
                            (g.cta, g.off, PRIOR_COMPLETES if g.parity is None else g.parity)}
                    acc = here if acc is None else acc & here
                if acc is not None and acc != passed[node]:
                    passed[node] = acc
                    changed = True
        for where, seg in segs.items():
            new = []
            for g in seg.gates:
                prior = frozenset(p for c, o, p in passed[g.node] or () if (c, o) == (g.cta, g.off))
                new.append(replace(g, prior=prior) if prior and not g.bar and g.parity is not None else g)
            if any(a is not b for a, b in zip(new, seg.gates, strict=True)):
                if where is None:
                    self.start = replace(seg, gates=tuple(new))
                else:
                    self.after[where] = replace(seg, gates=tuple(new))

    def behind(self, g: Gate) -> Segment:
        return self.after[g.node]

    def _next(self, n: int) -> tuple[int, ...]:
        fp, code, t, pc, graph = self.fp, self.fp.code, self.t, self.pc, self.graph
        x = code.ins[graph.pcs[n]]
        env = graph.envs[n]
        # The existing barrier cut: a whole-CTA/warp/cluster barrier the (enabled) seed has not reached.
        if fp.meets(t, x, pc, env) in self.cut and (
                (n == graph.start and self.standing)
                or (x.guard is None or value(code, t, pc, env, x.guard[0]) is not None)
                and fp.guard_may(t, x, pc, env)):
            return ()
        return graph.succ[n]

    def _tried(self, n: int, success: bool = False) -> list[int]:
        """Where the failure (or success) way of the wait tried once at node n leaves the code that only
        moves its result around (`explore.tries`)."""
        return frontier(self.fp.code, self.graph, n, success, self._next)

    def _walk(self, roots: list[int], todo: Iterable[int], items: list[Item], arrivals: list[Source],
              bars: list[BarUse], exits: bool, tried: Gate | None = None) -> Segment:
        """Every node of `roots` (entered unconditionally) and every node reachable from `todo` up to the
        next gates (a bar.sync gate's own arrival included, and a wait tried once with its failure way),
        with what the caller already holds; `tried`: the gate of the wait the thread stands at, tried
        once, whose failure way `todo` is."""
        fp, code, t, pc, graph = self.fp, self.fp.code, self.t, self.pc, self.graph
        seen: set[int] = set(roots)
        gates: dict[int, Gate] = {} if tried is None else {tried.node: tried}
        todo = list(todo)
        while todo:
            n = todo.pop()
            if n in seen or n in gates:
                continue
            g = self.frozen.gate(fp, t, code.ins[graph.pcs[n]], pc, graph.envs[n], n)
            if g is not None:
                gates[n] = g
                if g.bar:
                    seen.add(n)
                elif g.tried:
                    seen.add(n)
                    todo.extend(self._tried(n))
                continue
            seen.add(n)
            todo.extend(self._next(n))
        items = list(items)
        arrivals = list(arrivals)
        bars = list(bars)
        for n in sorted(seen):
            x = code.ins[graph.pcs[n]]
            env = graph.envs[n]
            if fp.guard_may(t, x, pc, env):
                items.extend(self.frozen.interned(fp.of_ins(t, x, pc, True, env)))
                arrivals.extend(self.frozen.arrival(fp, t, x, pc, True, env, n, graph.on_cycle[n]))
                exits = exits or x.kind == EXIT
                if x.kind == BAR:
                    bars.extend(bar_use(fp, t, x, pc, True, env, n, graph.on_cycle[n]))
        return Segment(items, tuple(gates.values()), arrivals, exits, bars)


# Plans (under two keys each: their cut and the kinds their future meets), walks and gate shapes kept.
# 1,024 rather than 2,048: the same time on the ring and warpgroup shapes, a third less memory per state
# (docs/performance.md). At least PLANS_PER_THREAD per thread of the machine: with fewer, one state's
# plans evict each other (768 threads: every state rebuilt every future, 20 CPU s each).
PLANS_KEPT = 1024
PLANS_PER_THREAD = 4
# Unrolled futures kept: more than the threads of a 384-thread CTA, whose barriers release a warpgroup
# at once (with 128, a state's 128 new positions evicted the flows its other cuts' plans needed); at
# least FLOWS_PER_THREAD per thread of the machine.
FLOWS_KEPT = 512
FLOWS_PER_THREAD = 2
ITEMS_KEPT = 8192


class Frozen:
    """The passability fixpoint (see the module docstring), with per-thread plans cached."""

    def __init__(self, threads: int = 0) -> None:
        """`threads`: how many the machine has (the caches keep at least a few entries per thread)."""
        self.plans_kept = max(PLANS_KEPT, PLANS_PER_THREAD * threads)
        self.flows_kept = max(FLOWS_KEPT, FLOWS_PER_THREAD * threads)
        # Plans by cut and thread situation: the latest `plans_kept` (a search meets new register values at
        # every level, so an unbounded cache would grow with the states, not with the program).
        self._plans: OrderedDict[tuple[object, ...], Plan] = OrderedDict()
        # Register values per (thread, pc, live registers): shared by the plans of every cut; only the
        # latest few are kept (a plan keeps what it needs).
        # With each, the barrier kinds its nodes may meet (`_meets`).
        self._flows: OrderedDict[tuple[object, ...], tuple[Unrolled, frozenset[str]]] = OrderedDict()
        self._shared = Shared()  # the flows' equal envs and edges, one object each
        # By thread: the key of its latest flow, whose graph its next pcs' futures are read off (`resume`).
        self._latest: dict[int, tuple[object, ...]] = {}
        # (warp, pc) where its lanes' futures could not be unrolled in one walk (`_unroll`).
        self._apart: set[tuple[int, int]] = set()
        # The plans' equal items, one object each (emptied when it holds more than ITEMS_KEPT).
        self._items: dict[Item, Item] = {}
        self.regs = LiveRegs(relevant=True)  # a plan depends on nothing else of the register file
        # By thread and cut: the key and plan `plan` last gave, with the getter of its live registers.
        # With the thread's snapshot entry (`plan`'s `entry`). By cut: a state's seeds give a thread
        # different cuts (in the seed's warp or CTA, or not), whose plans differ where its future meets
        # those barriers; one entry per thread made a fifth of a CUTLASS chain's plans a lookup by their
        # live registers.
        self._last: dict[tuple[int, frozenset[str]], tuple[Footprints, int, tuple[object, ...],
                                                           frozenset[str], object, Plan, Getter, object]] = {}
        # The segments behind gates, shared by the plans of one future, cut and standing (`Plan`), with the
        # successor lists of the graph whose node numbers they hold.
        self._walks: OrderedDict[tuple[object, ...], tuple[object, dict[tuple[int, bool], Segment]]] = \
            OrderedDict()
        # Plans' gate shapes, one object per shape (`Plan.pure`): the fixpoint groups pure plans by it.
        self._shapes: dict[Shape, Shape] = {}
        self._sources: dict[object, object] = {}  # plans' sources, one object each (`Plan.sources`)

    def shape(self, start: Iterable[tuple[int, GateKind]],
              after: Iterable[tuple[int, tuple[tuple[int, GateKind], ...]]]) -> Shape:
        """The one object of a plan's gate shape: its first gates and, behind each gate, the next ones."""
        return self._interned(self._shapes, (tuple(start), tuple(after)))

    def sources(self, plan: Plan) -> object:
        """The one object of what the fixpoint reads of a plan (`Plan.sources`)."""
        def gates(gs: tuple[Gate, ...]) -> tuple[tuple[int, GateKind, int], ...]:
            return tuple((g.node, g.kind, g.copies) for g in gs)

        key = (tuple(plan.start.arrivals), tuple(plan.start.bars), gates(plan.start.gates),
               tuple((n, tuple(seg.arrivals), tuple(seg.bars), gates(seg.gates))
                     for n, seg in sorted(plan.after.items())),
               tuple(sorted(plan.bar_paths.items(), key=repr)), tuple(sorted(plan.alts.items(), key=repr)))
        return self._interned(self._sources, key)

    def _interned(self, table: dict[_K, _K], key: _K) -> _K:
        """The one object equal to `key` in `table` (kept until it holds `plans_kept`: plans keep theirs,
        and equal keys then merely stop being grouped)."""
        found = table.get(key)
        if found is None:
            if len(table) >= self.plans_kept:
                table.clear()
            found = table[key] = key
        return found

    def plan(self, fp: Footprints, t: Thread, cut: frozenset[str], why: object,
             check: Callable[[], None] | None = None, entry: object = None) -> Plan:
        """Thread t's plan with its cut and `why`: None, or what it is blocked at now (below).
        Each thread's latest plan is tried first: most threads are where they were in the last state
        asked. `check` is called before a plan is built (a tenth of a second with many threads).
        `entry`: the thread's entry in a snapshot the machine equals now (`explore.snapshot`): the same
        entry is the same thread state (pc, function, registers), so its registers need no reading."""
        last = self._last.get((t.aid, cut))
        if last is not None and last[4] == why:
            if entry is not None and last[7] is entry:
                return last[5]
            if last[1] == t.pc and last[0] is fp and last[2] == last[6](t):
                if entry is not None:
                    self._last[t.aid, cut] = last[:7] + (entry,)
                return last[5]
        rel, getters = self.regs.of(fp.code)
        getter = getters[t.pc]
        regs = getter(t)
        # Blocked at a counted bar.sync (`why`: its id) or at a spin-wait (`why`: its barrier).
        blocked = None if why is None else Gate(AT_BAR, t.pc, t.cta.index, why, None, True) \
            if isinstance(why, int) else Gate(-1, t.pc, why[0], why[1], None)  # type: ignore[index]
        where = (t.func.name, t.aid, t.pc) + regs
        key = (cut, blocked) + where
        p = self._plans.get(key)
        if p is None:
            if check is not None:
                check()
            flow = self._flows.get(where)
            if flow is None:
                last_key = self._latest.get(t.aid)
                before = None if last_key is None else self._flows.get(last_key)
                graph = None if before is None else resume(before[0], fp.code, t, rel)
                if graph is None:
                    graph = self._unroll(fp, t, rel, getter)
                flow = self._flows[where] = (graph, _meets(fp.code, graph))
                self._latest[t.aid] = where
                while len(self._flows) > self.flows_kept:
                    self._flows.popitem(last=False)
            # Only the cut's kinds that some barrier of the future meets matter (`Plan._next`): plans
            # under cuts equal on those are one plan (the seed's warp or CTA changes the cut, rarely them).
            graph, met = flow
            alike = (cut & met, blocked) + where
            p = self._plans.get(alike)
            if p is None:
                family = (cut & met, blocked is None or not blocked.bar) + where
                found = self._walks.get(family)
                # Segments name nodes of one graph: where this future's graph was evicted and built anew
                # (unrolled alone, not with its warp's lanes, or resumed from another), its nodes are
                # numbered otherwise and the segments kept must not be read with it.
                if found is None or found[0] is not graph.succ:
                    found = self._walks[family] = (graph.succ, {})
                    while len(self._walks) > self.plans_kept:
                        self._walks.popitem(last=False)
                walks = found[1]
                p = self._plans[alike] = Plan(self, fp, t, cut & met, blocked, graph, walks)
                p.meets = met
            self._plans[key] = p
            while len(self._plans) > self.plans_kept:
                self._plans.popitem(last=False)
        self._last[t.aid, cut] = (fp, t.pc, regs, cut, why, p, getter, entry)
        return p

    def _unroll(self, fp: Footprints, t: Thread, rel: list[tuple[int, ...]], getter: Getter) -> Unrolled:
        """Thread t's unrolled future (`values.unroll`). With it, in one walk (`values.unroll_lanes`),
        those of the lanes of its warp at its pc whose futures are not kept, kept for their plans: at the
        first state every thread needs one, and a walk per thread cost 20 CPU s with 768 threads."""
        w = t.warp
        apart = (id(w), t.pc)
        if w is not None and apart not in self._apart:
            lanes = [t]
            wheres = []
            for lane in w.threads:
                if lane.aid == t.aid or lane.status == EXITED or lane.frames or lane.func is not t.func:
                    continue
                s = future_start(fp.code, lane)  # as `agent_plan` will ask for it
                if s.pc == t.pc:
                    where = (s.func.name, s.aid, s.pc) + getter(s)
                    if where not in self._flows:
                        lanes.append(s)
                        wheres.append(where)
            if len(lanes) > 1:
                graphs = unroll_lanes(fp.m, fp.code, lanes, rel, fp.successors, self._shared)
                for s, where, g in zip(lanes[1:], wheres, graphs[1:], strict=True):
                    if g is not None:
                        self._flows[where] = (g, _meets(fp.code, g))
                        self._latest[s.aid] = where
                if None in graphs:
                    if len(self._apart) >= self.flows_kept:
                        self._apart.clear()
                    self._apart.add(apart)  # some lanes part ways: they are unrolled one by one
                if graphs[0] is not None:
                    return graphs[0]
        return unroll(fp.m, fp.code, t, rel, lambda j, env: fp.successors(t, j, t.pc, env), self._shared)

    def interned(self, items: list[Item]) -> list[Item]:
        """`items`, each the equal one already kept where there is one (the plans of a thread's successive
        pcs, and of alike threads, name the same objects again and again)."""
        kept = self._items
        if len(kept) > ITEMS_KEPT:
            kept.clear()
        return [kept.setdefault(it, it) for it in items]

    # -- one instruction ------------------------------------------------------------------------------
    def gate(self, fp: Footprints, t: Thread, x: Ins, pc: int, env: Env, node: int) -> Gate | None:
        """The gate a future instruction (at `node` of the thread's unrolled future) is, or None when it
        is not one (or is passable whatever happens: rule (d)). `env`: the register values at x."""
        if x.kind == BAR:
            return self.bar_gate(fp, t, x, pc, True, env, node)
        if x.kind == CP_WAIT:
            return self.copy_gate(fp, t, x, pc, env, node)
        tried = x.kind == MB and x.mb_op in WAITS and x.wait_dst is not None and x.wait_parity
        if x.kind != MB or not (x.spin_local or tried):
            return None  # a wait tried once: only on a parity (a token one stays passable)
        code = fp.code
        if x.guard is not None:
            g = value(code, t, pc, env, x.guard[0])
            if g is None or bool(g) == x.guard[1]:
                return None  # it may not run at all, or never runs: not a wait the thread stops at
        obj = _target(fp, t, x.addr, pc, True, env)
        if obj[0] != t.cta.index or obj[1] is None:
            return None  # another CTA's barrier (the wait raises) or an unknown address
        slot, const = x.wait_arg
        if not x.wait_parity:
            # A token wait on the token of an arrive on the same barrier in the thread's future: while the
            # barrier's current phase cannot complete, that arrive falls in it and the wait cannot pass;
            # once the phase can complete, the gate opens (no parity: rule (b) alone, as for a thread
            # blocked now).
            tok = value(code, t, pc, env, slot) if slot is not None else None
            if type(tok) is int:
                # A bare word (a token stored to local memory and loaded back: the bytes lose which arrive
                # made it): the wait reads only the phase parity it holds (`core.barrier`, 9.7.13.15.16),
                # so it is a parity wait.
                const, slot = token_parity(tok), None
            elif not isinstance(tok, FutureToken) or _target(fp, t, tok.addr, pc, True, env) != obj:
                return None
            else:
                return Gate(node, x.pc, obj[0], obj[1], None)
        if slot is not None:
            v = value(code, t, pc, env, slot)
            if not isinstance(v, int):
                return None
            const = v
        parity = const & 0xFFFFFFFF
        if parity not in (0, 1):
            return None
        return Gate(node, x.pc, obj[0], obj[1], parity, tried=not x.spin_local)

    def bar_gate(self, fp: Footprints, t: Thread, x: Ins, pc: int, future: bool, env: Env | None,
                 node: int) -> Gate | None:
        """The gate a counted bar.sync is (at `node`; `future` False: the one the thread stands at now),
        or None: not one, its guard not known to be on, or its id or count unknown (its arrival then
        makes every gate of the CTA passable)."""
        if not (x.counted and x.bar_waits):
            return None
        if future and x.guard is not None:
            g = value(fp.code, t, pc, env, x.guard[0])
            if g is None or bool(g) == x.guard[1]:
                return None
        ident = fp.operand(t, x.bar_id, pc, future, env)
        if ident is None or fp.operand(t, x.bar_count, pc, future, env) is None:
            return None
        return Gate(node, x.pc, t.cta.index, ident, None, True)

    def copy_gate(self, fp: Footprints, t: Thread, x: Ins, pc: int, env: Env | None,
                  node: int) -> Gate | None:
        """The gate a cp.async.wait_all, cp.async.wait_group 0 or cp.async.bulk.wait_group{.read} N is
        (at `node`; `env` None: the one the thread stands at now), or None: another wait (a cp.async one
        that may leave groups pending), or its guard not known to be on."""
        which, keep = copy_wait(x)
        if not which:
            return None
        if x.guard is not None:
            g = t.regs[x.guard[0]] if env is None else value(fp.code, t, pc, env, x.guard[0])
            if g is None or bool(g) == x.guard[1]:
                return None
        return Gate(node, x.pc, t.cta.index, COPIES, None, copies=which, keep=keep)

    def arrival(self, fp: Footprints, t: Thread, x: Ins, pc: int, future: bool, env: Env | None, node: int,
                repeats: bool) -> list[Source]:
        """What instruction x (at `node` of the unrolled future) may do towards completing (or resetting) a
        barrier's phase: arrivals with their count (INF when unknown, or when the node `repeats`: it lies
        on a cycle of the unrolled future), tx-count changes, resets (init/inval, anything an unknown
        instruction may do)."""
        if x.kind == MB and x.mb_op in ("arrive", "arrive_drop"):
            k = _target(fp, t, x.addr, pc, future, env)
            n = INF if repeats else self._count(fp, t, x, pc, future, env)
            if not x.mb_expect:
                return [(node, ARRIVE, k, n), (node, PLAIN, k, n)]
            b = fp.operand(t, x.tx_arg, pc, future, env)
            return [(node, ARRIVE, k, n), (node, TX_UP, k, _bytes(b, repeats)), (node, XMIN, k, b or 0)]
        if x.kind == MB and x.mb_op in ("expect_tx", "complete_tx"):
            k = _target(fp, t, x.addr, pc, future, env)
            n = _bytes(fp.operand(t, x.tx_arg, pc, future, env), repeats)
            return [(node, TX_UP, k, n), (node, UP_ALONE, k, n)] if x.mb_op == "expect_tx" else \
                [(node, TX_DOWN, k, n)]
        if x.kind == MB and x.mb_op in ("init", "inval"):
            k = _target(fp, t, x.addr, pc, future, env)
        elif x.kind == CP_MB:
            targets = fp.barriers_of(t, x, pc, future, env) if x.multicast else \
                [_target(fp, t, x.bar, pc, future, env)]  # tcgen05.commit's multicast: each CTA of its mask
            n = INF if repeats else 1
            # Without .noinc the issue raises the pending count its arrive-on lowers later: the pair never
            # brings a phase nearer completion (only the arrive-ons pending now do), just bounds its rise.
            kinds = (ARRIVE_ON,) if x.noinc else (INC,)
            return [(node, what, k, n) for k in targets for what in kinds]
        elif x.kind == BULK:
            # complete_tx of its bytes on landing, in every CTA a multicast names; where they are not
            # known, at most the CTA's shared memory (a copy that would write past it faults first)
            size = fp.copy_size(t, x, pc, future, env)
            out = []
            for k in fp.barriers_of(t, x, pc, future, env):
                most = fp.m.ctas[k[0]].size if size is None and k[0] is not None else size
                out.append((node, TX_DOWN, k, _bytes(most, repeats)))
            return out
        elif x.kind == ATOM and x.op not in ("atom", "red") and not x.trap:
            k = (None, None)  # an instruction the checker cannot see into: it may do anything
        else:
            return []
        return [(node, what, k, INF) for what in (ARRIVE, TX_UP, TX_DOWN, PLAIN, UP_ALONE)]

    def _count(self, fp: Footprints, t: Thread, x: Ins, pc: int, future: bool, env: Env | None) -> int:
        """The arrive's count operand (1 when absent or with .expect_tx); INF when unknown."""
        found = x.count
        if found is None:
            return INF
        slot, const = found
        if slot is None:
            return const
        v = value(fp.code, t, pc, env, slot) if future else t.regs[slot]
        return v & 0xFFFFFFFF if isinstance(v, int) else INF

    def agent_plan(self, fps: dict[str, Footprints], a: Thread, i: int, cut: frozenset[str],
                   blocked_on: dict[int, Spin], check: Callable[[], None] | None,
                   entries: Sequence[object] | None) -> Plan:
        """Agent i's plan (a thread outside calls): blocked at its spin-wait (`blocked_on`), at a counted
        bar.sync, or standing."""
        why: object = blocked_on.get(i)
        if isinstance(why, FlagSpin):  # its flag may be written (`futures`): it is where it stands
            why = None
        w = a.wait
        if isinstance(w, AtBar) and (nb := a.cta.bars.get(w.ident)) is not None and nb.count is not None:
            why = w.ident
        fp = fps[a.func.name]
        return self.plan(fp, future_start(fp.code, a), cut, why, check,
                         None if entries is None else entries[a.aid])

    # -- the fixpoint ---------------------------------------------------------------------------------
    def futures(self, m: Machine, fps: dict[str, Footprints], agents: list[Thread | Copy], seed: int,
                cuts: list[frozenset[str] | None], blocked_on: dict[int, Spin],
                check: Callable[[], None] | None = None, entries: Sequence[object] | None = None,
                flags_open: frozenset[int] = frozenset()) -> Fixpoint:
        """For each agent: its item list while agents[seed] is frozen ([] for the seed itself, None where
        the caller keeps its own future: copies, threads inside calls, threads inside a cut barrier), and
        its arrivals at counted bar.sync barriers (None where the caller keeps its own future).
        `cuts[i]` is agent i's barrier cut (None: its future is empty, it waits inside a cut barrier).

        Also the CTAs that cannot die before the seed moves: those with a live thread that cannot exit
        meanwhile (a thread inside a cut barrier, a thread whose region has no exit; the seed when its next
        step is not an exit, which the caller adds: `seed_lives`). Along any sequence of steps outside the
        stubborn set that thread stays alive, so no exit there is the CTA's last and a copy landing or a
        remote access commutes with every exit: their liveness items need not conflict.

        A thread spinning on a flag in memory (a `FlagSpin` in `blocked_on`) steps only once the flag's
        bytes are written (but for its one read first, `FlagSpin.first`). Unless `flags_open` holds it (the
        caller found a writer among the others' futures: `por.AllFootprints._futures`), its future is
        empty (or that read) and its CTA lives."""
        exact: Exact = {}
        tally = Tally()
        plans: list[Plan | None] = [None] * len(agents)
        # One entry per group of threads of one CTA whose plans have the same sources (`Plan.sources`): they
        # open the same gates together, so the fixpoint runs once for them with their counts multiplied
        # (sums of alike threads' sources, capped at INF as one by one); `mates`: each group's threads.
        live: list[tuple[int, Plan, set[Counted], set[int]]] = []
        mates: list[list[tuple[int, Plan]]] = []
        groups: dict[tuple[int, int], int] = {}  # (cta, id of the plan's sources) -> its entry in `live`
        pure: dict[int, list[tuple[int, Plan]]] = {}  # plans without sources, by their shape's id
        s = agents[seed]
        # Operations that wait for the seed (a pending arrive-on watching a copy that is the seed) cannot
        # happen before it moves.
        behind = {id(w) for w in s.watchers} if isinstance(s, Copy) else set()
        mute = s.thread if isinstance(s, Copy) and s.kind == "cp.async" else None
        # Its copy gates that wait for the seed stay shut: wait_all always, wait_group 0 where the seed's
        # group is committed already (groups retire in order, each once all its copies landed).
        held = mute is not None and any(c is s for g in mute.cp_groups for c in g)
        # Its bulk wait_group gates that wait for the seed, a copy of a bulk group, stay shut too.
        holder, ahead = bulk_hold(s)

        def shut(i: int, g: Gate) -> bool:
            if g.copies == BULK_GROUPS:
                return agents[i] is holder and g.keep < ahead
            return agents[i] is mute and (g.copies == ALL or held)

        kept = self._last
        spinning = {i for i, why in blocked_on.items() if isinstance(why, FlagSpin) and i not in flags_open
                    and i != seed}
        for i, a in enumerate(agents):
            if i == seed or i in spinning:
                continue
            if isinstance(a, Copy):
                if a.bar_cta is not None and id(a) not in behind:
                    # a pending arrive-on (a plain arrival), else a bulk copy: complete_tx of its bytes
                    kinds = (ARRIVE, PLAIN) if a.kind in ARRIVALS else (TX_DOWN,)
                    for what in kinds:
                        put(exact, (what, a.bar_cta.index, a.bar_off), a.size if what == TX_DOWN else 1)
                continue
            cut = cuts[i]
            if cut is None:
                continue
            if a.frames:
                for what in (ARRIVE, TX_UP, TX_DOWN, PLAIN, UP_ALONE):
                    exact[(what, None, None)] = INF  # inside a call: may do anything
                tally.unknown.add(a.cta.index)
                continue
            # `plan`'s first answer without the calls: the plan it last gave this thread under this cut,
            # while the thread's snapshot entry is the same (not at a counted bar.sync: `agent_plan`).
            last = None if entries is None or isinstance(a.wait, AtBar) else kept.get((a.aid, cut))
            if last is not None and last[7] is entries[a.aid] and last[4] == blocked_on.get(i):  # type: ignore[index]
                plan = plans[i] = last[5]
            else:
                doing("futures of thread", i, len(agents))  # for the progress line: seconds at a first state
                plan = plans[i] = self.agent_plan(fps, a, i, cut, blocked_on, check, entries)
            if plan.pure and a is not mute and a is not holder:
                pure.setdefault(id(plan.shape), []).append((i, plan))
                continue
            if a is not mute and a is not holder:  # their copy gates shut for them alone
                key = (a.cta.index, id(plan.sources))
                li = groups.get(key)
                if li is not None:
                    mates[li].append((i, plan))
                    continue
                groups[key] = len(live)
            live.append((i, plan, set(), set()))
            mates.append([(i, plan)])
        # Per entry with alternative arrivals (`Plan.alts`): per barrier, the nodes counted (a mask over
        # its alternatives) and the longest chain of them added to `exact`.
        chains: list[dict[Count, tuple[int, int]]] = [{} for _ in live]
        for li, (i, plan, counted, _) in enumerate(live):
            a, k = agents[i], len(mates[li])
            if plan.start.arrivals:
                if plan.alts:
                    _add(plan.start, counted, exact, a is mute, k, plan.alts, chains[li])
                else:
                    _add_start(plan.start, counted, exact, a is mute, k)
            if plan.start_counts or plan.start_own:
                tally.start(li, a.cta.index, plan, k)  # type: ignore[union-attr]
        # The fixpoint as a worklist: a closed gate waits under its barrier until a segment that opens
        # brings new sources for that barrier (or for an unknown one: then every closed gate is retried).
        # Named barriers' gates wait apart, by (cta, id), until arrivals at that id (or an unknown one of
        # their CTA) come. Gates of one kind (barrier, parity) wait as one group: passable or not together.
        waiting: dict[tuple[int, int], dict[GateKind, list[tuple[int, Gate]]]] = {}
        bar_waiting: dict[tuple[int, int], dict[GateKind, list[tuple[int, Gate]]]] = {}
        memo: dict[GateKind, bool] = {}  # per gate kind, until sources change

        def passable(g: Gate) -> bool:
            if g.copies:
                return True  # but for the `mute` or `holder` thread's, which never reach this (`shut`)
            ok = memo.get(g.kind)
            if ok is None:
                ok = memo[g.kind] = tally.passable(m, g) if g.bar else _passable(m, g, exact)
            return ok

        first: dict[GateKind, list[tuple[int, Gate]]] = {}
        for li, entry in enumerate(live):
            for g in entry[1].start.gates:
                if not (g.copies and shut(entry[0], g)):
                    first.setdefault(g.kind, []).append((li, g))
        todo: list[tuple[int, Gate]] = []
        for gk, members in first.items():  # every group asked once: those closed wait
            g = members[0][1]
            if passable(g):
                todo.extend(members)
            else:
                (bar_waiting if g.bar else waiting).setdefault((g.cta, g.off), {})[gk] = members
        while todo:
            li, g = todo.pop()
            i, plan, counted, opened = live[li]
            if g.node in opened or (g.copies and shut(i, g)):
                continue
            if not passable(g):
                (bar_waiting if g.bar else waiting).setdefault((g.cta, g.off), {}).setdefault(
                    g.kind, []).append((li, g))
                continue
            opened.add(g.node)
            seg = plan.after[g.node]
            todo.extend((li, h) for h in seg.gates if h.node not in opened)
            if not seg.arrivals and not seg.bars:
                continue  # nothing new for any gate
            a = agents[i]
            k = len(mates[li])
            touched = _add(seg, counted, exact, a is mute, k, plan.alts, chains[li]) if seg.arrivals \
                else set()
            named = tally.add(li, a.cta.index, plan, seg.bars, k) if seg.bars else set()  # type: ignore[union-attr]
            if touched or named:
                memo.clear()
            if touched:
                unknown = any(off is None for _, off in touched)
                _retry(waiting, list(waiting) if unknown else touched, passable, todo)  # type: ignore[arg-type]
            for cta, ident in named:
                _retry(bar_waiting, [bk for bk in bar_waiting if bk[0] == cta] if ident is None else
                       [(cta, ident)], passable, todo)
        out: list[list[Item] | None] = [None] * len(agents)
        out[seed] = []
        bars: list[BarFuture | None] = [None] * len(agents)
        bars[seed] = ([], {})
        lives: list[int | None] = [None] * len(agents)  # the seed's own part is the caller's (`seed_lives`)
        for i, (a, cut) in enumerate(zip(agents, cuts, strict=True)):
            if cut is None and isinstance(a, Thread) and i != seed:
                lives[i] = a.cta.index
        # The pure plans' gates open as the fixpoint answers: once per shape.
        done: list[tuple[int, Plan, set[int] | frozenset[int]]] = [
            (i, p, opened) for li, (_, _, _, o) in enumerate(live) for opened in (frozenset(o),)
            for i, p in mates[li]]
        for alike in pure.values():
            common = _opened(alike[0][1], passable)
            done.extend((i, p, common) for i, p in alike)
        for i in spinning:  # one that must read first: that read is all it does (`FlagSpin.first`)
            a = agents[i]
            assert isinstance(a, Thread)
            out[i] = fps[a.func.name].current(a) if blocked_on[i].first else []  # type: ignore[union-attr]
            bars[i], lives[i] = ([], {}), a.cta.index
        passed: list[frozenset[int] | None] = [None] * len(agents)
        for i, plan, nodes in done:
            found = future_at(plan, nodes)
            if not found[1]:
                lives[i] = agents[i].cta.index  # type: ignore[union-attr]
            out[i] = found[0]
            bars[i] = found[2]
            passed[i] = frozenset(nodes)
        return Fixpoint(out, lives, bars, exact, plans, passable, passed, frozenset(spinning))


def future_at(plan: Plan, nodes: set[int] | frozenset[int]) -> tuple[list[Item], bool, BarFuture]:
    """A plan's items, whether it may exit and its bar arrivals with the gates at `nodes` opened."""
    found = plan.futures.get(key := frozenset(nodes)) if nodes else plan.start_future
    if found is None:
        items, exits, uses = list(plan.start.items), plan.start.exits, list(plan.start.bars)
        for g in _order(plan, nodes):
            seg = plan.behind(g)
            items.extend(seg.items)
            exits = exits or seg.exits
            uses.extend(seg.bars)
        found = plan.futures[key] = (items, exits, (uses, bar_arrivals(uses, plan.bar_paths)))
    return found


@dataclass
class Fixpoint:
    """`Frozen.futures`' answer: per agent its items (`lists`), the CTA it keeps alive (`lives`: a thread
    inside a cut barrier or whose future has no exit; never the seed's, `seed_lives`), its bar arrivals
    (`bars`) and plan (`plans`: threads outside calls but the seed); the sources outside the seed
    (`exact`) and whether a gate opens with them (`passable`)."""

    lists: list[list[Item] | None]
    lives: list[int | None]
    bars: list[BarFuture | None]
    exact: Exact
    plans: list[Plan | None]
    passable: Callable[[Gate], bool]
    opened: list[frozenset[int] | None]  # per thread with a plan, the nodes of the gates its future passes
    shut: frozenset[int] = frozenset()   # the flag spinners left without a future (`Frozen.futures`)

    def immortal(self) -> frozenset[int]:
        alive = set(self.lives)  # in C: a state has as many entries as agents
        alive.discard(None)
        return frozenset(alive)  # type: ignore[arg-type]

    def pure_opened(self, plan: Plan) -> frozenset[int]:
        """The nodes of the gates a plan without sources passes under these answers."""
        return _opened(plan, self.passable)


def _meets(code: Code, graph: Unrolled) -> frozenset[str]:
    """Every barrier kind (`Footprints.meets`) a node of the future may meet: an instruction's
    `sync_all`, or "warp" for a warp collective with a membermask register."""
    kinds: set[str] = set()
    for j in set(graph.pcs):
        x = code.ins[j]
        if x.sync_all is not None:
            kinds.add(x.sync_all)
        elif x.lanes_arg is not None:
            kinds.add("warp")
    return frozenset(kinds)


def seed_lives(fps: dict[str, Footprints], s: Thread | Copy, cut: frozenset[str] | None) -> int | None:
    """The CTA the seed keeps alive until it moves (`Frozen.futures`'s immortal CTAs): a thread's, when
    its next step is not an exit or it waits inside a cut barrier; None for a copy."""
    if not isinstance(s, Thread):
        return None
    if cut is None or (fps[s.func.name].code.ins[s.pc].kind != EXIT and not s.frames):
        return s.cta.index
    return None


def _retry(waiting: dict[tuple[int, int], dict[GateKind, list[tuple[int, Gate]]]],
           keys: Iterable[tuple[int, int]], passable: Callable[[Gate], bool],
           todo: list[tuple[int, Gate]]) -> None:
    """The groups of closed gates waiting under `keys` whose barriers' sources changed: those now passable
    go to `todo`, the others keep waiting (a group is asked once, not each of its gates)."""
    for k in keys:
        groups = waiting.get(k, {})
        for gk in [gk for gk, members in groups.items() if passable(members[0][1])]:
            todo.extend(groups.pop(gk))
        if not groups:
            waiting.pop(k, None)


def _opened(plan: Plan, passable: Callable[[Gate], bool]) -> frozenset[int]:
    """The nodes of the gates of a plan that open (those passable, reached through opened ones)."""
    opened: set[int] = set()
    todo = [g for g in plan.start.gates if passable(g)]
    while todo:
        g = todo.pop()
        if g.node not in opened:
            opened.add(g.node)
            todo.extend(h for h in plan.after[g.node].gates if h.node not in opened and passable(h))
    return frozenset(opened)


def _order(plan: Plan, opened: set[int] | frozenset[int]) -> list[Gate]:
    """The opened gates of a plan, each once."""
    out: list[Gate] = []
    seen: set[int] = set()
    todo = list(plan.start.gates)
    while todo:
        g = todo.pop()
        if g.node in seen or g.node not in opened:
            continue
        seen.add(g.node)
        out.append(g)
        todo.extend(plan.behind(g).gates)
    return out


def _sums(seg: Segment) -> tuple[dict[Count, int], dict[Count, int], frozenset[Counted]]:
    """A segment's sources summed per barrier, each (node, what, barrier) once: for any thread, and for
    a `mute` one (its ARRIVE_ON sources left out); and the keys they mark counted."""
    if seg.sums is None:
        every: dict[Count, int] = {}
        muted: dict[Count, int] = {}
        keys: set[Counted] = set()
        for node, what, k, n in seg.arrivals:
            if (node, what, k) in keys:
                continue
            keys.add((node, what, k))
            for w in (ARRIVE, PLAIN) if what == ARRIVE_ON else (what,):
                key = (w, k[0], k[1] if k[0] is not None else None)
                put(every, key, n)
                if what != ARRIVE_ON:
                    put(muted, key, n)
        seg.sums = (every, muted, frozenset(keys))
    return seg.sums


def _add_start(seg: Segment, counted: set[Counted], exact: dict[Count, int], mute: bool,
               times: int = 1) -> None:
    """`_add` for a thread's first segment (nothing of the thread counted yet), by its sums."""
    every, muted, keys = _sums(seg)
    for key, n in (muted if mute else every).items():
        put(exact, key, n, times)
    counted.update(keys)


def _add(seg: Segment, counted: set[Counted], exact: dict[Count, int], mute: bool, times: int = 1,
         alts: Alternatives | None = None, chains: dict[Count, tuple[int, int]] | None = None
         ) -> set[tuple[int | None, int | None]]:
    """Add a segment's sources into `exact` (by what, cta, offset), each instruction of a thread once per
    barrier it acts on, for `times` alike threads; the barriers whose sources changed ((cta, None) or (None,
    None) where unknown). `mute`: the thread issued the frozen seed, a cp.async: its arrive-ons wait for
    the seed. Arrivals at the thread's alternative nodes (`Plan.alts`) add the growth of the longest chain
    of those counted (`chains`: per barrier, the nodes counted as a mask over `alts[key]`, and the chain
    added so far): one path of the thread makes no more."""
    touched: set[tuple[int | None, int | None]] = set()
    grown: set[Count] = set()
    alts = alts or {}
    chains = {} if chains is None else chains
    for pc, what, k, n in seg.arrivals:
        if (pc, what, k) in counted or (mute and what == ARRIVE_ON):
            continue
        counted.add((pc, what, k))
        cta, off = k
        for w in (ARRIVE, PLAIN) if what == ARRIVE_ON else (what,):
            key = (w, cta, off if cta is not None else None)
            alt = alts.get(key)
            if alt is None:
                put(exact, key, n, times)
                continue
            mask, had = chains.get(key, (0, 0))
            chains[key] = (mask | sum(1 << j for j, (node, _, _) in enumerate(alt) if node == pc), had)
            grown.add(key)
        if what != INC:  # no gate waits for a rise of the pending count
            touched.add((cta, off if cta is not None else None))
    for key in grown:
        mask, had = chains[key]
        now = _chain(alts[key], mask)
        chains[key] = (mask, now)
        if now > had:
            put(exact, key, now - had, times)
    return touched


def _chain(alt: tuple[tuple[int, int, int], ...], mask: int) -> int:
    """The most arrivals one path makes through the nodes of `alt` in `mask` (`Plan._alternatives`: in
    an order where a node comes before those it reaches, each with its count and that reach as a mask)."""
    best = [0] * len(alt)
    for j, (_, n, _) in enumerate(alt):
        if mask >> j & 1:
            before = max((best[i] for i in range(j) if mask >> i & 1 and alt[i][2] >> j & 1), default=0)
            best[j] = min(before + n, INF)
    return max(best, default=0)


def put(exact: dict[Count, int], key: Count, n: int, times: int = 1) -> None:
    """Add a source's count to `exact` (at most INF), `times` times (alike threads: capping the sum once is
    capping it after each, the counts being at least 0); an XMIN, the least byte count, by min."""
    if key[0] == XMIN:
        exact[key] = min(exact.get(key, INF), n)
    else:
        exact[key] = min(exact.get(key, 0) + n * times, INF)


def may_complete(m: Machine, cta: int, off: int, exact: Exact) -> bool:
    """Whether the current phase of the barrier at (cta, off) may complete (or the object be reset) with
    the sources `exact` counts (rules (b), (c), (d) for a thread blocked there now)."""
    return _passable(m, Gate(-1, -1, cta, off, None), exact)


def _passable(m: Machine, g: Gate, exact: dict[Count, int]) -> bool:
    b = m.ctas[g.cta].barriers.get(g.off)
    if b is None or not b.valid:
        return True  # (d): the wait raises, so it runs

    keys = ((g.cta, g.off), (g.cta, None), (None, None))

    def have(what: int) -> int:
        return sum(exact.get((what, *k), 0) for k in keys)

    need = b.pending
    if g.parity is not None and g.parity != b.phase & 1:
        if b.phase & 1 not in g.prior and PRIOR_COMPLETES not in g.prior:
            return True  # (a)
        # (e): behind a wait on this barrier that passes only once the current phase completed, so this
        # one needs the next phase to complete too: one arrival more at least (the expected count never
        # drops below 1, arrive_drop's included: 9.7.13.15.14)
        need += 1
    # (b), (c): enough arrivals for the pending count, and enough bytes moving the tx-count to bring it to
    # 0 when the last of them lands: tx + up - down = 0 with up at least what the arrive.expect_tx
    # arrivals the phase must take raise it by (those beyond the plain arrivals, each by at least the
    # fewest bytes one names). Resets count as all of these.
    if have(ARRIVE) < need:
        return False
    forced = need - have(PLAIN)
    least = min((exact[k] for k in ((XMIN, *k) for k in keys) if k in exact), default=0)
    low = max(-b.tx, forced * least if forced > 0 else 0)  # the least the tx-count can rise by
    return have(TX_UP) >= low and have(TX_DOWN) >= b.tx + low


def _bytes(n: int | None, repeats: bool) -> int:
    """The most bytes one tx-count operation (at one node of a future) may move: its byte count, INF when
    that is not known or the node repeats."""
    return INF if n is None or repeats else n


def _target(fp: Footprints, t: Thread, a: Addr | None, pc: int, future: bool, env: Env | None) -> Key:
    if a is None:
        return (None, None)
    obj = fp.barrier_items(t, a, 0, pc, future, env)[0][0]
    return obj[1], obj[2]  # type: ignore[return-value]


def copy_wait(x: Ins) -> tuple[int, int]:
    """What a copy wait waits for, and how many of the most recent groups it may leave pending:
    ALL (cp.async.wait_all), COMMITTED (cp.async.wait_group 0), both 9.7.9.25.3; BULK_GROUPS with N
    (cp.async.bulk.wait_group{.read} N, 9.7.9.25.4.3); or 0 (a cp.async.wait_group that may leave groups
    pending, or an N not known). The simulator's `.read` waits, as the plain one does, until the
    groups' copies are done (`Machine.cp_wait`): a bulk store reads its source and writes its
    destination in its one landing step."""
    if x.opcode == "cp.async.wait_all":
        return ALL, 0
    if x.opcode == "cp.async.wait_group" and x.imms[:1] == (0,):
        return COMMITTED, 0
    n = x.imms[0] if x.opcode.startswith("cp.async.bulk.wait_group") and x.imms else None
    return (BULK_GROUPS, n) if n is not None else (0, 0)


def bulk_hold(seed: Thread | Copy) -> tuple[Thread | None, int]:
    """The thread whose committed bulk group holds the seed copy, and how many of its groups there are
    from that one to its last (None, 0 for any other seed). Groups retire in order, each once all its
    copies are done (`Machine.cp_wait`), and commits only add groups after it: while the seed is in
    flight, every later cp.async.bulk.wait_group N of that thread with N below that number blocks.
    A copy not yet committed holds nothing (a wait before its commit does not wait for it)."""
    if not isinstance(seed, Copy):
        return None, 0
    groups = seed.thread.bulk_groups
    for j, g in enumerate(groups):
        if any(c is seed for c in g):
            return seed.thread, len(groups) - j
    return None, 0


def held_by(t: Thread, seed: Thread | Copy) -> bool:
    """Whether thread t, blocked at a cp.async.wait_group n (or wait_all: n = 0) or a
    cp.async.bulk.wait_group n, waits for the seed, one of its copies of that kind: the seed's group lies
    before its n most recent (groups retire in order, each once all its copies landed), so t stays
    blocked until the seed lands. Likewise at wgmma.wait_group n for a seed that is a share (any warp's)
    of an operation of the groups it retires."""
    w = t.wait
    if isinstance(w, ForCopies) and w.which == WGMMA and isinstance(seed, Copy) and seed.mma is not None:
        # A wgmma.wait_group returns once every warp's share of the operations it retires is done
        # (`sim.machine.wgmma._complete`): the seed, in flight, may be one of them.
        wgroups = t.wg.groups
        return any(x is seed for g in wgroups[:max(0, len(wgroups) - w.pending)] for c in g
                   for x in (c, *shares(t, c)))
    if not isinstance(w, ForCopies) or not isinstance(seed, Copy) or seed.thread is not t:
        return False
    groups = t.cp_groups if w.which == "cp.async" else t.bulk_groups
    return any(c is seed for g in groups[:len(groups) - w.pending] for c in g)
