"""Assertions for kernel authors' own test suites (pytest or any runner that reports AssertionError):

    from mbarrier.testing import assert_lints_clean, assert_verifies

    def test_my_pipeline_is_correct() -> None:
        ptx = compile_my_kernel()                   # the PTX text, from nvcc, Triton, CuTe DSL ...
        assert_lints_clean(ptx)
        assert_verifies(ptx, mbarrier.Launch(grid=1, block=128))

A failure's message says what was found (each finding's kind, rule, line and message, a race's missing
edge) and how to replay it with `mbarrier run --schedule`; a check that could not finish (a bound) or
met an instruction the simulator does not support fails too, saying so: neither is a verification.
"""

from __future__ import annotations

import shlex

from mbarrier.api import Launch, check, lint
from mbarrier.explore.results import DEFAULT_MAX_STATES, Verdict
from mbarrier.report.model import CheckReport, Finding, LaunchInfo, LintReport

__all__ = ["assert_lints_clean", "assert_verifies", "explain", "replay_command"]


def replay_command(launch: LaunchInfo | None, schedule: str, file: str = "KERNEL.ptx") -> str:
    """The `mbarrier run` command that replays `schedule` on the launch, the PTX saved as `file`."""
    words = ["mbarrier", "run", file]
    if launch is not None:
        shapes = (("--grid", launch.grid), ("--block", launch.block), ("--cluster", launch.cluster))
        words += ["--kernel", launch.kernel]
        words += [w for opt, dims in shapes for w in (opt, ",".join(map(str, dims)))]
        for a in launch.args:
            words += ["--arg", f"{a.param}={a.value}" if a.value is not None else f"{a.param}=buf:{a.buffer}"]
        if launch.dynamic_shared is not None:
            words += ["--dynamic-shared", str(launch.dynamic_shared)]
    return shlex.join(words + ["--schedule", schedule])


def _finding(f: Finding, launch: LaunchInfo | None) -> str:
    head, _, rest = f.message.partition("\n")
    where = f" at line {f.line}" if f.line is not None else ""
    lines = [f"{f.kind.value} [{f.rule}]{where}: {head}"] + [f"  {x.strip()}" for x in rest.splitlines()]
    if f.missing_edge and "missing edge" not in f.message:
        lines.append(f"  missing edge: {f.missing_edge}")
    for w in f.waiters:
        lines.append(f"  thread {w.thread} at line {w.line}: {w.reason} ({w.state})")
    lines.append(f"  replay (the PTX saved as KERNEL.ptx): {replay_command(launch, f.schedule)}")
    return "\n".join(lines)


def explain(report: CheckReport) -> str:
    """Why a check did not verify, in words (the message of `assert_verifies`)."""
    if report.verdict == Verdict.FINDING:
        n = len(report.findings)
        return "\n".join([f"mbarrier check found {n} problem{'s' if n != 1 else ''} ({report.mode}):"]
                         + [_finding(f, report.launch) for f in report.findings])
    if report.verdict == Verdict.UNSUPPORTED and report.unsupported is not None:
        u = report.unsupported
        return (f"mbarrier check could not verify the kernel: the simulator does not support line {u.line} "
                f"({u.instruction}): {u.message}")
    return ("mbarrier check could not verify the kernel: not every interleaving was explored: "
            f"{report.covered}")


def assert_verifies(ptx: str, launch: Launch, *, max_states: int = DEFAULT_MAX_STATES,
                    timeout: float | None = None, races: bool = True, warp: bool = False,
                    symmetry: bool = False) -> CheckReport:
    """Check every interleaving of `launch` (the options are `mbarrier.check`'s) and fail unless the
    verdict is `verified`. Returns the report."""
    report = check(ptx, launch, max_states=max_states, timeout=timeout, races=races, warp=warp,
                   symmetry=symmetry)
    if report.verdict != Verdict.VERIFIED:
        raise AssertionError(explain(report))
    return report


def assert_lints_clean(ptx: str, *, target: str | None = None, strict: bool = False) -> LintReport:
    """Fail if lint finds an error (or, with `strict`, a warning): each diagnostic in the message."""
    report = lint(ptx, target=target, strict=strict)
    if report.failed:
        diags = [f"line {d.line}:{d.column}: {d.severity}: {d.message} [{d.rule}]"
                 for f in report.files for d in f.diagnostics]
        raise AssertionError("mbarrier lint: " + "; ".join(diags) if len(diags) == 1
                             else "mbarrier lint:\n" + "\n".join(diags))
    return report
