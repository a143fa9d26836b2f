"""Launches captured on a Hopper GPU (tests/capture/gpu.sh: an H100, driver 580.159.04) replayed on the
simulator: the bytes the replay leaves in the output buffer are the bytes the GPU left there.

- data/cutlass_gemm: programs/cutlass_gemm.cu 256 x 128 x 128, CUTLASS 4.2.0.0's warp-specialized
  cooperative GEMM (one cluster of two CTAs, TMA multicast loads, wgmma, a TMA store epilogue), its
  1,792-byte `Params` with four tensor maps. The repository keeps no PTX generated from CUTLASS: the test
  rebuilds it with nvcc 13.0 from our .cu and the pinned nvidia-cutlass 4.2.0.0 wheel's headers (the
  `cutlass_source` fixture, tests/conftest.py) and first checks that it is the PTX the GPU ran
  (module.sha256: the hash of that PTX's code, see `_code`).
- data/triton_tma_matmul: programs/triton_tma_matmul.py 64 x 64 x 128 (Triton 3.6, host-side tensor
  descriptors), one CTA, three tensor maps and fifteen scalars; its PTX from Triton's cache of that run.
- data/triton_tma_matmul_grid: the same program at 128 x 128 x 128 on an H200: a grid of 2 x 2 CTAs, of
  which a replay runs one (`ctas`), the others' output left to the GPU.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.capture import BufferComparison, compare
from mbarrier.sim.races import track

DATA = Path(__file__).with_name("data")
PROGRAMS = Path(__file__).with_name("programs")


def _replay(name: str, races: bool, ctas: list[tuple[int, ...]] | None = None, ptx: Path | None = None
            ) -> tuple[explore.RunResult, list[BufferComparison]]:
    (path,) = (DATA / name).glob("*.launch.json")
    spec = sim.read_launch(path)
    module = sim.load(ptx or path.parent / json.loads(path.read_text())["capture"]["ptx"])
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


def test_one_cta_of_a_grid_writes_the_gpus_bytes_of_its_tile() -> None:
    r, (c,) = _replay("triton_tma_matmul_grid", races=False, ctas=[(1, 0)])
    assert r.ok, r.message
    assert c.partial and c.equal and c.wrong == 0
    # C is 128 x 128 f16, row-major: CTA (1, 0) writes rows 64..127 of columns 0..63, a quarter of it;
    # the bytes it changed are a quarter of the GPU's, give or take the tiles' own poison-equal bytes
    assert 0 < c.replay_changed < c.gpu_changed and c.missing == c.gpu_changed - c.replay_changed
    assert abs(4 * c.replay_changed - c.gpu_changed) < c.gpu_changed // 10


def _unrooted(m: re.Match[str]) -> str:
    """An assertion's string (`$str$N`, bytes of __FILE__ and the like) as text, the headers' directory
    removed: it names where the wheel was unzipped on the machine that built the PTX."""
    text = bytes(int(b) for b in m.group(2).split(",")).decode(errors="replace")
    return f"{m.group(1)} {re.sub(r'^/.*?/cutlass_library/source/', '', text)!r}"


def _code(text: str) -> str:
    """A PTX module's code: no comments (the header names the build), blanks collapsed (the PTX a fatbin
    embeds has both squeezed out), nvcc's per-build hash of the file's internal names and the build
    machine's paths in assertion strings removed."""
    text = re.sub(r"(_INTERNAL_|__N__)[0-9a-f]{8}_", r"\1", text)
    text = re.sub(r"(\$str\$\d+)\[\d+\] = \{([\d, ]+)\}", _unrooted, text)
    lines = (" ".join(re.sub(r"//.*", "", line).split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


@pytest.fixture(scope="module")
def cutlass_ptx(cutlass_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """programs/cutlass_gemm.cu built as tests/capture/gpu.sh built the binary the GPU ran (its PTX)."""
    out = tmp_path_factory.mktemp("cutlass") / "cutlass_gemm.ptx"
    subprocess.run(["nvcc", "-ptx", "-std=c++17", "--expt-relaxed-constexpr", "-gencode",
                    "arch=compute_90a,code=compute_90a", f"-I{cutlass_source}/include",
                    f"-I{cutlass_source}/tools/util/include", str(PROGRAMS / "cutlass_gemm.cu"),
                    "-o", str(out)], check=True)
    return out


@pytest.mark.tool("nvcc")
def test_the_cutlass_ptx_is_the_one_the_gpu_ran(cutlass_ptx: Path) -> None:
    recorded = (DATA / "cutlass_gemm" / "module.sha256").read_text().split()[0]
    assert hashlib.sha256(_code(cutlass_ptx.read_text()).encode()).hexdigest() == recorded


@pytest.mark.tool("nvcc")
def test_the_cutlass_gemm_replays_to_the_gpus_bytes(cutlass_ptx: Path) -> None:
    # race tracking on: the epilogue's TMA store, issued by all 32 lanes of a warp, writes the same
    # bytes 32 times with no order among them, which is no race (docs/memory-model.md, twins)
    r, (c,) = _replay("cutlass_gemm", races=True, ptx=cutlass_ptx)
    assert r.ok, r.message
    assert c.buffer == "b3" and c.size == 256 * 128 * 2   # D, bf16
    assert c.equal and c.wrong == 0 and c.missing == 0
    assert c.gpu_changed > 30000
