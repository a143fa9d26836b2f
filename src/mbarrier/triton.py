"""Triton kernels on the simulator: compile a `@triton.jit` function for sm_90 on a machine without a GPU,
and build the launch Triton's own launcher would make from the compiled kernel, a grid and the kernel's
arguments (numpy arrays or torch CPU tensors as buffers, Python numbers as scalars, host-side
`TensorDescriptor`s as tensor maps).

    k = mbarrier.triton.compile_for_sm90(add, {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32",
                                              "BLOCK": "constexpr"}, {"BLOCK": 256})
    tl = mbarrier.triton.launch_from_triton(k, grid=4, args=[x, y, out, 1000])
    m = tl.machine(); explore.run(m, explore.RandomScheduler(seed=1)); tl.write_back(m)   # out updated

Triton is an optional dependency (`pip install 'mbarrier[triton]'`); the launch layout follows Triton 3.6's
CUDA launcher (`triton/backends/nvidia/driver.py`, `make_launcher`, `make_tensordesc_arg`, and
`fillTMADescriptor` in `driver.c`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mbarrier.ptx import ast
from mbarrier.sim.errors import LaunchError
from mbarrier.sim.launch import launch, load_text
from mbarrier.sim.launchspec import Launch, Pointer, Scalar, TensorMapArg, TensorMapRef, Value
from mbarrier.sim.machine import Machine
from mbarrier.sim.memory import Buffer
from mbarrier.sim.tensormap import TensorMap
from mbarrier.spec.tensormap import DATA_TYPES, SWIZZLES

#: The Triton release whose launcher this module reproduces (its hidden parameters, its tensor maps).
TRITON_VERSION = "3.6"

#: Triton's scalar types (`ty_to_cpp` in driver.py) as the simulator's scalar field types.
SCALARS = {
    "i1": "s8", "i8": "s8", "i16": "s16", "i32": "s32", "i64": "s64",
    "u1": "u8", "u8": "u8", "u16": "u16", "u32": "u32", "u64": "u64",
    "fp16": "f16", "bf16": "bf16", "fp32": "f32", "f32": "f32", "fp64": "f64",
}

#: Triton's device-side TMA element types differ from the host enum (`TMA_DTYPE_DEVICE_TO_HOST`).
_DEVICE_TO_HOST = {**{i: i for i in range(16)}, 8: 10, 9: 8, 10: 9}
_DATA_TYPE_NAMES = {code: name for name, (code, _) in DATA_TYPES.items()}
_SWIZZLE_NAMES = {code: name for name, (code, _) in SWIZZLES.items()}


def _triton() -> Any:
    try:
        return importlib.import_module("triton")
    except ImportError:
        raise LaunchError("mbarrier.triton needs Triton: pip install 'mbarrier[triton]' "
                          f"(Triton {TRITON_VERSION})") from None


def compile_for_sm90(fn: Any, signature: Mapping[str, str], constexprs: Mapping[str, Any] | None = None, *,
                     num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1, arch: int = 90) -> Any:
    """`triton.compile` of the `@triton.jit` function `fn` for an sm_`arch` GPU, which needs no GPU.
    `signature`: every parameter's Triton type (`*fp32`, `i32`, `tensordesc<fp16[64, 64]>`, `constexpr`);
    `constexprs`: the constexpr parameters' values. Returns Triton's CompiledKernel."""
    triton = _triton()
    compiler = importlib.import_module("triton.compiler")
    target = importlib.import_module("triton.backends.compiler").GPUTarget("cuda", arch, 32)
    src = compiler.ASTSource(fn, dict(signature), dict(constexprs or {}))
    return triton.compile(src, target=target,
                          options={"num_warps": num_warps, "num_stages": num_stages, "num_ctas": num_ctas})


@dataclass
class TritonLaunch:
    """A Triton launch for the simulator: the PTX module, the launch as data, and the arrays behind its
    buffers (by buffer name: the kernel parameter that first passed it), numpy views of the arguments'
    memory (a torch tensor's view shares it: writing the view writes the tensor)."""

    module: ast.Module
    spec: Launch
    arrays: dict[str, np.ndarray[Any, Any]] = field(default_factory=dict)

    def machine(self, **overrides: Any) -> Machine:
        """`sim.launch` of this launch (keyword arguments as sim.launch takes them override it)."""
        return launch(self.module, spec=self.spec, **overrides)

    def read(self, machine: Machine, name: str) -> np.ndarray[Any, Any]:
        """Buffer `name` after a run, as an array of the dtype and shape of the argument it came from."""
        a = self.arrays.get(name)
        if a is None:
            raise LaunchError(f"no buffer named {name!r} (buffers: {', '.join(self.arrays) or 'none'})")
        data = machine.gmem.read(*machine.buffers[name])
        return np.frombuffer(data, dtype=a.dtype).reshape(a.shape).copy()

    def write_back(self, machine: Machine) -> None:
        """Copy every buffer after a run into the numpy array or torch tensor it came from, as the GPU
        run would have left them."""
        for name, a in self.arrays.items():
            np.copyto(a, self.read(machine, name))


def _as_array(value: Any) -> np.ndarray[Any, Any] | None:
    """A numpy view of a numpy array or a CPU torch tensor (bf16 and the like as their bits), else None."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.startswith("torch") and hasattr(value, "numpy"):
        if value.device.type != "cpu":
            raise LaunchError(f"a torch tensor on {value.device} cannot be a buffer: pass a CPU tensor")
        t = value.detach()
        try:
            return t.numpy()  # type: ignore[no-any-return]
        except TypeError:  # a dtype numpy lacks (bfloat16): its bits, as integers of its width
            torch = importlib.import_module("torch")
            bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
            return t.view(bits).numpy()  # type: ignore[no-any-return]
    return None


class _Builder:
    def __init__(self, kernel: str) -> None:
        self.kernel = kernel
        self.spec = Launch()
        self.arrays: dict[str, np.ndarray[Any, Any]] = {}
        self.by_address: dict[tuple[int, int], str] = {}

    def buffer(self, name: str, value: Any) -> Pointer:
        arr = _as_array(value)
        if arr is None:
            raise LaunchError(f"{self.kernel}: argument {name!r} is a pointer; give a numpy array or a CPU "
                              f"torch tensor, not {type(value).__name__}")
        if not arr.flags.c_contiguous:
            raise LaunchError(f"{self.kernel}: argument {name!r}: the array is not contiguous (C order): "
                              "pass np.ascontiguousarray(...) or .contiguous()")
        key = (arr.__array_interface__["data"][0], arr.nbytes)
        if key in self.by_address:  # the same memory passed twice is one buffer, as on the GPU
            return Pointer(self.by_address[key])
        for (start, size), other in self.by_address.items():
            if start < key[0] + key[1] and key[0] < start + size:
                raise LaunchError(f"{self.kernel}: argument {name!r} overlaps buffer {other!r} without "
                                  "being the same array: pass one array and offsets instead")
        self.by_address[key] = name
        self.arrays[name] = arr
        self.spec.buffers[name] = Buffer(arr.nbytes, arr.tobytes())
        return Pointer(name)

    def tensor_desc(self, name: str, desc: Any, meta: Mapping[str, Any] | None) -> list[Value]:
        """`make_tensordesc_arg` (driver.py) and `fillTMADescriptor` (driver.c) of Triton 3.6: the
        CUtensorMap, then the shape as i32 and the strides as i64."""
        if meta is None:
            raise LaunchError(f"{self.kernel}: argument {name!r}: the kernel was compiled without TMA for "
                              "this descriptor (no tensordesc_meta); only TMA-lowered descriptors are "
                              "supported")
        shape, strides = [int(s) for s in desc.shape], [int(s) for s in desc.strides]
        if strides[-1] != 1:
            raise LaunchError(f"{self.kernel}: argument {name!r}: the last dimension must be contiguous "
                              f"(strides {strides})")
        if meta["fp4_padded"]:
            shape[-1] *= 2
        elem = int(meta["elem_size"])
        rank = len(meta["block_size"])
        mapname = f"{name}.map"
        # driver.c reverses every list (innermost first) and scales the strides by the element size
        self.spec.tensor_maps[mapname] = TensorMapArg(self.buffer(name, desc.base), TensorMap(
            mode="tiled",
            tensorDataType=_DATA_TYPE_NAMES[_DEVICE_TO_HOST[int(meta["elem_type"])]],
            tensorRank=rank,
            globalAddress=0,
            globalDim=tuple(reversed(shape)),
            globalStrides=tuple(reversed([s * elem for s in strides[:-1]])),
            boxDim=tuple(reversed([int(b) for b in meta["block_size"]])),
            elementStrides=(1,) * rank,
            interleave="CU_TENSOR_MAP_INTERLEAVE_NONE",
            swizzle=_SWIZZLE_NAMES[int(meta["swizzle"])],
            l2Promotion="CU_TENSOR_MAP_L2_PROMOTION_L2_128B",
            oobFill=("CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA" if desc.padding == "nan"
                     else "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"),
        ))
        return [TensorMapRef(mapname), *(Scalar("s32", s) for s in shape),
                *(Scalar("s64", s) for s in strides)]

    def scalar(self, name: str, ty: str, value: Any) -> Scalar:
        kind = SCALARS.get(ty)
        if kind is None:
            raise LaunchError(f"{self.kernel}: argument {name!r} has Triton type {ty!r}, which this module "
                              "does not know")
        numbers = (int, np.integer) if kind[0] != "f" else (int, float, np.integer, np.floating)
        if not isinstance(value, numbers):
            what = "an integer" if kind[0] != "f" else "a number"
            raise LaunchError(f"{self.kernel}: argument {name!r} ({ty}) takes {what}, not {value!r}")
        return Scalar(kind, float(value) if kind[0] == "f" else int(value))


def launch_from_triton(compiled: Any, grid: int | Sequence[int], args: Sequence[Any] | Mapping[str, Any]
                       ) -> TritonLaunch:
    """The launch Triton 3.6's launcher makes of `compiled` (a CompiledKernel) over `grid` with `args`:
    the kernel's non-constexpr arguments in order, or by name. Blocks of num_warps * 32 threads, the
    compiled dynamic shared memory, clusters of num_ctas along x; then the hidden global and profile
    scratch pointers (null when the kernel needs none, else a zeroed buffer of grid * num_ctas * size
    bytes, as the launcher allocates)."""
    md = compiled.metadata
    module = load_text(compiled.asm["ptx"], f"<triton {md.name}>")
    signature: dict[str, Any] = dict(compiled.src.signature)
    names = [n for n, ty in signature.items() if ty != "constexpr"]
    if isinstance(args, Mapping):
        unknown = sorted(set(args) - set(names))
        missing = [n for n in names if n not in args]
        if missing:
            raise LaunchError(f"{md.name}: arguments {', '.join(missing)} missing")
        if unknown:
            raise LaunchError(f"{md.name}: no argument named {', '.join(unknown)} "
                              f"(arguments: {', '.join(names)})")
        values = [args[n] for n in names]
    else:
        values = list(args)
        if len(values) != len(names):
            raise LaunchError(f"{md.name} takes {len(names)} arguments ({', '.join(names)}), "
                              f"got {len(values)}")
    g = (grid,) if isinstance(grid, int) else tuple(int(x) for x in grid)
    if not 1 <= len(g) <= 3 or any(x < 1 for x in g):
        raise LaunchError(f"grid must be 1 to 3 positive integers, got {grid!r}")
    g = (g + (1, 1))[:3]
    b = _Builder(md.name)
    metas = iter(md.tensordesc_meta or [])
    params: list[Value] = []
    for name, value in zip(names, values, strict=True):
        ty = signature[name]
        if isinstance(ty, str) and ty.startswith("*"):
            params.append(b.buffer(name, value))
        elif isinstance(ty, str) and ty.startswith("tensordesc"):
            if not re.match(r"tensordesc<[^[>]*\[[^]]*\]", ty):
                raise LaunchError(f"{md.name}: argument {name!r}: cannot read the type {ty!r}")
            params.extend(b.tensor_desc(name, value, next(metas, None)))
        else:
            params.append(b.scalar(name, str(ty), value))
    ncta = g[0] * g[1] * g[2] * int(md.num_ctas)
    for hidden in ("global_scratch", "profile_scratch"):
        size = int(getattr(md, f"{hidden}_size"))
        if size:
            b.spec.buffers[hidden] = Buffer(ncta * size)
            params.append(Pointer(hidden))
        else:
            params.append(Scalar("u64", 0))
    entry = next((f for f in module.entries if f.name == md.name), None)
    if entry is None or len(entry.params) != len(params):
        raise LaunchError(f"{md.name}: the PTX declares {len(entry.params) if entry else 0} parameters, but "
                          f"Triton {TRITON_VERSION}'s launcher passes {len(params)}: is Triton "
                          f"{getattr(_triton(), '__version__', '?')} a {TRITON_VERSION} release?")
    s = b.spec
    s.kernel = md.name
    s.grid = (g[0] * int(md.num_ctas), g[1], g[2])
    s.block = (int(md.num_warps) * 32, 1, 1)
    s.cluster = (int(md.num_ctas), 1, 1)
    s.dynamic_shared = int(md.shared)
    s.params = {i: v for i, v in enumerate(params)}
    return TritonLaunch(module, s, b.arrays)


class _HostArray(np.ndarray):
    """A numpy array with torch's `data_ptr()`, which Triton's TensorDescriptor asks of its base."""

    def data_ptr(self) -> int:
        return int(self.__array_interface__["data"][0])


def descriptor(array: np.ndarray[Any, Any], block_shape: Sequence[int]) -> Any:
    """Triton's host-side `TensorDescriptor` over a numpy array (as `TensorDescriptor.from_tensor` makes
    one over a torch tensor): its shape, its strides in elements, the box `block_shape`, zero padding."""
    td = importlib.import_module("triton.tools.tensor_descriptor")
    _triton()
    base = array.view(_HostArray)
    strides = [s // array.itemsize for s in array.strides]
    return td.TensorDescriptor(base, list(array.shape), strides, list(block_shape))
