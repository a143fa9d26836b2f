"""`--launch FILE` for run, check and export: the launch file gives the kernel, shapes, buffers and
parameters; command-line options override it; a wrong file is a clear error (exit 2); run writes the
output buffers it names, and `--write` adds or replaces them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mbarrier import examples
from mbarrier.cli import main

RING = str(examples.path("struct_ring"))
RING_LAUNCH = str(examples.HERE / "struct_ring.launch.json")
PTX = """.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .align 8 .b8 s[16])
{
    .reg .b64 %rd<4>;
    .reg .b32 %r<3>;
    mov.b64 %rd1, s;
    ld.param.u64 %rd2, [%rd1];
    ld.param.u32 %r1, [%rd1+8];
    mov.u32 %r2, %tid.x;
    add.u32 %r1, %r1, %r2;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r1;
    ret;
}
"""


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small(tmp_path: Path) -> tuple[str, Path]:
    """A struct-parameter kernel and its launch file: thread i writes s.base + i to out[i]."""
    (tmp_path / "k.ptx").write_text(PTX)
    launch = {"grid": 1, "block": 2, "buffers": {"out": {"size": 16}},
              "params": {"s": {"fields": [{"offset": 0, "pointer": "out"},
                                          {"offset": 8, "type": "u32", "value": 40}]}},
              "outputs": {"out": {"file": "out.npy", "dtype": "<u4"}}}
    (tmp_path / "k.json").write_text(json.dumps(launch))
    return str(tmp_path / "k.ptx"), tmp_path / "k.json"


def test_run_takes_everything_from_the_launch_file_and_writes_its_outputs(
        capsys: pytest.CaptureFixture[str], small: tuple[str, Path]) -> None:
    ptx, launch = small
    code, out, _ = _cli(capsys, "run", ptx, "--launch", str(launch), "--dump", "out:4")
    assert code == 0, out
    assert "out: 40 41 0 0" in out
    assert f"wrote {launch.parent / 'out.npy'}" in out
    assert np.load(launch.parent / "out.npy").tolist() == [40, 41, 0, 0]


def test_options_override_the_launch_file(capsys: pytest.CaptureFixture[str], small: tuple[str, Path],
                                          tmp_path: Path) -> None:
    ptx, launch = small
    code, out, _ = _cli(capsys, "run", ptx, "--launch", str(launch), "--block", "4", "--write",
                        f"out={tmp_path / 'o.bin'}")
    assert code == 0 and "4 threads" in out
    assert np.fromfile(tmp_path / "o.bin", dtype="<u4").tolist() == [40, 41, 42, 43]
    assert not (tmp_path / "out.npy").exists()  # --write replaced the file's output for `out`


def test_the_bundled_struct_parameter_kernel_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _cli(capsys, "run", RING, "--launch", RING_LAUNCH, "--write", f"out={tmp_path / 'o.npy'}")
    assert code == 0 and "all 96 threads exited" in out
    assert np.load(tmp_path / "o.npy").shape == (512,)


def test_check_and_export_read_the_launch_file(capsys: pytest.CaptureFixture[str],
                                               small: tuple[str, Path], tmp_path: Path) -> None:
    ptx, launch = small
    code, out, _ = _cli(capsys, "check", ptx, "--launch", str(launch))
    assert code == 0 and "VERIFIED" in out
    # The Promela export has no parameter memory: a parameter used by address is refused with its line.
    code, _, err = _cli(capsys, "export", "--promela", ptx, "--launch", str(launch))
    assert code == 2 and ("line 8: `mov.b64` cannot be exported to Promela (the address of kernel parameter "
                          "s: the export has no parameter memory") in err
    ring = examples.HERE / "corpus" / "ring.ptx"
    (tmp_path / "r.json").write_text('{"grid": 1, "block": 3}')
    code, out, _ = _cli(capsys, "export", "--promela", str(ring), "--launch", str(tmp_path / "r.json"))
    assert code == 0 and "proctype" in out


def test_a_schedule_is_bound_to_the_launch_files_contents(capsys: pytest.CaptureFixture[str],
                                                          small: tuple[str, Path], tmp_path: Path) -> None:
    ptx, launch = small
    sched = tmp_path / "s.sched"
    assert _cli(capsys, "run", ptx, "--launch", str(launch), "--save-schedule", str(sched))[0] == 0
    assert _cli(capsys, "run", ptx, "--launch", str(launch), "--schedule", f"@{sched}")[0] == 0
    doc = json.loads(launch.read_text())
    doc["params"]["s"]["fields"][1]["value"] = 41
    launch.write_text(json.dumps(doc))
    code, _, err = _cli(capsys, "run", ptx, "--launch", str(launch), "--schedule", f"@{sched}")
    assert code == 2 and "recorded on another launch" in err and "arguments" in err


@pytest.mark.parametrize(("text", "words"), [
    ('{"grid": 1, "block": 2,', "k.json:1:24: not valid JSON"),
    ('{"grid": 1, "block": 2, "params": {"s": {"fields": [{"offset": 12, "type": "u64", "value": 1}]}}}',
     "parameter 's', field 0 (u64 at offset 12): its 8 bytes end at byte 20, beyond the 16 bytes"),
    ('{"grid": 1, "block": 2, "params": {"s": {"fields": [{"offset": 0, "pointer": "nope"}]}}}',
     "no buffer named 'nope'"),
    ('{"grid": 1, "block": 2, "params": {"t": 1}}', "kernel k has no parameter t"),
    ('{"block": 2, "params": {"s": {"bytes": "00"}}}',
     "--grid is required (or a launch file that gives the grid)"),
    ('{"grid": 1, "block": 2, "tensor_maps": {"t": {"encode": "tiled", "tensorDataType": "FLOAT32", '
     '"tensorRank": 1, "globalAddress": "x", "globalDim": [8], "globalStrides": [], "boxDim": [3], '
     '"elementStrides": [1]}}, "buffers": {"x": {"size": 64}}}',
     "cuTensorMapEncodeTiled would return CUDA_ERROR_INVALID_VALUE: boxDim[0] * element size = 12 bytes"),
])
def test_a_wrong_launch_file_is_exit_2_with_a_clear_message(capsys: pytest.CaptureFixture[str],
                                                             small: tuple[str, Path], text: str,
                                                             words: str) -> None:
    ptx, launch = small
    launch.write_text(text)
    code, _, err = _cli(capsys, "run", ptx, "--launch", str(launch))
    assert code == 2 and words in err and "Traceback" not in err


def test_a_missing_launch_file_and_a_bad_write_are_usage_errors(capsys: pytest.CaptureFixture[str],
                                                                small: tuple[str, Path]) -> None:
    ptx, launch = small
    code, _, err = _cli(capsys, "run", ptx, "--launch", str(launch.parent / "none.json"))
    assert code == 2 and "cannot read the launch file" in err
    code, _, err = _cli(capsys, "run", ptx, "--launch", str(launch), "--write", "nobuf=x.npy")
    assert code == 2 and "--write nobuf: no buffer of that name" in err
    code, _, err = _cli(capsys, "run", ptx, "--launch", str(launch), "--write", "out=x.txt")
    assert code == 2 and "expected NAME=FILE.npy or NAME=FILE.bin" in err


def test_the_json_launch_shows_the_launch_files_dynamic_shared(capsys: pytest.CaptureFixture[str],
                                                               small: tuple[str, Path]) -> None:
    ptx, launch = small
    doc = json.loads(launch.read_text())
    doc["dynamic_shared"] = 1024
    launch.write_text(json.dumps(doc))
    code, out, _ = _cli(capsys, "run", ptx, "--launch", str(launch), "--json")
    assert code == 0 and json.loads(out)["launch"]["dynamic_shared"] == 1024
    code, out, _ = _cli(capsys, "check", ptx, "--launch", str(launch), "--json", "--dynamic-shared", "512")
    assert code == 0 and json.loads(out)["launch"]["dynamic_shared"] == 512
