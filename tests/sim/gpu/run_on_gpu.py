"""Run the bundled example kernels on a real GPU and write their output buffers (run on the device).

    python3 tests/sim/gpu/run_on_gpu.py OUT.json

Recompiles each kernel from src/mbarrier/examples/cuda/ with the same nvcc command as build.sh and
checks the PTX is the bundled one, then loads the bundled PTX with CuPy (the driver JIT-compiles it),
launches it with the inputs of `mbarrier.examples.cases` several times, and records every output.
The planted-bug variants are not run: on hardware they hang.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import cupy as cp
import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "src"))

from mbarrier.examples import cases  # noqa: E402

EXAMPLES = ROOT / "src" / "mbarrier" / "examples"
REPEATS = 20


def _strip(ptx: str) -> str:
    return re.sub(r"//.*", "", ptx).strip()


def compile_matches(name: str) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}.ptx"
        subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-O3", str(EXAMPLES / "cuda" / f"{name}.cu"), "-o",
                        str(out)], check=True)
        return _strip(out.read_text()) == _strip((EXAMPLES / f"{name}.ptx").read_text())


def run_case(name: str) -> dict[str, object]:
    case = cases.CASES[name]
    module = cp.RawModule(path=str(EXAMPLES / f"{case.example}.ptx"))
    kernel = module.get_function(name)
    nparams = 1 + max([case.out_param] + [i for i, _ in case.inputs] + [i for i, _ in case.scalars])
    outputs = []
    for _ in range(REPEATS):
        args: list[object] = [None] * nparams
        for i, values in case.inputs:
            args[i] = cp.asarray(np.array(values, dtype=np.int64).astype(np.uint32).view(np.int32))
        out = cp.zeros(case.out_words, dtype=np.uint32)
        args[case.out_param] = out
        for i, v in case.scalars:
            args[i] = np.int32(v)
        kernel((case.grid,), (case.block,), tuple(args))
        cp.cuda.runtime.deviceSynchronize()
        outputs.append([int(x) for x in out.get()])
    first = outputs[0]
    return {"grid": case.grid, "block": case.block, "repeats": REPEATS,
            "all_repeats_equal": all(o == first for o in outputs), "output": first,
            "expected": cases.expected(name), "matches_expected": first == cases.expected(name)}


def main() -> None:
    props = cp.cuda.runtime.getDeviceProperties(0)
    version = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    nvcc = version.strip().splitlines()[-1]
    result: dict[str, object] = {"device": props["name"].decode(), "cc": f"{props['major']}.{props['minor']}",
                                 "driver": cp.cuda.runtime.driverGetVersion(), "nvcc": nvcc, "kernels": {}}
    for name in sorted(cases.CASES):
        entry = run_case(name)
        entry["nvcc_ptx_identical"] = compile_matches(name)
        result["kernels"][name] = entry  # type: ignore[index]
        print(name, {k: v for k, v in entry.items() if k not in ("output", "expected")}, flush=True)
    Path(sys.argv[1]).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
