"""fastpath.plain_instruction in C (_plainline.c); fastpath.py configures it at import."""

from collections.abc import Callable
from typing import Any

from mbarrier.ptx import ast

def configure(heads: dict[str, Any], guards: dict[str, Any], pieces: dict[str, Any],
              head_miss: Callable[[str], Any], guard_miss: Callable[[str], Any],
              piece_miss: Callable[[str], Any], other_piece: Callable[[str, int, int], ast.Operand | None],
              fallback: Callable[[str, int], ast.Instruction | None], instruction: type, name: type,
              imm: type, address: type, guard: type) -> None: ...
def plain_instruction(line: str, lineno: int) -> ast.Instruction | None: ...
