"""Warnings beyond ptxas: what ptxas accepts but PTX ISA 9.7.13.15 makes undefined, or that is almost
surely a bug. Rule ids are those of `mbarrier.spec.rules` (the undefined-behaviour catalogue)."""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.ptx.diagnostics import Diagnostic
from mbarrier.ptx.validate_scope import Scope
from mbarrier.spec import limits
from mbarrier.spec.instructions import INSTRUCTIONS
from mbarrier.spec.rules import rule

#: Which operand of which instruction is a count, and the range the manual allows it.
_COUNT_RANGES: dict[tuple[str, ...], tuple[int, str, int, int, str]] = {
    # path: (operand index, rule id, min, max, what)
    ("mbarrier", ".init"): (1, "init-count-range", limits.INIT_COUNT_MIN, limits.INIT_COUNT_MAX,
                            "init count"),
    ("mbarrier", ".arrive"): (2, "arrive-count-range", limits.ARRIVE_COUNT_MIN,
                              limits.ARRIVE_COUNT_MAX, "arrive count"),
    ("mbarrier", ".arrive_drop"): (2, "arrive-count-range", limits.ARRIVE_COUNT_MIN,
                                   limits.ARRIVE_COUNT_MAX, "arrive_drop count"),
    ("mbarrier", ".arrive", ".expect_tx"): (2, "tx-count-range", 0, limits.TX_MAX, "txCount"),
    ("mbarrier", ".arrive_drop", ".expect_tx"): (2, "tx-count-range", 0, limits.TX_MAX, "txCount"),
    ("mbarrier", ".expect_tx"): (1, "tx-count-range", 0, limits.TX_MAX, "txCount"),
    ("mbarrier", ".complete_tx"): (1, "tx-count-range", 0, limits.TX_MAX, "txCount"),
}

#: Operations that 9.7.13.15.8 does not support on a .shared::cluster object (waits, init, inval...).
_CTA_ONLY: tuple[tuple[str, ...], ...] = (
    ("mbarrier", ".init"), ("mbarrier", ".inval"), ("mbarrier", ".test_wait"),
    ("mbarrier", ".try_wait"), ("cp", ".async", ".mbarrier", ".arrive"),
)

#: Instructions through which a mapa result stays a remote address.
_COPIES = ("mov", "add", "cvt", "cvta")

#: Opcodes of the family whose first address operand is an mbarrier object.
_OBJECT_OPCODES = ("mbarrier", "cp")


def hazards(module: ast.Module, fn: ast.Function, scope: Scope) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    cluster_regs: set[str] = set()
    for instr in ast.instructions(fn.body or ()):
        words = (instr.opcode, *instr.qualifiers)
        dest = instr.operands[0] if instr.operands else None
        if isinstance(dest, ast.Name) and (
                instr.opcode == "mapa"  # the address of the same variable in another CTA
                or instr.opcode in _COPIES and any(isinstance(o, ast.Name) and o.name in cluster_regs
                                                   for o in instr.operands[1:])):
            cluster_regs.add(dest.name)
            continue
        if instr.opcode not in _OBJECT_OPCODES or not _is_family(words):
            continue
        out.extend(_count_range(instr, words, module.path))
        index = _copy_object(words)
        if index is not None:  # a bulk copy: only its mbar operand is an mbarrier object
            addr = instr.operands[index] if index < len(instr.operands) else None
            if not isinstance(addr, ast.Address):
                continue
        else:
            addr = next((op for op in instr.operands if isinstance(op, ast.Address)), None)
        if addr is None or addr.base is None:
            continue
        mapped = addr.base.name in cluster_regs
        why = f"[{addr.base.name}] comes from mapa"
        if mapped and any(words[:len(p)] == p for p in _CTA_ONLY):
            out.append(_warn(instr.pos, "cluster-operation", module.path,
                             f"'{instr.text}' on an mbarrier in another CTA ({why}): waits, init, "
                             "inval and cp.async.mbarrier.arrive work only on the executing CTA's "
                             "own objects"))
        elif (mapped and words[:2] in (("mbarrier", ".arrive"), ("mbarrier", ".arrive_drop"))
              and instr.operands and not isinstance(instr.operands[0], ast.Sink)):
            out.append(_warn(instr.operands[0].pos, "cluster-arrive-result", module.path,
                             f"'{instr.text}' on an mbarrier in another CTA ({why}) cannot return "
                             "a state: use the sink '_'"))
        sym = scope.lookup(addr.base.name)
        if sym is not None and sym.space == ".shared":
            misfit = _misfit(sym.alignment, sym.size, addr.offset)
            if misfit:
                out.append(_warn(addr.pos, "alignment", module.path,
                                 f"mbarrier object [{addr.base.name}{addr.offset:+d}] {misfit}; "
                                 "an mbarrier object is a .b64 with 8-byte alignment"))
    return out


def _is_family(words: tuple[str, ...]) -> bool:
    return (words[0] == "mbarrier" or words[:4] == ("cp", ".async", ".mbarrier", ".arrive")
            or _copy_object(words) is not None)


#: The copies that complete on an mbarrier (cp.async.bulk, cp.async.bulk.tensor): opcode path, the
#: modifier that makes them ours, and the position of their `mbar` operand, from spec.forms.
_COPIES_ON_MBARRIER: tuple[tuple[tuple[str, ...], str, int], ...] = tuple(sorted(
    ((f.path, f.marker, [s.role for s in f.operands[0]].index("mbar"))
     for f in INSTRUCTIONS if f.marker and any(s.role == "mbar" for s in f.operands[0])),
    key=lambda c: -len(c[0])))


def _copy_object(words: tuple[str, ...]) -> int | None:
    """The index of the mbar operand when `words` is a copy that completes on an mbarrier."""
    for path, marker, index in _COPIES_ON_MBARRIER:
        if words[:len(path)] == path:
            return index if marker in words[len(path):] else None
    return None


def _misfit(alignment: int, size: int, offset: int) -> str:
    if alignment % limits.OBJECT_ALIGN or offset % limits.OBJECT_ALIGN:
        return "is not 8-byte aligned"
    if size and offset + limits.OBJECT_SIZE > size:
        return f"does not fit in the {size}-byte variable"
    return ""


def _count_range(instr: ast.Instruction, words: tuple[str, ...], path: str) -> list[Diagnostic]:
    spec = _COUNT_RANGES.get(words[:3]) or _COUNT_RANGES.get(words[:2])
    if spec is None:
        return []
    index, rule_id, lo, hi, what = spec
    if index >= len(instr.operands):
        return []
    op = instr.operands[index]
    if not isinstance(op, ast.Imm) or lo <= op.value <= hi:
        return []
    if rule_id == "arrive-count-range" and op.value <= 0:
        return []  # ptxas itself refuses a count <= 0
    return [_warn(op.pos, rule_id, path,
                  f"{what} {op.text} is outside [{lo}, {hi}] ({rule(rule_id).title})")]


def _warn(pos: ast.Pos, rule_id: str, path: str, message: str) -> Diagnostic:
    r = rule(rule_id)
    return Diagnostic("warning", pos.line, pos.column, f"{message} [PTX ISA {r.section}]", r.id, path)

