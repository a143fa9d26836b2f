"""A kernel around the lines a lint test judges, and ptxas's errors on them."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.ptx import ast
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import validate


@dataclass(frozen=True)
class Kernel:
    """`.version`, `.target`, module-scope declarations, then an entry that declares `regs` and runs the
    body under test (then `ret`)."""

    version: str
    target: str
    regs: str
    decls: str = ""

    def _head(self, version: str | None, target: str | None) -> str:
        return (f".version {version or self.version}\n.target {target or self.target}\n.address_size 64\n"
                f"{self.decls}.visible .entry k()\n{{\n{self.regs}\n")

    def module(self, body: str, version: str | None = None, target: str | None = None) -> ast.Module:
        return parse(self._head(version, target) + body + "\nret;\n}\n", "k.ptx")

    def errors(self, body: str, version: str | None = None,
               target: str | None = None) -> set[tuple[int, str]]:
        """The errors and fatals of the body: (its line, counting from 1, the message)."""
        first = self._head(version, target).count("\n")
        return {(d.line - first, d.message) for d in validate(self.module(body, version, target))
                if d.severity != "warning"}
