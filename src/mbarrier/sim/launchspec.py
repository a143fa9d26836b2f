"""A launch described as data: the kernel, its shapes, named global buffers, each parameter as a value or
as fields at byte offsets, tensor maps, and the buffers to write out after a run. `Launch` is what a
launch file holds (`sim.launchfile` reads one), what `sim.launch(module, spec=...)` takes, and what the
command line's options override.

The parameter bytes are built here, against the kernel's declarations: a field past its parameter's
end, two fields that overlap, a pointer to an unknown buffer, a tensor map outside the limits of the
encode call that describes it are `LaunchError`s naming the parameter and the field.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from mbarrier.ptx import ast
from mbarrier.sim.errors import LaunchError
from mbarrier.sim.memory import Buffer
from mbarrier.sim.tensormap import TensorMap, TensorMapError
from mbarrier.sim.types import TYPES
from mbarrier.spec.tensormap import TENSOR_MAP_ALIGN

#: Scalar field types: the PTX fundamental types of 8 to 64 bits, and bf16 (stored as its 16 bits).
SCALAR_TYPES: dict[str, tuple[str, int]] = {
    **{f"{k}{n}": (k, n // 8) for k in "usb" for n in (8, 16, 32, 64)},
    "f16": ("f", 2), "bf16": ("f", 2), "f32": ("f", 4), "f64": ("f", 8),
}


@dataclass(frozen=True)
class Scalar:
    """An integer or float of a given type (`u32`, `s64`, `f32`, `bf16`, ...)."""

    type: str
    value: int | float

    def encode(self) -> bytes:
        kind, size = SCALAR_TYPES[self.type]
        if kind == "f":
            v = float(self.value)
            if self.type == "bf16":
                bits = int.from_bytes(struct.pack("<f", v), "little")
                # round to nearest even (a NaN stays a quiet NaN)
                bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 if v == v else 0x7FC0
                return (bits & 0xFFFF).to_bytes(2, "little")
            return struct.pack({2: "<e", 4: "<f", 8: "<d"}[size], v)
        if not isinstance(self.value, int):
            raise LaunchError(f"a {self.type} takes an integer, not {self.value!r}")
        lo = 0 if kind == "u" else -(1 << (8 * size - 1))
        if not lo <= self.value < 1 << (8 * size):
            raise LaunchError(f"{self.value} does not fit a {self.type}")
        return (self.value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


@dataclass(frozen=True)
class Pointer:
    """The address of byte `offset` of a named buffer."""

    buffer: str
    offset: int = 0


@dataclass(frozen=True)
class Raw:
    """Bytes as they are."""

    data: bytes


@dataclass(frozen=True)
class TensorMapRef:
    """The 128-byte CUtensorMap of a named tensor map of the launch."""

    name: str


FieldValue = Scalar | Pointer | Raw | TensorMapRef


@dataclass(frozen=True)
class Field:
    offset: int
    value: FieldValue


@dataclass(frozen=True)
class Fields:
    """A parameter built from fields at byte offsets (a struct); the bytes no field covers are zero."""

    fields: tuple[Field, ...]


#: A parameter's value: an integer of the parameter's type, or one of the forms above.
Value = int | Scalar | Pointer | Raw | TensorMapRef | Fields


@dataclass(frozen=True)
class TensorMapArg:
    """A tensor map of the launch: the encode call's arguments, its globalAddress a buffer and offset."""

    address: Pointer
    map: TensorMap


@dataclass(frozen=True)
class Output:
    """A buffer to write after a run: to `path` (.npy or .bin), as `dtype` (a numpy type name) and
    `shape` for .npy (default: those of the .npy it was read from, else bytes)."""

    buffer: str
    path: str
    dtype: str | None = None
    shape: tuple[int, ...] | None = None


@dataclass
class Launch:
    """A launch as data. Every field may be left out (None or empty): `sim.launch` takes the missing
    ones from its own arguments, and its arguments override what is here."""

    kernel: str | None = None
    grid: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None
    cluster: tuple[int, ...] | None = None
    dynamic_shared: int | None = None
    #: run only the clusters holding these CTAs of the grid (None: every CTA)
    ctas: tuple[tuple[int, ...], ...] | None = None
    buffers: dict[str, Buffer] = field(default_factory=dict)
    params: dict[str | int, Value] = field(default_factory=dict)
    tensor_maps: dict[str, TensorMapArg] = field(default_factory=dict)
    outputs: tuple[Output, ...] = ()
    #: numpy dtype and shape of buffers read from .npy files (the default of their outputs)
    array_types: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    #: a captured launch's buffers as the GPU left them (`mbarrier capture`), to compare a replay with
    capture_after: dict[str, bytes] = field(default_factory=dict)
    #: the PTX module a captured launch names (`capture.ptx`, relative to the launch file resolved)
    ptx: str | None = None
    source: str = ""  # where it was read from, for messages

    def digest(self) -> str:
        """A digest of everything that changes the run (not the outputs): for schedule fingerprints."""
        h = hashlib.sha256()
        for part in (self.kernel, self.grid, self.block, self.cluster, self.dynamic_shared, self.ctas,
                     sorted((str(k), repr(v)) for k, v in self.params.items()),
                     sorted((k, repr(v)) for k, v in self.tensor_maps.items())):
            h.update(repr(part).encode())
        for name, buf in self.buffers.items():
            h.update(f"{name}:{buf.size}:".encode())
            h.update(hashlib.sha256(buf.data).digest())
        return h.hexdigest()


@dataclass
class Context:
    """What encoding a parameter needs from the launch: buffer addresses, tensor maps, address size."""

    addresses: dict[str, tuple[int, int]]   # buffer name -> (base, size)
    tensor_maps: Mapping[str, TensorMapArg]
    address_size: int = 64
    encoded: dict[str, bytes] = field(default_factory=dict)

    def address(self, p: Pointer, where: str) -> int:
        found = self.addresses.get(p.buffer)
        if found is None:
            raise LaunchError(f"{where}: no buffer named {p.buffer!r} (buffers: "
                              f"{', '.join(self.addresses) or 'none'})")
        base, size = found
        if not 0 <= p.offset <= size:
            raise LaunchError(f"{where}: offset {p.offset} is outside buffer {p.buffer!r} ({size} bytes)")
        return base + p.offset

    def tensor_map(self, name: str, where: str) -> bytes:
        if name in self.encoded:
            return self.encoded[name]
        arg = self.tensor_maps.get(name)
        if arg is None:
            raise LaunchError(f"{where}: no tensor map named {name!r} (tensor maps: "
                              f"{', '.join(self.tensor_maps) or 'none'})")
        address = self.address(arg.address, f"tensor map {name!r}: globalAddress")
        try:
            data = replace(arg.map, globalAddress=address).encode()
        except TensorMapError as e:
            raise LaunchError(f"tensor map {name!r}: {e}") from None
        self.encoded[name] = data
        return data


def _field_bytes(value: FieldValue, at: int, ctx: Context, where: str) -> bytes:
    """A field's bytes; `at` is its offset in the parameter memory (a CUtensorMap must be 64-aligned)."""
    if isinstance(value, Scalar):
        try:
            return value.encode()
        except LaunchError as e:
            raise LaunchError(f"{where}: {e}") from None
    if isinstance(value, Pointer):
        return ctx.address(value, where).to_bytes(ctx.address_size // 8, "little")
    if isinstance(value, TensorMapRef):
        if at % TENSOR_MAP_ALIGN:
            raise LaunchError(f"{where}: a CUtensorMap must be {TENSOR_MAP_ALIGN}-byte aligned "
                              f"(cuTensorMapEncode*), but it would be at parameter memory offset {at}")
        return ctx.tensor_map(value.name, where)
    return value.data


def _describe(v: FieldValue) -> str:
    if isinstance(v, Scalar):
        return v.type
    if isinstance(v, Pointer):
        return f"pointer to {v.buffer!r}"
    if isinstance(v, TensorMapRef):
        return f"tensor map {v.name!r}"
    return f"{len(v.data)} raw bytes"


def param_bytes(p: ast.Param, size: int, at: int, value: Value, ctx: Context,
                check_pointer: Callable[[ast.Param, int], None]) -> bytes:
    """The bytes of parameter `p` (`size` bytes at offset `at` of the parameter memory) for `value` in
    any form but a plain integer. `check_pointer(p, address)` judges a pointer against `.ptr`."""
    where = f"parameter {p.name!r}"
    if isinstance(value, Fields):
        out = bytearray(size)
        spans: list[tuple[int, int, int]] = []
        for i, f in enumerate(value.fields):
            fw = f"{where}, field {i} ({_describe(f.value)} at offset {f.offset})"
            data = _field_bytes(f.value, at + f.offset, ctx, fw)
            if f.offset < 0 or f.offset + len(data) > size:
                raise LaunchError(f"{fw}: its {len(data)} bytes end at byte {f.offset + len(data)}, beyond "
                                  f"the {size} bytes of the parameter")
            for j, start, end in spans:
                if start < f.offset + len(data) and f.offset < end:
                    raise LaunchError(f"{fw}: overlaps field {j} (bytes {start}..{end - 1})")
            spans.append((i, f.offset, f.offset + len(data)))
            out[f.offset:f.offset + len(data)] = data
        return bytes(out)
    if isinstance(value, int):
        raise AssertionError("plain integers are encoded by the launch")
    data = _field_bytes(value, at, ctx, where)
    if len(data) != size:
        raise LaunchError(f"{where} takes {size} bytes; a {_describe(value)} is {len(data)}")
    if isinstance(value, Pointer):
        check_pointer(p, int.from_bytes(data, "little"))
    return data


def pointer_sized(p: ast.Param, address_size: int) -> bool:
    ty = TYPES.get(p.type)
    return ty is not None and not p.dims and ty.bits == address_size and not ty.float
