"""Launch files: a launch described in JSON (or TOML), read into a `Launch` and checked field by field.

The format is documented in docs/launch.md. Every error names the file and the place in it
(`k.launch.json: params.s.fields[2].offset: ...`); what can only be judged against the kernel (a field
beyond its parameter, a pointer to an unknown buffer) is judged when the launch starts (`sim.launch`).
Buffers may be read from .npy files and written to them after a run (`sim.npy`: no numpy needed).
"""

from __future__ import annotations

import json
import random
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mbarrier.sim import npy
from mbarrier.sim.address import BUFFER_SLOT_BITS
from mbarrier.sim.errors import LaunchError
from mbarrier.sim.launchspec import (
    SCALAR_TYPES,
    Field,
    Fields,
    Launch,
    Output,
    Pointer,
    Raw,
    Scalar,
    TensorMapArg,
    TensorMapRef,
    Value,
)
from mbarrier.sim.memory import Buffer
from mbarrier.sim.tensormap import TensorMap, TensorMapError

T = TypeVar("T")
_TOP = ("kernel", "grid", "block", "cluster", "dynamic_shared", "ctas", "buffers", "tensor_maps", "params",
        "outputs", "capture")
_CAPTURE = ("command", "device", "driver", "process", "launch", "api", "ptx", "addresses", "after")
_TILED = ("encode", "tensorDataType", "tensorRank", "globalAddress", "globalDim", "globalStrides", "boxDim",
          "elementStrides", "interleave", "swizzle", "l2Promotion", "oobFill")
_IM2COL = ("encode", "tensorDataType", "tensorRank", "globalAddress", "globalDim", "globalStrides",
           "pixelBoxLowerCorner", "pixelBoxUpperCorner", "channelsPerPixel", "pixelsPerColumn",
           "elementStrides", "interleave", "swizzle", "l2Promotion", "oobFill")
_ENUM_DEFAULTS = {"interleave": "NONE", "swizzle": "NONE", "l2Promotion": "NONE", "oobFill": "NONE"}


class _Reader:
    """Walks the parsed document; every error names the file and the path to the value."""

    def __init__(self, source: str, base: Path) -> None:
        self.source = source
        self.base = base

    def fail(self, where: str, why: str) -> LaunchError:
        return LaunchError(f"{self.source}: {where}: {why}" if where else f"{self.source}: {why}")

    def obj(self, v: object, where: str, allowed: tuple[str, ...],
            required: tuple[str, ...] = ()) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise self.fail(where, f"expected an object, got {_show(v)}")
        for k in v:
            if k not in allowed:
                raise self.fail(where, f"unknown key {k!r} (expected one of: {', '.join(allowed)})")
        for k in required:
            if k not in v:
                raise self.fail(where, f"missing key {k!r}")
        return v

    def integer(self, v: object, where: str, lo: int | None = None, hi: int | None = None) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(where, f"expected an integer, got {_show(v)}")
        if lo is not None and v < lo or hi is not None and v > hi:
            bounds = f"at least {lo}" if hi is None else f"{lo}..{hi}"
            raise self.fail(where, f"{v} is out of range (expected {bounds})")
        return v

    def number(self, v: object, where: str) -> int | float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail(where, f"expected a number, got {_show(v)}")
        return v

    def string(self, v: object, where: str) -> str:
        if not isinstance(v, str) or not v:
            raise self.fail(where, f"expected a non-empty string, got {_show(v)}")
        return v

    def ints(self, v: object, where: str, lo: int | None = None, hi: int | None = None,
             lengths: tuple[int, int] = (0, 1 << 30)) -> tuple[int, ...]:
        if not isinstance(v, list):
            raise self.fail(where, f"expected a list of integers, got {_show(v)}")
        if not lengths[0] <= len(v) <= lengths[1]:
            raise self.fail(where, f"expected {lengths[0]} to {lengths[1]} integers, got {len(v)}")
        return tuple(self.integer(x, f"{where}[{i}]", lo, hi) for i, x in enumerate(v))

    def dims(self, v: object, where: str) -> tuple[int, ...]:
        if isinstance(v, int) and not isinstance(v, bool):
            return (self.integer(v, where, 1),)
        return self.ints(v, where, 1, None, (1, 3))

    def path(self, v: object, where: str) -> Path:
        p = Path(self.string(v, where))
        return p if p.is_absolute() else self.base / p

    def each(self, v: object, where: str, fn: Callable[[str, object, str], T]) -> dict[str, T]:
        if not isinstance(v, dict):
            raise self.fail(where, f"expected an object, got {_show(v)}")
        return {str(k): fn(str(k), x, f"{where}.{k}") for k, x in v.items()}


def _show(v: object) -> str:
    text = json.dumps(v) if isinstance(v, (str, int, float, bool, type(None))) else type(v).__name__
    return text if len(text) < 40 else text[:37] + "..."


# -- buffers -----------------------------------------------------------------------------------------
def _random_bytes(r: _Reader, spec: object, size: int, where: str) -> bytes:
    d = r.obj(spec, where, ("seed", "type", "low", "high"), ("seed",))
    rng = random.Random(r.integer(d["seed"], f"{where}.seed"))
    if "type" not in d:
        if "low" in d or "high" in d:
            raise r.fail(where, "low and high need a type")
        return rng.randbytes(size)
    ty = r.string(d["type"], f"{where}.type")
    if ty not in SCALAR_TYPES:
        raise r.fail(f"{where}.type", f"unknown type {ty!r} (expected one of: {', '.join(SCALAR_TYPES)})")
    kind, width = SCALAR_TYPES[ty]
    if size % width:
        raise r.fail(where, f"the buffer's {size} bytes are not a whole number of {ty}")
    if kind == "f":
        low, high = (r.number(d.get(k, dflt), f"{where}.{k}") for k, dflt in (("low", -1.0), ("high", 1.0)))
        return b"".join(Scalar(ty, rng.uniform(low, high)).encode() for _ in range(size // width))
    full = (0, (1 << 8 * width) - 1) if kind == "u" else (-(1 << 8 * width - 1), (1 << 8 * width - 1) - 1)
    low = r.integer(d.get("low", full[0]), f"{where}.low", full[0], full[1])
    high = r.integer(d.get("high", full[1]), f"{where}.high", low, full[1])
    return b"".join(Scalar(ty, rng.randint(low, high)).encode() for _ in range(size // width))


def _file_bytes(r: _Reader, v: object, where: str) -> tuple[bytes, tuple[str, tuple[int, ...]] | None]:
    path = r.path(v, where)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise r.fail(where, f"cannot read {path}: {e.strerror or e}") from None
    if path.suffix != ".npy":
        return data, None
    try:
        body, dtype, shape = npy.read(data)
    except npy.NpyError as e:
        raise r.fail(where, f"{path}: {e}") from None
    return body, (dtype, shape)


def _buffer(r: _Reader, launch: Launch, name: str, v: object, where: str) -> Buffer:
    d = r.obj(v, where, ("size", "random", "file"))
    if "random" in d and "file" in d:
        raise r.fail(where, "give contents as random or as a file, not both")
    data = b""
    if "file" in d:
        data, array = _file_bytes(r, d["file"], f"{where}.file")
        if array is not None:
            launch.array_types[name] = array
    if "size" in d:
        size = r.integer(d["size"], f"{where}.size", 0, 1 << BUFFER_SLOT_BITS)
        if len(data) > size:
            raise r.fail(f"{where}.size", f"{size} bytes cannot hold the file's {len(data)} bytes")
    elif "file" in d:
        size = len(data)
    else:
        raise r.fail(where, "missing key 'size' (or a file to take the size from)")
    if "random" in d:
        data = _random_bytes(r, d["random"], size, f"{where}.random")
    return Buffer(size, data, name)


# -- parameters ------------------------------------------------------------------------------------
def _pointer(r: _Reader, v: object, where: str) -> Pointer:
    if isinstance(v, str):
        return Pointer(r.string(v, where))
    d = r.obj(v, where, ("buffer", "offset"), ("buffer",))
    return Pointer(r.string(d["buffer"], f"{where}.buffer"),
                   r.integer(d.get("offset", 0), f"{where}.offset", 0))


def _raw(r: _Reader, v: object, where: str) -> Raw:
    text = r.string(v, where)
    try:
        return Raw(bytes.fromhex(text))
    except ValueError:
        raise r.fail(where, "expected hexadecimal bytes such as \"00ff10\"") from None


def _scalar(r: _Reader, d: dict[str, Any], where: str) -> Scalar:
    ty = r.string(d["type"], f"{where}.type")
    if ty not in SCALAR_TYPES:
        raise r.fail(f"{where}.type", f"unknown type {ty!r} (expected one of: {', '.join(SCALAR_TYPES)})")
    value = r.number(d.get("value"), f"{where}.value")
    s = Scalar(ty, value)
    try:
        s.encode()
    except LaunchError as e:
        raise r.fail(f"{where}.value", str(e)) from None
    return s


_FORMS = ("pointer", "tensor_map", "bytes", "value")


def _field_value(r: _Reader, d: dict[str, Any], where: str) -> Scalar | Pointer | Raw | TensorMapRef:
    forms = [k for k in _FORMS if k in d]
    if len(forms) != 1:
        raise r.fail(where, "expected exactly one of 'pointer', 'tensor_map', 'bytes', or 'type' with "
                     "'value'")
    if "type" in d and forms != ["value"]:
        raise r.fail(where, "'type' goes with 'value' only")
    form = forms[0]
    if form == "pointer":
        return _pointer(r, d["pointer"], f"{where}.pointer")
    if form == "tensor_map":
        return TensorMapRef(r.string(d["tensor_map"], f"{where}.tensor_map"))
    if form == "bytes":
        return _raw(r, d["bytes"], f"{where}.bytes")
    if "type" not in d:
        raise r.fail(where, "a value needs its 'type' (u8..u64, s8..s64, b8..b64, f16, bf16, f32, f64)")
    return _scalar(r, d, where)


def _param(r: _Reader, v: object, where: str) -> Value:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    d = r.obj(v, where, (*_FORMS, "type", "fields"))
    if "fields" in d:
        if len(d) != 1:
            raise r.fail(where, "'fields' stands alone: the other bytes of the parameter are zero")
        items = d["fields"]
        if not isinstance(items, list):
            raise r.fail(f"{where}.fields", f"expected a list of fields, got {_show(items)}")
        fields = []
        for i, item in enumerate(items):
            fw = f"{where}.fields[{i}]"
            fd = r.obj(item, fw, ("offset", *_FORMS, "type"), ("offset",))
            offset = r.integer(fd["offset"], f"{fw}.offset", 0)
            fields.append(Field(offset, _field_value(r, {k: x for k, x in fd.items() if k != "offset"}, fw)))
        return Fields(tuple(fields))
    return _field_value(r, d, where)


# -- tensor maps -------------------------------------------------------------------------------------
def _tensor_map(r: _Reader, v: object, where: str) -> TensorMapArg:
    d = r.obj(v, where, tuple(dict.fromkeys(_TILED + _IM2COL)), ("encode",))
    mode = r.string(d["encode"], f"{where}.encode")
    if mode not in ("tiled", "im2col"):
        raise r.fail(f"{where}.encode", f"expected \"tiled\" (cuTensorMapEncodeTiled) or \"im2col\" "
                     f"(cuTensorMapEncodeIm2col), got {_show(mode)}")
    keys = _TILED if mode == "tiled" else _IM2COL
    d = r.obj(d, where, keys, tuple(k for k in keys if k not in _ENUM_DEFAULTS))
    address = _pointer(r, d["globalAddress"], f"{where}.globalAddress")
    enums: dict[str, str] = {}
    for kind in ("tensorDataType", *_ENUM_DEFAULTS):
        try:
            given = r.string(d.get(kind, _ENUM_DEFAULTS.get(kind)), f"{where}.{kind}")
            enums[kind] = TensorMap.enum(kind, given)
        except TensorMapError as e:
            raise r.fail(f"{where}.{kind}", str(e)) from None
    rank = r.integer(d["tensorRank"], f"{where}.tensorRank")
    extra: dict[str, Any] = {}
    if mode == "tiled":
        extra["boxDim"] = r.ints(d["boxDim"], f"{where}.boxDim")
    else:
        for k in ("pixelBoxLowerCorner", "pixelBoxUpperCorner"):
            extra[k] = r.ints(d[k], f"{where}.{k}")
        for k in ("channelsPerPixel", "pixelsPerColumn"):
            extra[k] = r.integer(d[k], f"{where}.{k}")
    tm = TensorMap(mode, enums["tensorDataType"], rank, address.offset,
                   r.ints(d["globalDim"], f"{where}.globalDim"),
                   r.ints(d["globalStrides"], f"{where}.globalStrides"),
                   r.ints(d["elementStrides"], f"{where}.elementStrides"), interleave=enums["interleave"],
                   swizzle=enums["swizzle"], l2Promotion=enums["l2Promotion"], oobFill=enums["oobFill"],
                   **extra)
    try:
        tm.validate()  # buffers start 2^32-aligned: the offset's alignment is the address's
    except TensorMapError as e:
        raise r.fail(where, str(e)) from None
    return TensorMapArg(address, tm)


# -- outputs -----------------------------------------------------------------------------------------
def _output(r: _Reader, name: str, v: object, where: str) -> Output:
    if isinstance(v, str):
        d: dict[str, Any] = {"file": v}
    else:
        d = r.obj(v, where, ("file", "dtype", "shape"), ("file",))
    path = r.path(d["file"], f"{where}.file")
    if path.suffix not in (".npy", ".bin"):
        raise r.fail(f"{where}.file", f"{path.name}: expected a .npy or .bin file")
    dtype = r.string(d["dtype"], f"{where}.dtype") if "dtype" in d else None
    if dtype is not None:
        try:
            dtype = npy.typestr(dtype)
        except npy.NpyError as e:
            raise r.fail(f"{where}.dtype", str(e)) from None
    shape = r.ints(d["shape"], f"{where}.shape", 0) if "shape" in d else None
    if (dtype or shape) and path.suffix != ".npy":
        raise r.fail(where, "dtype and shape are for .npy files")
    return Output(name, str(path), dtype, shape)


def from_dict(data: object, source: str = "<launch>", base: Path | None = None) -> Launch:
    """A `Launch` from a parsed launch document (`source` names it in errors; file paths in it are
    relative to `base`, default the current directory)."""
    r = _Reader(source, base or Path("."))
    d = r.obj(data, "", _TOP)
    launch = Launch(source=source)
    if "kernel" in d:
        launch.kernel = r.string(d["kernel"], "kernel")
    for k in ("grid", "block", "cluster"):
        if k in d:
            setattr(launch, k, r.dims(d[k], k))
    if "dynamic_shared" in d:
        launch.dynamic_shared = r.integer(d["dynamic_shared"], "dynamic_shared", 0)
    if "ctas" in d:
        if not isinstance(d["ctas"], list) or not d["ctas"]:
            raise r.fail("ctas", f"expected a list of CTAs, got {_show(d['ctas'])}")
        launch.ctas = tuple(r.ints([c] if isinstance(c, int) else c, f"ctas[{i}]", 0, None, (1, 3))
                            for i, c in enumerate(d["ctas"]))
    launch.buffers = r.each(d.get("buffers", {}), "buffers", lambda n, v, w: _buffer(r, launch, n, v, w))
    launch.tensor_maps = r.each(d.get("tensor_maps", {}), "tensor_maps",
                                lambda _n, v, w: _tensor_map(r, v, w))
    params = r.each(d.get("params", {}), "params", lambda _n, v, w: _param(r, v, w))
    launch.params = {(int(k) if k.isdigit() else k): v for k, v in params.items()}
    outputs = r.each(d.get("outputs", {}), "outputs", lambda n, v, w: _output(r, n, v, w))
    for name in outputs:
        if name not in launch.buffers:
            raise r.fail(f"outputs.{name}", f"no buffer named {name!r} (buffers: "
                         f"{', '.join(launch.buffers) or 'none'})")
    launch.outputs = tuple(outputs.values())
    if "capture" in d:
        _capture(r, launch, d["capture"])
    return launch


def _capture(r: _Reader, launch: Launch, v: object) -> None:
    """`capture` (written by `mbarrier capture`, docs/capture.md): where the launch came from, and the
    buffers as the GPU left them (`after`: buffer -> file), which a replay is compared with."""
    d = r.obj(v, "capture", _CAPTURE)
    after = r.each(d.get("after", {}), "capture.after", lambda _n, x, w: _file_bytes(r, x, w)[0])
    for name in after:
        if name not in launch.buffers:
            raise r.fail(f"capture.after.{name}", f"no buffer named {name!r}")
    launch.capture_after = after
    if "ptx" in d and d["ptx"] is not None:
        launch.ptx = str(r.path(d["ptx"], "capture.ptx"))


def read(path: str | Path) -> Launch:
    """Read a launch file: JSON, or TOML when its name ends in .toml."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise LaunchError(f"{p}: cannot read the launch file: {getattr(e, 'strerror', None) or e}") from None
    try:
        data = tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
    except json.JSONDecodeError as e:
        raise LaunchError(f"{p}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    except tomllib.TOMLDecodeError as e:
        raise LaunchError(f"{p}: not valid TOML: {e}") from None
    return from_dict(data, str(p), p.parent)


def write_outputs(outputs: Sequence[Output], buffers: dict[str, tuple[int, int]],
                  read_bytes: Callable[[int, int], bytes],
                  array_types: Mapping[str, tuple[str, tuple[int, ...]]] | None = None) -> list[str]:
    """Write each output buffer (`read_bytes(address, size)` reads the machine's memory) and return the
    paths. A .npy gets the output's dtype and shape, else those of the .npy the buffer was read from
    (`array_types`) when they still cover it, else bytes."""
    written = []
    for out in outputs:
        base, size = buffers[out.buffer]
        data = read_bytes(base, size)
        path = Path(out.path)
        try:
            if path.suffix == ".bin":
                path.write_bytes(data)
            else:
                dtype, shape = (array_types or {}).get(out.buffer, ("|u1", None))
                if out.dtype is not None:
                    dtype, shape = out.dtype, None
                if out.shape is not None:
                    shape = out.shape
                elif shape is not None and len(data) != npy.itemsize(dtype) * _count(shape):
                    shape = None  # the buffer outgrew the array it was read from: flat
                path.write_bytes(npy.write(data, dtype, shape))
        except OSError as e:
            raise LaunchError(f"buffer {out.buffer!r}: cannot write {path}: {e.strerror or e}") from None
        except npy.NpyError as e:
            raise LaunchError(f"buffer {out.buffer!r} ({size} bytes) to {path}: {e}") from None
        written.append(str(path))
    return written


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def output_option(text: str) -> Output:
    """`NAME=FILE` of `run --write` (FILE relative to the current directory)."""
    name, sep, file = text.partition("=")
    if not sep or not name or Path(file).suffix not in (".npy", ".bin"):
        raise LaunchError(f"--write {text!r}: expected NAME=FILE.npy or NAME=FILE.bin")
    return Output(name, file)
