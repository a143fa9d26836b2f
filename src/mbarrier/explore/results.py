"""What a check is asked and what it answers: its options, its statistics, its verdict and findings
(each with the waiters of a deadlock). The search (`explore.check`), the deadlock explanation
(`explore.deadlock`), the reports and the command line share these types; none of them imports the
search to read a result."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from mbarrier.core.barrier import Barrier
from mbarrier.explore.schedule import encode
from mbarrier.explore.stuck import Starved
from mbarrier.explore.who import Layout
from mbarrier.sim.race_report import RaceAccess

DEFAULT_MAX_STATES = 2_000_000
SEARCH = "search"   # Finding.found_by of the exhaustive search's findings


class Verdict(StrEnum):
    """A check's answer (its JSON and text spell the value)."""

    VERIFIED = "verified"      # every interleaving explored, nothing found
    FINDING = "finding"        # at least one finding (whatever was left unexplored)
    INCOMPLETE = "incomplete"  # a bound was hit before the search ended, nothing found
    UNSUPPORTED = "unsupported"  # an instruction the simulator does not support was reached, nothing found


class FindingKind(StrEnum):
    DEADLOCK = "deadlock"
    LIVELOCK = "livelock"      # a hang where threads keep moving (explore.livelock)
    VIOLATION = "violation"    # undefined behaviour of the core's rules, or a checker rule
    RACE = "race"
    UNSUPPORTED = "unsupported"  # not a finding: the kind of CheckResult.unsupported (the tool's limit)


@dataclass
class Options:
    max_states: int = DEFAULT_MAX_STATES
    timeout: float | None = None     # seconds from the start of the search
    max_memory: int | None = None    # bytes of resident memory (explore.budget)
    reductions: bool = True          # eager local steps + stubborn sets
    warp: bool = False               # converged warps step together (weaker guarantee)
    sleep: bool = True               # with reductions: sleep sets (explore.sleep)
    runs: bool = True                # with reductions: runs of sets of one as one step (closure.alone_too)
    max_findings: int = 8
    progress: Callable[[Stats], None] | None = None
    progress_every: float = 0.5
    stop: Callable[[], bool] | None = None  # polled between states: True ends the search (Ctrl-C)
    races: bool = True               # happens-before tracking and race findings (sim.races)
    symmetry: bool = False           # with reductions: interchangeable threads (explore.symmetry)
    # Bugs first (explore.walks): up to `walks` random walks, for `walk_first` seconds before the search
    # and then beside it, a `walk_share` of the time spent so far; when one finds something, the search
    # goes on for `followup` seconds more at most, for shorter schedules, then stops (stopped_by "found").
    walks: int = 10_000
    walk_first: float = 1.0
    walk_share: float = 0.25
    followup: float = 10.0


@dataclass
class Stats:
    states: int = 0
    transitions: int = 0
    local_steps: int = 0            # instructions run eagerly inside transitions
    enabled: int = 0                # enabled agents summed over expanded states
    expanded: int = 0               # of those, the ones explored (the rest were pruned by reduction)
    full_expansions: int = 0        # states the cycle proviso expanded fully
    sleep_pruned: int = 0           # moves of the stubborn sets not taken: asleep (explore.sleep)
    sleep_woken: int = 0            # moves taken because a state was reached again with a smaller sleep set
    symmetric_merges: int = 0       # states equal to an earlier one only up to symmetry and dead registers
    walks: int = 0                  # random walks before the search (explore.walks)
    walk_transitions: int = 0       # their transitions, all together
    walk_seconds: float = 0.0
    depth: int = 0
    queue: int = 0                  # states waiting to be expanded, as of the last progress report
    doing: str = ""                 # what long work of one state was doing at the last progress report
    seconds: float = 0.0
    started: float = field(default_factory=time.monotonic)

    @property
    def pruned(self) -> int:
        return self.enabled - self.expanded


@dataclass
class Waiter:
    """A thread that waits in a deadlock, and what for."""

    thread: int
    name: str
    line: int
    text: str
    what: str                      # "mbarrier", "bar", "cluster", "warp", "cp.wait", "flag", "running"
    barrier: str | None = None     # symbol
    address: str | None = None
    cta: int | None = None           # the index of the barrier's CTA
    wants: str | None = None       # "parity 0", "the phase of token ..."
    state: Barrier | None = None
    detail: str = ""               # why, in words (`explore.stuck`: the same words `mbarrier run` prints)


@dataclass
class Finding:
    kind: FindingKind
    rule: str
    section: str
    message: str
    aids: list[int]
    nthreads: int
    agent: str | None = None
    line: int | None = None
    text: str | None = None
    waiters: list[Waiter] = field(default_factory=list)
    arrivers: dict[str, list[str]] = field(default_factory=dict)
    accesses: tuple[RaceAccess, ...] = ()   # a race: its two accesses, earlier first
    edge: str | None = None                 # a race: the happens-before edge that would order them
    found_by: str = SEARCH                  # SEARCH, or the random walk that found it (explore.walks)
    starved: list[Starved] = field(default_factory=list)  # a deadlock: its starved mbarrier phases
    layout: Layout | None = None            # a deadlock: the launch's CTAs and warps, to name threads

    @property
    def schedule(self) -> str:
        """The schedule string that replays this finding with `mbarrier run --schedule`."""
        return encode([x for aid in self.aids for x in (aid, 1)], self.nthreads)


@dataclass
class CheckResult:
    verdict: Verdict
    findings: list[Finding]
    stats: Stats
    covered: str = ""
    mode: str = ""
    # What ended a search before it was complete: "max-states", "timeout", "max-memory" (the option that
    # sets the bound), "interrupt", "local-steps" (a thread ran explore.check.LOCAL_LOOP_LIMIT local
    # instructions in one go), "unsupported", "found" (random walks had found bugs: the search ran
    # `Options.followup` seconds more for shorter schedules).
    stopped_by: str = ""
    # The first instruction the simulator could not run (kind and rule "unsupported", with its line and
    # the schedule that reaches it): the search stops there. The verdict is "unsupported" unless findings
    # (true ones) were made before.
    unsupported: Finding | None = None
    # The lines of guarded instructions (branches) whose guard may depend on memory contents the kernel
    # loaded (`explore.inputs`): the verdict holds for this launch's contents.
    data_branches: tuple[int, ...] = ()
