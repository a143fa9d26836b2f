"""Recorded GPU observations: one JSON file per case group under tests/conformance/records/.

Each file holds the run's header (tool, date, GPU facts) and its results; each result embeds the case
exactly as it ran, so a record stays meaningful when the catalogue changes later. When several files
hold the same case id, the newest run (by date) wins.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mbarrier.hw.litmus import Case, case_from_dict

HEADER_KEYS = ("schema", "tool", "date", "gpu")


def default_dir() -> Path:
    """tests/conformance/records of the source tree this package was installed from (editable)."""
    return Path(__file__).resolve().parents[3] / "tests" / "conformance" / "records"


@dataclass(frozen=True)
class Recorded:
    case: Case
    result: Mapping[str, Any]
    header: Mapping[str, Any]
    file: Path


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


def load(directory: Path) -> list[Recorded]:
    """Every recorded case in the directory, newest run first per id, in file then record order."""
    if not directory.is_dir():
        raise FileNotFoundError(f"no conformance records at {directory}")
    best: dict[str, Recorded] = {}
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        header = {k: data.get(k) for k in HEADER_KEYS}
        for r in data["results"]:
            rec = Recorded(case_from_dict(r["case"]), r, header, path)
            old = best.get(rec.case.id)
            if old is None or str(header["date"]) > str(old.header["date"]):
                best[rec.case.id] = rec
    return list(best.values())
