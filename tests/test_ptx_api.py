"""The API for PTX text (`mbarrier.lint`, `run`, `check`, `mbarrier.api`): the same results as the
command line's JSON, typed (a caller's `mypy --strict` sees the types), input errors as InputError."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import mbarrier
from mbarrier.cli import main
from mbarrier.examples import HERE
from mbarrier.examples.races import HERE as RACES
from mbarrier.report.model import to_json
from mbarrier.report.schema import schema

SRC = Path(__file__).resolve().parents[1] / "src"
RING = (HERE / "corpus" / "ring.ptx").read_text()
MISMATCH = (HERE / "corpus" / "ring_tx_mismatch.ptx").read_text()
RACE = (RACES / "cluster_exchange_bug_cta_scope.ptx").read_text()
VALIDATOR = jsonschema.Draft202012Validator(schema())


def test_check_gives_what_check_json_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = mbarrier.check(MISMATCH, mbarrier.Launch(grid=1, block=3), path="k.ptx")
    assert report.verdict == "finding" and not report.verified and report.findings[0].kind == "deadlock"
    (tmp_path / "k.ptx").write_text(MISMATCH)
    os.chdir(tmp_path)
    assert main(["check", "k.ptx", "--grid", "1", "--block", "3", "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    mine = json.loads(json.dumps(to_json(report)))
    VALIDATOR.validate(mine)
    for d in (printed, mine):  # wall-clock figures differ between two runs, and so does the number of
        # random walks (they get a share of the search's wall time: explore.walks)
        for key in ("seconds", "walk_seconds", "walks", "walk_transitions"):
            d["stats"][key] = 0
    assert mine == printed


def test_race_findings_are_typed_data() -> None:
    report = mbarrier.check(RACE, mbarrier.Launch(grid=2, block=2, cluster=2))
    (f,) = report.findings
    first, second = f.accesses
    assert (first.thread, first.line, first.operation, second.thread, second.line) == (2, 44, "write", 0, 56)
    assert f.missing_edge is not None and ".cta scope" in f.missing_edge
    assert report.launch is not None and report.launch.cluster == (2, 1, 1)


def test_run_with_arguments_and_replay() -> None:
    launch = mbarrier.Launch(grid=1, block=3)
    r = mbarrier.run(RING, launch, seed=3)
    assert r.outcome == "exited" and r.exited == 3 and r.scheduler.seed == 3
    again = mbarrier.run(RING, launch, schedule=r.schedule)
    assert again.outcome == "exited" and again.schedule == r.schedule and again.scheduler.kind == "replay"
    ring = (HERE / "ring_buffer.ptx").read_text()
    r = mbarrier.run(ring, mbarrier.Launch(block=160, args={1: mbarrier.Buffer(1 << 20)}))
    assert r.outcome == "exited" and r.launch.args[0].param == "ring_buffer_param_1"
    VALIDATOR.validate(json.loads(json.dumps(to_json(r))))


def test_lint_of_text() -> None:
    r = mbarrier.lint(RING.replace("mbarrier.init.shared::cta.b64", "mbarrier.init.shared::cta.b32", 1),
                      target="sm_90", path="mine.ptx")
    assert r.failed and r.files[0].file == "mine.ptx" and r.files[0].diagnostics[0].rule.startswith("ptxas-")
    assert not mbarrier.lint(RING).failed
    assert mbarrier.lint("not ptx").files[0].diagnostics[0].severity == "fatal"


def test_input_errors_raise_input_error() -> None:
    with pytest.raises(mbarrier.InputError, match="does not parse"):
        mbarrier.check("not ptx", mbarrier.Launch())
    with pytest.raises(mbarrier.InputError, match="kernel"):
        mbarrier.run(RING, mbarrier.Launch(kernel="nope"))
    with pytest.raises(mbarrier.InputError, match="unknown target"):
        mbarrier.lint(RING, target="sm_1")
    with pytest.raises(mbarrier.InputError):
        mbarrier.check(RING, mbarrier.Launch(block=3), timeout=float("nan"))
    with pytest.raises(ValueError):  # InputError is a ValueError
        mbarrier.run(RING, mbarrier.Launch(block=3), schedule="7")


def test_the_results_are_frozen_dataclasses() -> None:
    r = mbarrier.check(RING, mbarrier.Launch(block=3))
    assert dataclasses.is_dataclass(r) and r.verified
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.verdict = "finding"  # type: ignore[misc]


CALLER = '''
import mbarrier
from mbarrier.testing import assert_verifies

PTX = ""
report: mbarrier.CheckReport = mbarrier.check(PTX, mbarrier.Launch(grid=1, block=(32, 1, 1)))
verified: bool = report.verified
lines: list[int | None] = [f.line for f in report.findings]
threads: list[int] = [a.thread for f in report.findings for a in f.accesses]
run: mbarrier.RunReport = mbarrier.run(PTX, mbarrier.Launch(block=3, args={"n": 4, 1: mbarrier.Buffer(64)}))
steps: int = run.steps
lint: mbarrier.LintReport = mbarrier.lint(PTX, target="sm_90")
errors: int = lint.summary.errors
assert_verifies(PTX, mbarrier.Launch(block=3), max_states=1000)
'''


def test_a_callers_mypy_strict_sees_the_types(tmp_path: Path) -> None:
    """A caller's `mypy --strict` passes on correct use, and catches a wrong one (the types are real,
    not Any)."""
    wrong = "\nname: str = run.steps\n"
    for code, ok in ((CALLER, True), (CALLER + wrong, False)):
        (tmp_path / "caller.py").write_text(code)
        mypy = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "caller.py"]
        proc = subprocess.run(mypy, cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "MYPYPATH": str(SRC)})
        if ok:
            assert proc.returncode == 0, proc.stdout + proc.stderr
        else:
            assert proc.returncode == 1 and 'incompatible types in assignment (expression has type "int"' \
                in proc.stdout.lower(), proc.stdout


STRUCT_TEXT = """.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .align 8 .b8 s[16])
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<2>;
    mov.b64 %rd1, s;
    ld.param.u64 %rd2, [%rd1];
    ld.param.u32 %r1, [%rd1+8];
    st.global.u32 [%rd2], %r1;
    ret;
}
"""


def test_run_and_check_take_a_launch_file() -> None:
    """A launch file's `sim.Launch` (struct parameters, named buffers) is a launch the API takes."""
    from mbarrier import examples, sim
    spec = sim.read_launch(examples.HERE / "struct_ring.launch.json")
    assert mbarrier.run(examples.path("struct_ring").read_text(), spec, seed=2).outcome == "exited"
    small = sim.launch_from_dict({"block": 1, "buffers": {"o": {"size": 8}}, "params": {"s": {"fields": [
        {"offset": 0, "pointer": "o"}, {"offset": 8, "type": "u32", "value": 5}]}}})
    assert mbarrier.check(STRUCT_TEXT, small).verdict == "verified"
    with pytest.raises(mbarrier.InputError, match="field 0"):
        mbarrier.run(STRUCT_TEXT, sim.launch_from_dict({"params": {"s": {"fields": [
            {"offset": 12, "type": "u64", "value": 1}]}}}))
