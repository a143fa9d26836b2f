"""Raw records to launch files (docs/launch.md, docs/capture.md): for each captured launch,
`NNN-KERNEL.launch.json`, its buffers `NNN-KERNEL.bK.bin` (the allocation before the launch) and
`NNN-KERNEL.bK.gpu.bin` (after it, when the launch changed it), and the PTX module `module-DIGEST.ptx`.

Each parameter becomes, by its bytes and the PTX's declaration: a pointer into a buffer, a tensor map
(the encode call's arguments), a typed scalar, raw bytes, or, for a struct, fields of those at their
offsets (the bytes between them as raw fields).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mbarrier.capture.interposer import CaptureError
from mbarrier.capture.ptxfind import PtxSources
from mbarrier.capture.records import RawLaunch, encodes, images, launches
from mbarrier.ptx.diagnostics import PtxSyntaxError
from mbarrier.sim import LaunchError, load_text, pick_kernel
from mbarrier.sim.launch import param_offsets
from mbarrier.sim.launchspec import SCALAR_TYPES
from mbarrier.spec import tensormap as tm
from mbarrier.spec.tensormap import TENSOR_MAP_SIZE

# Raw runs of a struct closer than this are written as one field (fewer, longer hex strings).
_GAP = 16


@dataclass
class Converted:
    """What `convert` wrote for one launch, and what it could not settle (said to the user)."""

    launch: Path | None
    kernel: str
    warnings: list[str] = field(default_factory=list)


def _enum(table: dict[str, Any], value: int, what: str) -> str:
    for name, v in table.items():
        if (v[0] if isinstance(v, tuple) else v) == value:
            return name
    raise CaptureError(f"{what} {value} is not a value this version of mbarrier knows")


def _tensor_map(call: dict[str, Any], buffer: str, offset: int) -> dict[str, Any]:
    """The launch file's tensor map: the encode call's arguments, enums by name, the address a buffer."""
    out: dict[str, Any] = {
        "encode": call["encode"],
        "tensorDataType": _enum(tm.DATA_TYPES, call["tensorDataType"], "tensorDataType"),
        "tensorRank": call["tensorRank"],
        "globalAddress": {"buffer": buffer, "offset": offset},
        "globalDim": call["globalDim"],
        "globalStrides": call["globalStrides"],
    }
    if call["encode"] == "tiled":
        out["boxDim"] = call["boxDim"]
    else:
        for k in ("pixelBoxLowerCorner", "pixelBoxUpperCorner", "channelsPerPixel", "pixelsPerColumn"):
            out[k] = call[k]
    out["elementStrides"] = call["elementStrides"]
    for key, table in (("interleave", tm.INTERLEAVES), ("swizzle", tm.SWIZZLES),
                       ("l2Promotion", tm.L2_PROMOTIONS), ("oobFill", tm.OOB_FILLS)):
        out[key] = _enum(table, call[key], key)
    return out


def _scalar(ptx_type: str, data: bytes) -> dict[str, Any] | None:
    """A typed value for a scalar parameter's bytes, or None (bytes say it exactly)."""
    ty = ptx_type.lstrip(".")
    if ty not in SCALAR_TYPES or SCALAR_TYPES[ty][1] != len(data):
        return None
    kind, size = SCALAR_TYPES[ty]
    if kind == "f":
        if ty == "bf16":
            return None
        value = struct.unpack({2: "<e", 4: "<f", 8: "<d"}[size], data)[0]
        return {"type": ty, "value": value} if math.isfinite(value) else None
    return {"type": ty, "value": int.from_bytes(data, "little", signed=kind == "s")}


def _raw_runs(data: bytes, start: int, end: int, taken: list[tuple[int, int]]) -> list[tuple[int, bytes]]:
    """The non-zero bytes of data[start:end] outside `taken`, as (offset, bytes) runs."""
    free = [i for i in range(start, end) if data[i] and not any(a <= i < b for a, b in taken)]
    runs: list[tuple[int, int]] = []
    for i in free:
        if runs and i - runs[-1][1] <= _GAP and not any(runs[-1][1] <= a < i + 1 for a, _ in taken):
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return [(a, data[a:b]) for a, b in runs]


def dumps(value: Any, indent: str = "") -> str:
    """JSON with one key per line, and lists of numbers or strings and small objects on one line."""
    flat = json.dumps(value)
    if not isinstance(value, (dict, list)) or len(indent) + len(flat) <= 100 and not (
            isinstance(value, dict) and any(isinstance(v, (dict, list)) and v for v in value.values())
            and len(flat) > 60):
        return flat
    inner = indent + " "
    if isinstance(value, list):
        return "[\n" + ",\n".join(inner + dumps(v, inner) for v in value) + "\n" + indent + "]"
    items = (f"{inner}{json.dumps(k)}: {dumps(v, inner)}" for k, v in value.items())
    return "{\n" + ",\n".join(items) + "\n" + indent + "}"


def _short(kernel: str) -> str:
    """A file-name stem for a kernel: a C++ name's qualified name without its template arguments
    (`_ZN7cutlass13device_kernel...` -> `cutlass_device_kernel`), else the name."""
    m = re.match(r"_Z(N?)", kernel)
    if m:
        parts, at = [], m.end()
        while (n := re.match(r"\d+", kernel[at:])) is not None:
            size = int(n.group())
            parts.append(kernel[at + n.end():at + n.end() + size])
            at += n.end() + size
            if not m.group(1):
                break
        if parts:
            kernel = "_".join(parts)
    return re.sub(r"[^A-Za-z0-9]+", "_", kernel).strip("_")[:48] or "kernel"


class _Writer:
    def __init__(self, raw: Path, out: Path, sources: PtxSources, command: Sequence[str]) -> None:
        self.raw, self.out, self.sources, self.command = raw, out, sources, list(command)
        self.modules: dict[str, Path] = {}

    def module(self, text: str) -> Path:
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        if digest not in self.modules:
            path = self.out / f"module-{digest}.ptx"
            path.write_text(text)
            self.modules[digest] = path
        return self.modules[digest]

    def write(self, n: int, r: RawLaunch) -> Converted:
        done = Converted(None, r.kernel)
        if r.result != 0:
            done.warnings.append(f"the launch failed on the GPU (CUresult {r.result}); nothing written")
            return done
        stem = f"{n:03d}-{_short(r.kernel)}"
        found = self.sources.find(r.kernel)
        params: list[tuple[str, str | None, tuple[int, ...]]] = []   # (key, PTX type, dims) per parameter
        ptx_name: str | None = None
        if found is None:
            done.warnings.append("no PTX defines this kernel (name one with --ptx FILE, or build with "
                                 "-gencode arch=compute_XX,code=compute_XX to embed it)")
        else:
            where, text = found
            ptx_name = self.module(text).name
            try:
                fn = pick_kernel(load_text(text, where), r.kernel)
            except (PtxSyntaxError, LaunchError) as e:
                done.warnings.append(f"the PTX of {where} cannot be read ({e}); parameters by position")
            else:
                # Each parameter's bytes are taken at the driver's offset and given under its PTX name; the
                # simulator lays them out as the PTX declares (the driver aligns them in its constant bank,
                # which may place a 64-aligned parameter elsewhere). Only the sizes must agree.
                offsets = param_offsets(fn)
                declared = tuple(offsets[p.name][1] for p in fn.params)
                if r.params and declared != tuple(size for _, size in r.params):
                    done.warnings.append(f"the PTX's parameter sizes {declared} are not the driver's "
                                         f"{tuple(size for _, size in r.params)}; parameters by position")
                else:
                    params = [(p.name, p.type, tuple(d or 0 for d in p.dims)) for p in fn.params]
        layout = r.params if r.params or not r.data else ((0, len(r.data)),)  # `extra`: one buffer
        if not params:
            params = [(str(i), None, ()) for i in range(len(layout))]

        buffers: dict[str, Any] = {}
        addresses: dict[str, str] = {}
        after: dict[str, str] = {}
        for k, (base, size) in enumerate(r.allocations):
            name = f"b{k}"
            addresses[name] = f"{base:#x}"
            before_file, after_file = r.snapshot(k, "before"), r.snapshot(k, "after")
            if not before_file.exists():
                buffers[name] = {"size": size}
                done.warnings.append(f"buffer {name} ({size:,} bytes at {base:#x}) was not copied (larger "
                                     "than --max-buffer): it starts as zeros")
                continue
            before = before_file.read_bytes()
            (self.out / f"{stem}.{name}.bin").write_bytes(before)
            buffers[name] = {"file": f"{stem}.{name}.bin"}
            if after_file.exists() and after_file.read_bytes() != before:
                (self.out / f"{stem}.{name}.gpu.bin").write_bytes(after_file.read_bytes())
                after[name] = f"{stem}.{name}.gpu.bin"

        calls = encodes(self.raw, r.pid)
        maps: dict[str, Any] = {}
        map_at: dict[int, str] = {}
        for at, index, alloc, offset in r.tensor_maps:
            name = f"t{index}"
            if alloc < 0:
                done.warnings.append(f"tensor map {name}: its globalAddress is in no allocation; left as "
                                     "bytes")
                continue
            maps.setdefault(name, _tensor_map(calls[index], f"b{alloc}", offset))
            map_at[at] = name
        pointer_at = {at: (f"b{alloc}", off) for at, alloc, off in r.pointers}

        values: dict[str, Any] = {}
        for (key, ptx_type, dims), (off, size) in zip(params, layout, strict=False):
            values[key] = self._param(r.data, off, size, ptx_type, dims, pointer_at, map_at)
        doc: dict[str, Any] = {"kernel": r.kernel, "grid": list(r.grid), "block": list(r.block)}
        if r.cluster != (1, 1, 1):
            doc["cluster"] = list(r.cluster)
        doc["dynamic_shared"] = r.dynamic_shared
        doc["buffers"] = buffers
        if maps:
            doc["tensor_maps"] = maps
        doc["params"] = values
        doc["capture"] = {"command": self.command, "device": r.device,
                          "driver": f"{r.driver // 1000}.{r.driver % 1000 // 10}", "process": r.pid,
                          "launch": r.index, "api": r.api, "ptx": ptx_name, "addresses": addresses,
                          "after": after}
        path = self.out / f"{stem}.launch.json"
        path.write_text(dumps(doc) + "\n")
        done.launch = path
        return done

    @staticmethod
    def _param(data: bytes, off: int, size: int, ptx_type: str | None, dims: tuple[int, ...],
               pointer_at: dict[int, tuple[str, int]], map_at: dict[int, str]) -> Any:
        inside_p = {a - off: v for a, v in pointer_at.items() if off <= a and a + 8 <= off + size}
        inside_m = {a - off: v for a, v in map_at.items() if off <= a and a + TENSOR_MAP_SIZE <= off + size}
        if set(inside_p) == {0} and size == 8 and not inside_m:
            buf, at = inside_p[0]
            return {"pointer": buf if at == 0 else {"buffer": buf, "offset": at}}
        if set(inside_m) == {0} and size == TENSOR_MAP_SIZE and not inside_p:
            return {"tensor_map": inside_m[0]}
        chunk = data[off:off + size]
        if not inside_p and not inside_m:
            typed = _scalar(ptx_type, chunk) if ptx_type and not dims else None
            return typed if typed is not None else {"bytes": chunk.hex()}
        fields: list[tuple[int, dict[str, Any]]] = []
        taken: list[tuple[int, int]] = []
        for at, (buf, boff) in inside_p.items():
            fields.append((at, {"pointer": buf if boff == 0 else {"buffer": buf, "offset": boff}}))
            taken.append((at, at + 8))
        for at, name in inside_m.items():
            fields.append((at, {"tensor_map": name}))
            taken.append((at, at + TENSOR_MAP_SIZE))
        for at, run in _raw_runs(chunk, 0, size, taken):
            fields.append((at, {"bytes": run.hex()}))
        return {"fields": [{"offset": at, **f} for at, f in sorted(fields, key=lambda x: x[0])]}


def convert(raw: Path, out: Path, command: Sequence[str] = (), ptx: Iterable[Path] = (),
            binaries: Iterable[Path] = ()) -> list[Converted]:
    """Write a launch file for every launch recorded in `raw` into `out`. PTX is looked for in `ptx`
    (files, or directories searched for *.ptx), then in the images the program loaded, then in
    `binaries` (the program's executable)."""
    found, broken = launches(raw)
    sources = PtxSources(ptx, images(raw), binaries)
    writer = _Writer(raw, out, sources, command)
    done = [writer.write(n, r) for n, r in enumerate(found)]
    return done + [Converted(None, path.name, ["the record is not whole: the program stopped during this "
                                               "launch"]) for path in broken]
