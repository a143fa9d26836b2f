"""Vectors as ptxas reads them, before it matches the operands against any list: the lengths an
instruction takes (`spec.forms.VECTOR_LENGTHS`, `Instr.vector_lengths`)."""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.ptx.validate_line import Line


def written(instr: ast.Instruction) -> list[ast.Vector]:
    """The vector operands as written, those inside an address (a tensor map's coordinates) too."""
    return [v for op in instr.operands
            for v in (op.items if isinstance(op, ast.Address) else (op,)) if isinstance(v, ast.Vector)]


def check_lengths(instr: ast.Instruction, lengths: tuple[int, ...] | None, line: Line) -> None:
    """"Illegal vector size: N" of each vector of a length not in `lengths` (None: any), as ptxas
    reads them: up to a sink past the first operand, where its parse stops (measured)."""
    if lengths is None:
        return
    ops = instr.operands
    end = next((k for k, op in enumerate(ops) if k and isinstance(op, ast.Sink)), len(ops))
    for vec in written(instr._replace(operands=ops[:end])):
        if len(vec.items) not in lengths:
            line.add("vector-illegal-size", vec.pos, size=len(vec.items))
