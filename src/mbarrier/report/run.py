"""Text for a run: the outcome (exited, stuck with where each thread waits, violation, error) and the
step-by-step trace."""

from __future__ import annotations

from collections.abc import Iterator

from mbarrier.explore.run import RunResult, Stuck, TraceStep, barrier_states
from mbarrier.explore.schedule import Fingerprint, stamp
from mbarrier.explore.who import Layout

MAX_INLINE_SCHEDULE = 400

# The bound that ended a run of outcome "limit" (RunResult.stopped_by), as the headline names it.
BOUNDS = {"max-steps": "the step limit (--max-steps)", "timeout": "the time bound (--timeout)",
          "max-memory": "the memory bound (--max-memory)"}

HEADLINE = {
    "exited": "all {threads} threads exited after {steps} steps",
    "stuck": "STUCK after {steps} steps: no thread can make progress, {live} of {threads} threads have not "
             "exited",
    "violation": "VIOLATION at step {steps}",
    "race": "RACE at step {steps}",
    "unsupported": "UNSUPPORTED at step {steps}: the simulator cannot run this instruction (not a finding "
                   "about the kernel)",
    "error": "ERROR at step {steps}",
    "limit": "INCOMPLETE: stopped at {bound} after {steps} steps, {live} threads still running",
    "interrupted": "INCOMPLETE: interrupted (Ctrl-C) after {steps} steps, {live} threads still running",
}


def stuck_groups(stuck: list[Stuck]) -> Iterator[tuple[list[int], Stuck]]:
    """Threads stuck at the same line for the same reason on a barrier in the same state, together."""
    groups: dict[tuple[object, ...], list[Stuck]] = {}
    for s in stuck:
        groups.setdefault((s.site.line, s.reason, s.state), []).append(s)
    for members in groups.values():
        yield [s.thread for s in members], members[0]


def format_outcome(r: RunResult, *, schedule: bool = True,
                   fingerprint: Fingerprint | None = None) -> list[str]:
    """The outcome's lines; the schedule stamped with `fingerprint` when given."""
    m = r.machine
    live = sum(1 for t in m.threads if t.status != 3)
    head = HEADLINE[r.outcome].format(threads=len(m.threads), steps=r.steps, live=live,
                                      bound=BOUNDS.get(r.stopped_by, "a bound"))
    lines = [f"outcome: {head}"]
    if r.outcome == "limit" and r.stopped_by == "max-memory":
        lines.append(f"  {r.message}")
    if r.outcome in ("violation", "race", "unsupported", "error"):
        source = f" ({r.site.source})" if r.site and r.site.source else ""
        where = f"{r.agent}, line {r.site.line}{source}: {r.site.text}" if r.site else ""
        if r.rule:
            section = r.section or ""
            cite = f"PTX ISA {section}" if section[:1].isdigit() else section
            lines.append(f"  rule {r.rule}" + (f" ({cite})" if cite else ""))
        if where:
            lines.append(f"  {where}")
        lines.append(f"  {r.message}")
    if r.outcome == "stuck" and r.message:
        lines.append(f"  {r.message}")
    layout = Layout.of(m)
    for ids, s in stuck_groups(r.stuck):
        who = layout.threads(ids)
        where = f" ({s.site.source})" if s.site.source else ""
        lines.append(f"  {who} at line {s.site.line}{where}: {s.site.text}")
        lines.append(f"      {s.reason}")
        if s.state:
            lines.append(f"      {s.barrier or 'the mbarrier'}: {s.state}")
    states = barrier_states(m)
    if states:
        lines.append("barriers at the end:")
        lines.extend(f"  {name}: {state}" for name, state in states)
    if schedule:
        text = r.schedule
        if len(text) <= MAX_INLINE_SCHEDULE:
            lines.append(f"schedule: {text if fingerprint is None else stamp(fingerprint, text)}")
        else:
            lines.append(f"schedule: {len(text)} characters (--save-schedule FILE writes it)")
    return lines


def format_step(s: TraceStep) -> str:
    text = f"{s.step:>7}  {s.agent:>5}  line {s.site.line:<5} {s.site.text}"
    if s.site.source:
        text += f"  ({s.site.source})"
    for e in s.events:
        text += f"\n{'':>16}{e.barrier}: {e.before} -> {e.after}"
    return text


def format_trace(steps: list[TraceStep]) -> Iterator[str]:
    for s in steps:
        yield format_step(s)
