"""A launched machine described for the reports: its launch as data (`LaunchInfo`: kernel, shapes,
arguments) and its fingerprint, which every schedule the tools print or save starts with (a schedule
replayed on another module, kernel, shape or arguments is refused, naming the difference)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from mbarrier.explore.schedule import Fingerprint
from mbarrier.ptx import ast
from mbarrier.report.model import Argument, LaunchInfo, ParamBytes
from mbarrier.sim.compile import SPECIAL_SLOT
from mbarrier.sim.launchspec import Launch
from mbarrier.sim.machine import Machine
from mbarrier.sim.memory import Buffer

DIGEST_HEX = 8

ArgValue = int | Buffer | bytes


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_HEX]


def _dims(m: Machine, prefix: str) -> tuple[int, int, int]:
    regs = m.threads[0].regs
    x, y, z = (regs[SPECIAL_SLOT[f"{prefix}.{axis}"]] for axis in "xyz")
    assert isinstance(x, int) and isinstance(y, int) and isinstance(z, int)
    return x, y, z


def _param_names(module: ast.Module, m: Machine, keys: Mapping[str | int, object]) -> dict[str | int, str]:
    params = module.function(m.threads[0].func.name).params
    return {k: params[k].name if isinstance(k, int) and k < len(params) else str(k) for k in keys}


def _param_bytes(module: ast.Module, m: Machine, args: Mapping[str | int, object],
                 spec: Launch | None) -> tuple[ParamBytes, ...]:
    given = set(_param_names(module, m, args).values())
    from_file = set(_param_names(module, m, spec.params).values()) if spec is not None else set()
    out = []
    for name, (off, size) in m.params.names.items():
        source = "arg" if name in given else "launch" if name in from_file else "default"
        out.append(ParamBytes(name, off, size, source, m.params.data[off:off + size].hex()))
    return tuple(out)


def launch_of(module: ast.Module, m: Machine, args: Mapping[str | int, ArgValue],
              dynamic_shared: int | None, spec: Launch | None = None) -> LaunchInfo:
    """The launch of machine `m` of `module` with these arguments (keyed by name or position) and the
    launch file `spec` they override, if any."""
    names = _param_names(module, m, args)
    out = []
    for key, value in args.items():
        if isinstance(value, Buffer):
            out.append(Argument(names[key], buffer=value.size))
        elif isinstance(value, bytes):
            out.append(Argument(names[key], buffer=len(value)))
        else:
            out.append(Argument(names[key], value=value))
    return LaunchInfo(m.threads[0].func.name, _dims(m, "%nctaid"), _dims(m, "%ntid"),
                      _dims(m, "%cluster_nctaid"), len(m.threads), tuple(out), dynamic_shared,
                      _param_bytes(module, m, args, spec))


def arg_text(value: ArgValue) -> str:
    """An argument as `--arg P=...` spells it (`16`, `buf:4096`): what the fingerprint digests."""
    if isinstance(value, Buffer):
        return f"buf:{value.size}"
    if isinstance(value, bytes):
        return f"buf:{len(value)}"
    return str(value)


def launch_fingerprint(module: ast.Module, m: Machine, given: Mapping[str | int, str] | None = None,
                       dynamic_shared: int | None = None, launch_file: str = "") -> Fingerprint:
    """The fingerprint of the launch `m` of `module` with these arguments (by name or position, each as
    its `--arg` text), `--dynamic-shared` and the digest of a launch file (`sim.Launch.digest`, '' for
    none). Shapes are read from the machine (so `--grid 2` and `--grid 2,1,1` agree, and a cluster from
    .reqnctapercluster counts)."""
    kernel = m.threads[0].func.name
    params = module.function(kernel).params
    given = given or {}
    names = _param_names(module, m, given)
    by_name = {names[k]: v for k, v in given.items()}
    launch_args = [f"{p.name}={by_name.get(p.name, '')}" for p in params]
    launch_args.append(f"dynamic_shared={dynamic_shared}")
    if launch_file:
        launch_args.append(f"launch={launch_file}")
    grid, block, cluster = (",".join(map(str, _dims(m, p))) for p in ("%nctaid", "%ntid", "%cluster_nctaid"))
    return Fingerprint(module=_digest("\n".join(module.source_lines)), kernel=kernel, grid=grid, block=block,
                       cluster=cluster, args=_digest("\n".join(launch_args)))
