"""The JSON Schema of `--json` output (lint, run and check), shipped with the package: one file per
schema version, read with importlib.resources so it works from a wheel or a zip."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from mbarrier.report.model import SCHEMA_VERSION

SCHEMA_FILE = f"v{SCHEMA_VERSION}.schema.json"


def schema_text() -> str:
    """The schema of the current version, as shipped (JSON text)."""
    return (resources.files("mbarrier.report") / "schemas" / SCHEMA_FILE).read_text(encoding="utf-8")


def schema() -> dict[str, Any]:
    """The schema of the current version (draft 2020-12; `command` picks lint, run or check)."""
    loaded: dict[str, Any] = json.loads(schema_text())
    return loaded


if __name__ == "__main__":
    from mbarrier.spec.textout import emit

    emit(schema_text())
