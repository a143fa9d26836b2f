"""Run a launched machine under a scheduler to its end: every thread exited, stuck, a violation (a
core Violation or a kernel fault: the kernel's bug), a race, an instruction the simulator does not
support, or the step limit.

"Stuck" means no agent can run and some thread has not exited: each such thread waits at a bar.sync,
a cluster barrier, a warp collective, or spins on an mbarrier whose state no one can change any more
(see `sim.machine` for how spinning is recognised). Given the module, a run is stuck too where every agent
that can run is a thread spinning on a flag in memory (`explore.spin.Spins.flag`: its steps change
nothing, so nothing can write the flags any more), asked between two steps every MONITOR_EVERY steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from mbarrier.core.violations import Violation
from mbarrier.explore.budget import MAX_STEPS, Budget
from mbarrier.explore.code import analyse_module
from mbarrier.explore.schedule import ScheduleError, agent_name, encode
from mbarrier.explore.schedulers import RandomScheduler, Scheduler
from mbarrier.explore.spin import FlagSpin, Spins
from mbarrier.explore.stuck import Ahead, Starved, blocked, cause, describe_barrier, starved
from mbarrier.explore.who import Layout
from mbarrier.ptx import ast
from mbarrier.sim.compile import Site
from mbarrier.sim.errors import KernelFault, SimError
from mbarrier.sim.machine import EXITED, BarrierEvent, Copy, Machine, Thread, short_state
from mbarrier.sim.race_report import Race, RaceAccess

DEFAULT_MAX_STEPS = 20_000_000
# Steps between two calls of run's `monitor` (progress, Ctrl-C): about a hundredth of a second.
MONITOR_EVERY = 1 << 13


class Outcome(StrEnum):
    """How a run ended (its text and JSON spell the value)."""

    EXITED = "exited"            # every thread exited
    STUCK = "stuck"              # nothing can run, some thread has not exited
    VIOLATION = "violation"      # undefined behaviour (a core rule) or the kernel's own fault (spec.checks)
    RACE = "race"                # a data race (race tracking on)
    UNSUPPORTED = "unsupported"  # an instruction the simulator does not support (the tool's limit)
    ERROR = "error"              # the run could not start (a schedule naming no agent): no step at fault
    LIMIT = "limit"              # the step limit
    INTERRUPTED = "interrupted"  # stopped by its monitor (Ctrl-C)


@dataclass(frozen=True)
class Stuck:
    """A thread that can never move again, and why."""

    thread: int
    name: str
    site: Site
    reason: str
    barrier: str | None = None
    state: str | None = None


@dataclass(frozen=True)
class TraceStep:
    step: int
    agent: str
    site: Site
    events: tuple[BarrierEvent, ...]


@dataclass
class RunResult:
    outcome: Outcome
    steps: int
    runs: list[int] = field(repr=False)
    machine: Machine = field(repr=False)
    message: str = ""
    rule: str | None = None
    section: str | None = None
    agent: str | None = None
    site: Site | None = None
    stuck: list[Stuck] = field(default_factory=list)
    trace: list[TraceStep] | None = None
    stopped_by: str = ""          # outcome "limit": the bound hit, "max-steps", "timeout" or "max-memory"
    accesses: tuple[RaceAccess, ...] = ()   # outcome "race": its two accesses, earlier first
    edge: str | None = None                 # outcome "race": the happens-before edge that would order them
    starved: list[Starved] = field(default_factory=list)  # outcome "stuck": the starved mbarrier phases

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.EXITED

    @property
    def schedule(self) -> str:
        """The schedule string that replays this run (see `explore.schedule`)."""
        return encode(self.runs, len(self.machine.threads))


def _site(a: Thread | Copy) -> Site:
    return a.site if isinstance(a, Copy) else a.func.sites[a.pc]


def _stuck(m: Machine, flags: dict[int, FlagSpin] | None = None) -> list[Stuck]:
    out = []
    for t in m.threads:
        if t.status == EXITED:
            continue
        why = blocked(m, t, None if flags is None else flags.get(t.aid))
        state = why.state
        out.append(Stuck(t.aid, t.name, why.site, why.reason, None if state is None else state.name,
                         describe_barrier(state) if why.what == "mbarrier" else None))
    return out


def run(m: Machine, scheduler: Scheduler | None = None, *, max_steps: int = DEFAULT_MAX_STEPS,
        trace: bool = False, monitor: Callable[[int], bool] | None = None,
        budget: Budget | None = None, ahead: Ahead | None = None, module: ast.Module | None = None
        ) -> RunResult:
    """Run until nothing can run (or a violation, an error, the step limit). Deterministic: the same
    scheduler input gives the same run, with or without the trace. About every MONITOR_EVERY steps,
    between two steps: `budget` (time, memory) is checked, a bound hit ends the run there (outcome
    "limit", `stopped_by` naming the bound); then `monitor(steps)` is called, True stops the run there
    (outcome "interrupted"); then, with the machine's `module`, whether only flag spinners can run
    (outcome "stuck"). `ahead`: for a stuck run's headline (`explore.stuck.starved`)."""
    sched = scheduler or RandomScheduler(0)
    nthreads = len(m.threads)
    runs: list[int] = []  # flat (agent id, steps) pairs
    steps_log: list[TraceStep] | None = [] if trace else None
    m.tracing = trace
    runnable = m.runnable
    steps = 0
    a: Thread | Copy | None = None

    flags = _FlagSpinners(m, module) if module is not None else None
    spinning: dict[int, FlagSpin] | None = None

    def checkpoint(steps: int) -> str:
        """What stops the run here: a bound's name, "interrupt", "spin", or ""."""
        nonlocal spinning
        why = budget.exceeded() if budget is not None else ""
        why = why or ("interrupt" if monitor is not None and monitor(steps) else "")
        if not why and flags is not None:
            spinning = flags.all_spin()
            why = "spin" if spinning is not None else ""
        return why

    check_at = MONITOR_EVERY if monitor is not None or budget is not None or flags is not None \
        else max_steps
    stopped = ""
    try:
        if trace or not isinstance(sched, RandomScheduler):
            while runnable and steps < max_steps:
                if steps >= check_at:
                    stopped = checkpoint(steps)
                    if stopped:
                        break
                    check_at = steps + MONITOR_EVERY
                a = sched.pick(m, steps)
                runs += (a.aid, 1)
                steps += 1
                site = _site(a)
                if steps_log is not None:
                    m.events.clear()
                a.code[a.pc](m, a)
                if steps_log is not None:
                    steps_log.append(TraceStep(steps - 1, agent_name(a.aid, nthreads), site, tuple(m.events)))
        else:
            # The same choices as RandomScheduler.pick, inlined: this loop is the simulator's hot path.
            rand = sched.random
            burst = sched.burst
            while runnable and steps < max_steps:
                if steps >= check_at:
                    stopped = checkpoint(steps)
                    if stopped:
                        break
                    check_at = steps + MONITOR_EVERY
                a = runnable[int(rand() * len(runnable))]
                k = min(int(rand() * burst) + 1, max_steps - steps)
                i = 0
                try:
                    for i in range(1, k + 1):  # noqa: B007 - i counts the burst's steps, a failing one too
                        a.code[a.pc](m, a)
                        if a.status:
                            break
                finally:
                    runs += (a.aid, i)
                    steps += i
    except Violation as v:
        assert a is not None
        if isinstance(v, Race):
            r = _failed(m, Outcome.RACE, steps, runs, a, str(v), steps_log, v.rule, v.section)
            r.accesses, r.edge = v.accesses, v.edge
            return r
        return _failed(m, Outcome.VIOLATION, steps, runs, a, str(v), steps_log, v.rule, v.section)
    except KernelFault as e:  # the kernel's bug, as a Violation is
        assert a is not None
        return _failed(m, Outcome.VIOLATION, steps, runs, a, str(e), steps_log, e.rule, e.section)
    except (SimError, ScheduleError) as e:
        if a is None or isinstance(e, ScheduleError):
            return RunResult(Outcome.ERROR, steps, runs, m, message=str(e), trace=steps_log)
        return _failed(m, Outcome.UNSUPPORTED, steps, runs, a, str(e), steps_log)
    finally:
        m.tracing = False
    if stopped == "spin":
        assert spinning is not None
        found = starved(m, [(t, None) for t in m.threads if t.status != EXITED and t.aid not in spinning],
                        ahead)
        where = sorted({f.where() for f in spinning.values()})
        return RunResult(Outcome.STUCK, steps, runs, m, message=cause(m, found, Layout.of(m)) or
                         f"every thread that can run spins on a flag no one can write any more "
                         f"({', '.join(where)})", stuck=_stuck(m, spinning), trace=steps_log, starved=found)
    if stopped == "interrupt":
        return RunResult(Outcome.INTERRUPTED, steps, runs, m, message=f"interrupted after {steps} steps",
                         stuck=_stuck(m), trace=steps_log)
    if stopped:
        assert budget is not None
        detail = budget.detail(stopped)
        return RunResult(Outcome.LIMIT, steps, runs, m,
                         message=f"stopped after {steps} steps" + (f": {detail}" if detail else ""),
                         stuck=_stuck(m), trace=steps_log, stopped_by=stopped)
    if runnable:
        return RunResult(Outcome.LIMIT, steps, runs, m, message=f"stopped after {steps} steps (the limit)",
                         stuck=_stuck(m), trace=steps_log, stopped_by=MAX_STEPS)
    if any(t.status != EXITED for t in m.threads):
        found = starved(m, [(t, None) for t in m.threads if t.status != EXITED], ahead)
        return RunResult(Outcome.STUCK, steps, runs, m, message=cause(m, found, Layout.of(m)),
                         stuck=_stuck(m), trace=steps_log, starved=found)
    return RunResult(Outcome.EXITED, steps, runs, m, trace=steps_log)


class _FlagSpinners:
    """Whether every agent that can run is a thread spinning on a flag (`explore.spin.Spins.flag_ahead`,
    `FlagSpin.first` too: their steps write no new value, so none of them can change what the others read):
    the module's code is analysed at the first time every runnable agent is a thread."""

    def __init__(self, m: Machine, module: ast.Module) -> None:
        self.m, self.module = m, module
        self.spins: Spins | None = None

    def all_spin(self) -> dict[int, FlagSpin] | None:
        """Each runnable thread's flag, or None where some agent can do more than spin."""
        runnable = self.m.runnable
        if not runnable or not all(isinstance(a, Thread) for a in runnable):
            return None
        if self.spins is None:
            self.spins = Spins(self.m, analyse_module(self.module, self.m))
        out: dict[int, FlagSpin] = {}
        for t in runnable:
            assert isinstance(t, Thread)
            found = self.spins.flag_ahead(t)
            if found is None:
                return None
            out[t.aid] = found
        return out


def _failed(m: Machine, outcome: Outcome, steps: int, runs: list[int], a: Thread | Copy,
            message: str, steps_log: list[TraceStep] | None, rule: str | None = None,
            section: str | None = None) -> RunResult:
    """The step of `a` that raised is already counted and recorded: the schedule replays up to it."""
    site = _site(a) if isinstance(a, Copy) else a.func.sites[_failing_pc(a)]
    if steps_log is not None:
        steps_log.append(TraceStep(steps - 1, agent_name(a.aid, len(m.threads)), site, tuple(m.events)))
    return RunResult(outcome, steps, runs, m, message=message, rule=rule,
                     section=section, agent=a.name, site=site, trace=steps_log)


def _failing_pc(t: Thread) -> int:
    # The step raised before setting t.pc, except the steps that set it before acting (bar, exit, ...).
    return t.pc if t.status != EXITED else max(t.pc - 1, 0)


def barrier_states(m: Machine) -> list[tuple[str, str]]:
    """Every mbarrier the run touched, with its final state."""
    return [(b.name or f"{off:#x}", short_state(b))
            for cta in m.ctas for off, b in sorted(cta.barriers.items())]
