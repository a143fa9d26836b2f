"""Recorded GPU observations: one JSON file per case group, shipped in the package (hw/data/records/).

Each file holds the run's header (tool, date, GPU facts) and its results; each result embeds the case
exactly as it ran, so a record stays meaningful when the catalogue changes later. When several files
hold the same case id, the newest run (by date) wins.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from mbarrier.hw.litmus import Case, CaseError, case_from_dict
from mbarrier.hw.replay import decode_value

HEADER_KEYS = ("schema", "tool", "date", "gpu")


#: Where the records are in the repository (docs link here); the package reads them as its data.
REPO_DIR = "src/mbarrier/hw/data/records"


def default_dir() -> Traversable:
    """The records shipped with the package (the H100 runs the README and docs/hardware.md cite)."""
    return resources.files("mbarrier.hw") / "data" / "records"


@dataclass(frozen=True)
class Recorded:
    case: Case
    result: Mapping[str, Any]
    header: Mapping[str, Any]
    file: Traversable


def split(record: Mapping[str, Any], dest: Path) -> list[Path]:
    """Write one run's record as one file per case group; returns the files written."""
    header = {k: record[k] for k in HEADER_KEYS}
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in record["results"]:
        groups.setdefault(r["case"]["group"], []).append(r)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for group, results in groups.items():
        path = dest / f"{group}.json"
        path.write_text(json.dumps({**header, "results": results}, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written


class RecordError(ValueError):
    """A record file that is not what `runner` writes; the message names the file and what is wrong."""


def load(directory: Traversable) -> list[Recorded]:
    """Every recorded case in the directory, newest run first per id, in file then record order.
    FileNotFoundError when there is no such directory; RecordError for a malformed file."""
    if not directory.is_dir():
        raise FileNotFoundError(f"no conformance records at {directory}")
    best: dict[str, Recorded] = {}
    for path in sorted((f for f in directory.iterdir() if f.name.endswith(".json")), key=lambda f: f.name):
        for rec in _read(path):
            old = best.get(rec.case.id)
            if old is None or str(rec.header["date"]) > str(old.header["date"]):
                best[rec.case.id] = rec
    return list(best.values())


def _read(path: Traversable) -> list[Recorded]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise RecordError(f"{path}: cannot be read: {e}") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected a JSON object with {', '.join(HEADER_KEYS)} and results")
    gpu = data.get("gpu")
    if not (isinstance(gpu, dict) and isinstance(gpu.get("name"), str) and isinstance(data.get("date"), str)):
        raise RecordError(f"{path}: the header needs a date (a string) and gpu.name (a string)")
    results = data.get("results")
    if not isinstance(results, list):
        raise RecordError(f"{path}: results must be a list")
    header = {k: data.get(k) for k in HEADER_KEYS}
    out = []
    for i, r in enumerate(results):
        where = f"{path}: result {i}"
        if not isinstance(r, dict) or not isinstance(r.get("case"), dict):
            raise RecordError(f"{where}: expected an object with the case it ran")
        try:
            case = case_from_dict(r["case"])
        except CaseError as e:
            raise RecordError(f"{where}: {e}") from None
        _check_result(case, r, where)
        out.append(Recorded(case, r, header, path))
    return out


def _check_result(case: Case, r: Mapping[str, Any], where: str) -> None:
    """The fields `replay.compare` reads: outcome, and obs {op index: {"values": [...]}} of valid values."""
    if not isinstance(r.get("outcome"), str):
        raise RecordError(f"{where}: outcome must be a string")
    obs = r.get("obs", {})
    if not isinstance(obs, dict):
        raise RecordError(f"{where}: obs must be an object")
    for key, ob in obs.items():
        if not key.isdigit() or int(key) >= len(case.ops):
            raise RecordError(f"{where}: obs key {key!r} is not an op of case {case.id}")
        if not isinstance(ob, dict) or not isinstance(ob.get("values"), list):
            raise RecordError(f"{where}: obs {key} needs a list of values")
        for v in ob["values"]:
            try:
                decode_value(case.ops[int(key)], v)
            except ValueError as e:
                raise RecordError(f"{where}: obs {key}: {e}") from None
