"""A warpgroup GEMM without TMA (src/mbarrier/examples/races/cuda/wgmma_gemm.cu, nvcc 13.0 -arch=sm_90a -O3):
a producer warp stores the k-tiles into shared memory with st.shared and fence.proxy.async, the
consumer warpgroup runs wgmma.mma_async on them (PTX ISA 9.7.15) and hands each stage back on an
mbarrier. Under `mbarrier run` its C equals numpy's; the planted early release (the stage handed back
before wgmma.wait_group) is found by run and by check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mbarrier.cli import main
from mbarrier.examples.races import CASES, HERE
from mbarrier.explore.check import Options, check_machine
from mbarrier.sim import load

LAUNCH = HERE / "nvcc_wgmma_gemm.launch.json"
TILE_K = 16  # the K of one wgmma.mma_async.m64n16k16


def _npy(path: Path) -> np.ndarray:  # type: ignore[type-arg]
    return np.load(path).view(np.uint8)


@pytest.mark.parametrize("seed", [0, 5])
def test_mbarrier_run_computes_what_numpy_computes(seed: int, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The launch file's random f16 A (64 x 32) and B (16 x 32, N rows of K); C (64 x 16, f32) accumulates
    one k-tile per wgmma, rounded to f32 after each, as the accumulator registers hold it."""
    out = [f"{n}={tmp_path / n}.npy" for n in "ABC"]
    argv = ["run", str(HERE / "nvcc_wgmma_gemm.ptx"), "--launch", str(LAUNCH), "--seed", str(seed)]
    assert main(argv + [w for o in out for w in ("--write", o)]) == 0, capsys.readouterr().out
    a = _npy(tmp_path / "A.npy").view("<f2").reshape(64, 32).astype(np.float64)
    b = _npy(tmp_path / "B.npy").view("<f2").reshape(16, 32).astype(np.float64)
    c = _npy(tmp_path / "C.npy").view("<f4").reshape(64, 16)
    d = np.zeros((64, 16))
    for k in range(0, 32, TILE_K):
        d = (d + a[:, k:k + TILE_K] @ b[:, k:k + TILE_K].T).astype(np.float32).astype(np.float64)
    assert np.array_equal(c, d.astype(np.float32))


def test_run_finds_the_early_release(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(HERE / "nvcc_wgmma_gemm_bug_early_release.ptx"), "--launch", str(LAUNCH)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "wgmma-operand-inflight" in out and "before that wait" in out


@pytest.mark.parametrize("name, verdict", [("nvcc_wgmma_gemm", "verified"),
                                           ("nvcc_wgmma_gemm_bug_early_release", "finding")])
def test_check_verifies_the_gemm_and_finds_the_early_release(name: str, verdict: str) -> None:
    """Warp granularity (`check --warp`: converged warps step together) keeps the 160 threads small."""
    case = CASES[name]
    r = check_machine(case.launch(), load(case.path), Options(max_states=5000, warp=True, max_findings=1))
    assert r.verdict == verdict, [f.message for f in r.findings]
    if verdict == "finding":
        assert (r.findings[0].kind, r.findings[0].rule) == ("race", "wgmma-operand-inflight")
