"""Other projects' warp-specialized kernels under `mbarrier run`, when their corpus is on this machine
(MBARRIER_KERNEL_CORPUS: a directory with ptx/ and launch files, built as its README says from the
nvidia-cutlass 4.2.0.0 wheel, ThunderKittens, DeepGEMM and FlashAttention-3 sources with nvcc 13.0; the
corpus stays outside the repository). Each runs to completion and computes numpy's result (f64) within
its output type's rounding. Skipped without the corpus: its sources are not ours to ship."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from mbarrier import explore, sim

CORPUS = os.environ.get("MBARRIER_KERNEL_CORPUS")
pytestmark = pytest.mark.skipif(not CORPUS, reason="MBARRIER_KERNEL_CORPUS (the kernel corpus) is not set")

F64 = npt.NDArray[np.float64]


def _bf16(raw: bytes, shape: tuple[int, ...]) -> F64:
    bits = np.frombuffer(raw, "<u2").astype(np.uint32) << 16
    return bits.view(np.float32).astype(np.float64).reshape(shape)


def _f16(raw: bytes, shape: tuple[int, ...]) -> F64:
    return np.frombuffer(raw, "<f2").astype(np.float64).reshape(shape)


def _cutlass(m: int, n: int, k: int) -> Callable[[dict[str, bytes]], tuple[F64, F64]]:
    """D = A B^T + 0.5 C: A row-major M x K, B N rows of K, C and D column-major (bf16)."""
    def check(b: dict[str, bytes]) -> tuple[F64, F64]:
        ref = _bf16(b["A"], (m, k)) @ _bf16(b["B"], (n, k)).T + 0.5 * _bf16(b["C"], (n, m)).T
        return _bf16(b["D"], (n, m)).T, ref
    return check


def _cute(nt: bool) -> Callable[[dict[str, bytes]], tuple[F64, F64]]:
    """Tile (0, 0) of C (column-major) = A B^T, A and B 256 x 256 f16, K-major (TN) or MN-major (NT)."""
    def check(b: dict[str, bytes]) -> tuple[F64, F64]:
        a, bb = _f16(b["A"], (256, 256)), _f16(b["B"], (256, 256))
        ref = a.T @ bb if nt else a @ bb.T
        return _f16(b["C"], (256, 256)).T[:128, :128], ref[:128, :128]
    return check


def _tk(b: dict[str, bytes]) -> tuple[F64, F64]:
    """C = A B, A 128 x 256, B 256 x 256, C 128 x 256, row-major bf16."""
    return _bf16(b["C"], (128, 256)), _bf16(b["A"], (128, 256)) @ _bf16(b["B"], (256, 256))


def _deepgemm(b: dict[str, bytes]) -> tuple[F64, F64]:
    """Block (0, 0) of D = A B^T, 256^3, K-major A and B, row-major D (bf16)."""
    a, bb = _bf16(b["A"], (256, 256)), _bf16(b["B"], (256, 256))
    return _bf16(b["D"], (256, 256))[:128, :128], (a @ bb.T)[:128, :128]


def _fa3(causal: bool) -> Callable[[dict[str, bytes]], tuple[F64, F64]]:
    """O = softmax(Q K^T / 8) V, Q 192 x 64, K and V 384 x 64 (bf16); causal: key j seen by query i
    when j <= i + 192 (the mask aligned to the bottom right)."""
    def check(b: dict[str, bytes]) -> tuple[F64, F64]:
        q, k, v = _bf16(b["Q"], (192, 64)), _bf16(b["K"], (384, 64)), _bf16(b["V"], (384, 64))
        s = q @ k.T / 8.0
        if causal:
            s = np.where(np.arange(384)[None, :] <= np.arange(192)[:, None] + 192, s, -np.inf)
        p = np.exp(s - s.max(1, keepdims=True))
        return _bf16(b["O"], (192, 64)), (p / p.sum(1, keepdims=True)) @ v
    return check


# (PTX, launch file, output check, absolute slack beside 2^-8 of the magnitude, race tracking)
KERNELS: dict[str, tuple[str, str, Callable[[dict[str, bytes]], tuple[F64, F64]], float, bool]] = {
    "cutlass_coop": ("cutlass_gemm_coop", "launch_real/cutlass_coop.json", _cutlass(256, 128, 256), 1e-2,
                     True),
    "cutlass_pingpong": ("cutlass_gemm_pingpong", "launch_real/cutlass_pingpong.json",
                         _cutlass(128, 128, 256), 1e-2, True),
    "cute_tn": ("cute_wgmma_tma_sm90", "launch_real/cute_tn.json", _cute(False), 2e-2, True),
    "cute_nt": ("cute_wgmma_tma_sm90", "launch_real/cute_nt.json", _cute(True), 2e-2, True),
    "tk_lane0": ("tk_bf16_h100_gemm_lane0", "launch_real/tk_gemm_lane0.json", _tk, 1e-2, True),
    "deepgemm": ("deepgemm_sm90_bf16", "launch/deepgemm_sm90_bf16.bd9f7e21.json", _deepgemm, 1e-2, True),
    "fa3_noncausal": ("fa3_fwd_hdim64_bf16", "launch_real/fa3_fwd_noncausal.json", _fa3(False), 2 ** -9,
                      True),
    "fa3_causal": ("fa3_fwd_hdim64_bf16", "launch_real/fa3_fwd_causal.json", _fa3(True), 2 ** -9,
                   True),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_the_kernel_runs_to_completion_and_computes_numpys_result(name: str) -> None:
    ptx, launch, check, slack, races = KERNELS[name]
    root = Path(CORPUS or ".")
    m = sim.launch(sim.load(root / "ptx" / f"{ptx}.ptx"), spec=sim.read_launch(root / launch))
    if races:
        from mbarrier.sim.races import track
        track(m)
    r = explore.run(m, explore.RandomScheduler(0), max_steps=5_000_000)
    assert r.outcome == "exited", r.message
    got, ref = check({b: bytes(m.gmem.read(*m.buffers[b])) for b in m.buffers})
    assert np.all(np.abs(got - ref) <= np.abs(ref) * 2.0 ** -8 + slack)
