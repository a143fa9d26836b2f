"""Every JSON document lint, run and check print is valid against the shipped schema (report/schemas/),
for every outcome and verdict; the schema rejects what it must (a finding without its fields, a string
where a number belongs); numbers are numbers; a race names both accesses and the missing edge."""

from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mbarrier.cli import main
from mbarrier.examples import HERE
from mbarrier.examples.races import HERE as RACES
from mbarrier.report.schema import schema

CORPUS = HERE / "corpus"
VALIDATOR = jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker())
HEAD = ".version 8.6\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
REGS = "\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.shared .align 8 .b64 bar;\n"


#: A value that is a number written as text ("0", "0x30", "-1").
NUMERIC_TEXT = re.compile(r"-?(0x[0-9a-fA-F]+|[0-9]+)")
#: Keys whose strings may happen to be all digits: free text (a kernel's printf output), and a
#: parameter's bytes in hexadecimal (launch.params: a byte string, not a number).
FREE_TEXT = frozenset({"text", "bytes"})


def _numeric_strings(node: Any, path: str = "") -> list[str]:
    """Where a document holds a number as a string."""
    if isinstance(node, dict):
        return [p for k, v in node.items() if k not in FREE_TEXT for p in _numeric_strings(v, f"{path}.{k}")]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _numeric_strings(v, f"{path}[{i}]")]
    return [path] if isinstance(node, str) and NUMERIC_TEXT.fullmatch(node) else []


def _print_json(argv: list[str], code: int, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(argv) == code, capsys.readouterr()
    d: dict[str, Any] = json.loads(capsys.readouterr().out)
    VALIDATOR.validate(d)
    assert _numeric_strings(d) == []  # numbers as numbers, everywhere
    return d


def test_numeric_strings_are_found() -> None:
    assert _numeric_strings({"a": [{"cta": "0"}, {"x": "0x30"}], "text": "1", "b": "ring", "c": 3}) == \
        [".a[0].cta", ".a[1].x"]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())


def _kernel(tmp_path: Path, body: str) -> str:
    f = tmp_path / "k.ptx"
    f.write_text(HEAD + REGS + body + "\tret;\n}\n")
    return str(f)


LINT_BAD = (HEAD + REGS + "\tmbarrier.init.shared::cta.b64 [bar], 0;\n"
            "\tmbarrier.arrive.release.shared::cta.b64 %rd1, [bar];\n\tret;\n}\n")


def test_lint_documents(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                        monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.ptx"
    bad.write_text(LINT_BAD)
    d = _print_json(["lint", "--json", str(bad)], 1, capsys)
    assert {x["severity"] for x in d["files"][0]["diagnostics"]} >= {"error", "warning"}
    _print_json(["lint", "--json", str(HERE / "ring_buffer.ptx"), str(bad), str(tmp_path / "nope.ptx")], 2,
                capsys)
    _print_json(["lint", "--json", "--strict", "--target", "sm_80", str(HERE / "ring_buffer.ptx")], 1, capsys)
    (tmp_path / "syntax.ptx").write_text(HEAD + "\tmbarrier.init.shared.b64 [bar, 1;\n}\n")
    d = _print_json(["lint", "--json", str(tmp_path / "syntax.ptx")], 1, capsys)
    assert d["files"][0]["diagnostics"][-1]["severity"] == "fatal"
    monkeypatch.setattr("sys.stdin", io.StringIO(LINT_BAD))
    assert _print_json(["lint", "--json", "-"], 1, capsys)["files"][0]["file"] == "<stdin>"


RUNS = [
    ("exited", [str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3"], 0),
    ("stuck", [str(HERE / "ring_buffer_bug_bytes.ptx"), "--grid", "1", "--block", "160"], 1),
    ("race", [str(RACES / "tma_pipeline_bug_relaxed_wait.ptx"), "--grid", "1", "--block", "3"], 1),
    ("limit", [str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--max-steps", "5"], 3),
]


@pytest.mark.parametrize(("outcome", "argv", "code"), RUNS, ids=[r[0] for r in RUNS])
def test_run_documents(outcome: str, argv: list[str], code: int, capsys: pytest.CaptureFixture[str]) -> None:
    d = _print_json(["run", *argv, "--json"], code, capsys)
    assert d["outcome"] == outcome and d["launch"]["grid"] == [1, 1, 1]
    assert isinstance(d["steps"], int) and d["steps"] > 0
    if outcome == "stuck":
        assert d["stuck"] and all(isinstance(s["line"], int) for s in d["stuck"])
    if outcome == "limit":
        assert d["stopped_by"] == "max-steps"
    if outcome == "race":  # the copy engine as schedules number it
        first = d["finding"]["accesses"][0]
        assert first["copy"] == 0 and first["agent"].startswith("cp.async.bulk ") and ",c0," in d["schedule"]


def test_run_violation_unsupported_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    over = _kernel(tmp_path, "\tmbarrier.init.shared::cta.b64 [bar], 1;\n"
                   "\tmbarrier.arrive.shared::cta.b64 _, [bar], 2;\n")
    d = _print_json(["run", over, "--grid", "1", "--block", "1", "--json"], 1, capsys)
    assert d["outcome"] == "violation" and d["finding"]["rule"] == "pending-underflow"
    assert d["finding"]["line"] == 10
    wg = tmp_path / "wg.ptx"
    wg.write_text(HEAD + REGS + "\ttcgen05.fence::before_thread_sync;\n\tret;\n}\n")
    d = _print_json(["run", str(wg), "--grid", "1", "--block", "1", "--json"], 2, capsys)
    assert d["finding"] is None and d["unsupported"]["line"] == 9
    sched = _print_json(["run", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--json"], 0,
                        capsys)["schedule"]
    d = _print_json(["run", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--json",
                     "--schedule", sched.rsplit(",", 3)[0]], 0, capsys)
    assert d["scheduler"] == {"kind": "replay", "seed": None, "burst": None} and d["notes"]


def test_run_dump_and_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    d = _print_json(["run", str(HERE / "ring_buffer.ptx"), "--grid", "1", "--block", "160", "--json",
                     "--arg", "1=buf:0x100000", "--dump", "ring_buffer_param_1:4"], 0, capsys)
    words = d["dumps"]["ring_buffer_param_1"]
    assert len(words) == 4 and all(isinstance(w, int) for w in words)
    assert d["launch"]["args"] == [{"param": "ring_buffer_param_1", "value": None, "buffer": 0x100000}]


CHECKS = [
    ("verified", [str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3"], 0),
    ("deadlock", [str(CORPUS / "ring_tx_mismatch.ptx"), "--grid", "1", "--block", "3"], 1),
    ("violation", [str(CORPUS / "ring_extra_arrive.ptx"), "--grid", "1", "--block", "3"], 1),
    ("race", [str(RACES / "cluster_exchange_bug_cta_scope.ptx"), "--grid", "2", "--block", "2",
              "--cluster", "2"], 1),
    ("incomplete", [str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--max-states", "5"], 3),
]


@pytest.mark.parametrize(("what", "argv", "code"), CHECKS, ids=[c[0] for c in CHECKS])
def test_check_documents(what: str, argv: list[str], code: int, capsys: pytest.CaptureFixture[str]) -> None:
    d = _print_json(["check", *argv, "--json"], code, capsys)
    assert d["file"] == argv[0] and d["tool"]["name"] == "mbarrier" and d["launch"]["threads"] >= 3
    assert d["fingerprint"].startswith("v1 module=")
    if what in ("verified", "incomplete"):
        assert d["verdict"] == what
        return
    f = d["findings"][0]
    assert f["kind"] == what and isinstance(f["line"], int) and f["schedule"].startswith(d["fingerprint"])
    if what == "deadlock":
        w = f["waiters"][0]
        assert isinstance(w["address"], int) and w["barrier_state"]["expected"] >= 1
        assert w["cta"] == 0 and "CTA 0" in w["reason"]
    if what == "race":
        first, second = f["accesses"]
        assert (first["thread"], first["line"], first["operation"]) == (2, 44, "write")
        assert (second["thread"], second["line"], second["operation"]) == (0, 56, "read")
        assert first["address"] == second["address"] == 0x10 and second["cta"] == 0
        assert "ld.shared.u32" in second["instruction"] and ".cta scope" in f["missing_edge"]


def test_check_unsupported_and_a_timeout_before_the_launch(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    wg = tmp_path / "wg.ptx"
    wg.write_text(HEAD + REGS + "\ttcgen05.fence::before_thread_sync;\n\tret;\n}\n")
    d = _print_json(["check", str(wg), "--grid", "1", "--block", "1", "--json"], 2, capsys)
    assert d["verdict"] == "unsupported" and d["unsupported"]["kind"] == "unsupported"
    big = tmp_path / "big.ptx"
    big.write_text(HEAD + REGS + "\tmov.u32 %r1, 1;\n" * 300_000 + "\tret;\n}\n")
    d = _print_json(["check", str(big), "--grid", "1", "--block", "1", "--timeout", "0.05", "--json"], 3,
                    capsys)
    assert d["launch"] is None and d["fingerprint"] is None


STATS = ("states", "transitions", "seconds", "sleep_pruned", "sleep_woken", "depth", "local_steps", "enabled",
         "pruned", "full_expansions", "symmetric_merges", "walks", "walk_transitions", "walk_seconds")


def _finding_document() -> dict[str, Any]:
    return {"schema_version": 1, "tool": {"name": "mbarrier", "version": "0"}, "command": "check",
            "file": "k.ptx", "launch": None, "fingerprint": None, "verdict": "finding",
            "findings": [{"kind": "race", "rule": "data-race", "section": "", "message": "m", "line": 3,
                          "instruction": "ld", "agent": "thread 0", "schedule": "0", "steps": 1,
                          "accesses": [{"thread": t, "agent": "a", "copy": None, "line": 1,
                                        "instruction": "i", "operation": "read", "space": "shared",
                                        "cta": 0, "address": 0, "size": 4} for t in (0, 1)],
                          "missing_edge": "e", "waiters": [], "could_arrive": {}, "found_by": "search",
                          "starved": []}],
            "stats": {k: 0 for k in STATS},
            "mode": "", "covered": "", "stopped_by": None, "unsupported": None}


def test_the_schema_rejects_what_it_must() -> None:
    VALIDATOR.validate(_finding_document())
    bad: list[dict[str, Any]] = []
    waiter = {"thread": 0, "line": 3, "instruction": "mbarrier.try_wait", "waits_on": "mbarrier",
              "reason": "r", "barrier": "full", "address": 48, "cta": 0, "wants": "parity 0", "state": "s",
              "barrier_state": None}
    ok = copy.deepcopy(_finding_document())
    ok["findings"][0]["waiters"] = [waiter]
    VALIDATOR.validate(ok)
    for change in ("no edge", "one access", "address as text", "cta as text", "waiter's cta as text",
                   "verified with findings", "unknown key", "starved what"):
        d = copy.deepcopy(_finding_document())
        f = d["findings"][0]
        if change == "no edge":
            f["missing_edge"] = None
        elif change == "one access":
            f["accesses"].pop()
        elif change == "address as text":
            f["accesses"][0]["address"] = "0x10"
        elif change == "cta as text":
            f["accesses"][0]["cta"] = "0"
        elif change == "waiter's cta as text":
            f["waiters"] = [waiter | {"cta": "0"}]
        elif change == "verified with findings":
            d["verdict"] = "verified"
        elif change == "starved what":
            f["starved"] = [{"waits_on": "mbarrier", "barrier": "full", "address": 0, "cta": 0,
                             "missing": "patience", "phase": 0, "expected": 1, "arrived": 0, "pending": 1,
                             "tx": 0, "landing": 0, "waiters": [0], "summary": "s"}]
        else:
            d["extra"] = 1
        bad.append(d)
    for d in bad:
        assert not VALIDATOR.is_valid(d)


def test_a_flag_spin_deadlock_and_stuck_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A thread spinning on a global flag no one writes: check's waiter and run's stuck thread say so."""
    f = tmp_path / "flag.ptx"
    f.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 flag)\n{\n"
                 "\t.reg .pred %p<2>;\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n"
                 "\tld.param.u64 %rd1, [flag];\nSPIN:\n\tld.global.acquire.gpu.b32 %r1, [%rd1];\n"
                 "\tsetp.eq.s32 %p1, %r1, 0;\n\t@%p1 bra SPIN;\n\tret;\n}\n")
    d = _print_json(["check", "--json", str(f), "--grid", "1", "--block", "1"], 1, capsys)
    (waiter,) = d["findings"][0]["waiters"]
    assert (waiter["waits_on"], waiter["address"], waiter["cta"], waiter["line"]) == ("flag", 0x1000000000,
                                                                                      None, 11)
    r = _print_json(["run", "--json", str(f), "--grid", "1", "--block", "1"], 1, capsys)
    assert r["outcome"] == "stuck" and "spins on the 4-byte flag" in r["stuck"][0]["reason"]
