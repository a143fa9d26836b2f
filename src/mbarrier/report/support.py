"""The text and JSON of `mbarrier support`: each instruction the simulator cannot execute, with its line,
operation and reason, then a count per operation."""

from __future__ import annotations

from typing import Any

from mbarrier.report.text import printable
from mbarrier.sim.support import Support


def support_text(s: Support, file: str) -> list[str]:
    funcs = len(s.functions)
    where = f"{s.instructions} instructions in {funcs} function{'s' if funcs != 1 else ''}"
    if not s.gaps:
        return [f"{printable(file)}: kernel {s.kernel}: the simulator can execute every instruction it can "
                f"reach ({where})"]
    name = printable(file)
    lines = [f"{name}:{g.line}: {g.operation}: {printable(g.reason)}\n    {printable(g.instruction)}"
             for g in s.gaps]
    counts = ", ".join(f"{op} {n}" for op, n in s.by_operation().items())
    n = len(s.gaps)
    lines.append(f"{name}: kernel {s.kernel}: {n} instruction{'s' if n != 1 else ''} the simulator cannot "
                 f"execute, of {where} ({counts})")
    return lines


def support_json(s: Support, file: str) -> dict[str, Any]:
    return {
        "file": file,
        "kernel": s.kernel,
        "functions": list(s.functions),
        "instructions": s.instructions,
        "supported": not s.gaps,
        "unsupported": [{"function": g.function, "line": g.line, "operation": g.operation,
                         "instruction": g.instruction, "reason": g.reason} for g in s.gaps],
        "by_operation": s.by_operation(),
    }
