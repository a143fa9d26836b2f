"""`mbarrier run`: execute a kernel on the simulator under one schedule and say how it ended.

Exit codes: 0 every thread exited, 1 stuck, a violation (an mbarrier rule, or a fault of the kernel such
as an access outside memory) or a race, 2 usage or input error, or an instruction the simulator does not
support (outcome `unsupported`), 3 the step limit was hit or Ctrl-C stopped the run (the
report says where each thread was).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from mbarrier.capture import BufferComparison, compare
from mbarrier.cli import EXIT_CLEAN, EXIT_FINDINGS, EXIT_INCOMPLETE, EXIT_USAGE, UsageError, colour, options
from mbarrier.cli.bounds import Deadline, TimeoutHit, add_bound_options, memory_bound
from mbarrier.cli.colour import Painter
from mbarrier.cli.formats import (
    JSON,
    TEXT,
    add_format_option,
    add_timeline_options,
    write_json,
    write_timelines,
)
from mbarrier.cli.interrupt import Interrupt
from mbarrier.cli.progress import Progress, add_progress_options
from mbarrier.cli.schedules import launch_fingerprint, read_schedule
from mbarrier.cli.source import STDIN_NAME, display_name, read_module
from mbarrier.cli.streams import write_styled
from mbarrier.explore import RandomScheduler, Replay, ScheduleError, run
from mbarrier.explore.budget import Budget
from mbarrier.explore.deadlock import ModuleAhead
from mbarrier.explore.run import DEFAULT_MAX_STEPS, RunResult
from mbarrier.explore.schedule import stamp
from mbarrier.ptx import ast
from mbarrier.ptx.validate import validate
from mbarrier.report.launch import launch_of
from mbarrier.report.model import Scheduler, run_report
from mbarrier.report.run import format_outcome, format_trace
from mbarrier.report.text import printable
from mbarrier.report.timeline import record
from mbarrier.sim import Buffer, Launch, LaunchError, Machine, launch, read_launch
from mbarrier.sim.compile import SPECIAL_SLOT
from mbarrier.sim.launch import listing
from mbarrier.sim.launchfile import output_option, write_outputs
from mbarrier.sim.races import track

EXIT_BY_OUTCOME = {"exited": EXIT_CLEAN, "stuck": EXIT_FINDINGS, "violation": EXIT_FINDINGS,
                   "race": EXIT_FINDINGS, "unsupported": EXIT_USAGE, "error": EXIT_USAGE,
                   "limit": EXIT_INCOMPLETE, "interrupted": EXIT_INCOMPLETE}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run a kernel on the simulator under one schedule",
                       description="Run a PTX kernel on the simulator: prints how it ended (every "
                       "thread exited, or where each thread is stuck, or the violation) and, with --trace, "
                       "every step.")
    add_launch_options(p)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--seed", type=options.integer, default=0,
                       help="seed of the random schedule (default 0)")
    group.add_argument("--schedule", metavar="S",
                       help="replay a schedule string (or @FILE to read it from a file)")
    p.add_argument("--burst", type=options.positive, default=8,
                   help="random schedule: each pick runs 1..BURST steps (default 8; 1 = a new pick per step)")
    p.add_argument("--trace", action="store_true", help="print every step and every barrier state change")
    p.add_argument("--no-races", action="store_true",
                   help="switch off happens-before tracking and race findings (faster)")
    p.add_argument("--max-steps", type=options.positive, default=DEFAULT_MAX_STEPS, metavar="N",
                   help=f"stop after N steps (exit 3; default {DEFAULT_MAX_STEPS})")
    add_bound_options(p)
    p.add_argument("--save-schedule", type=options.output_file, metavar="FILE",
                   help="write the run's schedule string to FILE")
    p.add_argument("--dump", action="append", default=[], type=options.dump, metavar="NAME[:COUNT]",
                   help="print the first COUNT (default 16) 32-bit words of a buffer argument or variable")
    add_format_option(p, (TEXT, JSON))
    add_timeline_options(p, "file")
    p.add_argument("--write", action="append", default=[], metavar="NAME=FILE",
                   help="after the run, write buffer NAME to FILE (.npy or .bin); with the launch file's "
                   "outputs, this one wins for NAME")
    p.add_argument("--compare", action="store_true",
                   help="after the run, compare the buffers with the GPU's (a launch file written by "
                   "`mbarrier capture`): exit 1 when one differs")
    add_progress_options(p)
    p.set_defaults(handler=main)


def add_launch_options(p: argparse.ArgumentParser) -> None:
    """The launch options `run` shares with `check`."""
    p.add_argument("file", metavar="FILE.ptx", nargs="?",
                   help="the PTX module ('-' reads standard input); may be left out with a launch file "
                   "written by mbarrier capture, which names its module")
    p.add_argument("--launch", metavar="FILE", help="a launch file (JSON, or TOML for .toml; see "
                   "docs/launch.md): kernel, shapes, buffers, parameters, tensor maps; options override it")
    p.add_argument("--kernel", help="the kernel (.entry) to launch; optional when the module has one")
    p.add_argument("--grid", metavar="X[,Y,Z]", help="CTAs in the grid (required unless --launch gives it)")
    p.add_argument("--block", metavar="X[,Y,Z]", help="threads in a CTA (required unless --launch gives it)")
    p.add_argument("--cluster", metavar="X[,Y,Z]", help="CTAs in a cluster (default: the kernel's "
                   ".reqnctapercluster, else 1)")
    p.add_argument("--arg", action="append", default=[], metavar="P=VALUE|P=buf:BYTES",
                   help="a kernel argument by PTX name or 0-based position: an integer, or a zero-filled "
                   "buffer of BYTES bytes; 64-bit parameters left out get a zero-filled buffer")
    p.add_argument("--dynamic-shared", type=options.non_negative, metavar="BYTES",
                   help="dynamic shared memory for .extern .shared arrays (default 48 KiB when the kernel "
                   "has any)")
    p.add_argument("--cta", action="append", default=[], metavar="X[,Y,Z]",
                   help="run only the cluster holding this CTA of the grid, which keeps its shape "
                   "(repeatable; default: the launch file's ctas, else every CTA)")


def parse_dims(text: str | None, what: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        dims = tuple(int(x, 0) for x in text.split(","))
    except ValueError:
        raise UsageError(f"--{what} {text!r}: expected X[,Y,Z] with positive integers") from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise UsageError(f"--{what} {text!r}: expected X[,Y,Z] with positive integers")
    return dims


def cta_words(m: Machine) -> str:
    """`2 CTAs`, or `1 CTA of the grid's 4` when `--cta` chose some."""
    n, grid = len(m.ctas), 1
    for axis in "xyz":
        dim = m.threads[0].regs[SPECIAL_SLOT[f"%nctaid.{axis}"]]
        assert isinstance(dim, int)
        grid *= dim
    return f"{n} CTA{'s' if n > 1 else ''}" + (f" (of the grid's {grid})" if n < grid else "")


def parse_ctas(items: list[str]) -> list[tuple[int, ...]] | None:
    """`--cta X[,Y,Z]` options (None: none given)."""
    out = []
    for text in items:
        try:
            cta = tuple(int(x, 0) for x in text.split(","))
        except ValueError:
            cta = ()
        if not 1 <= len(cta) <= 3 or min(cta) < 0:
            raise UsageError(f"--cta {text!r}: expected X[,Y,Z] with non-negative integers")
        out.append(cta)
    return out or None


def parse_args(items: list[str]) -> dict[str | int, int | Buffer]:
    out: dict[str | int, int | Buffer] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--arg {item!r}: expected P=VALUE or P=buf:BYTES")
        key: str | int = int(name) if name.isdigit() else name
        try:
            if value.startswith("buf:"):
                out[key] = Buffer(int(value[4:], 0), name=str(name))
            else:
                out[key] = int(value, 0)
        except ValueError:
            raise UsageError(f"--arg {item!r}: VALUE must be an integer and BYTES a size") from None
    return out


def load_launch(args: argparse.Namespace, warn: bool = True,
                deadline: Deadline | None = None) -> tuple[ast.Module, Machine]:
    """The parsed module (FILE, or standard input for `-`) and the machine launched as the options
    describe (UsageError otherwise). Shared by run, check and export. `warn`: say on stderr when ptxas
    would not assemble the module. `deadline`: raise TimeoutHit, naming the phase, when it passes."""
    deadline = deadline or Deadline(None)
    name = display_name(module_file(args))
    with deadline.phase(f"reading and parsing {name}"):
        module = read_module(args.file)
    if warn:
        with deadline.phase(f"checking {name} as ptxas would"):
            warn_if_ptxas_rejects(module)
    with deadline.phase(f"compiling and launching the kernel of {name}"):
        m = launch_machine(module, args)
    return module, m


def module_file(args: argparse.Namespace) -> str:
    """FILE.ptx as given, or the module a captured launch file names (`capture.ptx`), which it then
    becomes (UsageError when there is neither)."""
    if args.file is None:
        ptx = launch_spec(args).ptx if getattr(args, "launch", None) else None
        if ptx is None:
            raise UsageError("FILE.ptx is required (or a launch file written by mbarrier capture, which "
                             "names its module)")
        args.file = ptx
    file: str = args.file
    return file


def timed_out(command: str, e: TimeoutHit) -> int:
    """A deadline passed before the run or search started: say where, exit 3."""
    what = "the search" if command == "check" else "the run"
    sys.stderr.write(f"mbarrier {command}: incomplete: {e.message()}; {what} did not start\n")
    return EXIT_INCOMPLETE


def launch_spec(args: argparse.Namespace) -> Launch:
    """The launch file of `--launch` (read once), or an empty launch; `--grid` and `--block` are required
    unless it gives them."""
    spec: Launch | None = getattr(args, "launch_spec", None)
    if spec is None:
        try:
            spec = read_launch(args.launch) if getattr(args, "launch", None) else Launch()
        except LaunchError as e:
            raise UsageError(str(e)) from None
        args.launch_spec = spec
    for what in ("grid", "block"):
        if getattr(args, what) is None and getattr(spec, what) is None:
            raise UsageError(f"--{what} is required (or a launch file that gives the {what})")
    return spec


def dynamic_shared(args: argparse.Namespace) -> int | None:
    """`--dynamic-shared`, else the launch file's (None: neither gives it)."""
    given: int | None = args.dynamic_shared
    return given if given is not None else launch_spec(args).dynamic_shared


def launch_digest(args: argparse.Namespace) -> str:
    """What the launch file and `--cta` add to a schedule's fingerprint ('' without either)."""
    digest = launch_spec(args).digest() if getattr(args, "launch", None) else ""
    ctas = parse_ctas(getattr(args, "cta", []))
    return digest + (f";ctas={ctas}" if ctas else "")


def launch_machine(module: ast.Module, args: argparse.Namespace) -> Machine:
    """A fresh machine of the launch the options describe (check replays each finding on one)."""
    spec = launch_spec(args)
    try:
        return launch(module, args.kernel, grid=parse_dims(args.grid, "grid"),
                      block=parse_dims(args.block, "block"), cluster=parse_dims(args.cluster, "cluster"),
                      args=parse_args(args.arg), dynamic_shared=getattr(args, "dynamic_shared", None),
                      max_memory=memory_bound(args), spec=spec, ctas=parse_ctas(args.cta))
    except LaunchError as e:
        raise UsageError(str(e)) from None


def fresh_machine(module: ast.Module, args: argparse.Namespace) -> Callable[[], Machine]:
    """A maker of fresh machines of the launch, race tracking on unless --no-races (for replays)."""
    def make() -> Machine:
        m = launch_machine(module, args)
        if not args.no_races:
            track(m)
        return m
    return make


def launch_words(args: argparse.Namespace) -> list[str]:
    """The launch as `mbarrier run` arguments: FILE and the options given (for replay commands)."""
    words = [args.file]
    for option in ("launch", "kernel", "grid", "block", "cluster", "dynamic_shared"):
        value = getattr(args, option, None)
        if value is not None:
            words += [f"--{option.replace('_', '-')}", str(value)]
    for item in args.arg:
        words += ["--arg", item]
    for item in args.cta:
        words += ["--cta", item]
    return words


def warn_if_ptxas_rejects(module: ast.Module) -> None:
    """The simulator runs what the manual defines, even where ptxas refuses the text (a `.release`
    without a scope, a missing `.noComplete` on sm_8x ...): the user should know the kernel as written
    would not assemble. Lint's errors (its warnings are hazards, which the run itself reports)."""
    errors = [d for d in validate(module) if d.severity != "warning"]
    if errors:
        lint_name = "-" if module.path == STDIN_NAME else shlex.quote(module.path)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        sys.stderr.write(f"warning: ptxas would not assemble this module: {errors[0].format()}{more}; "
                         f"`mbarrier lint {lint_name}` lists them. Running it as written.\n")


def replay_notes(replay: Replay, result: RunResult) -> Iterator[str]:
    """Where a replayed schedule and the run parted: it ran out first (the rest ran round-robin: normal
    for a deadlock found by check, whose threads then spin until they park), or the run ended with
    steps of it unused (it was not recorded on this run)."""
    if replay.ended_at is not None:
        yield (f"note: the given schedule covers the first {replay.ended_at} of the {result.steps} steps; "
               "the rest ran round-robin")
    elif result.outcome not in ("limit", "interrupted"):
        left = replay.unused(len(result.machine.threads))
        if left:
            yield (f"warning: the run ended after {result.steps} steps with {left} steps of the given "
                   "schedule left unused: it was not recorded on this run")


def main(args: argparse.Namespace) -> int:
    deadline = Deadline(args.timeout, getattr(args, "started", None))
    try:
        module, m = load_launch(args, warn=not args.quiet, deadline=deadline)
    except TimeoutHit as e:
        return timed_out("run", e)
    try:
        writes = {o.buffer: o for o in launch_spec(args).outputs} | \
            {o.buffer: o for o in (output_option(w) for w in args.write)}
    except LaunchError as e:
        raise UsageError(str(e)) from None
    # before the run: a typo must not cost the run's verdict
    for option, name in [("--dump", n) for n, _ in args.dump] + [("--write", n) for n in writes]:
        if name not in m.buffers:
            raise UsageError(f"{option} {name}: no buffer of that name (buffers: {listing(list(m.buffers))})")
    fingerprint = launch_fingerprint(module, m, args.arg, args.dynamic_shared, launch_digest(args))
    if args.schedule is not None:
        scheduler: Replay | RandomScheduler = Replay(read_schedule(args.schedule, fingerprint))
        how = "replay of the given schedule"
    else:
        scheduler = RandomScheduler(args.seed, burst=args.burst)
        how = f"random schedule, seed {args.seed}, bursts of 1..{args.burst} steps"
    if args.trace and args.format != TEXT:
        raise UsageError("--trace prints text: it goes with --format text only")
    if args.compare and not launch_spec(args).capture_after:
        raise UsageError("--compare: the launch file holds no buffers as the GPU left them (`capture.after`, "
                         "written by mbarrier capture)")
    out = sys.stdout
    with Interrupt() as stop:
        if args.format == TEXT:
            out.write(f"{display_name(args.file)}: kernel {m.threads[0].func.name}, {cta_words(m)} of "
                      f"{len(m.ctas[0].threads)} threads, "
                      f"clusters of {len(m.ctas[0].cluster.ctas)}; {how}\n")
            out.flush()  # what is being run, while it runs
        if not args.no_races:
            track(m)
        progress = Progress.of("run", args)

        def monitor(steps: int) -> bool:
            progress.steps(steps)
            return stop()

        try:
            result = run(m, scheduler, max_steps=args.max_steps, trace=args.trace, monitor=monitor,
                         budget=Budget(deadline.at, memory_bound(args)), ahead=ModuleAhead(module, m),
                         module=module)
        except ScheduleError as e:
            raise UsageError(str(e)) from None
        finally:
            progress.close()
    if result.outcome == "error" and result.site is None:
        raise UsageError(result.message)
    notes = list(replay_notes(scheduler, result)) if isinstance(scheduler, Replay) else []
    differ = False
    if args.compare:
        for c in compare(launch_spec(args), m):
            differ |= not c.equal
            notes.append(comparison_text(c))
    dumps = {}
    for name, count in args.dump:
        base, size = m.buffers[name]
        dumps[name] = [m.gmem.load(base + 4 * i, 4) for i in range(min(count, size // 4))]
    if args.save_schedule:
        options.write_output(args.save_schedule, stamp(fingerprint, result.schedule) + "\n",
                             "--save-schedule")
    if args.perfetto or args.svg:
        tl = record(fresh_machine(module, args), result.schedule, result.steps)
        title = (f"{Path(display_name(args.file)).name}: kernel {m.threads[0].func.name}, {len(m.threads)} "
                 f"threads: {result.outcome.value} after {result.steps} steps")
        write_timelines(tl, title, args.perfetto, args.svg)
    try:
        written = write_outputs(list(writes.values()), m.buffers, m.gmem.read, launch_spec(args).array_types)
    except LaunchError as e:
        raise UsageError(str(e)) from None
    if args.format == JSON:
        sched = (Scheduler("replay") if isinstance(scheduler, Replay)
                 else Scheduler("random", args.seed, args.burst))
        launch = launch_of(module, m, parse_args(args.arg), dynamic_shared(args), launch_spec(args))
        write_json(run_report(result, display_name(args.file), launch, fingerprint, sched, not args.no_races,
                              dumps, notes))
        return _exit_code(result, differ)
    if result.trace is not None:
        for line in format_trace(result.trace):
            out.write(line + "\n")
    for aid, text in m.output:  # the kernel's printf output, in the order the schedule produced it
        out.write(f"[thread {aid}] {text}" + ("" if text.endswith("\n") else "\n"))
    paint = Painter(colour.enabled(sys.stdout))
    style = {"exited": "good", "limit": "warning", "interrupted": "warning",
             "unsupported": "warning"}.get(result.outcome, "error")
    for i, line in enumerate(format_outcome(result, fingerprint=fingerprint)):
        write_styled((paint(line, style) if i == 0 else printable(line)) + "\n")
    for line in notes:
        out.write(line + "\n")
    for name, words in dumps.items():
        out.write(f"{name}: {' '.join(str(w) for w in words)}\n")
    for path in written:
        out.write(f"wrote {path}\n")
    return _exit_code(result, differ)


def _exit_code(result: RunResult, differ: bool) -> int:
    code = EXIT_BY_OUTCOME[result.outcome]
    return EXIT_FINDINGS if differ and code == EXIT_CLEAN else code


def comparison_text(c: BufferComparison) -> str:
    """One line of `--compare`."""
    head = (f"compare {c.buffer}: the GPU changed {c.gpu_changed:,} of its {c.size:,} bytes, the replay "
            f"{c.replay_changed:,}")
    if c.equal and c.missing:
        return (f"{head}: the bytes the replay wrote are the GPU's; {c.missing:,} bytes the GPU changed "
                "belong to CTAs the replay left out")
    if c.equal:
        return f"{head}: the same bytes"
    return (f"{head}: DIFFERENT: {c.wrong:,} bytes the replay wrote differ from the GPU's, {c.missing:,} "
            "bytes the GPU changed the replay did not")
