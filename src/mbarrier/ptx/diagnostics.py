"""Diagnostics of the PTX front end: what lint prints and what its JSON carries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "fatal"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding at file:line:column. `rule` is a stable id (e.g. "ptxas-unknown-modifier" for an
    error ptxas also raises, "mbarrier-init-count" for a warning only we give)."""

    severity: Severity
    line: int
    column: int
    message: str
    rule: str
    file: str = "<input>"

    def format(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message} [{self.rule}]"

    def to_json(self) -> dict[str, object]:
        return {"severity": self.severity, "line": self.line, "column": self.column,
                "message": self.message, "rule": self.rule}


class PtxSyntaxError(Exception):
    """A module that cannot be parsed; carries the diagnostics gathered so far (the last is fatal)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))
