"""lint, run and check on PTX held in memory (the text Triton, Gluon or CuTe DSL hand out), returning the
typed results the JSON output is made of (`report.model`: the same fields, the same meaning).

    import mbarrier
    report = mbarrier.check(ptx, mbarrier.Launch(grid=1, block=128))
    assert report.verified, report.findings

An input the tools cannot take (text that does not parse, a launch that does not fit the kernel, an
unknown target) raises `InputError` (a `ValueError`); an instruction the simulator does not support is
the outcome or verdict `unsupported`, never a finding.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from mbarrier.explore.check import check_machine
from mbarrier.explore.results import DEFAULT_MAX_STATES, Options
from mbarrier.explore.run import DEFAULT_MAX_STEPS, Outcome
from mbarrier.explore.run import run as run_machine
from mbarrier.explore.schedule import Fingerprint, ScheduleError
from mbarrier.explore.schedulers import RandomScheduler, Replay
from mbarrier.ptx import ast
from mbarrier.ptx.diagnostics import PtxSyntaxError
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import coverage, validate
from mbarrier.report.launch import ArgValue, arg_text, launch_fingerprint, launch_of
from mbarrier.report.model import (
    CheckReport,
    Finding,
    LaunchInfo,
    LintReport,
    RunReport,
    Scheduler,
    check_report,
    lint_file,
    lint_report,
    run_report,
)
from mbarrier.sim import Buffer, LaunchError, Machine, SimError
from mbarrier.sim import Launch as LaunchSpec
from mbarrier.sim import launch as launch_kernel
from mbarrier.sim.races import track
from mbarrier.spec.targets import TARGET_MIN_VERSION, parse_target

DEFAULT_PATH = "<string>"

__all__ = ["Buffer", "CheckReport", "Finding", "InputError", "Launch", "LintReport", "RunReport", "check",
           "lint", "run"]


class InputError(ValueError):
    """PTX text, a launch or an option the tools cannot take; the message says why (file:line where
    there is one)."""


Dims = int | tuple[int, ...]


@dataclass(frozen=True)
class Launch:
    """How to launch the kernel: `grid` and `block` (and `cluster`) as X or (X, Y, Z); the `.entry` to
    launch (optional when the module has one); `args` by PTX name or 0-based position, an integer or a
    `Buffer` (zero-filled, or with data); `dynamic_shared` bytes for `.extern .shared` arrays."""

    grid: Dims = 1
    block: Dims = 1
    cluster: Dims | None = None
    kernel: str | None = None
    args: Mapping[str | int, ArgValue] = field(default_factory=dict)
    dynamic_shared: int | None = None


def lint(text: str, *, target: str | None = None, strict: bool = False,
         path: str = DEFAULT_PATH) -> LintReport:
    """ptxas's verdicts and lint's warnings on one PTX text, as `mbarrier lint --json` gives them
    (`path` names the text in the diagnostics). `strict`: warnings count as errors."""
    if target is not None and parse_target(target) is None:
        raise InputError(f"unknown target {target!r}; known: {', '.join(TARGET_MIN_VERSION)}")
    try:
        module = parse(text, path)
    except PtxSyntaxError as e:
        return lint_report([lint_file(path, e.diagnostics)], target, strict)
    diags = validate(module, target)
    if strict:
        diags = [dataclasses.replace(d, severity="error") if d.severity == "warning" else d for d in diags]
    c = coverage(module)
    return lint_report([lint_file(path, diags, (c.judged, c.not_judged))], target, strict)


def _module(text: str, path: str) -> ast.Module:
    try:
        return parse(text, path)
    except PtxSyntaxError as e:
        raise InputError(f"{path} does not parse:\n{e}") from None


def _machine(module: ast.Module, launch: Launch | LaunchSpec) -> Machine:
    try:
        if isinstance(launch, LaunchSpec):
            return launch_kernel(module, spec=launch)
        return launch_kernel(module, launch.kernel, grid=launch.grid, block=launch.block,
                             cluster=launch.cluster, args=launch.args, dynamic_shared=launch.dynamic_shared)
    except LaunchError as e:
        raise InputError(str(e)) from None


def _fingerprint(module: ast.Module, m: Machine, launch: Launch | LaunchSpec) -> Fingerprint:
    if isinstance(launch, LaunchSpec):  # a launch file: its digest stands for its arguments
        return launch_fingerprint(module, m, {}, launch.dynamic_shared, launch.digest())
    return launch_fingerprint(module, m, {k: arg_text(v) for k, v in launch.args.items()},
                              launch.dynamic_shared)


def _launch_info(module: ast.Module, m: Machine, launch: Launch | LaunchSpec) -> LaunchInfo:
    if isinstance(launch, Launch):
        return launch_of(module, m, launch.args, launch.dynamic_shared)
    return launch_of(module, m, {}, launch.dynamic_shared, launch)


def run(text: str, launch: Launch | LaunchSpec, *, seed: int = 0, burst: int = 8, schedule: str | None = None,
        races: bool = True, max_steps: int = DEFAULT_MAX_STEPS, path: str = DEFAULT_PATH) -> RunReport:
    """One run of the kernel on the simulator, as `mbarrier run --json` gives it: under the random
    schedule of `seed` (each pick runs 1..`burst` steps of one agent), or replaying `schedule` (a string
    `mbarrier run`, `check` or a report printed). `races`: happens-before tracking and race findings.
    `launch` is a `Launch`, or a launch file's `mbarrier.sim.Launch` (`sim.read_launch(path)`: struct
    parameters, named buffers, tensor maps; docs/launch.md)."""
    if burst < 1 or max_steps < 1:
        raise InputError("burst and max_steps must be at least 1")
    module = _module(text, path)
    m = _machine(module, launch)
    fingerprint = _fingerprint(module, m, launch)
    scheduler = Replay(schedule) if schedule is not None else RandomScheduler(seed, burst=burst)
    if races:
        track(m)
    try:
        result = run_machine(m, scheduler, max_steps=max_steps, module=module)
    except ScheduleError as e:
        raise InputError(str(e)) from None
    if result.outcome == Outcome.ERROR:
        raise InputError(result.message)
    sched = Scheduler("replay") if schedule is not None else Scheduler("random", seed, burst)
    return run_report(result, path, _launch_info(module, m, launch), fingerprint,
                      sched, races)


def check(text: str, launch: Launch | LaunchSpec, *, max_states: int = DEFAULT_MAX_STATES,
          timeout: float | None = None, max_findings: int = 8, races: bool = True, warp: bool = False,
          reductions: bool = True, sleep: bool = True, symmetry: bool = False,
          path: str = DEFAULT_PATH) -> CheckReport:
    """Every interleaving of the launch, as `mbarrier check --json` gives it: `verified`, each finding
    with its shortest schedule, `incomplete` (a bound: `max_states`, `timeout` seconds) or
    `unsupported`. The options are `mbarrier check`'s (`warp`: a weaker guarantee; `reductions=False`
    is `--no-reduce`)."""
    if max_states < 1 or max_findings < 1 or (
            timeout is not None and not (math.isfinite(timeout) and timeout > 0)):
        raise InputError("max_states and max_findings must be at least 1, timeout above 0")
    module = _module(text, path)
    m = _machine(module, launch)
    fingerprint = _fingerprint(module, m, launch)
    opts = Options(max_states=max_states, timeout=timeout, reductions=reductions, races=races,
                   symmetry=symmetry, warp=warp, max_findings=max_findings, sleep=sleep)
    try:
        result = check_machine(m, module, opts)
    except SimError as e:
        raise InputError(str(e)) from None
    return check_report(result, path, _launch_info(module, m, launch), fingerprint)
