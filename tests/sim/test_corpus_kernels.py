"""Other projects' warp-specialized kernels under `mbarrier run`, when their corpus is on this machine
(MBARRIER_KERNEL_CORPUS: a directory with ptx/ and launch files, built as its README says from the
nvidia-cutlass 4.2.0.0 wheel, ThunderKittens, DeepGEMM and FlashAttention-3 sources with nvcc 13.0; the
corpus stays outside the repository). Each runs to completion and computes numpy's result (f64) within
its output type's rounding. Skipped without the corpus: its sources are not ours to ship.

The corpus's gpu/cap/ holds the same launches captured on an H100 (`mbarrier capture` of its
host/gpu_launch.c, which runs a launch file's launch through the CUDA driver API): each replays to the
GPU's bytes but for elements whose exact value sits at a rounding midpoint of the output type, where the
H100's floating-point accumulation order and its `.approx` functions may round the other way
(docs/simulator.md, warpgroup MMA and float functions)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from mbarrier import explore, sim
from mbarrier.capture import compare
from mbarrier.sim.races import track

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
        track(m)
    r = explore.run(m, explore.RandomScheduler(0), max_steps=5_000_000)
    assert r.outcome == "exited", r.message
    got, ref = check({b: bytes(m.gmem.read(*m.buffers[b])) for b in m.buffers})
    assert np.all(np.abs(got - ref) <= np.abs(ref) * 2.0 ** -8 + slack)


def _bf16_steps(a: bytes, b: bytes) -> npt.NDArray[np.int64]:
    """How many bf16 values apart each pair of elements is (sign-magnitude bit patterns)."""
    def ordered(raw: bytes) -> npt.NDArray[np.int64]:
        u = np.frombuffer(raw, "<u2").astype(np.int64)
        signed: npt.NDArray[np.int64] = np.where(u & 0x8000, -(u & 0x7FFF), u)
        return signed
    steps: npt.NDArray[np.int64] = np.abs(ordered(a) - ordered(b))
    return steps


def _gemm_midpoints(a: F64, b: F64, gpu: bytes, replay: bytes, where: npt.NDArray[np.bool_]) -> None:
    """C = A B (bf16 out): where the GPU and the replay differ they are neighbours, and the exact value
    lies within the f32 accumulation bound (2 x 2^-23 x sum |a b|, as tests/hw/test_wgmma_replay.py
    bounds the H100's wgmma) of the midpoint between them, where either rounding is right."""
    shape = (a.shape[0], b.shape[1])
    g, r = _bf16(gpu, shape), _bf16(replay, shape)
    differ = (g != r) & where
    assert np.all(_bf16_steps(gpu, replay).reshape(shape)[differ] == 1)
    exact, bound = (a @ b)[differ], 2 * 2.0 ** -23 * (np.abs(a) @ np.abs(b))[differ]
    assert np.all(np.abs(exact - (g[differ] + r[differ]) / 2) <= bound)


def _check_tk(before: dict[str, bytes], gpu: dict[str, bytes], replay: dict[str, bytes]) -> None:
    a, b = _bf16(before["b0"], (128, 256)), _bf16(before["b1"], (256, 256))
    _gemm_midpoints(a, b, gpu["b2"], replay["b2"], np.ones((128, 256), bool))


def _check_deepgemm(before: dict[str, bytes], gpu: dict[str, bytes], replay: dict[str, bytes]) -> None:
    a, b = _bf16(before["b0"], (256, 256)), _bf16(before["b1"], (256, 256))
    ours = np.zeros((256, 256), bool)
    ours[:128, :128] = True   # block (0, 0): the other blocks belong to other CTAs of its schedule
    _gemm_midpoints(a, b.T, gpu["b2"], replay["b2"], ours)


def _check_fa3(causal: bool) -> Callable[[dict[str, bytes], dict[str, bytes], dict[str, bytes]], None]:
    """O (bf16): within one unit in the last place of the GPU's, plus what one P entry rounded to the
    other bf16 neighbour (for the P V wgmma) moves it: 2^-8 |V[k, j]| / l_i at most (P <= 1, l_i =
    sum_k exp(S_ik - max_i) >= 1). Measured: one such P entry in each row that differs; P's f32 value
    there was 1 f32 ulp from the midpoint. LSE (f32): within 2 units in the last place (its ex2 and lg2
    are .approx, 2 ulp each by PTX ISA 9.7.3.20-21)."""
    def check(before: dict[str, bytes], gpu: dict[str, bytes], replay: dict[str, bytes]) -> None:
        q, k = _bf16(before["b0"], (192, 64)), _bf16(before["b1"], (384, 64))
        v = _bf16(before["b2"], (384, 64))
        s = q @ k.T / 8.0
        if causal:
            s = np.where(np.arange(384)[None, :] <= np.arange(192)[:, None] + 192, s, -np.inf)
        rowsum = np.exp(s - s.max(1, keepdims=True)).sum(1)
        g, r = _bf16(gpu["b3"], (192, 64)), _bf16(replay["b3"], (192, 64))
        ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(g), np.abs(r)) + 2.0 ** -133)) - 7)
        one_p = 2.0 ** -8 * np.abs(v).max(0)[None, :] / rowsum[:, None]
        assert np.all(np.abs(g - r) <= ulp + one_p)
        gl = np.frombuffer(gpu["b4"], "<i4").astype(np.int64)
        rl = np.frombuffer(replay["b4"], "<i4").astype(np.int64)
        assert np.all((gl >= 0) == (rl >= 0)) and int(np.abs(gl - rl).max()) <= 2
    return check


# capture directory under gpu/cap -> the check of the replay's outputs beside the GPU's
CAPTURES: dict[str, Callable[[dict[str, bytes], dict[str, bytes], dict[str, bytes]], None]] = {
    "tk_gemm_lane0": _check_tk, "deepgemm": _check_deepgemm, "fa3_nc": _check_fa3(False),
    "fa3_c": _check_fa3(True),
}


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_the_replay_of_the_h100s_launch_leaves_the_gpus_bytes_but_at_midpoints(name: str) -> None:
    (path,) = (Path(CORPUS or ".") / "gpu" / "cap" / name).glob("*.launch.json")
    spec = sim.read_launch(path)
    assert spec.ptx is not None
    m = sim.launch(sim.load(path.parent / spec.ptx), spec=spec)
    track(m)
    r = explore.run(m, explore.RandomScheduler(0), max_steps=5_000_000)
    assert r.outcome == "exited", r.message
    assert all(c.missing == 0 for c in compare(spec, m))   # the replay wrote wherever the GPU did
    before = {b: buf.data for b, buf in spec.buffers.items()}
    replay = {b: bytes(m.gmem.read(*m.buffers[b])) for b in spec.capture_after}
    CAPTURES[name](before, spec.capture_after, replay)


def test_thunderkittens_unmodified_stops_at_its_whole_warp_init_where_the_h100_ran_on() -> None:
    """The unmodified kernel on the H100 left C equal to the lane-0 build's; the replay stops at the
    first of the 32 lanes' `mbarrier.init` of an already valid barrier (PTX ISA 9.7.13.15.9)."""
    cap = Path(CORPUS or ".") / "gpu" / "cap"
    (path,) = (cap / "tk_gemm").glob("*.launch.json")
    (lane0,) = (cap / "tk_gemm_lane0").glob("*.launch.json")
    spec = sim.read_launch(path)
    assert spec.capture_after == sim.read_launch(lane0).capture_after
    assert spec.ptx is not None
    r = explore.run(sim.launch(sim.load(path.parent / spec.ptx), spec=spec), explore.RandomScheduler(0))
    assert r.outcome == "violation" and r.rule == "init-on-valid", r.message
