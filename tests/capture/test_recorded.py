"""Launches captured on a Hopper GPU (tests/capture/gpu.sh: an H100, driver 580.159.04) replayed on the
simulator: the bytes the replay leaves in the output buffer are the bytes the GPU left there.

- data/cutlass_gemm: programs/cutlass_gemm.cu 256 x 128 x 128, CUTLASS 4.2.0.0's warp-specialized
  cooperative GEMM (one cluster of two CTAs, TMA multicast loads, wgmma, a TMA store epilogue), its
  1,792-byte `Params` with four tensor maps. Its PTX is the one embedded in that binary (nvcc 13.0,
  the nvidia-cutlass 4.2.0.0 wheel's headers); test_the_cutlass_ptx_is_ours rebuilds it.
- data/triton_tma_matmul: programs/triton_tma_matmul.py 64 x 64 x 128 (Triton 3.6, host-side tensor
  descriptors), one CTA, three tensor maps and fifteen scalars; its PTX from Triton's cache of that run.
- data/triton_tma_matmul_grid: the same program at 128 x 128 x 128 on an H200: a grid of 2 x 2 CTAs, of
  which a replay runs one (`ctas`), the others' output left to the GPU.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.capture import BufferComparison, compare
from mbarrier.sim.races import track

DATA = Path(__file__).with_name("data")
PROGRAMS = Path(__file__).with_name("programs")


def _replay(name: str, races: bool, ctas: list[tuple[int, ...]] | None = None
            ) -> tuple[explore.RunResult, list[BufferComparison]]:
    (path,) = (DATA / name).glob("*.launch.json")
    spec = sim.read_launch(path)
    module = sim.load(path.parent / json.loads(path.read_text())["capture"]["ptx"])
    m = sim.launch(module, spec=spec, ctas=ctas)
    if races:
        track(m)
    r = explore.run(m, explore.RandomScheduler(2))
    return r, compare(spec, m)


def test_the_triton_matmul_replays_to_the_gpus_bytes() -> None:
    r, (c,) = _replay("triton_tma_matmul", races=True)
    assert r.ok, r.message
    assert c.buffer == "b2" and c.size == 64 * 64 * 2   # C, f16
    assert c.equal and c.wrong == 0 and c.missing == 0
    assert c.gpu_changed > 4000   # the poison (-7.0) overwritten by the product


def test_the_cutlass_gemm_replays_to_the_gpus_bytes() -> None:
    # race tracking off: the epilogue's TMA store is issued by all 32 lanes of a warp, which the
    # memory model's rules report as a race between identical stores (docs/capture.md)
    r, (c,) = _replay("cutlass_gemm", races=False)
    assert r.ok, r.message
    assert c.buffer == "b3" and c.size == 256 * 128 * 2   # D, bf16
    assert c.equal and c.wrong == 0 and c.missing == 0
    assert c.gpu_changed > 30000


def test_one_cta_of_a_grid_writes_the_gpus_bytes_of_its_tile() -> None:
    r, (c,) = _replay("triton_tma_matmul_grid", races=False, ctas=[(1, 0)])
    assert r.ok, r.message
    assert c.partial and c.equal and c.wrong == 0
    # C is 128 x 128 f16, row-major: CTA (1, 0) writes rows 64..127 of columns 0..63, a quarter of it;
    # the bytes it changed are a quarter of the GPU's, give or take the tiles' own poison-equal bytes
    assert 0 < c.replay_changed < c.gpu_changed and c.missing == c.gpu_changed - c.replay_changed
    assert abs(4 * c.replay_changed - c.gpu_changed) < c.gpu_changed // 10


def _code(text: str) -> list[str]:
    """A PTX module's lines without comments (the header names the build) and with blanks collapsed: the
    PTX a fatbin embeds has both squeezed out."""
    lines = (" ".join(re.sub(r"//.*", "", line).split()) for line in text.splitlines())
    return [line for line in lines if line]


@pytest.mark.tool("nvcc")
def test_the_cutlass_ptx_is_ours(tmp_path: Path) -> None:
    cut = os.environ.get("MBARRIER_CUTLASS_DIR")
    if not cut:
        pytest.skip("needs the nvidia-cutlass 4.2.0.0 wheel's headers: set MBARRIER_CUTLASS_DIR to its "
                    "cutlass_library/source")
    out = tmp_path / "cutlass_gemm.ptx"
    subprocess.run(["nvcc", "-ptx", "-std=c++17", "--expt-relaxed-constexpr", "-gencode",
                    "arch=compute_90a,code=compute_90a", f"-I{cut}/include", f"-I{cut}/tools/util/include",
                    str(PROGRAMS / "cutlass_gemm.cu"), "-o", str(out)], check=True)
    (recorded,) = (DATA / "cutlass_gemm").glob("module-*.ptx")
    assert _code(out.read_text()) == _code(recorded.read_text())
