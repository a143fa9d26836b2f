"""The schedules the command line writes and reads back: each is stamped with the fingerprint of its
launch (`explore.schedule.Fingerprint`), and `run --schedule` refuses one recorded on another launch,
naming what differs, instead of replaying agent numbers that mean something else there."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mbarrier.cli import UsageError
from mbarrier.explore.schedule import Fingerprint, ScheduleError, split
from mbarrier.ptx import ast
from mbarrier.report.launch import launch_fingerprint as fingerprint_of
from mbarrier.sim.machine import Machine


def launch_fingerprint(module: ast.Module, m: Machine, arg_items: Sequence[str] = (),
                       dynamic_shared: int | None = None, launch_file: str = "") -> Fingerprint:
    """The fingerprint of the launch `m` of `module` with these `--arg` items and `--dynamic-shared`
    (arguments keyed by parameter name, given by name or position: `report.launch`), and the digest of
    its launch file (`Launch.digest`; '' without one)."""
    given: dict[str | int, str] = {}
    for item in arg_items:
        key, _, value = item.partition("=")
        given[int(key) if key.isdigit() else key] = value
    return fingerprint_of(module, m, given, dynamic_shared, launch_file)


def read_schedule(spec: str, here: Fingerprint) -> str:
    """The schedule string of `--schedule S` (or of the file of `@FILE`), checked against this launch."""
    text = spec
    if spec.startswith("@"):
        try:
            text = Path(spec[1:]).read_text()
        except OSError as e:
            raise UsageError(f"--schedule {spec}: {e.strerror or e}") from None
    try:
        recorded, _ = split(text)
    except ScheduleError as e:
        raise UsageError(f"--schedule: {e}") from None
    if recorded is not None:
        diff = recorded.differences(here)
        if diff:
            raise UsageError("--schedule: the schedule was recorded on another launch; it differs in "
                             + "; ".join(diff) + ". Replay it with the module and options it was "
                             "recorded on.")
    return text
