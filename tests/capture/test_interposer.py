"""The capture interposer end to end without a GPU: a stand-in libcuda (fake/libcuda.c) runs two
"kernels" on the host; a program (fake/program.c) reaches it only through dlopen/dlsym and
cuGetProcAddress, as the CUDA runtime and Triton reach the real driver. `mbarrier capture` must see both
launches, write launch files whose pointers, scalars and tensor map are the program's, and a replay of
the PTX kernel on the simulator must leave what the fake driver left."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.capture import compare

FAKE = Path(__file__).with_name("fake")


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bin_dir = tmp_path_factory.mktemp("fakecuda")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", str(FAKE / "libcuda.c"), "-o",
                    str(bin_dir / "libcuda.so.1")], check=True)
    subprocess.run(["cc", str(FAKE / "program.c"), "-o", str(bin_dir / "program"), "-ldl"], check=True)
    out = tmp_path_factory.mktemp("capture")
    env = {**os.environ, "LD_LIBRARY_PATH": str(bin_dir), "MBARRIER_CACHE": str(bin_dir / "cache"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "mbarrier", "capture", "-o", str(out), "--",
                           str(bin_dir / "program"), str(FAKE / "fake.ptx")], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "2 launch files" in done.stdout
    return out


@pytest.mark.tool("cc")
def test_pointers_and_scalars_are_the_programs(captured: Path) -> None:
    doc = json.loads((captured / "000-scale.launch.json").read_text())
    assert doc["kernel"] == "scale" and doc["grid"] == [1, 1, 1] and doc["block"] == [64, 1, 1]
    assert doc["params"] == {"scale_in": {"pointer": "b0"}, "scale_out": {"pointer": "b1"},
                             "scale_n": {"type": "u32", "value": 48},
                             "scale_by": {"type": "f32", "value": 2.5}}
    assert doc["capture"]["api"] == "cuLaunchKernel"
    assert doc["capture"]["after"] == {"b1": "000-scale.b1.gpu.bin"}
    assert (doc["capture"]["device"], doc["capture"]["driver"]) == ("Fake  GPU ", "13.0")  # quotes blanked
    # the input as the program wrote it: i - 20 for i < 64
    data = (captured / "000-scale.b0.bin").read_bytes()
    assert len(data) == 256 and data[:4] == struct.pack("<f", -20.0)


@pytest.mark.tool("cc")
def test_tensor_map_is_the_encode_call(captured: Path) -> None:
    doc = json.loads((captured / "001-tile.launch.json").read_text())
    assert doc["params"]["tile_map"] == {"tensor_map": "t0"}
    assert doc["capture"]["api"] == "cuLaunchKernelEx"
    t = doc["tensor_maps"]["t0"]
    assert (t["encode"], t["tensorDataType"], t["tensorRank"]) == ("tiled", "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
                                                                   2)
    assert (t["globalDim"], t["globalStrides"], t["boxDim"]) == ([16, 4], [64], [8, 2])
    assert t["elementStrides"] == [1, 1]
    assert t["globalAddress"] == {"buffer": "b0", "offset": 0}
    assert t["l2Promotion"] == "CU_TENSOR_MAP_L2_PROMOTION_L2_128B"
    # the map's address is the allocation of the first launch's input: the same device address
    first = json.loads((captured / "000-scale.launch.json").read_text())
    assert doc["capture"]["addresses"]["b0"] == first["capture"]["addresses"]["b0"]


@pytest.mark.tool("cc")
def test_replay_leaves_what_the_driver_left(captured: Path) -> None:
    path = captured / "000-scale.launch.json"
    spec = sim.read_launch(path)
    module = sim.load(captured / json.loads(path.read_text())["capture"]["ptx"])
    m = sim.launch(module, spec=spec)
    assert explore.run(m, explore.RandomScheduler(1)).ok
    (c,) = compare(spec, m)
    assert (c.buffer, c.size, c.gpu_changed, c.wrong, c.missing) == ("b1", 256, c.replay_changed, 0, 0)
    # the 48 floats (i - 20) * 2.5 written over zeros: their non-zero bytes
    written = b"".join(struct.pack("<f", (i - 20) * 2.5) for i in range(48))
    assert c.gpu_changed == sum(b != 0 for b in written)
