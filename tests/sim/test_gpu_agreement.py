"""The simulator's memory results agree with a real Hopper GPU (recorded once; tests/sim/gpu/h100.json).

The record was made by tests/sim/gpu/run_on_gpu.py on an H100 (driver 580.159.04, nvcc 13.0): it
recompiled each kernel with the bundled build command (identical PTX), loaded the bundled PTX, and ran it
20 times with the inputs of `mbarrier.examples.cases`; every repeat gave the same output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import explore
from mbarrier.examples.cases import CASES

RECORD = json.loads((Path(__file__).parent / "gpu" / "h100.json").read_text())


def test_the_record_is_from_a_hopper_gpu_running_the_bundled_ptx() -> None:
    assert RECORD["cc"] == "9.0" and "H100" in RECORD["device"]
    assert set(RECORD["kernels"]) == set(CASES)
    for entry in RECORD["kernels"].values():
        assert entry["nvcc_ptx_identical"] and entry["all_repeats_equal"] and entry["repeats"] == 20


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", (0, 9))
def test_simulated_output_equals_the_gpu_output(name: str, seed: int) -> None:
    case = CASES[name]
    gpu = RECORD["kernels"][name]
    assert (gpu["grid"], gpu["block"]) == (case.grid, case.block)
    m = case.launch()
    assert explore.run(m, explore.RandomScheduler(seed)).ok
    assert case.output(m) == gpu["output"]
