"""A schedule replayed and recorded as a timeline, for the Perfetto trace and the SVG: what each thread
did that others can see, when each copy was issued and landed, each mbarrier's counts after every
change, each wait from its first failed test to the step that got through (and the step that completed
the phase it waited for), and the waits still stuck at the end.

The replay steps the machine as `explore.run` does (the same scheduler picks, the same step functions),
looking at the machine between steps; a run's or a finding's schedule replays to the same steps. Time
is the step number."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mbarrier.core.violations import Violation
from mbarrier.explore.schedulers import Replay
from mbarrier.explore.stuck import blocked
from mbarrier.sim.errors import KernelFault, SimError
from mbarrier.sim.machine import EXITED, PARKED, Copy, Machine, Thread
from mbarrier.sim.race_report import Race
from mbarrier.sim.waits import OnMbarrier

#: How far a replay may go on round-robin after its schedule ends (a deadlock's threads park by then).
SETTLE_STEPS = 100_000

BarrierKey = tuple[int, int]   # (CTA index, shared offset)


@dataclass(frozen=True)
class Step:
    step: int
    agent: int                 # agent id: a thread's global index, or a copy engine (above the threads)
    line: int
    text: str
    barriers: tuple[str, ...]  # the barriers whose state this step changed


@dataclass
class Wait:
    thread: int
    barrier: BarrierKey
    name: str
    start: int                 # the step of the first failed test
    end: int | None = None     # the step that got through (None: still waiting at the end)
    released_by: int | None = None   # the step that completed the phase it waited for
    reason: str = ""           # why it is stuck (end None)


@dataclass
class CopyRecord:
    aid: int
    number: int                # as schedules name it: c<number>
    kind: str
    thread: int
    line: int
    issued: int
    landed: int | None = None


@dataclass(frozen=True)
class Count:
    step: int
    barrier: BarrierKey
    name: str
    valid: bool
    phase: int
    pending: int
    expected: int
    tx: int


@dataclass
class Timeline:
    threads: list[tuple[int, str, int]]          # (aid, name, CTA index)
    ctas: int
    steps: list[Step] = field(default_factory=list)
    waits: list[Wait] = field(default_factory=list)
    copies: list[CopyRecord] = field(default_factory=list)
    counts: list[Count] = field(default_factory=list)
    # threads stuck other than on an mbarrier (bar.sync, ...): (thread, since step, reason)
    stuck: list[tuple[int, int, str]] = field(default_factory=list)
    end: int = 0
    failure: tuple[int, int, str, str] | None = None   # (step, agent, kind, message) of a violation or race

    @property
    def nthreads(self) -> int:
        return len(self.threads)


def _state(m: Machine) -> dict[BarrierKey, tuple[str, tuple[bool, int, int, int, int]]]:
    return {(cta.index, off): (b.name or f"{off:#x}", (b.valid, b.phase, b.pending, b.expected, b.tx))
            for cta in m.ctas for off, b in cta.barriers.items()}


def _waiting_on(t: Thread) -> BarrierKey | None:
    """The mbarrier `t` is known to wait on: parked on it, or its last test of it failed."""
    if t.status == PARKED and isinstance(t.wait, OnMbarrier):
        return (t.wait.cta, t.wait.off)
    if t.last_fail is not None:  # (function, pc, CTA index, offset, ...): machine.mb_wait's key
        cta, off = t.last_fail[2], t.last_fail[3]
        assert isinstance(cta, int) and isinstance(off, int)
        return (cta, off)
    return None


def record(machine: Callable[[], Machine], schedule: str, max_steps: int, settle: bool = False) -> Timeline:
    """Replay `schedule` on a fresh machine (`machine()`, race tracking as the original run had it) for at
    most `max_steps` steps, or, with `settle`, on round-robin after the schedule until no agent can move
    (SETTLE_STEPS at most: a deadlock's waiters then show as stuck)."""
    m = machine()
    tl = Timeline([(t.aid, t.name, t.cta.index) for t in m.threads], len(m.ctas))
    nthreads = len(m.threads)
    sched = Replay(schedule)
    limit = max_steps + (SETTLE_STEPS if settle else 0)
    states = _state(m)
    completed: dict[BarrierKey, int] = {}        # the step that last moved each barrier's phase
    open_waits: dict[int, Wait] = {}
    copies: dict[int, CopyRecord] = {}
    step = 0
    while m.runnable and step < limit:
        a = sched.pick(m, step)
        site = a.site if isinstance(a, Copy) else a.func.sites[a.pc]
        inflight = {c.aid for c in m.inflight}
        try:
            a.code[a.pc](m, a)
        except (Violation, KernelFault, SimError) as e:
            kind = "race" if isinstance(e, Race) else (
                "violation" if isinstance(e, (Violation, KernelFault)) else "unsupported")
            tl.steps.append(Step(step, a.aid, site.line, site.text, ()))
            tl.failure = (step, a.aid, kind, str(e))
            step += 1
            break
        now = _state(m)
        changed = tuple(name for key, (name, s) in now.items() if states.get(key, ("", None))[1] != s)
        for key, (name, s) in now.items():
            old = states.get(key)
            if old is None or old[1] != s:
                tl.counts.append(Count(step, key, name, *s))
                if old is None or old[1][:2] != s[:2]:
                    completed[key] = step
        states = now
        for c in m.inflight:
            if c.aid not in inflight:
                copies[c.aid] = CopyRecord(c.aid, c.aid - nthreads, c.kind, c.thread.aid, c.site.line, step)
        if isinstance(a, Copy):
            if a.aid in copies:
                copies[a.aid].landed = step
        else:
            _follow_wait(a, step, site.facts.name, open_waits, completed, states, tl)
        if changed or not site.facts.private or isinstance(a, Copy):
            tl.steps.append(Step(step, a.aid, site.line, site.text, changed))
        step += 1
    tl.end = step
    for t in m.threads:
        if t.status == EXITED or t.ridx >= 0:
            continue
        w = open_waits.get(t.aid)
        why = blocked(m, t).reason
        if w is not None:
            w.reason = why
        else:
            last = max((s.step for s in tl.steps if s.agent == t.aid), default=0)
            tl.stuck.append((t.aid, last, why))
    tl.copies = sorted(copies.values(), key=lambda c: c.aid)
    return tl


def _follow_wait(t: Thread, step: int, op: str, open_waits: dict[int, Wait], completed: dict[BarrierKey, int],
                 states: dict[BarrierKey, tuple[str, tuple[bool, int, int, int, int]]], tl: Timeline) -> None:
    if op not in ("mbarrier.try_wait", "mbarrier.test_wait"):
        return
    key = _waiting_on(t)
    w = open_waits.get(t.aid)
    if key is not None:          # this test failed: the thread waits (on from its first failure)
        if w is None or w.barrier != key:
            w = open_waits[t.aid] = Wait(t.aid, key, states.get(key, (f"{key[1]:#x}", None))[0], step)
            tl.waits.append(w)
    elif w is not None:          # it got through: released by the step that last moved the phase
        w.end = step
        done = completed.get(w.barrier)
        w.released_by = done if done is not None and done >= w.start else None
        del open_waits[t.aid]
