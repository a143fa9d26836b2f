"""Rules ptxas applies to the module as a whole once every line passed: its address size
(`mbarrier.spec.addressing`, measured with ptxas 13.0)."""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.ptx.diagnostics import Diagnostic
from mbarrier.ptx.validate_scope import Scope
from mbarrier.spec.addressing import (
    ABI_32_FATAL,
    ABI_32_FATAL_FROM_SM,
    GENERIC_ONLY_OPCODES,
    MEMORY_OPCODES,
    NARROW_TYPES,
    NO_ADDRESS_PATHS,
    WARN_CONFLICT,
    WARN_HOST,
)
from mbarrier.spec.forms import ADDRESS_SIZE, STATE_SPACES
from mbarrier.spec.targets import Target


def _space(instr: ast.Instruction) -> str | None:
    """The state space the instruction names (`.shared::cta` is `.shared`), None for none."""
    return next((b for q in instr.qualifiers if (b := q.partition("::")[0]) in STATE_SPACES), None)


def address_bits(instr: ast.Instruction, scope: Scope) -> int | None:
    """The width of the generic or global address this instruction uses when it is narrower than
    64 bits and counts for ptxas; None otherwise."""
    space = _space(instr)
    op = instr.opcode
    if op in ("cvta", "mov"):
        bits = next((NARROW_TYPES[q] for q in instr.qualifiers if q in NARROW_TYPES), None)
        if bits is None:
            return None
        if op == "cvta":
            return bits
        src = instr.operands[1] if len(instr.operands) == 2 else None
        sym = scope.lookup(src.name) if isinstance(src, ast.Name) else None
        return bits if sym is not None and sym.space == ".global" else None
    if op in MEMORY_OPCODES:
        if space not in (None, ".global"):
            return None
    elif op in GENERIC_ONLY_OPCODES:
        if space is not None or instr.qualifiers[:1] and instr.qualifiers[0] in NO_ADDRESS_PATHS:
            return None
    else:
        return None
    addr = next((o for o in instr.operands if isinstance(o, ast.Address)), None)
    if addr is None or addr.base is None:
        return None
    sym = scope.lookup(addr.base.name)
    if sym is None or sym.space != ".reg" or sym.special:
        return None
    bits = sym.size * 8
    return bits if 0 < bits < 64 else None


def address_size(module: ast.Module, uses: list[tuple[ast.Instruction, int]], declared: int | None,
                 target: Target | None) -> list[Diagnostic]:
    """ptxas's warnings and fatal error on the module's address size, given each instruction that
    uses a narrow address (with its width) in source order and the `.address_size` written."""
    out: list[Diagnostic] = []

    def add(severity: str, line: int, message: str) -> None:
        out.append(Diagnostic(severity, line, 1, message, ADDRESS_SIZE, module.path))  # type: ignore[arg-type]

    size_line = next((i + 1 for i, s in enumerate(module.source_lines)
                      if s.lstrip().startswith(".address_size")), 1)
    if declared is not None:
        for instr, bits in uses:
            if bits < declared:
                line = instr.pos.line
                add("warning", line, WARN_CONFLICT.format(bits=bits, line=line, size=declared))
    narrowest = min((bits for _, bits in uses), default=64)
    if declared == 32:
        size, at = 32, size_line
        add("warning", at, WARN_HOST.format(bits=32))
    elif declared is None and narrowest < 64:
        size = narrowest
        at = next(i.pos.line for i, bits in uses if bits == narrowest)
        add("warning", at, WARN_HOST.format(bits=narrowest))
    else:
        size = narrowest
        at = next((i.pos.line for i, bits in uses if bits == narrowest), size_line)
    if size == 32:
        late = target is not None and target.at_least(ABI_32_FATAL_FROM_SM)
        add("fatal", at, ABI_32_FATAL[late])
    return out


def declared_address_size(module: ast.Module) -> int | None:
    """The `.address_size` the module writes (the parser's `Module.address_size` is 64 when it
    writes none, which ptxas treats otherwise)."""
    written = any(s.lstrip().startswith(".address_size") for s in module.source_lines)
    return module.address_size if written else None
