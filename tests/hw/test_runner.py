"""The GPU runner's process handling (traps, hangs, restarts), driven by a fake cupy: no GPU needed."""

import importlib.util
import io
import sys
from pathlib import Path

import pytest

from mbarrier.hw import cudagen, runner
from mbarrier.hw.litmus import case_from_dict, catalogue, layout

FAKE = Path(__file__).resolve().parent / "fake_cupy"


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    src = str(Path(runner.__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", f"{FAKE}:{src}")
    return tmp_path / "unused.cubin"


def _ids(results):
    return [(r["id"], r["outcome"]) for r in results]


def test_a_trap_is_recorded_and_the_rest_runs_in_a_fresh_process(fake_gpu, monkeypatch):
    cases = catalogue()
    monkeypatch.setenv("FAKE_CUPY_TRAP", "1")
    results, facts = runner.run_batch(fake_gpu, [0, 1, 2], cases, io.StringIO(), want_facts=True)
    assert _ids(results) == [(cases[0].id, "ok"), (cases[1].id, "trap"), (cases[2].id, "ok")]
    assert "cudaErrorLaunchFailure" in results[1]["error"]
    assert facts is not None and facts["name"] == "Fake GPU" and facts["compute_capability"] == "9.0"


def test_a_hang_is_killed_and_recorded(fake_gpu, monkeypatch):
    cases = catalogue()
    monkeypatch.setenv("FAKE_CUPY_HANG", "0")
    monkeypatch.setattr(runner, "CASE_TIMEOUT_S", 1.5)
    results, _ = runner.run_batch(fake_gpu, [0, 1], cases, io.StringIO(), want_facts=False)
    assert _ids(results) == [(cases[0].id, "hang"), (cases[1].id, "ok")]


def test_isolated_cases_get_a_batch_of_their_own():
    cases = catalogue()
    batches = runner._batches(cases, None)
    assert sorted(i for b in batches for i in b) == list(range(len(cases)))
    for b in batches:
        assert len(b) == 1 or not any(cases[i].isolate for i in b)


def test_observations_are_decoded_per_op_kind():
    case = case_from_dict(
        {
            "id": "o",
            "group": "g",
            "title": "t",
            "threads": 2,
            "ops": [
                {"op": "init", "count": 2},
                {"op": "arrive", "threads": [0, 2], "token": "a"},
                {"op": "pending_count", "token": "a"},
                {"op": "try_wait", "parity": 0, "timed": True},
                {"op": "load"},
            ],
        }
    )
    lay = layout(case)
    raw = [0] * lay.size
    raw[0], raw[1] = 0x7FFFF00000000000, cudagen.POISON
    raw[2] = 2
    raw[3:6] = [1, 640, 1300]
    raw[6] = 0x7FFFF000001FFFFC
    raw[lay.done_slot] = cudagen.DONE
    obs, done = runner._observe(case, raw)
    assert done
    assert obs["1"] == {"values": ["0x7ffff00000000000", None]}
    assert obs["2"] == {"values": [2]}
    assert obs["3"] == {"values": [True], "ns": [640], "cycles": [1300]}
    assert obs["4"] == {"values": ["0x7ffff000001ffffc"]}


def test_missing_cupy_is_reported_clearly(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(runner.GpuUnavailable, match="gpu extra"):
        runner.run(None)


def test_a_gpu_other_than_sm_90_is_refused(monkeypatch):
    spec = importlib.util.spec_from_file_location("cupy", FAKE / "cupy" / "__init__.py")
    fake = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(
        fake.cuda.runtime,
        "getDeviceProperties",
        staticmethod(lambda i: {"name": b"A100", "major": 8, "minor": 0}),
    )
    with pytest.raises(runner.GpuUnavailable, match="built for sm_90"):
        runner.run(None)
