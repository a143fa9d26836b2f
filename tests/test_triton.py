"""mbarrier.triton: Triton kernels of our own, compiled here for sm_90 without a GPU, launched as Triton
3.6's launcher launches them and run on the simulator; the output is numpy's. The TMA matmul is the one
`tests/capture/programs/triton_tma_matmul.py` ran on an H100: the tensor maps and scalars built here are
those the capture recorded from the real driver launch."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mbarrier
from mbarrier import explore, sim
from mbarrier.sim.launchspec import Scalar, TensorMapRef

pytestmark = pytest.mark.tool("triton")

CAPTURED = Path(__file__).parent / "capture" / "data" / "triton_tma_matmul" / "000-matmul_tma.launch.json"
ADD_SIG = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}
DESC = "tensordesc<fp16[64, 64]>"
MATMUL_SIG = {"a_desc": DESC, "b_desc": DESC, "c_desc": DESC, "K": "i32",
              "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}


@pytest.fixture(scope="module")
def kernels() -> dict[str, Any]:
    """Both kernels compiled once (Triton is imported only here: collection needs no Triton)."""
    import triton
    import triton.language as tl

    from mbarrier import triton as mt

    @triton.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    # as tests/capture/programs/triton_tma_matmul.py (C = A . B^T, host TensorDescriptors)
    @triton.jit
    def matmul_tma(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr,  # type: ignore[no-untyped-def]
                   BK: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = a_desc.load([pid_m * BM, k])
            b = b_desc.load([pid_n * BN, k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))

    # a device-side descriptor: the kernel writes its tensor maps into Triton's global scratch
    @triton.jit
    def double_tiles(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):  # type: ignore[no-untyped-def]
        d_in = tl.make_tensor_descriptor(src, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        d_out = tl.make_tensor_descriptor(dst, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        d_out.store([tl.program_id(0) * BM, 0], d_in.load([tl.program_id(0) * BM, 0]) * 2)

    return {"double": mt.compile_for_sm90(double_tiles, {"src": "*fp32", "dst": "*fp32", "M": "i32",
                                                         "N": "i32", "BM": "constexpr", "BN": "constexpr"},
                                          {"BM": 16, "BN": 32}),
            "add": mt.compile_for_sm90(add, ADD_SIG, {"BLOCK": 128}),
            "add_cluster": mt.compile_for_sm90(add, ADD_SIG, {"BLOCK": 128}, num_ctas=2),
            "matmul": mt.compile_for_sm90(matmul_tma, MATMUL_SIG, {"BM": 64, "BN": 64, "BK": 64},
                                          num_warps=4, num_stages=2)}


def _run(launch: Any) -> sim.Machine:
    m = launch.machine()
    r = explore.run(m, explore.RandomScheduler(seed=3))
    assert r.outcome == "exited", r.outcome
    return m  # type: ignore[no-any-return]


def test_vector_add_equals_numpy(kernels: dict[str, Any]) -> None:
    from mbarrier import triton as mt
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal(300).astype(np.float32) for _ in range(2))
    out = np.full(300, -7.0, np.float32)
    launch = mt.launch_from_triton(kernels["add"], 3, [x, y, out, 300])
    assert launch.spec.block == (128, 1, 1) and launch.spec.grid == (3, 1, 1)
    # the hidden global and profile scratch pointers: null, as the launcher passes them for this kernel
    assert [launch.spec.params[i] for i in (4, 5)] == [Scalar("u64", 0)] * 2
    m = _run(launch)
    launch.write_back(m)
    assert np.array_equal(out, x + y)
    assert np.array_equal(launch.read(m, "out"), x + y)


def test_num_ctas_launches_clusters(kernels: dict[str, Any]) -> None:
    """num_ctas=2: Triton's launcher multiplies the grid's x by 2 and asks clusters of 2 (the PTX has
    `.reqnctapercluster 2`); a program is a cluster, so 5 programs of 128 cover 600 elements."""
    from mbarrier import triton as mt
    x, y = np.ones(600, np.float32), np.arange(600, dtype=np.float32)
    out = np.zeros(600, np.float32)
    launch = mt.launch_from_triton(kernels["add_cluster"], 5, {"x": x, "y": y, "out": out, "n": 600})
    assert (launch.spec.grid, launch.spec.cluster) == ((10, 1, 1), (2, 1, 1))
    launch.write_back(_run(launch))
    assert np.array_equal(out, x + y)


def test_global_scratch_is_a_buffer(kernels: dict[str, Any]) -> None:
    """tl.make_tensor_descriptor builds tensor maps on the device in the global scratch: the launch gives
    grid * num_ctas * global_scratch_size bytes, as Triton's launcher allocates."""
    from mbarrier import triton as mt
    k = kernels["double"]
    assert k.metadata.global_scratch_size > 0
    a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    b = np.zeros_like(a)
    launch = mt.launch_from_triton(k, 4, [a, b, 64, 32])
    assert launch.spec.buffers["global_scratch"].size == 4 * k.metadata.global_scratch_size
    launch.write_back(_run(launch))
    assert np.array_equal(b, 2 * a)


def test_tma_matmul_equals_numpy(kernels: dict[str, Any]) -> None:
    from mbarrier import triton as mt
    rng = np.random.default_rng(2)
    M, N, K = 64, 128, 128
    a = rng.integers(-1, 2, (M, K)).astype(np.float16)   # -1, 0, 1: every sum is exact
    b = rng.integers(-1, 2, (N, K)).astype(np.float16)
    c = np.full((M, N), -7.0, np.float16)
    descs = [mt.descriptor(a, [64, 64]), mt.descriptor(b, [64, 64]), mt.descriptor(c, [64, 64])]
    launch = mt.launch_from_triton(kernels["matmul"], (M // 64, N // 64), [*descs, K])
    assert launch.spec.dynamic_shared == kernels["matmul"].metadata.shared > 0
    m = _run(launch)
    launch.write_back(m)
    want = (a.astype(np.float32) @ b.astype(np.float32).T).astype(np.float16)
    assert np.array_equal(c, want)


def test_tensor_maps_are_the_captured_gpu_launchs(kernels: dict[str, Any]) -> None:
    """At the captured shapes (64 x 64 x 128) the encode arguments and scalars are those Triton's launcher
    gave the driver on an H100 (cuTensorMapEncodeTiled interposed by `mbarrier capture`)."""
    from mbarrier import triton as mt
    a, b = np.zeros((64, 128), np.float16), np.zeros((64, 128), np.float16)
    c = np.zeros((64, 64), np.float16)
    ours = mt.launch_from_triton(kernels["matmul"], (1, 1),
                                 {"a_desc": mt.descriptor(a, [64, 64]), "b_desc": mt.descriptor(b, [64, 64]),
                                  "c_desc": mt.descriptor(c, [64, 64]), "K": 128}).spec
    gpu = sim.read_launch(CAPTURED)
    assert (ours.grid, ours.block, ours.dynamic_shared) == (gpu.grid, gpu.block, gpu.dynamic_shared)
    assert len(ours.params) == len(gpu.params) == 18
    for i, name in enumerate(f"matmul_tma_param_{j}" for j in range(18)):
        mine, theirs = ours.params[i], gpu.params[name]
        if isinstance(theirs, TensorMapRef):
            assert isinstance(mine, TensorMapRef)
            got, want = ours.tensor_maps[mine.name].map, gpu.tensor_maps[theirs.name].map
            assert dataclasses.replace(got, globalAddress=0) == dataclasses.replace(want, globalAddress=0)
        else:
            assert isinstance(mine, Scalar) and isinstance(theirs, Scalar)
            assert mine.encode() == theirs.encode(), name


def test_wrong_arguments_are_launch_errors(kernels: dict[str, Any]) -> None:
    from mbarrier import triton as mt
    x = np.zeros(8, np.float32)
    with pytest.raises(sim.LaunchError, match=r"add takes 4 arguments \(x, y, out, n\), got 3"):
        mt.launch_from_triton(kernels["add"], 1, [x, x, x])
    with pytest.raises(sim.LaunchError, match="argument 'y' is a pointer; give a numpy array"):
        mt.launch_from_triton(kernels["add"], 1, [x, 5, x, 8])
    with pytest.raises(sim.LaunchError, match=r"argument 'n' \(i32\) takes an integer, not 2.5"):
        mt.launch_from_triton(kernels["add"], 1, [x, x, x, 2.5])
    with pytest.raises(sim.LaunchError, match="not contiguous"):
        mt.launch_from_triton(kernels["add"], 1, [x[::2], x, x, 4])
    with pytest.raises(sim.LaunchError, match="'out' overlaps buffer 'x'"):
        mt.launch_from_triton(kernels["add"], 1, [x, np.zeros(8, np.float32), x[2:], 4])


def test_same_array_twice_is_one_buffer(kernels: dict[str, Any]) -> None:
    from mbarrier import triton as mt
    x = np.arange(128, dtype=np.float32)
    launch = mt.launch_from_triton(kernels["add"], 1, [x, x, x, 128])   # x += x, in place
    assert list(launch.spec.buffers) == ["x"]
    report = mbarrier.run(kernels["add"].asm["ptx"], launch.spec)   # the Python API takes the spec too
    assert report.outcome == "exited" and report.finding is None     # race tracking on: no race
    launch.write_back(_run(launch))
    assert np.array_equal(x, 2 * np.arange(128, dtype=np.float32))


def test_without_triton_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from mbarrier import triton as mt
    real = mt.importlib.import_module

    def no_triton(name: str, package: str | None = None) -> Any:
        if name.split(".")[0] == "triton":
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(mt.importlib, "import_module", no_triton)
    with pytest.raises(sim.LaunchError, match=r"needs Triton: pip install 'mbarrier\[triton\]'"):
        mt.compile_for_sm90(None, {})


def test_docs_example_runs(tmp_path: Path) -> None:
    """docs/launch.md, "From Triton": its example runs as written and leaves x + y in out."""
    import re
    import runpy
    doc = (Path(__file__).parents[1] / "docs" / "launch.md").read_text()
    block = re.search(r"```python\n(.*?)```", doc[doc.index("## From Triton"):], re.S)
    assert block is not None
    script = tmp_path / "example.py"   # a file: @triton.jit reads its function's source
    script.write_text(block.group(1))
    ns = runpy.run_path(str(script))
    assert np.array_equal(ns["out"], ns["x"] + ns["y"])


def _matmul_launch(kernels: dict[str, Any], k: int) -> Any:
    from mbarrier import triton as mt
    a, b = np.ones((64, k), np.float16), np.ones((64, k), np.float16)
    c = np.zeros((64, 64), np.float16)
    descs = [mt.descriptor(a, [64, 64]), mt.descriptor(b, [64, 64]), mt.descriptor(c, [64, 64])]
    return mt.launch_from_triton(kernels["matmul"], (1, 1), [*descs, k])


def test_check_verifies_tritons_tma_pipeline(kernels: dict[str, Any]) -> None:
    """Triton's own mbarrier pipeline (TMA loads on `num_stages` barriers, every thread waits, one
    elected thread issues; a bulk-store epilogue): verified, every interleaving of its 128 threads."""
    from mbarrier.explore.check import Options, check_machine
    launch = _matmul_launch(kernels, 128)
    r = check_machine(launch.machine(), launch.module, Options(walks=0))
    assert r.verdict == "verified", [(f.kind, f.message) for f in r.findings]


def test_check_finds_a_byte_count_planted_in_tritons_ptx(kernels: dict[str, Any]) -> None:
    """The same PTX with its first expect_tx 4 bytes above what its two loads land: the phase never
    completes, a deadlock (PTX ISA 9.7.13.15.5, tx-count)."""
    import re

    from mbarrier.explore.check import Options, check_machine
    launch = _matmul_launch(kernels, 128)
    text = kernels["matmul"].asm["ptx"]
    bad, n = re.subn(r"(mbarrier\.arrive\.expect_tx\.shared\.b64 _, \[%r\d+\], )(\d+);",
                     lambda mo: f"{mo.group(1)}{int(mo.group(2)) + 4};", text, count=1)
    assert n == 1
    module = sim.load_text(bad, "bug.ptx")
    r = check_machine(sim.launch(module, spec=launch.spec), module, Options(walks=0))
    assert r.verdict == "finding" and {str(f.kind) for f in r.findings} == {"deadlock"}
