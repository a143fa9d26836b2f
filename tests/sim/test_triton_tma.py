"""Triton's TMA matmuls of the corpus (tests/ptx/modules/triton_kernels.py, sm_90 builds) run to the
exact product: tensor maps built on the device (zeroed shared memory, tensormap.replace of every field,
tensormap.cp_fenceproxy to global memory), TMA loads with the 128B swizzle completing on mbarriers,
wgmma, and the TMA store of the f16 result clipped to the tensor (M, N below the 128 x 128 block). The
warp-specialized one also takes its producer/consumer roles through setmaxnreg and named barriers."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.sim.race_report import DataRace
from mbarrier.sim.races import track

MODULES = Path(__file__).resolve().parents[1] / "ptx" / "modules"
M, N, K = 64, 48, 128   # two K steps of 64; the 128 x 128 output block is mostly outside the tensor


def _run(name: str, block: int, races: bool = False) -> tuple[explore.RunResult, list[float], list[float]]:
    rnd = random.Random(5)
    a = [rnd.choice([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]) for _ in range(M * K)]
    b = [rnd.choice([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]) for _ in range(N * K)]
    pa, pb = struct.pack(f"<{M * K}e", *a), struct.pack(f"<{N * K}e", *b)
    args: dict[str | int, int | sim.Buffer | bytes] = {
        0: sim.Buffer(len(pa), pa), 1: sim.Buffer(len(pb), pb), 2: sim.Buffer(M * N * 2), 3: M, 4: N, 5: K,
        6: sim.Buffer(4096), 7: sim.Buffer(4096)}
    m = sim.launch(sim.load(MODULES / f"triton_{name}.sm_90.ptx"), grid=1, block=block, args=args,
                   dynamic_shared=200 * 1024)
    if races:
        track(m)
    r = explore.run(m, explore.RandomScheduler(3))
    base, _ = m.buffers[f"{name}_kernel_param_2"]
    got = list(struct.unpack(f"<{M * N}e", m.gmem.read(base, M * N * 2)))
    # Every product and partial sum is a multiple of 1/4 below 2^11: exact in f32, and in f16 at the end.
    want = [sum(a[i * K + k] * b[j * K + k] for k in range(K)) for i in range(M) for j in range(N)]
    return r, got, want


def test_triton_tma_matmul_computes_the_product() -> None:
    r, got, want = _run("tma_matmul", 256)
    assert r.ok, r.message
    assert got == want


def test_triton_warp_specialized_matmul_computes_the_product() -> None:
    r, got, want = _run("ws_matmul", 384)
    assert r.ok, r.message
    assert got == want


@pytest.mark.parametrize("name, block", [("tma_matmul", 256)])
def test_no_race_in_the_tma_matmul(name: str, block: int) -> None:
    r, got, want = _run(name, block, races=True)
    assert r.ok, r.message
    assert got == want


def test_the_warp_specialized_one_writes_its_role_table_from_128_threads() -> None:
    """A finding, not a tool error: every thread of warpgroup 0 stores the same 8 bytes of the role
    table with st.shared, unordered among them (bar.sync 0, 128 comes before, not between): conflicting
    weak writes, a data race by the PTX memory model however equal the values."""
    r, _, _ = _run("ws_matmul", 384, races=True)
    assert r.outcome == "race" and r.rule == DataRace.rule
    assert "st.shared.v2.b32" in r.message and "global_smem+131544" in r.message
