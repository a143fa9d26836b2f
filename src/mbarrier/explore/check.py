"""Exhaustive checking: every interleaving of threads and asynchronous completions of one launch.

The state graph. A state is the whole machine (`explore.snapshot`); a transition is one step of one
agent (a thread's instruction, a copy landing, a pending cp.async arrive-on). A *spin-wait* (a
test_wait/try_wait whose False result leads straight back to it, see `explore.code`) is blocking: it is
enabled only when it would return True (or raise), so spinning never makes the search infinite and a
thread spinning on a phase that cannot complete any more is waiting, like one at bar.sync. A state where
no agent is enabled while some thread has not exited is a deadlock.

Search: breadth first, so each finding comes with a shortest schedule of the explored graph; states are
hashed (64-bit hash compaction). Reductions (on by default):
  * thread-local instructions (register arithmetic, branches, nanosleep, fences) run eagerly, as part
    of the step before them: no other agent can observe them;
  * stubborn sets (`explore.por`): at each state only the agents of a set closed under conflicts
    and enabling are expanded; a BFS cycle proviso (a state whose reduced successors reach an already
    seen, not deeper state is expanded fully) keeps violations from being postponed forever;
  * warp granularity (off by default, a weaker guarantee): a converged warp's lanes at the same
    instruction step together.
With reductions off every instruction is one transition: the graph `mbarrier export --promela` writes.
"""

from __future__ import annotations

import gc
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from operator import attrgetter

from mbarrier.core.violations import Violation
from mbarrier.explore import snapshot
from mbarrier.explore.budget import (
    MAX_MEMORY,
    MAX_STATES,
    OUT_OF_MEMORY,
    BoundHit,
    Budget,
    active,
    doing,
    pulse,
    shielded,
)
from mbarrier.explore.closure import alone_too, stubborn
from mbarrier.explore.code import (
    BAR,
    BRANCH,
    CLUSTER,
    CP_WAIT,
    LOCAL,
    MATRIX,
    MMA,
    WARP,
    Code,
    Ins,
    analyse_module,
)
from mbarrier.explore.deadlock import explain
from mbarrier.explore.footprints import Footprints
from mbarrier.explore.frontier import Entry, Frontier
from mbarrier.explore.inputs import data_branches
from mbarrier.explore.joins import joins_only
from mbarrier.explore.livelock import Graph, Region, livelocks, settle
from mbarrier.explore.por import AllFootprints
from mbarrier.explore.results import (
    SEARCH,
    CheckResult,
    Finding,
    FindingKind,
    Options,
    Stats,
    Verdict,
    Waiter,
)
from mbarrier.explore.run import Outcome, run
from mbarrier.explore.schedulers import RandomScheduler
from mbarrier.explore.sleep import EMPTY, Expansion
from mbarrier.explore.spin import FlagSpin, Spin, Spins, holds
from mbarrier.explore.symmetry import Symmetry
from mbarrier.explore.walks import Walks
from mbarrier.explore.who import Layout, plural
from mbarrier.explore.wholebar import WholeBars
from mbarrier.ptx import ast
from mbarrier.sim.errors import KernelFault, SimError
from mbarrier.sim.launch import pick_kernel
from mbarrier.sim.machine import BLOCKED, DONE, EXITED, RUNNABLE, Copy, Machine, Thread
from mbarrier.sim.machine.wgmma import WGMMA as _WGMMA
from mbarrier.sim.race_report import Race
from mbarrier.sim.races import track
from mbarrier.sim.waits import ForCopies
from mbarrier.spec.checks import DEADLOCK, EXIT_INFLIGHT, LIVELOCK, REMOTE_EXITED, UNSUPPORTED, checker_rule

_AID = attrgetter("aid")
Spinning = dict[int, Spin]  # a spinning thread's aid -> its mbarrier (cta, offset) or its flag
FIRST_WALKS = 3  # random walks before the search (within Options.walk_first seconds)
FOUND = "found"  # stopped_by: random walks had found bugs, the search ran Options.followup seconds more
LOCAL_LOOP_LIMIT = 1_000_000
MAX_NAMED = 4  # the looping threads a livelock's message names
DEAD_END_STEPS = 2_000_000  # a random run's steps from a state whose every move slept (`_run_ends`)
WALK_SETTLE_STATES = 2_000  # the settling search's states where a random walk was cut (`walk_livelock`)
# The checker's kinds of instruction that run eagerly (`Explorer.is_local`), and those whose steps do
# where they only join (`joins.joins_only`).
_EAGER = (LOCAL, BRANCH, WARP, MMA)
_JOINS = (MATRIX, CLUSTER)


class _Stop(Exception):
    pass


class _Found(Exception):
    def __init__(self, finding: Finding) -> None:
        self.finding = finding


class _LocalSteps(Exception):
    """A bound: a thread ran LOCAL_LOOP_LIMIT instructions that no other agent can observe, in one go."""


class Explorer:
    """The search over one launched machine."""

    def __init__(self, m: Machine, module: ast.Module, opts: Options, stats: Stats | None = None,
                 budget: Budget | None = None) -> None:
        """`stats` and `budget`: the check's (`bounds`), when it started before (the time bound counts
        from `stats.started`)."""
        snapshot.check_known(m)
        self.m = m
        self.opts = opts
        self.stats = Stats() if stats is None else stats
        self.budget = bounds(opts, self.stats) if budget is None else budget
        doing("analysing the code")
        self.nthreads = len(m.threads)
        self.module = module
        self.codes: dict[str, Code] = analyse_module(module, m)
        kernel = m.threads[0].func.name
        self.code: Code = self.codes[kernel]
        self.fp = AllFootprints({name: Footprints(m, c) for name, c in self.codes.items()})
        self.whole = WholeBars(self.fp.fps)
        self.spins = Spins(m, self.codes)
        self.tokens = {name: c.token_slots for name, c in self.codes.items() if c.token_slots}
        self.reduce = opts.reductions
        self.sleep_sets = self.reduce and opts.sleep
        self.symmetry: Symmetry | None = None
        # The search's progress (`run`, `expand`): findings, the snapshot the machine equals now (None:
        # none), what stopped the search and, for a step's own bound or the tool's limit, its words.
        self.findings: list[Finding] = []
        self.seen: dict[tuple[str, str, int | None], int] = {}   # a finding's key -> its index
        self.machine_is: snapshot.Snapshot | None = None
        self.chain: int | None = None  # the state the last expansion's one transition led to
        self.stopped_by = ""
        self.bound = ""
        self.unsupported: Finding | None = None
        self.walker: Walks | None = None      # random walks, bugs first (`explore.walks`)
        self.graph = Graph()                  # the transitions fired, for the livelocks (`explore.livelock`)
        self.dead_ends: list[int] = []        # nodes whose every move was asleep (`explore.livelock`)
        self.followup: float | None = None    # when a walk found a bug: the search stops at this time
        if self.reduce and opts.symmetry:
            self.symmetry = Symmetry(m, module, self.codes, opts.warp)
            if self.symmetry.enabled and self.sleep_sets:
                # Sleep sets name agents by thread id; a state merged with a symmetric one would compare
                # them across different permutations. Until they are named canonically: one or the other.
                self.sleep_sets = False
                self.symmetry.note = "sleep sets off: not combined with symmetry"

    # -- what can run ------------------------------------------------------------------------------
    def ins(self, t: Thread) -> Ins:
        return self.codes[t.func.name].ins[t.pc]

    def guard_on(self, t: Thread, x: Ins) -> bool:
        return holds(t, x)

    def is_local(self, t: Thread) -> bool:
        """Whether t's next step runs eagerly, as part of the step before it: an instruction no other
        agent observes, one its guard skips, an arrival at a warp collective (elect, vote, shfl,
        match, redux, bar.warp.sync, setmaxnreg) or one at a whole-CTA bar.sync that no counted arrival
        can reach (`explore.wholebar`). An arrival at a warp collective is never disabled and commutes
        with every step of every other agent: with the other lanes' arrivals (the arrived set is the
        same in any order, and the collective completes at the last of them), with an exit of a lane of
        its warp (it lowers the count the collective needs, which cannot complete without this arrival
        either way), and nothing else reads what it changes (its warp's pending collectives; its lanes'
        registers and, for bar.warp.sync, their clocks, when it completes; setmaxnreg's warpgroup checks
        commute too, `sim.isa.control.setmaxnreg_facts`). So the thread alone is a persistent set there:
        no interleaving's deadlock, violation or race is lost. (The PTX ISA's `.sync` collectives wait
        for the lanes of their membermask and exchange registers only; `sim.machine.control.coll`.)
        A copy wait (cp.async.wait_group/wait_all, 9.7.9.25.3; cp.async.bulk.wait_group, 9.7.9.25.4.3)
        runs eagerly too: where its thread's copies of that kind have landed enough it passes, else it
        blocks, and the block is no visible step: the landing that releases the thread ends in the state
        the other order reaches (the wait passing after it). Copies never come undone and only the
        thread itself commits groups; the wait acquires the groups it retires when it runs, blocked or
        not (`RaceMachine.cp_wait`), and the landing pops them and unblocks the thread just as a wait run
        after it would (`Machine.finish_async`); only the thread's own copies can change what it does.
        Each lane of a CUTLASS epilogue warp blocks at `cp.async.bulk.wait_group.read 1` with two groups
        of TMA stores in flight; as a visible step the wait, before or after each of its copies, made
        sets of three.
        The same holds for the arrivals that only join (`joins.joins_only`), and for every arrival at
        wgmma.mma_async and wgmma.wait_group (9.7.15.5.2, 9.7.15.7.3; `sim.machine.wgmma`): the one that
        completes mma_async issues the warp's operation from its lanes' registers and descriptors (the
        engine it starts, an agent of its own, reads shared memory when it lands), and the one that
        completes wait_group retires the groups whose operations are done in every warp, else its lanes
        block until the engines' landings release them and they meet again. A landing that comes after
        such a block therefore ends, with the eager meeting it releases, in the state the other order
        reaches: the block is no visible step (as a spin-wait that would fail is none), and the meeting
        that retires reads only operations already done, which nothing else changes."""
        x = self.ins(t)
        return x.kind in _EAGER or not self.guard_on(t, x) or (x.kind == BAR and self.whole.eager(t, x)) \
            or x.kind == CP_WAIT or (x.kind in _JOINS and joins_only(t, x))

    def enabled(self, snap: snapshot.Snapshot | None = None) -> tuple[list[Thread | Copy], Spinning]:
        """The agents that can step now (sorted by id) and the spinning threads' barriers or flags (with
        the flag spinners that can step once before they block, `FlagSpin.first`). `snap`: a
        snapshot the machine equals now (its thread entries let `Spins.blocked` reuse what it knows)."""
        out: list[Thread | Copy] = []
        spinning: dict[int, Spin] = {}
        probes: dict[tuple[int, str, object], bool | None] = {}
        entries = snapshot.thread_states(snap) if snap is not None else [None] * self.nthreads
        for a in sorted(self.m.runnable, key=_AID):
            if isinstance(a, Thread):
                spin: Spin | None = self.spins.blocked(a, probes, entries[a.aid])
                if spin is None:
                    spin = self.spins.flag(a)
                if spin is not None:
                    spinning[a.aid] = spin
                    if not (isinstance(spin, FlagSpin) and spin.first):
                        continue  # blocked (one step first: enabled, and its flag noted for the futures)
            out.append(a)
        return out, spinning

    # -- transitions ---------------------------------------------------------------------------------
    def step(self, a: Thread | Copy, aids: list[int]) -> None:
        aids.append(a.aid)
        a.code[a.pc](self.m, a)

    def eager(self, t: Thread, aids: list[int], released: set[int] | None = None) -> None:
        """Run t's eager steps (`is_local`); `released` gets the threads a warp collective or bar.sync it
        completed released (`settle` runs theirs), and the lanes a wgmma.wait_group it completed left
        blocked until their operations land (their pc and wait changed: the snapshot must see them)."""
        n = 0
        while t.status == RUNNABLE and self.is_local(t):
            waiting = self._waiting(t) if released is not None else ()
            mma = waiting and self.ins(t).kind == MMA
            self.step(t, aids)
            if released is not None:
                released.update(th.aid for th in waiting if mma or th.status == RUNNABLE)
            n += 1
            if n > LOCAL_LOOP_LIMIT:
                raise _LocalSteps(f"thread {t.aid} ran {LOCAL_LOOP_LIMIT:,} instructions in a row without "
                                  f"touching shared state (a loop at line {t.func.sites[t.pc].line} that may "
                                  "never end)")
        self.stats.local_steps += n

    def _waiting(self, t: Thread) -> list[Thread]:
        """The threads t's eager step may release: its warp's lanes blocked in a collective, or the
        threads waiting at its bar.sync."""
        x = self.ins(t)
        if x.kind in (WARP, MMA) and t.warp is not None:
            return [th for th in t.warp.threads if th.status == BLOCKED]
        if x.kind == BAR and (i := self.whole.ident(t, x)) is not None:
            nb = t.cta.bars.get(i)
            return list(nb.arrived) if nb is not None else []
        return []

    def settle(self, aids: list[int], woken: set[int], start: int = 0, first: bool = False) -> None:
        """Run the eager steps of the threads that stepped or were released from a barrier (in aid
        order), then of the threads those steps released from a warp collective or bar.sync (added to
        `woken`) or made eager, until none is left. Every other runnable thread already stands at a visible
        instruction: the root ran every thread's eager steps and each transition settles the threads it
        touched. `aids[start:]`: the steps of this transition (a random walk's `aids` holds its whole
        schedule). `first`: the first state's (the progress line counts its threads)."""
        if not self.reduce:
            return
        threads = self.m.threads
        todo = sorted(woken.union(aids[start:]))
        while todo:
            released: set[int] = set()
            for aid in todo:
                if first:
                    doing("eager steps of thread", aid, self.nthreads)
                    pulse()
                if aid < self.nthreads:
                    t = threads[aid]
                    if t.status == RUNNABLE and self.is_local(t):
                        self.eager(t, aids, released)
            woken.update(released)
            # Then the threads touched that became eager meanwhile: a bar.sync arrival is eager only while
            # no lane is inside a collective (`explore.wholebar`), which the others' steps may complete.
            todo = sorted(released) or [
                a for a in sorted(woken.union(aids[start:]))
                if a < self.nthreads and threads[a].status == RUNNABLE and self.is_local(threads[a])]

    def fire(self, agents: list[Thread | Copy], aids: list[int]) -> set[int]:
        """One transition: the agents' steps (several only for a warp in warp mode), then local steps.
        Returns the aids of the agents it made runnable (threads released from a barrier, copies)."""
        before = set(self.m.runnable)
        start = len(aids)
        for a in agents:
            self._pre_check(a, aids)
            self.step(a, aids)
            if isinstance(a, Thread) and a.status == EXITED:
                self._exit_check(a, aids)
        woken = {a.aid for a in set(self.m.runnable).difference(before)}
        self.settle(aids, woken, start)
        for a in agents:  # warpgroup MMA changes the state of a whole warp (sim.machine.wgmma):
            if isinstance(a, Copy) and a.mma is not None:  # a landing leaves its result to each lane
                woken.update(a.mma.lanes)
            elif isinstance(a, Thread) and isinstance(a.wait, ForCopies) and a.wait.which == _WGMMA \
                    and a.warp is not None:  # a wait_group that found them in flight: every lane waits
                woken.update(th.aid for th in a.warp.threads)
        for c in self.m.ctas:
            if c.live == 0:
                self._cta_gone_check(c, aids)
        return woken

    def attempt(self, agents: list[Thread | Copy], aids: list[int]) -> Finding | str | None:
        """`fire`, for a random walk (`explore.walks`): the kernel's finding it raised (its schedule the
        whole of `aids`), the words of what the search cannot go past (the tool's limit, the local-step
        bound), or None."""
        try:
            self.fire(agents, aids)
        except _Found as f:
            return f.finding
        except (Violation, KernelFault) as v:
            return self._violation(v, aids)
        except SimError as e:
            return str(e)
        except _LocalSteps as e:
            return str(e)
        return None

    def _pre_check(self, a: Thread | Copy, aids: list[int]) -> None:
        if isinstance(a, Copy):
            return
        for obj, _ in self.fp.current(a):
            if obj[0] == "live" and isinstance(obj[1], int):
                cta = self.m.ctas[obj[1]]
                if cta.live == 0:
                    x = self.ins(a)
                    raise _Found(self._finding(
                        FindingKind.VIOLATION, REMOTE_EXITED,
                        f"{a.name} runs `{a.func.sites[a.pc].text}` on the shared memory of CTA {cta.name}, "
                        f"which has exited: its shared memory (and any mbarrier in it) is gone",
                        aids + [a.aid], a, x.line, a.func.sites[a.pc].text))

    def _exit_check(self, t: Thread, aids: list[int]) -> None:
        for c in self.m.inflight:
            if c.thread is t and c.kind == "cp.async" and not c.watchers:
                raise _Found(self._finding(
                    FindingKind.VIOLATION, EXIT_INFLIGHT,
                    f"{t.name} exits while its cp.async issued at line {c.site.line} is still in flight "
                    "and no cp.async.wait_group or cp.async.mbarrier.arrive tracks it: the bytes may land "
                    "after anyone could know", aids, t, t.func.sites[max(t.pc - 1, 0)].line,
                    t.func.sites[max(t.pc - 1, 0)].text))

    def _cta_gone_check(self, cta: object, aids: list[int]) -> None:
        for c in self.m.inflight:
            if c.dst_cta is cta or c.bar_cta is cta:
                raise _Found(self._finding(
                    FindingKind.VIOLATION, EXIT_INFLIGHT,
                    f"every thread of CTA {c.dst_cta.name if c.dst_cta else '?'} has exited while "
                    f"{c.name} is still in flight into its shared memory", aids, None, c.site.line,
                    c.site.text))

    def _finding(self, kind: FindingKind, rule: str, message: str, aids: list[int],
                 agent: Thread | Copy | None, line: int | None, text: str | None,
                 section: str | None = None) -> Finding:
        sec = section or checker_rule(rule).section
        return Finding(kind, rule, sec, message, list(aids), self.nthreads,
                       agent.name if agent is not None else None, line, text)

    # -- the search ----------------------------------------------------------------------------------
    def state_key(self, snap: snapshot.Snapshot) -> int:
        """The hash under which a state is remembered (64-bit hash compaction of its canonical key; with
        symmetry, of its canonical image's key)."""
        sym = self.symmetry
        if sym is None or not sym.enabled:
            return hash(snapshot.key(snap))
        h = sym.state_hash(snap)
        self.stats.symmetric_merges = sym.merges
        return h

    def run(self) -> CheckResult:
        """The search: breadth first from the launch's first state, each state expanded by `expand`, until
        the frontier is empty, enough findings are in, or a bound or the tool's limit stops it. Every long
        loop inside honours the bounds and Ctrl-C (`budget.pulse`): a stop before the first state is
        explored answers incomplete (or with the walks' findings) and says where it stopped."""
        with active(self.budget):
            try:
                return self._run()
            except BoundHit as hit:
                return self._stopped_early(hit.bound)

    def _stopped_early(self, bound: str) -> CheckResult:
        """The answer when a bound or Ctrl-C stopped the check before the search's loop could."""
        self.stats.seconds = time.monotonic() - self.stats.started
        self.stopped_by = bound
        covered = self._before_first()
        covered += f" ({detail})" if (detail := self.budget.detail(bound)) else ""
        result = self._result(self.findings, False, covered, self.unsupported)
        result.stopped_by = bound
        return result

    def _before_first(self) -> str:
        """What was covered when a stop came before the first state's expansion ended: where it came."""
        stats = self.stats
        return (f"{self.bound + '; ' if self.bound else ''}stopped before the first state was explored "
                f"({self.budget.doing() or 'preparing the search'}), after {stats.seconds:.1f} s and "
                f"{stats.walks} random walks")

    def _run(self) -> CheckResult:
        opts, stats, m = self.opts, self.stats, self.m
        budget = self.budget
        init_aids: list[int] = []
        try:
            self.settle(init_aids, {t.aid for t in m.threads}, first=True)
        except _Found as f:
            return self._result([f.finding], False, "")
        except (Violation, KernelFault) as v:
            return self._result([self._violation(v, init_aids)], False, "")
        except SimError as e:
            found = self._unsupported(e, init_aids)
            r = self._result([], False, "stopped before the first state", found)
            r.stopped_by = UNSUPPORTED
            return r
        except _LocalSteps as e:
            r = self._result([], False, f"stopped before the first state: {e}")
            r.stopped_by = "local-steps"
            return r
        root = snapshot.save(m, self.tokens)
        self.machine_is = root
        if self.opts.walks > 0:
            self.walker = Walks(self, root, init_aids, self.opts.walks, self.opts.walk_share)
            self._walk(0.0, first=True)
        frontier = Frontier(root, self.state_key(root), init_aids)
        stats.states = 1
        while frontier:
            entry = frontier.pop()
            now = time.monotonic()
            budget.label, budget.of = "", None
            if budget.progress is not None and now - budget.last_progress >= opts.progress_every:
                budget.last_progress = now
                stats.queue = len(frontier)
                budget.progress()
            if self.walker is not None and self.walker.due(now - stats.started):
                try:
                    self._walk(now - stats.started)
                except BoundHit as hit:
                    self.stopped_by = hit.bound
            self.stopped_by = self.stopped_by or budget.exceeded() or (
                FOUND if self.followup is not None and now > self.followup else "")
            if self.stopped_by:
                frontier.put_back(entry)
                break
            try:
                self.expand(entry, frontier)
            except BoundHit as hit:  # a bound hit inside the state's expansion: it counts as unexplored
                self.stopped_by = hit.bound
                frontier.put_back(entry)
            except MemoryError:  # the process's own limit (ulimit -v, the machine) came before --max-memory
                self.stopped_by, self.bound = MAX_MEMORY, OUT_OF_MEMORY
                frontier.put_back(entry, forget=True)  # room for the report: only their number is kept
            if len(self.findings) >= opts.max_findings or self.stopped_by:
                break
        if not self.stopped_by and self.unsupported is None and not frontier:
            try:
                self._livelocks(frontier, root, len(init_aids))
            except BoundHit as hit:
                self.stopped_by = hit.bound
                self.bound = "every state explored; stopped while settling whether a cycle of them ends"
            except SimError as e:  # the tool's own limit: a cycle it cannot settle is no verdict
                self.unsupported, self.stopped_by = self._unsupported(e, []), UNSUPPORTED
        stats.seconds = time.monotonic() - stats.started
        complete = not self.stopped_by
        inside_first = stats.transitions == 0 and budget.doing()  # a stop inside the first state's work
        covered = "" if complete else self._before_first() if inside_first else (
            f"{self.bound + '; ' if self.bound else ''}stopped after "
                                       f"{stats.states} states, {stats.transitions} transitions and "
                                       f"{stats.seconds:.1f} s, at depth {stats.depth}; {len(frontier)} "
                                       "states were left unexplored")
        covered += f" ({detail})" if (detail := budget.detail(self.stopped_by)) else ""
        result = self._result(self.findings, complete, covered, self.unsupported)
        result.stopped_by = self.stopped_by
        return result

    # -- livelocks (`explore.livelock`) ---------------------------------------------------------------
    def _livelocks(self, frontier: Frontier, root: snapshot.Snapshot, skip: int) -> None:
        """The livelocks of the explored graph (`livelock.livelocks`), each a finding; a state's schedule
        is its path from `root` less the first state's `skip` eager steps."""
        doing("looking for cycles no schedule leaves")

        def path(n: int) -> list[int]:
            return frontier.path(n)[skip:]

        # With findings already the verdict is one: the dead ends' runs, which cost seconds on a large
        # kernel, would only add a livelock to them.
        dead_ends = [] if self.findings else self.dead_ends
        for n, region in livelocks(self, self.graph, dead_ends, len(frontier.parents),
                                   lambda n: self._state_at(root, path(n)),
                                   lambda n: self._ends_from(root, path(n)), self.budget.check):
            self._record(self._livelock(frontier.path(n), region))

    def walk_livelock(self, aids: list[int]) -> Finding | None:
        """Where a random walk was cut at its length bound (`explore.walks`), in the state the machine is
        in now, reached by `aids`: a livelock if a random run from it does not end and a settling search
        of at most WALK_SETTLE_STATES states finds no end either (`livelock.settle`)."""
        snap = snapshot.save(self.m, self.tokens)
        self.budget.check()
        with self._untracked():
            if self._run_ends():
                return None
        region = settle(self, snap, WALK_SETTLE_STATES)
        return None if region is None else self._livelock(list(aids), region)

    def _ends_from(self, root: snapshot.Snapshot, aids: list[int]) -> bool:
        """Whether a random run from the state the steps `aids` reach from `root` ends (`_run_ends`). The
        replay and the run go without race tracking (7 times faster on CUTLASS's split-K: 0.6 s, not 4.5,
        for its 188,000 steps): a race on the way is the search's finding already, and neither needs the
        clocks."""
        self.budget.check()
        with self._untracked():
            self._replay(root, aids)
            return self._run_ends()

    @contextmanager
    def _untracked(self) -> Iterator[None]:
        """The machine without race tracking for a while (`sim.races.track` gave it its class); it equals
        no saved state afterwards."""
        m, tracked = self.m, type(self.m)
        m.__class__ = Machine
        try:
            yield
        finally:
            m.__class__ = tracked
            self.machine_is = None

    def _run_ends(self) -> bool:
        """Whether a random run from the machine's state ends within DEAD_END_STEPS steps: every thread
        exited, nothing can move, or a finding."""
        return run(self.m, RandomScheduler(0), max_steps=DEAD_END_STEPS, module=self.module).outcome \
            != Outcome.LIMIT

    def _replay(self, root: snapshot.Snapshot, aids: list[int]) -> None:
        """Put the machine in the state the steps `aids` reach from `root`, one instruction each (as
        `step` ran them)."""
        m = self.m
        snapshot.restore(m, root, self.machine_is)
        self.machine_is = None
        for aid in aids:
            a = m.agent(aid)
            if a is None:
                raise SimError(f"the schedule of a state names agent {aid}, not in the machine there")
            a.code[a.pc](m, a)

    def _state_at(self, root: snapshot.Snapshot, aids: list[int]) -> snapshot.Snapshot:
        """The state the steps `aids` reach from `root` (`_replay`): the same machine as where the search
        met them, though its key may differ in what the key leaves to chance (registers a thread no longer
        reads)."""
        self._replay(root, aids)
        snap = snapshot.save(self.m, self.tokens)
        self.machine_is = snap
        return snap

    def reduced_moves(self, snap: snapshot.Snapshot) -> list[list[Thread | Copy]] | None:
        """A stubborn set's moves at the state (`livelock.Stepper`); None where nothing can move."""
        snapshot.restore(self.m, snap, self.machine_is)
        self.machine_is = snap
        self.fp.failed, self.chain = frozenset(), None
        agents, spinning = self.enabled(snap)
        if not agents:
            return None
        groups = self._groups(agents, spinning)
        chosen: list[int] | range = range(len(groups))
        if self.reduce and len(groups) > 1:
            chosen = self._reduced(groups, agents, spinning, snapshot.thread_states(snap))
        return [groups[i] for i in chosen]

    def move(self, snap: snapshot.Snapshot, group: list[Thread | Copy]
             ) -> tuple[snapshot.Snapshot, list[int]] | None:
        """One move from the state (`livelock.Stepper`); None where it raises a finding or cannot go on."""
        self.budget.check()
        snapshot.restore(self.m, snap, self.machine_is)
        self.machine_is = None
        aids: list[int] = []
        try:
            woken = self.fire(group, aids)
        except (_Found, Violation, KernelFault, SimError, _LocalSteps):
            return None
        new = snapshot.save(self.m, self.tokens, snap, self._dirty(aids, woken),
                            {a for a in aids if a < self.nthreads} | woken)
        self.machine_is = new
        return new, aids

    def _livelock(self, path: list[int], region: Region) -> Finding:
        """The finding of a settled livelock: the schedule into it; the threads that keep stepping there,
        alike ones together, where they stand in the region's first state."""
        m = self.m
        snapshot.restore(m, region.start, self.machine_is)
        self.machine_is = region.start
        layout = Layout.of(m)
        at: dict[tuple[str, int], list[int]] = {}
        for aid in region.looping:
            t = m.threads[aid]
            at.setdefault((t.func.name, t.pc), []).append(aid)
        sites = [(m.threads[ids[0]].func.sites[pc], ids) for (_, pc), ids in at.items()]
        where = "; ".join(f"{layout.threads(ids)} at line {site.line} `{site.text}`"
                          for site, ids in sites[:MAX_NAMED])
        more = f"; and {len(sites) - MAX_NAMED} more places" if len(sites) > MAX_NAMED else ""
        alive = sum(t.status != EXITED for t in m.threads)
        states = f"{region.states} state{'s' if region.states > 1 else ''}"
        message = (f"from here no schedule lets every thread exit, though something can always move: "
                   f"{where}{more} {plural(region.looping, 'keeps', 'keep')} going round the same {states} "
                   f"for ever ({alive} of {self.nthreads} threads alive)")
        first = m.threads[region.looping[0]] if region.looping else None
        site = sites[0][0] if sites else None
        return self._finding(FindingKind.LIVELOCK, LIVELOCK, message, path, first,
                             site.line if site is not None else None, site.text if site is not None else None)

    def _walk(self, elapsed: float, first: bool = False) -> None:
        """Bugs first: the random walks due after `elapsed` seconds (`explore.walks`; before the search,
        `first`, FIRST_WALKS of them within `Options.walk_first` seconds). A walk's finding is recorded, and
        the search then stops `Options.followup` seconds later at most."""
        w = self.walker
        if w is None:
            return
        doing("random walks")
        until = time.monotonic() + (self.opts.walk_first if first else 0.0)
        while w.due(elapsed) or (first and not w.over and w.done.walks < FIRST_WALKS
                                 and time.monotonic() < until):
            f = w.one(self._walk_deadline(until if first else time.monotonic() + max(1.0, elapsed / 4)))
            self.stats.walks, self.stats.walk_transitions = w.done.walks, w.done.transitions
            self.stats.walk_seconds = w.done.seconds
            if f is not None:
                self._record(f)
                if self.followup is None:
                    self.followup = time.monotonic() + self.opts.followup
            if len(self.findings) >= self.opts.max_findings:
                w.over = True
            if not first:
                break
        self.machine_is = None

    def _walk_deadline(self, t: float) -> float:
        """A walk's deadline: `t`, or the check's own when that comes first."""
        if self.opts.timeout is None:
            return t
        return min(t, self.stats.started + self.opts.timeout)

    def expand(self, entry: Entry, frontier: Frontier) -> None:
        """One state's expansion: its enabled agents, reduced to a stubborn set less what sleeps (or, for
        a re-expansion, the agents a smaller sleep set woke), each fired from the state; new states join
        the frontier. A state where nothing can move while threads live is a deadlock. Sets `stopped_by`
        when the state bound, the tool's limit or the local-step limit ends the search."""
        opts, stats, m = self.opts, self.stats, self.m
        snap, depth, node, here, redo = entry
        if here != self.chain:
            # The seeds that failed (`seeds.order`) are remembered along a chain only: elsewhere the
            # set a state takes depends on that state alone, whatever was expanded before it.
            self.fp.failed = frozenset()
        self.chain = None
        snapshot.restore(m, snap, self.machine_is)
        self.machine_is = snap
        agents, spinning = self.enabled(snap)
        if not agents:
            if redo is None and any(t.status != EXITED for t in m.threads):
                self._record(self.deadlock(frontier.path(node), spinning))
            return
        groups = self._groups(agents, spinning)
        order = list(range(len(groups)))
        exp: Expansion | None = None
        run: list[int] = []  # the groups that step after a set of one, in order (`_run_after`)
        if redo is None:
            chosen = order
            if self.reduce and len(groups) > 1:
                chosen = self._reduced(groups, agents, spinning, snapshot.thread_states(snap))
            stats.enabled += len(groups)
            stats.expanded += len(chosen)
            full = len(chosen) == len(groups)
            if self.sleep_sets:
                exp = Expansion(self.fp, groups, frontier.sleep_of(here))
                frontier.expanded_with(here, exp.sleep)
            if len(chosen) == 1 < len(groups) and self.reduce and opts.runs and not opts.warp:
                run = self._run_after(chosen[0], groups, agents, spinning, snapshot.thread_states(snap))
                if exp is not None:  # an agent asleep here would be asleep where it comes: the run ends there
                    run = run[:next((k for k, ri in enumerate(run) if exp.is_asleep(ri)), len(run))]
        else:
            # A re-expansion: the agents a smaller sleep set woke up, from the sleep set that woke them.
            wake, start = redo
            exp = Expansion(self.fp, groups, start)
            chosen = exp.indices(wake)
            full = True  # beyond the stubborn set already: the cycle proviso has nothing to add
        todo = deque(chosen)
        first = True
        src = frontier.node_of(here)  # the state's name in the graph of `explore.livelock`
        if exp is not None and redo is None and all(exp.is_asleep(gi) for gi in chosen):
            self.dead_ends.append(src)  # every move asleep
        while todo:
            gi = todo.popleft()
            if exp is not None and exp.is_asleep(gi):
                stats.sleep_pruned += 1
                continue
            if not first:
                self.budget.check()  # a state of many threads can take longer than the time bound
                snapshot.restore(m, snap, self.machine_is)
                self.machine_is = snap
            first = False
            child_sleep = exp.child(gi) if exp is not None else EMPTY  # footprints of this state
            tail, run = run, []  # the run follows the set of one, not the siblings a cycle proviso adds
            if exp is not None and tail:
                child_sleep = exp.after(child_sleep, tail)
            aids: list[int] = []
            stats.transitions += 1
            if redo is not None:
                stats.sleep_woken += 1
            self.machine_is = None  # the machine is about to leave every saved state
            try:
                woken = self.fire(groups[gi], aids)
                for ri in tail:
                    if groups[ri][0] not in m.runnable:  # cannot happen (`closure.alone_too`): stop the run
                        break
                    stats.transitions += 1
                    woken |= self.fire(groups[ri], aids)
            except _Found as f:
                f.finding.aids = frontier.path(node) + f.finding.aids
                self._record(f.finding)
                self.graph.escape(src)
                continue
            except (Violation, KernelFault) as v:
                g = self._violation(v, aids)
                g.aids = frontier.path(node) + g.aids
                self._record(g)
                self.graph.escape(src)
                continue
            except SimError as e:
                # The tool's limit, not the kernel's bug: the search cannot say anything beyond it.
                self.unsupported = self._unsupported(e, aids)
                self.unsupported.aids = frontier.path(node) + self.unsupported.aids
                self.stopped_by = UNSUPPORTED
                return
            except _LocalSteps as e:
                self.stopped_by, self.bound = "local-steps", str(e)
                return
            new = snapshot.save(m, self.tokens, snap, self._dirty(aids, woken),
                                {a for a in aids if a < self.nthreads} | woken)
            self.machine_is = new
            h = self.state_key(new)
            if len(chosen) == 1:
                self.chain = h
            prev = frontier.depth_of(h)
            if prev is None:
                if stats.states >= opts.max_states:
                    self.stopped_by = MAX_STATES
                    return
                frontier.add(new, h, depth + 1, node, aids, child_sleep)
                self.graph.edge(src, frontier.node_of(h), False)
                stats.states += 1
                stats.depth = max(stats.depth, depth + 1)
                continue
            self.graph.edge(src, frontier.node_of(h), prev <= depth)
            if exp is not None:
                frontier.reached_again(new, h, depth + 1, node, aids, child_sleep)
            if not full and prev <= depth:
                # Cycle proviso: this reduced expansion may close a cycle; expand the state fully.
                full = True
                stats.full_expansions += 1
                todo.extend(i for i in order if i not in chosen)

    def _dirty(self, aids: list[int], woken: set[int]) -> set[int]:
        """The threads whose state a transition may have changed: those that stepped, those it released
        (only a thread's own step blocks it, moves its pc or writes its registers, but for a barrier or
        collective that releases it), and the issuers of copies (a copy's status is part of its issuer's
        state)."""
        n = self.nthreads
        dirty = {a for a in aids if a < n}
        dirty.update(a for a in woken if a < n)
        m = self.m
        for a in aids:
            if a >= n:
                found = m.agent(a)
                if isinstance(found, Copy):
                    dirty.add(found.thread.aid)
        for c in m.inflight:
            dirty.add(c.thread.aid)
        return dirty

    def _record(self, f: Finding) -> None:
        """Keep one finding per (kind, rule, line; a deadlock's line aside): the search's over a random
        walk's (breadth first, its schedule is a shortest one), else the first."""
        k = (f.kind, f.rule, None if f.kind == FindingKind.DEADLOCK else f.line)
        i = self.seen.get(k)
        if i is None:
            self.seen[k] = len(self.findings)
            self.findings.append(f)
        elif self.findings[i].found_by != SEARCH and f.found_by == SEARCH:
            self.findings[i] = f

    def _groups(self, agents: list[Thread | Copy],
                spinning: dict[int, Spin]) -> list[list[Thread | Copy]]:
        if not self.opts.warp:
            return [[a] for a in agents]
        # Warp granularity: lanes of one warp at the same pc, all enabled, step as one transition.
        groups: dict[tuple[int, int, int], list[Thread | Copy]] = {}
        out: list[list[Thread | Copy]] = []
        for a in agents:
            if isinstance(a, Thread) and a.warp is not None:
                k = (a.cta.index, a.aid // 32, a.pc)
                if k in groups:
                    groups[k].append(a)
                    continue
                groups[k] = [a]
                out.append(groups[k])
            else:
                out.append([a])
        return out

    def _reduced(self, groups: list[list[Thread | Copy]], agents: list[Thread | Copy],
                 spinning: dict[int, Spin], entries: list[snapshot.ThreadState]) -> list[int]:
        """The groups of a stubborn set; `entries`: the threads' entries in the snapshot the machine
        equals now."""
        everyone, pos, group_of, blocked_on = self._closure_view(groups, spinning)
        enabled = dict.fromkeys(group_of, True)
        chosen = stubborn(self.m, self.fp, everyone, enabled, blocked_on, check=self.budget.check,
                          entries=entries)
        return sorted({group_of[i] for i in chosen}) or list(range(len(groups)))

    def _closure_view(self, groups: list[list[Thread | Copy]], spinning: dict[int, Spin]
                      ) -> tuple[list[Thread | Copy], dict[int, int], dict[int, int], Spinning]:
        """What the closure reads: every live agent (threads, then copies in flight), each one's index there
        by id, every enabled agent's group by that index, and the spinning threads' barriers by it."""
        m = self.m
        everyone: list[Thread | Copy] = [t for t in m.threads if t.status != EXITED]
        everyone += m.inflight
        pos = {id(a): i for i, a in enumerate(everyone)}
        group_of = {pos[id(a)]: gi for gi, g in enumerate(groups) for a in g}
        blocked_on = {pos[id(m.threads[aid])]: mb for aid, mb in spinning.items()}
        return everyone, pos, group_of, blocked_on

    def _run_after(self, first: int, groups: list[list[Thread | Copy]], agents: list[Thread | Copy],
                   spinning: dict[int, Spin], entries: list[snapshot.ThreadState]) -> list[int]:
        """The groups (one agent each: thread granularity) whose sets of one would follow group `first`'s
        one by one (`closure.alone_too`): the transition takes them all, without the states between."""
        everyone, pos, group_of, blocked_on = self._closure_view(groups, spinning)
        enabled = dict.fromkeys(group_of, True)
        found = alone_too(self.m, self.fp, everyone, enabled, blocked_on, pos[id(groups[first][0])],
                          check=self.budget.check, entries=entries)
        return [group_of[i] for i in found]

    def _violation(self, v: Violation | KernelFault, aids: list[int]) -> Finding:
        """A core Violation, a race or a fault of the kernel: the kernel's bug, at the step that raised."""
        if isinstance(v, Race):
            f = self._at(FindingKind.RACE, v.rule, v.section, str(v), aids)
            f.accesses, f.edge = v.accesses, v.edge
            if f.agent is None and v.accesses:  # a copy's landing raised: it has left the machine
                last = v.accesses[-1]
                f.agent, f.line, f.text = last.agent, last.line, last.instruction
            return f
        return self._at(FindingKind.VIOLATION, v.rule, v.section, str(v), aids)

    def _unsupported(self, e: SimError, aids: list[int]) -> Finding:
        return self._at(FindingKind.UNSUPPORTED, UNSUPPORTED, "", str(e), aids)

    def _at(self, kind: FindingKind, rule: str, section: str, message: str, aids: list[int]) -> Finding:
        a = self.m.agent(aids[-1]) if aids else None
        line = text = None
        if isinstance(a, Thread):
            pc = a.pc if a.status != EXITED else max(a.pc - 1, 0)  # exit sets status before it raises
            line, text = a.func.sites[pc].line, a.func.sites[pc].text
        elif isinstance(a, Copy):
            line, text = a.site.line, a.site.text
        return Finding(kind, rule, section, message, list(aids), self.nthreads,
                       a.name if a is not None else None, line, text)

    def deadlock(self, aids: list[int], spinning: dict[int, Spin]) -> Finding:
        with shielded():  # a deadlock found is reported whatever the bounds: its explanation is not cut
            waiters, arrivers, starved, message = explain(self.m, self.codes, self.fp, spinning)
        section = checker_rule(DEADLOCK).section
        f = Finding(FindingKind.DEADLOCK, DEADLOCK, section, message, aids, self.nthreads)
        f.waiters, f.arrivers, f.starved, f.layout = waiters, arrivers, starved, Layout.of(self.m)
        if waiters:  # the finding's place: a thread that waits for the headline's barrier
            first = next((w for w in waiters if starved and w.thread in starved[0].waiters), waiters[0])
            f.line, f.text, f.agent = first.line, first.text, first.name
        return f

    def _result(self, findings: list[Finding], complete: bool, covered: str,
                unsupported: Finding | None = None) -> CheckResult:
        self.stats.seconds = time.monotonic() - self.stats.started
        if findings:
            verdict = Verdict.FINDING
        elif unsupported is not None:
            verdict = Verdict.UNSUPPORTED
        elif complete:
            verdict = Verdict.VERIFIED
        else:
            verdict = Verdict.INCOMPLETE
        mode = ("warp-granular (a converged warp steps as one: weaker than thread-granular)" if self.opts.warp
                else "thread-granular")
        mode += ", reductions on" if self.reduce else ", reductions off"
        mode += ", races tracked" if self.opts.races else ", races not tracked"
        if self.symmetry is not None:
            mode += ", " + self.symmetry.describe()
        lines = sorted({line for c in self.codes.values() for line in data_branches(c)})
        return CheckResult(verdict, findings, self.stats, covered, mode, unsupported=unsupported,
                           data_branches=tuple(lines))


def check(module: ast.Module, kernel: str | None = None, *, grid: int | tuple[int, ...] = 1,
          block: int | tuple[int, ...] = 1, cluster: int | tuple[int, ...] | None = None,
          args: dict[str | int, object] | None = None, options: Options | None = None) -> CheckResult:
    """Explore every interleaving of the launch; see `CheckResult`."""
    from mbarrier.sim.launch import launch
    m = launch(module, kernel, grid=grid, block=block, cluster=cluster, args=args)  # type: ignore[arg-type]
    pick_kernel(module, kernel)
    return check_machine(m, module, options)


def bounds(opts: Options, stats: Stats) -> Budget:
    """The check's bounds (`Options.timeout` counted from `stats.started`, `max_memory`, `stop`) and its
    progress: `Options.progress` every `progress_every` seconds, with what long work is doing then."""
    budget = Budget(None if opts.timeout is None else stats.started + opts.timeout, opts.max_memory,
                    opts.stop, every=opts.progress_every)
    show = opts.progress
    if show is not None:
        def progress() -> None:
            stats.seconds = time.monotonic() - stats.started
            stats.doing = budget.doing()
            show(stats)
        budget.progress = progress
    return budget


# Python's cycle collector during a check (`_fewer_collections`): a young collection every 50,000
# allocations, not 700. A search allocates container after container (plans, footprints, snapshot entries)
# and frees nearly all of them by reference counting; with the default thresholds the collector took a
# fifth of the time (CUTLASS cp.async WS, 30 s, walks off: 6,657 moves; 7,563 with these; 8,833 with the
# collector off; the same peak RSS, 0.41 GB, all three: docs/performance.md).
COLLECT_EVERY = (50_000, 20, 1_000)


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """The collector's thresholds at COLLECT_EVERY while a check runs, the caller's again afterwards."""
    was = gc.get_threshold()
    gc.set_threshold(*COLLECT_EVERY)
    try:
        yield
    finally:
        gc.set_threshold(*was)


def check_machine(m: Machine, module: ast.Module, options: Options | None = None) -> CheckResult:
    """Check an already launched machine of `module` (races: switched on here unless options say not).
    The bounds count from here: analysing the code (seconds on a large kernel) is inside them."""
    with _fewer_collections():
        return _check_machine(m, module, options)


def _check_machine(m: Machine, module: ast.Module, options: Options | None) -> CheckResult:
    opts = options or Options()
    if opts.races:
        track(m)
    stats = Stats()
    budget = bounds(opts, stats)
    try:
        with active(budget):
            ex = Explorer(m, module, opts, stats, budget)
    except BoundHit as hit:
        stats.seconds = time.monotonic() - stats.started
        covered = (f"stopped while analysing the kernel's code, after {stats.seconds:.1f} s; the search did "
                   "not start")
        covered += f" ({detail})" if (detail := budget.detail(hit.bound)) else ""
        return CheckResult(Verdict.INCOMPLETE, [], stats, covered, stopped_by=hit.bound)
    return ex.run()


__all__ = ["CheckResult", "Finding", "Options", "Stats", "Waiter", "check", "check_machine", "DONE"]
