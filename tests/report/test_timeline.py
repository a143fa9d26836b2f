"""Timelines: `run --perfetto OUT.json`, `check --perfetto DIR` (a trace per finding) and `--svg FILE`.
The traces are checked against the Chrome trace-event format (the events' shapes as a JSON Schema,
complete slices nesting on each track, every flow's two ends inside slices of their tracks, every track
named) and for their content: a track per thread and copy, a counter per mbarrier, arrows from the step
that completed a phase to the waits it released, a deadlock's waits stuck to the end."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mbarrier.cli import main
from mbarrier.examples import HERE
from mbarrier.examples.races import HERE as RACES

CORPUS = HERE / "corpus"

# The trace-event format (the JSON Object Format of Chrome's Trace Event Format): the phases used here.
EVENT = {
    "type": "object",
    "required": ["ph", "pid", "name"],
    "properties": {
        "ph": {"enum": ["X", "M", "C", "s", "f"]},
        "name": {"type": "string", "minLength": 1},
        "cat": {"type": "string"},
        "pid": {"type": "integer", "minimum": 0},
        "tid": {"type": "integer", "minimum": 0},
        "ts": {"type": "number", "minimum": 0},
        "dur": {"type": "number", "exclusiveMinimum": 0},
        "id": {"type": "integer"},
        "bp": {"const": "e"},
        "args": {"type": "object"},
    },
    "allOf": [
        {"if": {"properties": {"ph": {"const": "X"}}}, "then": {"required": ["tid", "ts", "dur"]}},
        {"if": {"properties": {"ph": {"const": "C"}}},
         "then": {"required": ["ts", "args"],
                  "properties": {"args": {"additionalProperties": {"type": "number"}, "minProperties": 1}}}},
        {"if": {"properties": {"ph": {"enum": ["s", "f"]}}}, "then": {"required": ["tid", "ts", "id"]}},
        {"if": {"properties": {"ph": {"const": "M"}}},
         "then": {"properties": {"name": {"enum": ["process_name", "thread_name", "process_sort_index",
                                                   "thread_sort_index"]}},
                  "required": ["args"]}},
    ],
}
TRACE = {"type": "object", "required": ["traceEvents"],
         "properties": {"traceEvents": {"type": "array", "items": EVENT},
                        "displayTimeUnit": {"enum": ["ms", "ns"]}, "otherData": {"type": "object"}}}


def check_trace(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Validate the format and the structure; the events."""
    jsonschema.Draft202012Validator(TRACE).validate(trace)
    events: list[dict[str, Any]] = trace["traceEvents"]
    named_pids = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    named_tids = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    slices: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for e in events:
        assert e["pid"] in named_pids, e
        if e["ph"] in ("X", "s", "f"):
            assert (e["pid"], e["tid"]) in named_tids, e
        if e["ph"] == "X":
            slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for track, spans in slices.items():  # complete events on one track nest or are disjoint
        stack: list[float] = []
        for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1], f"slices overlap on {track}: ends {stack[-1]} and {end}"
            stack.append(end)
    flows: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    for e in events:
        if e["ph"] in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
            inside = any(a <= e["ts"] < b for a, b in slices[(e["pid"], e["tid"])])
            assert inside, f"flow end outside a slice: {e}"
    assert all(set(ends) == {"s", "f"} and ends["s"]["ts"] <= ends["f"]["ts"] for ends in flows.values())
    return events


def _names(events: list[dict[str, Any]], pid: int | None = None) -> dict[int, str]:
    return {e["tid"]: e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "thread_name" and (pid is None or e["pid"] == pid)}


def test_check_writes_a_trace_per_finding_with_the_deadlock_stuck_to_the_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "traces"
    assert main(["check", str(CORPUS / "ring_tx_mismatch.ptx"), "--grid", "1", "--block", "3",
                 "--perfetto", str(out), "--svg", str(tmp_path / "f.svg")]) == 1
    (path,) = sorted(out.iterdir())
    assert path.name == "finding-1-deadlock.json"
    events = check_trace(json.loads(path.read_text()))
    end = max(e["ts"] + e.get("dur", 0) for e in events if "ts" in e)
    stuck = {e["tid"]: e for e in events if e["ph"] == "X" and e["name"].startswith("STUCK")}
    assert set(stuck) == {0, 1, 2} and all(e["ts"] + e["dur"] == end for e in stuck.values())
    assert "waits for parity 0 of mbarrier full" in stuck[1]["args"]["reason"]
    copies = _names(events, 0)
    assert [n.split()[0] for n in copies.values()] == ["c0", "c1"]
    flying = {e["tid"] for e in events if e["ph"] == "X" and e["name"] == "in flight"}
    assert flying == set(copies)
    full = [e["args"] for e in events if e["ph"] == "C" and e["name"] == "full"]
    assert full[-1] == {"phase": 0, "pending": 0, "tx": 4}  # 4 bytes that never arrive
    svg = ET.fromstring((tmp_path / "f.svg").read_text())
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert texts[0] is not None and "ring_tx_mismatch.ptx: [1] deadlock" in texts[0]
    assert {"thread 0", "thread 1", "thread 2", "c0 cp.async.bulk"} <= set(texts)
    width = float(svg.get("width") or 0)
    stuck_bars = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect") if r.get("fill") == "#e53e3e"]
    assert len(stuck_bars) == 3
    right = [float(r.get("x") or 0) + float(r.get("width") or 0) for r in stuck_bars]
    assert all(abs(r - (width - 10)) < 1 for r in right)


def test_run_trace_has_arrows_from_completions_to_released_waits(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.json"
    assert main(["run", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--perfetto", str(out)]) == 0
    events = check_trace(json.loads(out.read_text()))
    assert set(_names(events, 1)) == {0, 1, 2}
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts
    waits = [e for e in events if e["ph"] == "X" and e["name"].startswith("wait on ")]
    for i, s in starts.items():
        f = ends[i]
        # the released wait's slice ends at the flow's end, on the waiting thread's track
        assert any(w["tid"] == f["tid"] and w["ts"] + w["dur"] == f["ts"] + 1 for w in waits)
        # the flow starts at the step that changed that barrier
        (src,) = [e for e in events if e["ph"] == "X" and e["cat"] == "step" and e["tid"] == s["tid"]
                  and e["pid"] == s["pid"] and e["ts"] == s["ts"]]
        assert s["name"].split()[-1] in src["args"]["barriers changed"]
    assert any(s["pid"] == 0 for s in starts.values())  # a copy landing releases a consumer
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert {"full", "empty"} <= counters


def test_a_race_marks_its_failing_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "race.json"
    svg = tmp_path / "race.svg"
    assert main(["run", str(RACES / "tma_pipeline_bug_relaxed_wait.ptx"), "--grid", "1", "--block", "3",
                 "--perfetto", str(out), "--svg", str(svg)]) == 1
    events = check_trace(json.loads(out.read_text()))
    (fail,) = [e for e in events if e["ph"] == "X" and e["name"].startswith("RACE: ")]
    assert fail["args"]["line"] == 81 and "missing edge" in fail["args"]["message"]
    assert max(e["ts"] for e in events if e["ph"] == "X" and e["cat"] == "step") == fail["ts"]
    assert list(ET.fromstring(svg.read_text()).iter("{http://www.w3.org/2000/svg}circle"))


def test_timeline_options_are_checked_before_the_work(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(SystemExit) as e:
        main(["check", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--perfetto", str(f)])
    assert e.value.code == 2 and "is not a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--svg",
              str(tmp_path / "no" / "x.svg")])
    assert main(["check", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--perfetto",
                 str(tmp_path / "t")]) == 0
    assert "no finding" in capsys.readouterr().err and not (tmp_path / "t").exists()


def test_the_svg_in_the_docs_is_the_tools_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/timeline-deadlock.svg (shown by the README) is what the command it names writes today."""
    out = tmp_path / "timeline.svg"
    assert main(["check", str(CORPUS / "ring_tx_mismatch.ptx"), "--grid", "1", "--block", "3", "--svg",
                 str(out)]) == 1
    docs = Path(__file__).resolve().parents[2] / "docs" / "timeline-deadlock.svg"
    assert out.read_text() == docs.read_text()
