"""One CTA of a CUTLASS-style warp-specialized GEMM (src/mbarrier/examples/races/cuda/tile_gemm.cu, nvcc
13.0 -arch=sm_90a -O3): a 128 x 128 tile with K = 256, TMA tensor loads with 128-byte swizzle into a ring
of two stages (PTX ISA 9.7.9.25.5.2), two consumer warpgroups of wgmma.mma_async.m64n128k16 on SW128
descriptors (9.7.15.5.1.2), setmaxnreg, elect.sync and a TMA tensor store epilogue. Under `mbarrier run`
its C equals numpy's and the H100's (tests/sim/gpu/tile_gemm_h100.*, recorded by tile_gemm_h100.cu: 5
repeats, identical); the issue's three planted bugs are found by run with races tracked."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mbarrier.cli import main
from mbarrier.examples.races import HERE

LAUNCH = HERE / "nvcc_tile_gemm.launch.json"
GPU = Path(__file__).parent / "gpu"


def _bf16(path: Path, rows: int, cols: int) -> np.ndarray:  # type: ignore[type-arg]
    bits = np.load(path).view("<u2").astype(np.uint32) << 16
    return bits.view(np.float32).reshape(rows, cols).astype(np.float64)


def test_mbarrier_run_computes_what_numpy_computes(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The launch file's random bf16 A and B (128 x 256 each, K-major); C (128 x 128 f32, row-major) is
    A B^T accumulated in f32, one K = 16 wgmma at a time, as the accumulator registers hold it."""
    out = [f"{n}={tmp_path / n}.npy" for n in "ABC"]
    argv = ["run", str(HERE / "nvcc_tile_gemm.ptx"), "--launch", str(LAUNCH), "-q"]
    assert main(argv + [w for o in out for w in ("--write", o)]) == 0, capsys.readouterr().out
    a, b = _bf16(tmp_path / "A.npy", 128, 256), _bf16(tmp_path / "B.npy", 128, 256)
    c = np.load(tmp_path / "C.npy").view("<f4").reshape(128, 128)
    d = np.zeros((128, 128))
    for k in range(0, 256, 16):
        d = (d + a[:, k:k + 16] @ b[:, k:k + 16].T).astype(np.float32).astype(np.float64)
    assert np.array_equal(c, d.astype(np.float32))
    # The H100 accumulates with other roundings (3,753 of the 16,384 elements are bit-equal): the
    # difference is within 2^-22 of the sum of the products' magnitudes (measured: 2^-22.9).
    h100 = np.load(GPU / "tile_gemm_h100.npy").astype(np.float64)
    assert np.all(np.abs(c - h100) <= 2.0 ** -22 * (np.abs(a) @ np.abs(b).T))


def test_the_h100_record_is_of_the_bundled_ptx_and_repeatable() -> None:
    meta = json.loads((GPU / "tile_gemm_h100.json").read_text())
    assert "H100" in meta["device"] and meta["repeats"] == 5 and meta["all_repeats_equal"]
    assert "nvcc_tile_gemm.ptx" in meta["program"]


@pytest.mark.parametrize("bug, rule, phrase", [
    ("early_release", "wgmma-operand-inflight", "overwritten in flight"),
    ("expect_tx", "data-race", "cp.async.bulk.tensor"),
    ("no_fence", "proxy-fence", "reaches the async proxy only through a fence.proxy.async"),
])
def test_run_finds_the_planted_bug(bug: str, rule: str, phrase: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A stage released before wgmma.wait_group (refilled by TMA while the wgmma reads it); expect_tx of
    A's box only (the phase completes before B's box lands, and the wgmma reads it); st.shared of the
    epilogue tile read by the TMA store with no fence.proxy.async."""
    argv = ["run", str(HERE / f"nvcc_tile_gemm_bug_{bug}.ptx"), "--launch", str(LAUNCH), "-q"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert f"rule {rule}" in out and phrase in out, out
