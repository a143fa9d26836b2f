"""What the checks of one instruction share (`ptx.validate` and the checkers of its own some
instructions have, `ptx.validate_wgmma`): the module's version and target, the line's
diagnostics as ptxas's message set, and the facts the modifiers gave."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.ptx import ast
from mbarrier.ptx.diagnostics import Diagnostic, Severity
from mbarrier.spec.forms import MESSAGES, RULE_IDS
from mbarrier.spec.targets import Target, Version


@dataclass(frozen=True, slots=True)
class Context:
    """What the gates compare against: the module's `.version` and the target compiled for."""

    version: Version
    target: Target | None


class Line:
    """The diagnostics of one instruction, deduplicated as ptxas's message set."""

    def __init__(self, instr: ast.Instruction, path: str, source: str = "") -> None:
        self.instr = instr
        self.path = path
        self.source = source  # the instruction's source line, to point at a modifier
        self.out: list[Diagnostic] = []
        self._seen: set[str] = set()
        self._deferred: list[tuple[str, ast.Pos | None, Severity, dict[str, object]]] = []

    def add(self, key: str, pos: ast.Pos | None = None, severity: Severity = "error",
            **fmt: object) -> None:
        self.emit(key, pos, severity, fmt)

    def emit(self, key: str, pos: ast.Pos | None, severity: Severity, fmt: dict[str, object]) -> None:
        message = MESSAGES[key].format(**fmt)
        if message in self._seen:
            return
        self._seen.add(message)
        p = pos or self._locate(str(fmt.get("mod", ""))) or self.instr.pos
        self.out.append(Diagnostic(severity, p.line, p.column, message, RULE_IDS[key], self.path))

    def _locate(self, mod: str) -> ast.Pos | None:
        """Where modifier `mod` is written in the instruction, if the source line is known."""
        if not mod or not self.source:
            return None
        at = self.source.find(mod, self.instr.pos.column - 1)
        return ast.Pos(self.instr.pos.line, at + 1) if at >= 0 else None

    def defer(self, key: str, pos: ast.Pos | None = None, severity: Severity = "error",
              **fmt: object) -> None:
        """A diagnostic ptxas gives only after the line's other checks (they still run)."""
        self._deferred.append((key, pos, severity, fmt))

    @property
    def pending_fatal(self) -> bool:
        return any(sev == "fatal" for _, _, sev, _ in self._deferred)

    def flush(self) -> None:
        for key, pos, severity, fmt in self._deferred:
            self.add(key, pos, severity, **fmt)
        self._deferred.clear()

    @property
    def fatal(self) -> bool:
        return any(d.severity == "fatal" for d in self.out)


@dataclass(slots=True)
class Facts:
    words: set[str]
    spaces: list[str]
    clean: bool
    """The instruction type is right: ptxas goes on past the modifiers."""
    type: str | None = None
