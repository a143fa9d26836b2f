"""Each lane of a warp that executes cp.async.bulk.tensor or cp.reduce.async.bulk issues its own copy
(PTX ISA 9.7.9.25.5: the instructions are not .aligned warp collectives), as an H100 showed
(tests/sim/gpu/warp_tma.json, from warp_tma.cu): 32 lanes loading one box onto an mbarrier armed with
expect_tx of 32 boxes complete its phase (33 boxes never do), and 32 lanes' bulk add of 1 leave 32."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import explore, sim

GPU = Path(__file__).parent / "gpu"
RECORD = json.loads((GPU / "warp_tma.json").read_text())


def _run(boxes: int) -> tuple[int, int]:
    spec = sim.launch_from_dict({
        "grid": 1, "block": 32,
        "buffers": {"g": {"size": 2048}, "out": {"size": 4}, "counter": {"size": 16}},
        "tensor_maps": {"t": {"encode": "tiled", "tensorDataType": "FLOAT32", "tensorRank": 2,
                              "globalAddress": "g", "globalDim": [32, 16], "globalStrides": [128],
                              "boxDim": [16, 8], "elementStrides": [1, 1]}},
        "params": {"0": {"tensor_map": "t"}, "1": boxes, "2": {"pointer": "out"},
                   "3": {"pointer": "counter"}},
    })
    m = sim.launch(sim.load(GPU / "warp_tma.ptx"), spec=spec)
    r = explore.run(m, explore.RandomScheduler(0))
    assert r.outcome == "exited", r.message
    return m.gmem.load(m.buffers["out"][0], 4), m.gmem.load(m.buffers["counter"][0], 4)


def test_the_record_is_from_an_h100() -> None:
    assert "H100" in RECORD["device"] and {r["boxes"] for r in RECORD["runs"]} == {1, 2, 32, 33}


@pytest.mark.parametrize("run", [r for r in RECORD["runs"] if r["phase_completed"]],
                         ids=lambda r: str(r["boxes"]))
def test_the_simulator_issues_one_copy_a_lane_as_the_h100(run: dict[str, int]) -> None:
    """The runs whose phase completed (the one that did not polls 2,000,000 times a lane: too long to
    simulate; its 33rd box never comes because only 32 lanes issue one each)."""
    assert _run(run["boxes"]) == (run["phase_completed"], run["counter"])
