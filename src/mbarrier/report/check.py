"""Text for a check (its JSON: `report.model`): the verdict, each finding explained in the user's
terms, and its schedule as a trace of the steps that matter (thread, source line, barrier changes)."""

from __future__ import annotations

import shlex
from collections.abc import Callable

from mbarrier.explore.results import SEARCH, CheckResult, Finding, FindingKind, Stats, Waiter
from mbarrier.explore.run import TraceStep
from mbarrier.explore.schedule import Fingerprint, stamp
from mbarrier.explore.stuck import describe_barrier
from mbarrier.explore.who import Layout

MAX_TRACE_LINES = 60


def format_stats(s: Stats) -> str:
    return (f"{s.states:,} states, {s.transitions:,} transitions, {s.seconds:.2f} s; reductions: "
            f"{s.local_steps:,} local steps run eagerly, {s.pruned:,} of {s.enabled:,} enabled moves pruned"
            f"{f', {s.sleep_pruned:,} asleep (sleep sets)' if s.sleep_pruned else ''}"
            f"{f', {s.sleep_woken:,} woken by a smaller sleep set' if s.sleep_woken else ''}"
            f"{f', {s.full_expansions} full expansions' if s.full_expansions else ''}"
            f"{f', {s.symmetric_merges:,} symmetric merges' if s.symmetric_merges else ''}"
            + (f"; before and beside the search, {s.walks:,} random walk{'s' if s.walks != 1 else ''} "
               f"({s.walk_transitions:,} transitions, {s.walk_seconds:.2f} s)" if s.walks else ""))


# What ended an incomplete search (CheckResult.stopped_by), as the headline says it.
STOPPED_BY = {"interrupt": "interrupted (Ctrl-C)", "max-states": "the state bound (--max-states) was hit",
              "timeout": "the time bound (--timeout) was hit",
              "max-memory": "the memory bound (--max-memory) was hit",
              "unsupported": "the simulator met an instruction it does not support",
              "found": "random walks had found bugs, and the search stopped after looking a few seconds "
                       "longer for shorter schedules"}


def _why(r: CheckResult) -> str:
    return STOPPED_BY.get(r.stopped_by, "a bound was hit")


def headline(r: CheckResult) -> str:
    if r.verdict == "verified":
        what = "no deadlock, no violation and no race" if "races tracked" in r.mode else \
            "no deadlock and no violation"
        return f"VERIFIED: every interleaving explored ({r.mode}): {what}"
    if r.verdict == "incomplete":
        return f"INCOMPLETE: {_why(r)} before every interleaving was explored ({r.mode}); {r.covered}"
    if r.verdict == "unsupported" and r.unsupported is not None:
        return (f"UNSUPPORTED: the simulator cannot run line {r.unsupported.line}, which this launch "
                f"reaches: the kernel is not checked beyond it (no finding about the kernel; {r.mode}); "
                f"{r.covered}")
    n = len(r.findings)
    return f"FOUND {n} problem{'s' if n != 1 else ''} ({r.mode})"


def data_note(lines: tuple[int, ...], shown: int = 8) -> str:
    """What a verdict over a launch whose branches read memory contents covers (`explore.inputs`)."""
    more = len(lines) - shown
    where = ", ".join(map(str, lines[:shown])) + (f" and {more} more" if more > 0 else "")
    return (f"for this launch's memory contents: the kernel may branch on values it loads from memory (line"
            f"{'s' if len(lines) > 1 else ''} {where}); other contents may take other paths")


def _waiter_groups(ws: list[Waiter]) -> list[tuple[list[int], Waiter]]:
    groups: dict[tuple[object, ...], list[Waiter]] = {}
    for w in ws:
        key = (w.line, w.what, w.barrier, w.cta, w.detail,
               None if w.state is None else w.state.key())
        groups.setdefault(key, []).append(w)
    return [([w.thread for w in g], g[0]) for g in groups.values()]


def explain(f: Finding) -> list[str]:
    """The finding in words: what went wrong, where, and (for a deadlock) who waits for what."""
    lines = [f"{f.kind}: {f.message}"]
    if f.found_by != SEARCH:
        lines.append(f"  found by {f.found_by}: a real execution, not a shortest one")
    if f.kind != "deadlock":
        where = f"  at line {f.line}: {f.text}" if f.line is not None else ""
        if f.agent:
            lines.append(f"  by {f.agent}")
        if where:
            lines.append(where)
        lines.append(f"  rule {f.rule}" + (f" ({f.section})" if f.section else ""))
        return lines
    layout = f.layout or Layout(0, ())
    for ids, w in _waiter_groups(f.waiters):
        who = layout.threads(ids)
        lines.append(f"  {who} at line {w.line}: {w.text}")
        lines.append(f"      {w.detail}")
        if w.what == "mbarrier":
            lines.append(f"      {w.barrier}: {describe_barrier(w.state)}")
    for sym, arrivers in f.arrivers.items():
        if arrivers:
            lines.append(f"  who could still arrive on {sym}: " + "; ".join(arrivers))
        else:
            lines.append(f"  no thread and no copy in flight can arrive on {sym} any more")
    return lines


def visible(s: TraceStep) -> bool:
    """A step others can see: it changed a barrier, or touched shared state."""
    return bool(s.events) or not s.site.facts.private


def format_trace(steps: list[TraceStep], limit: int = MAX_TRACE_LINES) -> list[str]:
    """The steps that touch shared state (barriers, memory, other threads), one per line; local
    arithmetic and branches are left out (they are in the schedule)."""
    shown = [s for s in steps if visible(s)]
    out = ["  step  agent  line   instruction"]
    cut = len(shown) - limit
    if cut > 0:
        out.append(f"  ... {cut} earlier steps ...")
        shown = shown[cut:]
    for s in shown:
        src = f"  ({s.site.source})" if getattr(s.site, "source", None) else ""
        out.append(f"  {s.step:>4}  {s.agent:>5}  {s.site.line:<5}  {s.site.text}{src}")
        for e in s.events:
            out.append(f"  {'':>4}  {'':>5}  {'':<5}    {e.barrier}: {e.before} -> {e.after}")
    return out


# A livelock's replay runs this many steps past its schedule, then stops at the bound: its threads never
# end, and `mbarrier run`'s own bound (`explore.run.DEFAULT_MAX_STEPS`) is far larger.
LIVELOCK_REPLAY_STEPS = 100_000


def replay_command(replay: str, kind: str, steps: int, schedule: str) -> str:
    """The `mbarrier run` command (`replay`: the launch's) that replays a finding of `kind` whose schedule
    has `steps` steps."""
    bound = f" --max-steps {steps + LIVELOCK_REPLAY_STEPS}" if kind == FindingKind.LIVELOCK else ""
    return f"{replay}{bound} --schedule {shlex.quote(schedule)}"


def format_result(r: CheckResult, trace: Callable[[Finding], list[TraceStep]] | None = None,
                  replay: str = "", fingerprint: Fingerprint | None = None,
                  max_schedule: int = 2000) -> list[str]:
    """The report's lines. `replay`: the `mbarrier run` command of the launch (each finding's replay
    line is it with `--schedule`); without it, only the schedule is shown. Schedules are stamped with
    `fingerprint` when given."""
    lines = [headline(r), f"  {format_stats(r.stats)}"]
    if r.verdict == "verified" and r.data_branches:
        lines.append("  " + data_note(r.data_branches))
    if r.verdict == "finding" and r.covered:  # the findings are real; what was not explored is said
        lines.append(f"  not every interleaving was explored ({_why(r)}): {r.covered}")
    for i, f in enumerate(r.findings, 1):
        lines.append("")
        lines.append(f"[{i}] " + explain(f)[0])
        lines.extend(explain(f)[1:])
        if trace is not None:
            lines.append(f"  the shortest schedule found ({len(f.aids)} steps), the steps that matter:")
            lines.extend(format_trace(trace(f)))
        sched = f.schedule
        if len(sched) > max_schedule:
            lines.append(f"  replay: the schedule is {len(sched)} characters; use --json or --save-schedule")
            continue
        if fingerprint is not None:
            sched = stamp(fingerprint, sched)
        if replay:
            lines.append(f"  replay: {replay_command(replay, f.kind, len(f.aids), sched)}")
        else:
            lines.append(f"  schedule: {sched}")
    u = r.unsupported
    if u is not None:
        lines.append("")
        lines.append(f"unsupported: {u.message}")
        if u.agent:
            lines.append(f"  by {u.agent}")
        if u.line is not None:
            lines.append(f"  at line {u.line}: {u.text}")
        sched = u.schedule if fingerprint is None else stamp(fingerprint, u.schedule)
        lines.append(f"  reached by a schedule of {len(u.aids)} steps"
                     + (f": {replay} --schedule {shlex.quote(sched)}"
                        if replay and len(u.schedule) <= max_schedule else ""))
    return lines
