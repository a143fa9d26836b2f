"""The schedules the command line writes and reads back: each is stamped with the fingerprint of its
launch (`explore.schedule.Fingerprint`), and `run --schedule` refuses one recorded on another launch,
naming what differs, instead of replaying agent numbers that mean something else there."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from mbarrier.cli import UsageError
from mbarrier.explore.schedule import Fingerprint, ScheduleError, split
from mbarrier.ptx import ast
from mbarrier.sim.compile import SPECIAL_SLOT
from mbarrier.sim.machine import Machine

DIGEST_HEX = 8


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_HEX]


def _dims(m: Machine, prefix: str) -> str:
    regs = m.threads[0].regs
    return ",".join(str(regs[SPECIAL_SLOT[f"{prefix}.{axis}"]]) for axis in "xyz")


def launch_fingerprint(module: ast.Module, m: Machine, arg_items: Sequence[str] = (),
                       dynamic_shared: int | None = None) -> Fingerprint:
    """The fingerprint of the launch `m` of `module` with these `--arg` items and `--dynamic-shared`.
    Shapes are read from the machine (so `--grid 2` and `--grid 2,1,1` agree, and a cluster from
    .reqnctapercluster counts); arguments are keyed by parameter name, given by name or position."""
    kernel = m.threads[0].func.name
    params = module.function(kernel).params
    given = {}
    for item in arg_items:
        key, _, value = item.partition("=")
        name = params[int(key)].name if key.isdigit() and int(key) < len(params) else key
        given[name] = value
    launch_args = [f"{p.name}={given.get(p.name, '')}" for p in params]
    launch_args.append(f"dynamic_shared={dynamic_shared}")
    return Fingerprint(module=_digest("\n".join(module.source_lines)), kernel=kernel,
                       grid=_dims(m, "%nctaid"), block=_dims(m, "%ntid"), cluster=_dims(m, "%cluster_nctaid"),
                       args=_digest("\n".join(launch_args)))


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
