"""`mbarrier check`: explore every interleaving of a launch and report deadlocks and violations.

Exit codes: 0 verified, 1 findings, 2 usage or input error, 3 incomplete (a bound was hit, or Ctrl-C:
the report then says what was covered; findings found before the stop still exit 1).
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from mbarrier.cli import EXIT_CLEAN, EXIT_FINDINGS, EXIT_INCOMPLETE, EXIT_USAGE, UsageError, colour, options
from mbarrier.cli.bounds import Deadline, TimeoutHit, add_bound_options, memory_bound
from mbarrier.cli.colour import Painter
from mbarrier.cli.formats import (
    GITHUB,
    JSON,
    SARIF,
    TEXT,
    add_format_option,
    add_timeline_options,
    write_document,
    write_json,
    write_timelines,
)
from mbarrier.cli.interrupt import Interrupt
from mbarrier.cli.progress import Progress, add_progress_options
from mbarrier.cli.run import (
    add_launch_options,
    cta_words,
    dynamic_shared,
    fresh_machine,
    launch_digest,
    launch_machine,
    launch_spec,
    launch_words,
    load_launch,
    parse_args,
    timed_out,
)
from mbarrier.cli.schedules import launch_fingerprint
from mbarrier.cli.source import display_name
from mbarrier.cli.streams import write_styled
from mbarrier.explore.budget import TIMEOUT
from mbarrier.explore.check import check_machine
from mbarrier.explore.results import (
    DEFAULT_MAX_STATES,
    CheckResult,
    Finding,
    FindingKind,
    Options,
    Stats,
    Verdict,
)
from mbarrier.explore.run import TraceStep, run
from mbarrier.explore.schedule import Fingerprint, stamp
from mbarrier.explore.schedulers import Replay
from mbarrier.ptx import ast
from mbarrier.report.check import format_result
from mbarrier.report.github import check_annotations
from mbarrier.report.launch import launch_of
from mbarrier.report.model import check_report
from mbarrier.report.sarif import check_sarif
from mbarrier.report.text import printable
from mbarrier.report.timeline import record
from mbarrier.sim import SimError
from mbarrier.sim.machine import Machine

FINDING_HEAD = re.compile(r"\[\d+\] (deadlock|violation|race): ")
EXIT_BY_VERDICT = {"verified": EXIT_CLEAN, "finding": EXIT_FINDINGS, "incomplete": EXIT_INCOMPLETE,
                   "unsupported": EXIT_USAGE}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="explore every interleaving: deadlocks and undefined behaviour",
                       description="Explore every interleaving of the threads and asynchronous copies of one "
                       "launch and report deadlocks and mbarrier undefined behaviour, each with a shortest "
                       "replayable schedule (mbarrier run --schedule S).")
    add_launch_options(p)
    p.add_argument("--max-states", type=options.positive, default=DEFAULT_MAX_STATES, metavar="N",
                   help=f"stop after N distinct states (exit 3; default {DEFAULT_MAX_STATES:,})")
    add_bound_options(p)
    add_format_option(p, (TEXT, JSON, SARIF, GITHUB))
    add_timeline_options(p, "dir")
    p.add_argument("--warp", action="store_true",
                   help="warp granularity: lanes of a warp at the same instruction step together (faster, "
                   "a weaker guarantee: interleavings inside a converged warp are not explored)")
    p.add_argument("--no-reduce", action="store_true",
                   help="no reductions: every instruction is its own step (the graph `export --promela` "
                   "writes)")
    p.add_argument("--symmetry", action=argparse.BooleanOptionalAction, default=False,
                   help="merge states that differ only by which lanes or warps play which role (or in "
                   "registers no instruction reads again); off by default: it pays where alike threads "
                   "reach permuted states in many orders, and costs 1.3-2.5x per state where they do not")
    p.add_argument("--no-races", action="store_true",
                   help="switch off happens-before tracking and race findings (faster)")
    p.add_argument("--no-sleep", action="store_true",
                   help="no sleep sets (they skip moves a sibling branch already covers: fewer transitions)")
    p.add_argument("--walks", type=options.non_negative, default=Options.walks, metavar="N",
                   help="bugs first: up to N seeded random walks before and beside the search (default "
                   f"{Options.walks:,}; 0: none), each finding with its replayable schedule; only the "
                   "search says verified")
    p.add_argument("--max-findings", type=options.positive, default=8, metavar="N",
                   help="stop after N findings (default 8)")
    p.add_argument("--save-schedule", type=options.output_file, metavar="FILE",
                   help="write the first finding's schedule to FILE")
    add_progress_options(p)
    p.set_defaults(handler=main)


def replay_trace(module: ast.Module, args: argparse.Namespace, schedule: str, steps: int) -> list[TraceStep]:
    """The steps of a finding's schedule, replayed on a fresh machine of the same launch."""
    r = run(launch_machine(module, args), Replay(schedule), max_steps=steps, trace=True)
    return r.trace or []


def trace_of(module: ast.Module, args: argparse.Namespace) -> Callable[[Finding], list[TraceStep]]:
    """The trace of a finding's schedule (the text report's)."""
    return lambda f: replay_trace(module, args, f.schedule, len(f.aids))


def timelines(module: ast.Module, args: argparse.Namespace, result: CheckResult) -> None:
    """--perfetto DIR: a trace per finding (finding-N-KIND.json); --svg FILE: the first finding's."""
    if not result.findings:
        if not args.quiet:
            sys.stderr.write("note: no finding: --perfetto and --svg write nothing\n")
        return
    if args.perfetto is not None:
        try:
            args.perfetto.mkdir(exist_ok=True)
        except OSError as e:
            raise UsageError(f"--perfetto {args.perfetto}: cannot create it: {e.strerror or e}") from None
    for i, f in enumerate(result.findings, 1):
        if args.perfetto is None and i > 1:
            break
        tl = record(fresh_machine(module, args), f.schedule, len(f.aids),
                    settle=f.kind == FindingKind.DEADLOCK)
        head = f.message.splitlines()[0]
        if f.kind == FindingKind.DEADLOCK:  # one line of the picture: who waits; the cause is in the report
            head = head.split(": ", 1)[0]
        title = f"{Path(display_name(args.file)).name}: [{i}] {f.kind.value} ({f.rule}): {head}"
        trace = args.perfetto / f"finding-{i}-{f.kind.value}.json" if args.perfetto else None
        write_timelines(tl, title, trace, args.svg if i == 1 else None)


def replay_command(args: argparse.Namespace) -> str:
    """`mbarrier run` with this check's launch: followed by `--schedule S`, it replays a finding."""
    words = ["mbarrier", "run", *launch_words(args)] + (["--no-races"] if args.no_races else [])
    return shlex.join(words)


Searched = tuple[ast.Module, Machine, Fingerprint, CheckResult]


def main(args: argparse.Namespace) -> int:
    # Ctrl-C from the start: while the launch is read and built it stops the check at its first safe
    # point, as during the search (exit 3); the report's writing after the search is not interruptible
    with Interrupt() as stop:
        searched = search(args, stop)
    if isinstance(searched, int):
        return searched
    return write_report(args, *searched)


def search(args: argparse.Namespace, stop: Interrupt) -> Searched | int:
    """The launch read and checked; an exit code where there is nothing to report beyond it."""
    deadline = Deadline(args.timeout, getattr(args, "started", None))
    try:
        module, m = load_launch(args, warn=not args.quiet, deadline=deadline)
    except TimeoutHit as e:
        if args.format == JSON:
            nothing = CheckResult(Verdict.INCOMPLETE, [], Stats(),
                                  f"{e.message()}; the search did not start", stopped_by=TIMEOUT)
            write_json(check_report(nothing, display_name(args.file), None, None))
        return timed_out("check", e)
    fingerprint = launch_fingerprint(module, m, args.arg, args.dynamic_shared, launch_digest(args))
    progress = Progress.of("check", args)
    opts = Options(max_states=args.max_states, timeout=deadline.remaining(), max_memory=memory_bound(args),
                   reductions=not args.no_reduce,
                   races=not args.no_races, symmetry=args.symmetry, warp=args.warp,
                   max_findings=args.max_findings, sleep=not args.no_sleep, walks=args.walks,
                   progress_every=progress.every,
                   progress=None if progress.mode == "off" else progress.states)
    try:
        if args.format == TEXT:  # what is being checked, while it runs
            sys.stdout.write(f"{display_name(args.file)}: kernel {m.threads[0].func.name}, "
                             f"{cta_words(m)} of {len(m.ctas[0].threads)} threads\n")
            sys.stdout.flush()
        opts.stop = stop
        result: CheckResult = check_machine(m, module, opts)
    except SimError as e:
        raise UsageError(str(e)) from None
    finally:
        progress.close()
    return module, m, fingerprint, result


def write_report(args: argparse.Namespace, module: ast.Module, m: Machine, fingerprint: Fingerprint,
                 result: CheckResult) -> int:
    """The check's report in the asked format (and its schedule, timelines); the exit code."""
    if args.save_schedule and result.findings:
        options.write_output(args.save_schedule, stamp(fingerprint, result.findings[0].schedule) + "\n",
                             "--save-schedule")
    if args.perfetto or args.svg:
        timelines(module, args, result)
    if args.format != TEXT:
        launch = launch_of(module, m, parse_args(args.arg), dynamic_shared(args), launch_spec(args))
        report = check_report(result, display_name(args.file), launch, fingerprint)
        if args.format == JSON:
            write_json(report)
        elif args.format == SARIF:
            write_document(check_sarif(report, lambda f: replay_trace(module, args, f.schedule, f.steps)))
        else:
            for line in check_annotations(report, replay_command(args)):
                sys.stdout.write(line + "\n")
    else:
        paint = Painter(colour.enabled(sys.stdout))
        verdict = {"verified": "good", "finding": "error"}.get(result.verdict, "warning")
        lines = format_result(result, trace_of(module, args), replay_command(args), fingerprint)
        for i, line in enumerate(lines):
            style = verdict if i == 0 else ("error" if FINDING_HEAD.match(line) else None)
            write_styled(paint(line, style) + "\n" if style else printable(line) + "\n")
    return EXIT_BY_VERDICT[result.verdict]
