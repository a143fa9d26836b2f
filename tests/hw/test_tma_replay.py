"""Tensor copies held against a Hopper GPU (PTX ISA 5.5, 9.7.9.25.5.2-4): the conformance cases of
`mbarrier.hw.tma` (tiled loads and stores in 1-5 dimensions, out-of-bounds zero and OOB-NaN fill,
element strides, swizzles 32B/64B/128B on and off the pattern's boundary and with rows narrower than the
span, destinations off 128 bytes, boxes starting off 16 bytes, interleaved layouts, im2col in 3-5
dimensions, multicast to a cluster, every reduction, prefetch) run in the simulator, and each case
recorded on the GPU (tools/record_tma.sh) is replayed: the simulator's shared memory, mbarrier flags (the
box completes exactly its bytes) and tensor must equal the GPU's byte for byte, and a case that faulted
on the GPU must end in the simulator with the matching fault.

Until the records exist (src/mbarrier/hw/data/tma/h100.json) the replay test is skipped with that reason;
the other tests run everywhere (the assembler and compiler ones where CUDA is installed)."""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.hw import tma
from mbarrier.ptx.parser import parse
from mbarrier.sim.launchspec import Launch, Pointer, TensorMapArg, TensorMapRef
from mbarrier.sim.tensormap import TensorMap

RECORDS = Path(tma.__file__).parent / "data" / "tma" / "h100.json"
TOOL = Path(__file__).resolve().parents[2] / "tools" / "tma" / "run_cases.cu"
P = "CU_TENSOR_MAP_"


def _load() -> dict[str, dict[str, object]]:
    if not RECORDS.exists():
        return {}
    data = json.loads(RECORDS.read_text())
    return {r["case"]["name"]: r for r in data["results"]}


RECORDED = _load()
NO_RECORDS = (f"no tensor-copy records at {RECORDS}: run tools/record_tma.sh on an H100 (CUDA 13) and "
              "commit its tma.json there")


def tensor_map(case: tma.Case) -> TensorMap:
    """The case's encode call as the simulator's TensorMap (its globalAddress set by the launch)."""
    im = case.im2col
    return TensorMap("tiled" if im is None else "im2col", P + "DATA_TYPE_" + case.dtype, case.rank, 0,
                     case.dims, case.strides, case.element_strides, case.box if im is None else (),
                     im[2] if im else (), im[3] if im else (), im[0] if im else 0, im[1] if im else 0,
                     P + "INTERLEAVE_" + case.interleave, P + "SWIZZLE_" + case.swizzle,
                     P + "L2_PROMOTION_NONE", P + "FLOAT_OOB_FILL_" + case.fill)


@functools.cache  # both tests below run each case: once is enough
def simulate(case: tma.Case, seed: int = 1) -> tuple[explore.RunResult, bytes, bytes]:
    """The case's kernel in the simulator, launched as tools/tma/run_cases.cu launches it: (the run, the
    output buffer, the tensor after the kernel)."""
    data = tma.tensor(case)
    spec = Launch(buffers={"g": sim.Buffer(len(data), data),
                           "o": sim.Buffer(case.out_bytes, b"\xa5" * case.out_bytes)},
                  tensor_maps={"t": TensorMapArg(Pointer("g"), tensor_map(case))},
                  params={"tmap": TensorMapRef("t"), "gmem": Pointer("g"), "out": Pointer("o")})
    m = sim.launch(parse(tma.ptx(case), f"{case.name}.ptx"), grid=case.cluster, block=tma.THREADS, spec=spec)
    r = explore.run(m, explore.RandomScheduler(seed))
    out = m.gmem.read(m.buffers["o"][0], case.out_bytes)
    return r, out, m.gmem.read(m.buffers["g"][0], len(data))


#: The H100's faults (each case's record) and the simulator's rule for each.
GPU_FAULTS = {"an illegal instruction was encountered": "kernel-fault",
              "an illegal memory access was encountered": "memory-fault",
              "misaligned address": "memory-fault"}


def _fault(record: dict[str, object]) -> str | None:
    """The simulator's rule for the fault a record shows (None: the GPU ran the case)."""
    err = record.get("error")
    if err is None:
        return None
    return next(rule for words, rule in GPU_FAULTS.items() if str(err).endswith(words))


@pytest.mark.parametrize("case", tma.CASES, ids=[c.name for c in tma.CASES])
def test_every_case_runs_in_the_simulator(case: tma.Case) -> None:
    """The suite is the simulator's to run: each kernel exits (or faults where the H100 does), a load's
    box completes exactly its bytes (flags A complete, B not early, B complete after 16 more bytes; a
    counting case: equal steps for A and B) and lands in shared memory; a store changes the tensor."""
    r, out, after = simulate(case)
    if case.name in RECORDED and _fault(RECORDED[case.name]):
        assert not r.ok and r.rule == _fault(RECORDED[case.name]), r.message
        return
    assert r.ok, r.message
    flags = [int.from_bytes(out[4 * i:4 * i + 4], "little") for i in range(3)]
    if case.kind == "load":
        for rank in range(case.cluster):
            at = rank * (tma.FLAGS + 2 * case.area)
            got = [int.from_bytes(out[at + 4 * i:at + 4 * i + 4], "little") for i in range(4)]
            if case.count:
                assert got[0] == got[2] and got[1:] == [0, got[0], rank] and 0 < got[0] < tma.COUNT_CAP
            else:
                assert got == [1, 0, 1, rank]
            if not case.count:  # nothing past the box's footprint
                area = out[at + tma.FLAGS:at + tma.FLAGS + case.area]
                end = case.dst + case.footprint
                assert area[end:] == bytes([tma.SENTINEL]) * (case.area - end)
        assert after == tma.tensor(case)
    elif case.kind == "prefetch":
        assert flags == [1, 1, 1] and after == tma.tensor(case)
    else:
        assert flags == [1, 1, 1]
        assert after != tma.tensor(case)


def test_emit_writes_what_the_runner_reads(tmp_path: Path) -> None:
    tma.emit(tmp_path)
    rows = (tmp_path / "manifest.txt").read_text().splitlines()
    assert len(rows) == len(tma.CASES)
    for row, case in zip(rows, tma.CASES, strict=True):
        name, ptx, inp, in_bytes, out_bytes, cluster = row.split()
        assert (name, ptx, inp) == (case.name, f"{case.name}.ptx", f"{case.name}.in")
        assert (tmp_path / inp).read_bytes() == tma.tensor(case) and int(in_bytes) == case.tensor_bytes
        assert (int(out_bytes), int(cluster)) == (case.out_bytes, case.cluster)
        args = [int(x) for x in (tmp_path / f"{name}.tmap").read_text().split()]
        assert args[2] == case.rank and args[7:7 + case.rank] == list(case.dims)


def test_collect_reads_the_runs_back(tmp_path: Path) -> None:
    case = tma.CASES[0]
    fake = bytes(range(256)) * (case.out_bytes // 256 + 1)
    for i in range(tma.RUNS):
        (tmp_path / f"{case.name}.out{i}").write_bytes(fake[:case.out_bytes] + tma.tensor(case))
    (tmp_path / f"{tma.CASES[1].name}.err").write_text("cuLaunchKernelEx: an illegal instruction")
    doc = tma.collect(tmp_path, "NVIDIA H100", "ptxas 13.0")
    first, second = doc["results"][:2]  # type: ignore[index]
    assert first["deterministic"] and tma.unpack(first["out"]) == fake[:case.out_bytes]
    assert first["input_sha256"] == tma.digest(tma.tensor(case))
    assert second["error"] == "cuLaunchKernelEx: an illegal instruction"
    assert tma.case_of(json.loads(json.dumps(first["case"]))) == case


@pytest.mark.tool("ptxas")
def test_every_kernel_assembles_for_sm_90a(tmp_path: Path) -> None:
    for case in tma.CASES:
        f = tmp_path / f"{case.name}.ptx"
        f.write_text(tma.ptx(case))
        r = subprocess.run(["ptxas", "-arch=sm_90a", str(f), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{case.name}: {r.stderr}"


@pytest.mark.tool("nvcc")
@pytest.mark.parametrize("tool", [TOOL, TOOL.parents[1] / "wgmma" / "run_cases.cu"], ids=["tma", "wgmma"])
def test_the_runner_compiles_for_sm_90a(tool: Path, tmp_path: Path) -> None:
    """tools/tma/run_cases.cu and tools/wgmma/run_cases.cu (their host code shared in
    tools/driver_cases.h) against CUDA 13's driver API (linked with -lcuda on the GPU machine)."""
    r = subprocess.run(["nvcc", "-O2", "-arch=sm_90a", "-c", str(tool), "-o", str(tmp_path / "run.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


#: What the H100 recording shows that the simulator does not do: open disagreements, each a strict
#: xfail so that a fix (or a new recording) makes the test say so. docs/simulator.md lists them under
#: "Held against an H100".
DISAGREE: dict[str, str] = {}


@pytest.mark.skipif(not RECORDED, reason=NO_RECORDS)
@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.xfail(reason=DISAGREE[n], strict=True)]
                                               if n in DISAGREE else []) for n in sorted(RECORDED)] or ["-"])
def test_the_simulator_replays_the_gpu(name: str) -> None:
    record = RECORDED[name]
    case = tma.case_of(record["case"])  # type: ignore[arg-type]
    if _fault(record):  # the GPU faulted: the simulator must fault the same way
        r, _, _ = simulate(case)
        assert not r.ok and r.rule == _fault(record), f"{name}: GPU {record['error']}; simulator {r.message}"
        return
    assert record["input_sha256"] == tma.digest(tma.tensor(case)), "the case's tensor changed since recording"
    assert record["deterministic"], f"{name}: the GPU gave different bytes on different runs"
    r, out, after = simulate(case)
    assert r.ok, r.message
    want = tma.unpack(record["out"])  # type: ignore[arg-type]
    if out != want:
        at = next(i for i, (a, b) in enumerate(zip(out, want, strict=True)) if a != b)
        where = "flags" if at % (tma.FLAGS + 2 * case.area) < tma.FLAGS else "shared memory"
        pytest.fail(f"{name}: first difference at out byte {at} ({where}): simulator "
                    f"{out[at:at + 16].hex()}, GPU {want[at:at + 16].hex()}")
    if case.kind != "load":
        assert after == tma.unpack(record["tensor"]), f"{name}: the tensor differs"  # type: ignore[arg-type]


@pytest.mark.skipif(not RECORDED, reason=NO_RECORDS)
def test_counting_cases_completed_what_box_bytes_says() -> None:
    """A counting case's steps give the bytes each copy completed on the GPU (COUNT_ARM - 16 x steps):
    they are `box_bytes` for every one (interleaved layouts, and the control without one)."""
    counted = [tma.case_of(r["case"]) for r in RECORDED.values()  # type: ignore[arg-type]
               if r["case"]["count"] and "error" not in r]  # type: ignore[index]
    assert len(counted) >= 16
    for case in counted:
        out = tma.unpack(RECORDED[case.name]["out"])  # type: ignore[arg-type]
        steps_a, _, steps_b = (int.from_bytes(out[4 * i:4 * i + 4], "little") for i in range(3))
        assert tma.COUNT_ARM - 16 * steps_a == tma.COUNT_ARM - 16 * steps_b == case.box_bytes, case.name
