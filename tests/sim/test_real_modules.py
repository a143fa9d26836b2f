"""Real modules from the repository's corpus (tests/ptx/modules: nvcc -O3, -G debug builds, Triton): they
run, agree with their sources, and the simulator's findings on the ones that misuse a barrier are real."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from mbarrier import explore, sim

MODULES = Path(__file__).resolve().parents[1] / "ptx" / "modules"


def _floats(values: list[float]) -> sim.Buffer:
    return sim.Buffer(4 * len(values), struct.pack(f"<{len(values)}f", *values))


def _read_floats(m: sim.Machine, name: str, n: int) -> list[float]:
    base, _ = m.buffers[name]
    return list(struct.unpack(f"<{n}f", m.gmem.read(base, 4 * n)))


@pytest.mark.parametrize("build", ["sm_80", "sm_90", "sm_90.G"])
def test_cuda_barrier_memcpy_async_in_every_build(build: str) -> None:
    """cuda::barrier + memcpy_async: -O3 for sm_80 and sm_90 and the -G debug build (device-function calls,
    local memory, %reserved_smem_offset) all compute out = 2.5 * in."""
    mod = sim.load(MODULES / f"barrier_memcpy_async.{build}.ptx")
    xs = [float(i % 97) for i in range(512)]
    m = sim.launch(mod, block=256, args={0: sim.Buffer(2048), 1: _floats(xs), 2: 512})
    r = explore.run(m, explore.RandomScheduler(2))
    assert r.ok, (r.outcome, r.message, r.site)
    assert _read_floats(m, "_Z5scalePfPKfi_param_0", 512) == [2.5 * x for x in xs]


def test_cluster_ping_between_two_ctas() -> None:
    mod = sim.load(MODULES / "cluster.sm_90.ptx")
    m = sim.launch(mod, grid=2, block=32, args={0: sim.Buffer(4 * 64)})
    assert explore.run(m, explore.RandomScheduler(1)).ok
    base, _ = m.buffers["_Z4pingPi_param_0"]
    assert [m.gmem.load(base + 4 * i, 4) for i in range(64)] == [41] * 32 + [40] * 32


def test_triton_vector_add() -> None:
    mod = sim.load(MODULES / "triton_add.sm_90.ptx")
    xs, ys = [float(i) for i in range(1024)], [0.5 * i for i in range(1024)]
    m = sim.launch(mod, block=128, args={0: _floats(xs), 1: _floats(ys), 2: sim.Buffer(4096), 3: 1000})
    assert explore.run(m, explore.RandomScheduler(3)).ok
    sums = [x + y for x, y in zip(xs, ys, strict=True)]
    assert _read_floats(m, "add_kernel_param_2", 1024) == sums[:1000] + [0.0] * 24  # n = 1000 masks the rest


def test_printf_and_function_pointers_agree_between_o3_and_debug_builds() -> None:
    outs = []
    for build in ("sm_90", "sm_90.G"):
        m = sim.launch(sim.load(MODULES / f"generic_mix.{build}.ptx"), block=64, args={3: 16})
        assert explore.run(m, explore.RandomScheduler(0), max_steps=2_000_000).ok
        outs.append(m.output)
    assert outs[0] == outs[1] == [(0, "sum 1.500000 ballot 4294967295\n")]


def test_bulk_copy_module_is_right_for_one_thread() -> None:
    mod = sim.load(MODULES / "bulk_copy.sm_90.ptx")
    xs = [float(i) for i in range(1024)]
    m = sim.launch(mod, block=1, args={0: sim.Buffer(4096), 1: _floats(xs)})
    assert explore.run(m, explore.RandomScheduler(0)).ok
    assert _read_floats(m, "_Z9bulk_loadPfPKf_param_0", 1024) == [x + 1 for x in xs]


def test_bulk_copy_module_with_more_threads_than_its_barrier_expects() -> None:
    """The module inits its barrier with count 1 but every thread arrives: each arrival completes a phase,
    and a thread arrives in a phase whose predecessor no wait observed (9.7.13.15.4)."""
    m = sim.launch(sim.load(MODULES / "bulk_copy.sm_90.ptx"), block=64)
    r = explore.run(m, explore.RandomScheduler(0))
    assert r.outcome == "violation" and r.rule == "phase-not-waited"


def test_sm80_family_module_hangs_as_its_counts_say() -> None:
    """Each thread makes 3 arrivals on a barrier initialized to 4 per thread: the wait can never succeed."""
    m = sim.launch(sim.load(MODULES / "inline_asm_sm80.sm_80.ptx"), block=32)
    r = explore.run(m, explore.RandomScheduler(0))
    assert r.outcome == "stuck" and len(r.stuck) == 32
    assert all("32 of 96 arrivals still pending" in (s.state or "") for s in r.stuck)


def test_triton_matmul_computes_with_wgmma_what_numpy_computes() -> None:
    """Triton's sm_90 matmul (tests/ptx/modules/triton_kernels.py: 128 x 128 tile, BK 64, 8 warps, a
    3-stage cp.async pipeline feeding wgmma.mma_async.m64n128k16 chains, PTX ISA 9.7.15): one CTA, K =
    128, small integers (exact in f16 and f32), C equal to numpy's."""
    rng = np.random.default_rng(0)
    m_, n_, k_ = 128, 128, 128
    a = rng.integers(-3, 4, (m_, k_)).astype(np.float16)
    b = rng.integers(-3, 4, (k_, n_)).astype(np.float16)
    args: dict[str | int, sim.Buffer | int] = {
        0: sim.Buffer(a.nbytes, a.tobytes()), 1: sim.Buffer(b.nbytes, b.tobytes()),
        2: sim.Buffer(m_ * n_ * 2), 3: m_, 4: n_, 5: k_, 6: k_, 7: 1, 8: n_, 9: 1, 10: n_, 11: 1}
    m = sim.launch(sim.load(MODULES / "triton_matmul.sm_90.ptx"), block=256, args=args)
    r = explore.run(m, explore.RandomScheduler(0), max_steps=5_000_000)
    assert r.outcome == "exited", r.message
    base, size = m.buffers["matmul_kernel_param_2"]
    c = np.frombuffer(m.gmem.read(base, size), "<f2").reshape(m_, n_)
    assert np.array_equal(c, (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16))
