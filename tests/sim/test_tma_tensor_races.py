"""A TMA tensor round trip small enough for `mbarrier check` (src/mbarrier/examples/races/cuda/
tma_tensor.cu, nvcc 13.0 -arch=sm_90a -O3): a box loaded with cp.async.bulk.tensor on an mbarrier armed
with expect_tx (PTX ISA 9.7.9.25.5.2, 9.7.13.15.11), changed with st.shared, stored with a TMA tensor
store after fence.proxy.async (9.7.13.4). Two of the issue's planted bugs, found by run and by check:
expect_tx bytes other than the box's, and the store of st.shared data with no fence.proxy.async."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mbarrier import sim
from mbarrier.cli import main
from mbarrier.examples.races import HERE
from mbarrier.explore.check import Options, check_machine

LAUNCH = HERE / "nvcc_tma_tensor.launch.json"


def test_run_moves_the_box_there_and_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """dst (16 x 8 f32) = the box at (0, 0) of src (32 x 16 f32, rows of 128 bytes) plus 1."""
    argv = ["run", str(HERE / "nvcc_tma_tensor.ptx"), "--launch", str(LAUNCH), "-q",
            "--write", f"src={tmp_path / 'src.npy'}", "--write", f"dst={tmp_path / 'dst.npy'}"]
    assert main(argv) == 0, capsys.readouterr().out
    src = np.load(tmp_path / "src.npy").view("<f4").reshape(16, 32)
    dst = np.load(tmp_path / "dst.npy").view("<f4").reshape(8, 16)
    assert np.array_equal(dst, src[:8, :16] + np.float32(1))


@pytest.mark.parametrize("name, outcome, phrase", [
    ("nvcc_tma_tensor_bug_expect_tx", "STUCK", "no thread can make progress"),
    ("nvcc_tma_tensor_bug_no_fence", "RACE", "rule proxy-fence"),
])
def test_run_finds_the_planted_bug(name: str, outcome: str, phrase: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Half the box's bytes expected: the box's 512 bytes leave the phase 256 bytes past its count, and
    the warp waits forever; the store without the fence: proxy-fence."""
    assert main(["run", str(HERE / f"{name}.ptx"), "--launch", str(LAUNCH), "-q"]) == 1
    out = capsys.readouterr().out
    assert f"outcome: {outcome}" in out and phrase in out, out


@pytest.mark.parametrize("name, verdict, kind, rule", [
    ("nvcc_tma_tensor", "verified", None, None),
    ("nvcc_tma_tensor_bug_expect_tx", "finding", "deadlock", None),
    ("nvcc_tma_tensor_bug_no_fence", "finding", "race", "proxy-fence"),
])
def test_check_verifies_the_round_trip_and_finds_the_bugs(name: str, verdict: str, kind: str | None,
                                                          rule: str | None) -> None:
    module = sim.load(HERE / f"{name}.ptx")
    m = sim.launch(module, spec=sim.read_launch(LAUNCH))
    r = check_machine(m, module, Options(max_states=5000, max_findings=1))
    assert r.verdict == verdict, [f.message for f in r.findings]
    if kind is not None:
        assert r.findings[0].kind == kind and (rule is None or r.findings[0].rule == rule)
