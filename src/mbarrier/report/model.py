"""The results of lint, run and check as typed data: what `--json` prints (schema version
`SCHEMA_VERSION`, `report/schemas/`), what the Python API (`mbarrier.api`) returns, and what the SARIF,
GitHub, Perfetto and SVG writers read. A field's name is its JSON key; `to_json` writes one.

Builders (`lint_report`, `run_report`, `check_report`) turn the front end's and the explorer's own
results into these, with the file, the kernel and the launch they are about."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mbarrier import __version__
from mbarrier.core.barrier import Barrier
from mbarrier.explore.results import CheckResult, FindingKind, Verdict
from mbarrier.explore.results import Finding as ExploreFinding
from mbarrier.explore.results import Waiter as ExploreWaiter
from mbarrier.explore.run import Outcome, RunResult
from mbarrier.explore.schedule import Fingerprint, stamp
from mbarrier.explore.stuck import Starved as ExploreStarved
from mbarrier.explore.stuck import describe_barrier
from mbarrier.explore.who import Layout
from mbarrier.ptx.diagnostics import Diagnostic as PtxDiagnostic
from mbarrier.ptx.diagnostics import Severity
from mbarrier.sim.machine import EXITED
from mbarrier.sim.race_report import RaceAccess

#: The version of the JSON documents (`schema_version`); docs/cli.md keeps the compatibility notes.
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Tool:
    name: str = "mbarrier"
    version: str = __version__


# -- lint -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Diagnostic:
    """One lint finding at line:column of its file (`rule`: a stable id, docs/lint.md)."""

    severity: Severity          # "error", "warning", or "fatal" (a syntax error: the file's judgement stops)
    line: int
    column: int
    message: str
    rule: str


@dataclass(frozen=True)
class Instructions:
    """How many instructions lint judged as ptxas does, and how many (by opcode) it left alone beyond
    resolving their names."""

    judged: int
    not_judged: int
    not_judged_by_opcode: dict[str, int]


@dataclass(frozen=True)
class LintFile:
    file: str
    diagnostics: tuple[Diagnostic, ...]
    instructions: Instructions | None = None   # null: the file did not parse, or could not be read
    error: str | None = None    # the file could not be read (then there are no diagnostics)


@dataclass(frozen=True)
class LintSummary:
    files: int                  # files read
    errors: int                 # diagnostics that are not warnings (fatal included)
    warnings: int


@dataclass(frozen=True)
class LintReport:
    files: tuple[LintFile, ...]
    target: str | None          # --target, or null: each module's own .target
    strict: bool
    summary: LintSummary
    schema_version: int = SCHEMA_VERSION
    tool: Tool = field(default_factory=Tool)
    command: Literal["lint"] = "lint"

    @property
    def failed(self) -> bool:
        """A finding: an error, a syntax error, or (strict) a warning."""
        return any(d.severity != "warning" for f in self.files for d in f.diagnostics)


def lint_file(path: str, diagnostics: Sequence[PtxDiagnostic],
              coverage: tuple[int, Mapping[str, int]] | None = None) -> LintFile:
    """One file's result; `coverage`: the instructions judged and, by opcode, those left alone."""
    instructions = None if coverage is None else Instructions(
        coverage[0], sum(coverage[1].values()), dict(coverage[1]))
    return LintFile(path, tuple(Diagnostic(d.severity, d.line, d.column, d.message, d.rule)
                                for d in diagnostics), instructions)


def lint_report(files: Sequence[LintFile], target: str | None, strict: bool) -> LintReport:
    read = [f for f in files if f.error is None]
    diags = [d for f in read for d in f.diagnostics]
    summary = LintSummary(len(read), sum(d.severity != "warning" for d in diags),
                          sum(d.severity == "warning" for d in diags))
    return LintReport(tuple(files), target, strict, summary)


# -- the launch -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Argument:
    """A kernel argument as given: an integer `value`, or a zero-filled buffer of `buffer` bytes."""

    param: str
    value: int | None = None
    buffer: int | None = None


@dataclass(frozen=True)
class ParamBytes:
    """A kernel parameter as the launch laid it out in the parameter memory: its `offset` and `size`,
    its `bytes` (hexadecimal, little-endian as the kernel reads them) and their `source`: `arg` (an
    `--arg` option), `launch` (the launch file) or `default` (a zero-filled buffer's address)."""

    param: str
    offset: int
    size: int
    source: str
    bytes: str


@dataclass(frozen=True)
class LaunchInfo:
    """The launch as the machine has it (shapes X, Y, Z; a cluster from .reqnctapercluster counts)."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int]
    threads: int
    args: tuple[Argument, ...]
    dynamic_shared: int | None   # bytes given; null: the default (48 KiB when the kernel has extern shared)
    params: tuple[ParamBytes, ...] = ()   # every parameter as laid out, in declaration order


# -- findings ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Access:
    """One of a race's two accesses."""

    thread: int                 # the thread that made it, or that issued the copy that made it
    agent: str                  # in words: "thread 2 (cta 1, tid 0)", "cp.async.bulk c4 (issued by ...)"
    copy: int | None            # the copy engine (schedules name it c<copy>) when a copy made it
    line: int
    instruction: str
    operation: str              # "read", "write", "atomic write", "the complete-tx of ...", ...
    space: str                  # "shared" or "global"
    cta: int | None             # shared: the index of the CTA whose shared memory it is
    address: int                # shared: the offset in that CTA's shared memory; global: the address
    size: int                   # bytes


@dataclass(frozen=True)
class BarrierState:
    """An mbarrier object's state (null fields: never initialized)."""

    valid: bool
    phase: int                  # the full phase number (the hardware keeps its parity)
    pending: int                # arrivals still pending in the current phase
    expected: int               # arrivals each phase expects
    tx: int                     # transaction bytes outstanding (negative: delivered ahead of expect_tx)


def _state(b: Barrier | None) -> BarrierState | None:
    return None if b is None else BarrierState(b.valid, b.phase, b.pending, b.expected, b.tx)


@dataclass(frozen=True)
class Waiter:
    """A thread that waits forever in a deadlock, and what for."""

    thread: int
    line: int
    instruction: str
    waits_on: str               # "mbarrier", "bar", "cluster", "warp", "cp.wait", "flag", "running"
    reason: str                 # in words (the words `mbarrier run` prints for a stuck thread)
    barrier: str | None         # an mbarrier's symbol
    address: int | None         # its offset in the shared memory of its CTA
    cta: int | None             # that CTA's index in the grid (as an access's `cta`)
    wants: str | None           # "parity 0", "the phase of token ..."
    state: str                  # the barrier's state in words (or the reason, for other waits)
    barrier_state: BarrierState | None


@dataclass(frozen=True)
class Starved:
    """An mbarrier phase that threads wait for where nothing can move (a deadlock, a stuck run): it can no
    longer complete. `missing`: "bytes" (every expected arrival came, transaction bytes did not),
    "arrivals" (some came, not all), "no arrival", "invalid" (not an initialized object). Or, `waits_on`
    "bar", a bar.sync barrier that counted some of the threads it expects."""

    waits_on: str               # "mbarrier" or "bar"
    barrier: str                # its symbol ("bar.sync N" for a bar.sync barrier)
    address: int                # its offset in the shared memory of its CTA (a bar.sync barrier: N)
    cta: int                    # that CTA's index in the grid (as an access's `cta`)
    missing: str
    phase: int                  # the phase it is in: the one its waiters wait for
    expected: int               # arrivals each phase expects
    arrived: int                # arrivals this phase counted
    pending: int                # arrivals still pending
    tx: int                     # transaction bytes outstanding
    landing: int                # bytes the copies in flight would still complete on it
    waiters: tuple[int, ...]    # the threads that wait for it
    summary: str                # all of it in words (a deadlock's headline names the first)


def _starved(s: ExploreStarved, layout: Layout) -> Starved:
    return Starved(s.waits_on, s.barrier, s.address, s.cta, s.short, s.phase, s.expected, s.arrived,
                   s.pending, s.tx, s.landing, s.waiters, s.words(layout))


@dataclass(frozen=True)
class Finding:
    """A deadlock, an undefined behaviour (`violation`) or a data race, with the schedule that reaches
    it; or, as `unsupported` of a run or a check, the instruction the simulator stopped at."""

    kind: FindingKind
    rule: str
    section: str
    message: str
    line: int | None            # where it happened (a deadlock: the first waiter's line)
    instruction: str | None
    agent: str | None
    schedule: str               # `mbarrier run --schedule S` replays it (stamped with the launch)
    steps: int                  # the schedule's length in steps
    accesses: tuple[Access, ...] = ()          # a race: its two accesses, earlier first
    missing_edge: str | None = None            # a race: the happens-before edge that would order them
    waiters: tuple[Waiter, ...] = ()           # a deadlock: each thread that waits forever
    could_arrive: dict[str, list[str]] = field(default_factory=dict)  # a deadlock: per barrier, who
    found_by: str | None = None                # check: "search", or the random walk that found it
    starved: tuple[Starved, ...] = ()          # a deadlock: the mbarrier phases it starves, likeliest first


def _waiter(w: ExploreWaiter) -> Waiter:
    address = int(w.address, 0) if w.address else None
    state = describe_barrier(w.state) if w.what == "mbarrier" else w.detail
    return Waiter(w.thread, w.line, w.text, w.what, w.detail, w.barrier, address, w.cta, w.wants, state,
                  _state(w.state) if w.what == "mbarrier" else None)


def _access(a: RaceAccess) -> Access:
    return Access(a.thread, a.agent, a.copy, a.line, a.instruction, a.operation, a.space, a.cta, a.address,
                  a.size)


def finding_of(f: ExploreFinding, fingerprint: Fingerprint | None = None) -> Finding:
    """A check's finding; its schedule stamped with `fingerprint` when given."""
    sched = f.schedule if fingerprint is None else stamp(fingerprint, f.schedule)
    return Finding(f.kind, f.rule, f.section, f.message, f.line, f.text, f.agent, sched,
                   len(f.aids), tuple(_access(a) for a in f.accesses), f.edge,
                   tuple(_waiter(w) for w in f.waiters), {k: list(v) for k, v in f.arrivers.items()},
                   f.found_by, tuple(_starved(x, f.layout or Layout(0, ())) for x in f.starved))


# -- check ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckStats:
    states: int
    transitions: int
    seconds: float
    sleep_pruned: int
    sleep_woken: int
    depth: int
    local_steps: int
    enabled: int
    pruned: int
    full_expansions: int
    symmetric_merges: int
    walks: int
    walk_transitions: int
    walk_seconds: float


@dataclass(frozen=True)
class CheckReport:
    file: str
    launch: LaunchInfo | None   # null only when a bound stopped the command before the launch
    fingerprint: str | None     # the launch's fingerprint, as schedules carry it
    verdict: Verdict
    findings: tuple[Finding, ...]
    stats: CheckStats
    mode: str                   # what was explored, in words
    covered: str                # incomplete: what was covered, in words ("" when complete)
    stopped_by: str | None      # why a search stopped early: "max-states", "timeout", "max-memory", ...
    unsupported: Finding | None
    data_branches: tuple[int, ...] = ()   # lines whose branch may depend on memory contents
    schema_version: int = SCHEMA_VERSION
    tool: Tool = field(default_factory=Tool)
    command: Literal["check"] = "check"

    @property
    def verified(self) -> bool:
        return self.verdict == Verdict.VERIFIED


def check_report(r: CheckResult, file: str, launch: LaunchInfo | None,
                 fingerprint: Fingerprint | None) -> CheckReport:
    s = r.stats
    stats = CheckStats(s.states, s.transitions, round(s.seconds, 3), s.sleep_pruned, s.sleep_woken, s.depth,
                       s.local_steps, s.enabled, s.pruned, s.full_expansions, s.symmetric_merges, s.walks,
                       s.walk_transitions, round(s.walk_seconds, 3))
    return CheckReport(file, launch, None if fingerprint is None else str(fingerprint), r.verdict,
                       tuple(finding_of(f, fingerprint) for f in r.findings), stats, r.mode, r.covered,
                       r.stopped_by or None,
                       None if r.unsupported is None else finding_of(r.unsupported, fingerprint),
                       r.data_branches)


# -- run --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StuckThread:
    """A thread that has not exited at the end of a run, and why it cannot move."""

    thread: int
    line: int
    instruction: str
    reason: str
    barrier: str | None
    state: str | None


@dataclass(frozen=True)
class BarrierAtEnd:
    cta: int
    address: int                # its offset in the CTA's shared memory
    name: str
    state: BarrierState


@dataclass(frozen=True)
class Printed:
    """One printf of the kernel, in the order the schedule produced them."""

    thread: int
    text: str


@dataclass(frozen=True)
class Scheduler:
    kind: Literal["random", "replay"]
    seed: int | None = None
    burst: int | None = None


@dataclass(frozen=True)
class RunReport:
    file: str
    launch: LaunchInfo
    fingerprint: str
    scheduler: Scheduler
    races_tracked: bool
    outcome: Outcome
    steps: int
    exited: int                 # threads that exited
    message: str
    finding: Finding | None     # a violation or a race: where, which rule, the schedule to it
    unsupported: Finding | None # the instruction the simulator could not run
    stopped_by: str | None      # outcome "limit": "max-steps", "timeout" or "max-memory"
    stuck: tuple[StuckThread, ...]
    barriers: tuple[BarrierAtEnd, ...]
    output: tuple[Printed, ...]
    dumps: dict[str, list[int]]  # --dump NAME: the first 32-bit words of the buffer
    notes: tuple[str, ...]      # where a replayed schedule and the run parted
    schedule: str               # the whole run's schedule, stamped with the launch
    starved: tuple[Starved, ...] = ()  # outcome "stuck": the mbarrier phases it starves, likeliest first
    schema_version: int = SCHEMA_VERSION
    tool: Tool = field(default_factory=Tool)
    command: Literal["run"] = "run"


def run_report(r: RunResult, file: str, launch: LaunchInfo, fingerprint: Fingerprint, scheduler: Scheduler,
               races: bool, dumps: Mapping[str, list[int]] | None = None,
               notes: Sequence[str] = ()) -> RunReport:
    m = r.machine
    problem = None
    if r.outcome in (Outcome.VIOLATION, Outcome.RACE, Outcome.UNSUPPORTED):
        kind = FindingKind(r.outcome.value)
        problem = Finding(kind, r.rule or kind.value, r.section or "", r.message,
                          r.site.line if r.site else None, r.site.text if r.site else None, r.agent,
                          stamp(fingerprint, r.schedule), r.steps, tuple(_access(a) for a in r.accesses),
                          r.edge)
    stuck = tuple(StuckThread(s.thread, s.site.line, s.site.text, s.reason, s.barrier, s.state)
                  for s in r.stuck)
    barriers = tuple(BarrierAtEnd(cta.index, off, b.name or f"{off:#x}", BarrierState(
        b.valid, b.phase, b.pending, b.expected, b.tx))
        for cta in m.ctas for off, b in sorted(cta.barriers.items()))
    return RunReport(file, launch, str(fingerprint), scheduler, races, r.outcome, r.steps,
                     sum(t.status == EXITED for t in m.threads), r.message,
                     problem if r.outcome != Outcome.UNSUPPORTED else None,
                     problem if r.outcome == Outcome.UNSUPPORTED else None, r.stopped_by or None,
                     stuck, barriers, tuple(Printed(aid, text) for aid, text in m.output),
                     dict(dumps or {}), tuple(notes), stamp(fingerprint, r.schedule),
                     tuple(_starved(x, Layout.of(m)) for x in r.starved))


# -- JSON -------------------------------------------------------------------------------------------
Report = LintReport | RunReport | CheckReport


def to_json(report: Report) -> dict[str, Any]:
    """The JSON document of a report: its fields by name, schema_version, tool and command first."""
    body = dataclasses.asdict(report)
    head = {k: body.pop(k) for k in ("schema_version", "tool", "command")}
    return head | body
