"""The raw records the interposer writes (`interpose.c`), read back: one `RawLaunch` per launch file,
the encode calls of each process, the images its modules were loaded from. File names start with the
process id (a command may start several processes)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class RawLaunch:
    """One captured launch: shapes, the parameter bytes and the driver's layout of them (offset, size
    per parameter), the tensor maps found in them (offset, encode call, allocation, offset in it), the
    pointers (offset, allocation, offset in it) and the allocations (device address, size)."""

    dir: Path
    pid: int
    index: int
    api: str
    kernel: str
    device: str
    driver: int
    grid: Dim3
    block: Dim3
    cluster: Dim3
    dynamic_shared: int
    layout: str
    params: tuple[tuple[int, int], ...]
    data: bytes
    tensor_maps: tuple[tuple[int, int, int, int], ...]
    pointers: tuple[tuple[int, int, int], ...]
    allocations: tuple[tuple[int, int], ...]
    result: int

    def snapshot(self, alloc: int, when: str) -> Path:
        """The file of allocation `alloc` before or after the launch (absent when it was too large)."""
        return self.dir / f"{self.pid}-launch-{self.index}.alloc-{alloc}.{when}.bin"


def _dim3(v: Any) -> Dim3:
    return (int(v[0]), int(v[1]), int(v[2]))


def launches(raw: Path) -> tuple[list[RawLaunch], list[Path]]:
    """Every launch recorded in `raw`, by process and order of launch, and the records that are not
    whole (the program stopped during that launch)."""
    out, broken = [], []
    for path in sorted(raw.glob("*-launch-*.json")):
        m = re.fullmatch(r"(\d+)-launch-(\d+)\.json", path.name)
        if not m:
            continue
        try:
            d = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            broken.append(path)
            continue
        # cuFuncGetParamInfo's offsets are the driver's, aligned in its constant bank: the first may not be
        # 0 (48 for a Triton kernel whose first parameter is a 64-aligned tensor map, driver 580); offsets
        # here are from the first parameter
        base = int(d["params"][0][0]) if d["params"] else 0
        out.append(RawLaunch(
            raw, int(m[1]), int(m[2]), d["api"], d["kernel"], d["device"], int(d["driver"]),
            _dim3(d["grid"]), _dim3(d["block"]),
            _dim3(d["cluster"]), int(d["dynamic_shared"]), d["param_layout"],
            tuple((int(a) - base, int(b)) for a, b in d["params"]), bytes.fromhex(d["bytes"])[base:],
            tuple((int(a) - base, int(b), int(c), int(e)) for a, b, c, e in d["tensor_maps"]),
            tuple((int(a) - base, int(b), int(c)) for a, b, c in d["pointers"]),
            tuple((int(a), int(b)) for a, b in d["allocations"]), int(d["result"])))
    return sorted(out, key=lambda r: (r.pid, r.index)), broken


def encodes(raw: Path, pid: int) -> dict[int, dict[str, Any]]:
    """The encode calls of process `pid` by index: the arguments as the interposer wrote them."""
    path = raw / f"{pid}-encode.jsonl"
    if not path.exists():
        return {}
    calls = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {int(c["index"]): c for c in calls}


def images(raw: Path) -> list[tuple[Path, str]]:
    """The images modules were loaded from: (file, kind: ptx, fatbin, cubin)."""
    out = []
    for meta in sorted(raw.glob("*-image-*.json")):
        kind = json.loads(meta.read_text())["kind"]
        out.append((meta.with_suffix(".bin"), str(kind)))
    return out
