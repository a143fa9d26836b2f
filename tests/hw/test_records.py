"""Malformed conformance records are input errors naming the file and the fault (exit 2 in `mbarrier
conform`), never a traceback or an "internal error"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier.cli import main
from mbarrier.hw import records

GOOD = next(iter(sorted(records.default_dir().glob("*.json"))))


def _good() -> dict[str, object]:
    data: dict[str, object] = json.loads(GOOD.read_text())
    return data


def _bad_result(**change: object) -> dict[str, object]:
    data = _good()
    results = data["results"]
    assert isinstance(results, list)
    data["results"] = [{**results[0], **change}]
    return data


CASES: list[tuple[str, object, str]] = [
    ("empty", "", "not JSON"),
    ("truncated", "{", "not JSON"),
    ("a list", [], "expected a JSON object"),
    ("no header", {"results": []}, "the header needs a date"),
    ("results not a list", {**_good(), "results": {}}, "results must be a list"),
    ("a result not an object", {**_good(), "results": [1]}, "result 0: expected an object"),
    ("a case without id", _bad_result(case={}), "result 0: a case needs a string id"),
    ("no outcome", _bad_result(outcome=None), "result 0: outcome must be a string"),
    ("obs not an object", _bad_result(obs=[]), "obs must be an object"),
    ("obs of no op", _bad_result(obs={"99": {"values": [1]}}), "obs key '99' is not an op"),
    ("obs without values", _bad_result(obs={"1": {}}), "obs 1 needs a list of values"),
    ("a value of no type", _bad_result(obs={"1": {"values": [[1]]}}), "obs 1: unexpected recorded value"),
]


@pytest.mark.parametrize(("what", "content", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_malformed_record_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str,
                                     content: object, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(records.RecordError, match=message):
        records.load(tmp_path)
    assert main(["conform", "--records", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"malformed conformance record: {f}" in err and message in err and "internal error" not in err


def test_a_good_record_loads(tmp_path: Path) -> None:
    (tmp_path / GOOD.name).write_text(GOOD.read_text())
    assert len(records.load(tmp_path)) == len(_good()["results"])  # type: ignore[arg-type]
