"""What the checker's tests share: a kernel from its text, a check's outcome, and the differential check
of the reductions (the same launch with and without them)."""

from __future__ import annotations

from pathlib import Path

from mbarrier import sim
from mbarrier.explore.check import CheckResult, Options, check
from mbarrier.ptx import ast


def load(tmp_path: Path, text: str, name: str = "k") -> ast.Module:
    p = tmp_path / f"{name}.ptx"
    p.write_text(text)
    return sim.load(p)


def outcome(r: CheckResult, merge_races: bool = False) -> tuple[str, frozenset[str]]:
    """The verdict and the kinds of findings. `merge_races`: races and violations are one kind (the
    reductions promise every deadlock, and for every reachable violation *some* violation: a race ends its
    path like any violation, so a violation behind a race may be reported as that race alone)."""
    kinds = frozenset(str(f.kind) for f in r.findings)
    if merge_races:
        kinds = frozenset("violation" if k == "race" else k for k in kinds)
    return r.verdict, kinds


def differential(module: ast.Module, *, block: int, grid: int = 1, cluster: int | None = None,
                 args: dict[str | int, object] | None = None, races: bool = True, max_states: int = 100_000,
                 walks: int = 0, merge_races: bool = False) -> tuple[CheckResult, CheckResult]:
    """The same launch checked with and without reductions, every finding kept (so no kind is cut off):
    the search without them completes, both give the same verdict and kinds of findings, and the
    reductions never cost states."""
    on, off = (check(module, grid=grid, block=block, cluster=cluster, args=args, options=Options(
        reductions=red, races=races, max_findings=1000, max_states=max_states, walks=walks))
        for red in (True, False))
    assert off.verdict != "incomplete"
    assert outcome(on, merge_races) == outcome(off, merge_races), (
        [(f.kind, f.rule) for f in on.findings], [(f.kind, f.rule) for f in off.findings])
    assert on.stats.states <= off.stats.states
    return on, off
