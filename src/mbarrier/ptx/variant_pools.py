"""What the generated variants are made of (`validate_variants`, `validate_variants_wgmma`): the
declarations every generated kernel starts with, the mutation pools, and how a syntax tree is
written back as PTX text.

The pools are chosen independently of `spec.forms` (which the variants test): words ptxas knows
and does not, registers of every type, every operand kind, boundary immediates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mbarrier.ptx import ast

P0 = ast.Pos(0, 0)

#: The declarations every generated kernel starts with: (space, type, name, align, range).
DECLARATIONS: tuple[tuple[str, str, str, int | None, int | None], ...] = (
    (".reg", ".b64", "%rd", None, 8), (".reg", ".b32", "%r", None, 8), (".reg", ".s32", "%sr", None, 4),
    (".reg", ".u64", "%ud", None, 4), (".reg", ".s64", "%sd", None, 4), (".reg", ".b16", "%h", None, 4),
    (".reg", ".f32", "%f", None, 4), (".reg", ".f64", "%fd", None, 4), (".reg", ".pred", "%p", None, 4),
    # (the vectors of wgmma.mma_async: up to 128 registers)
    (".reg", ".f32", "%wf", None, 128), (".reg", ".b32", "%wr", None, 128),
    (".reg", ".f16x2", "%wh", None, 128),
    (".shared", ".b64", "bar", 8, None), (".shared", ".b32", "sb32", 4, None),
    (".global", ".b64", "gbar", 8, None),
)


def declarations() -> tuple[ast.Declaration, ...]:
    return tuple(ast.Declaration(space, typ, (ast.Declarator(name, range=rng, pos=P0),), P0, align=align)
                 for space, typ, name, align, rng in DECLARATIONS)


def render_declaration(d: ast.Declaration) -> str:
    align = f" .align {d.align}" if d.align else ""
    names = ", ".join(f"{n.name}<{n.range}>" if n.range else n.name for n in d.names)
    return f"{d.space}{align} {d.type} {names};"


def render_operand(op: ast.Operand) -> str:
    if isinstance(op, ast.Name):
        return op.name
    if isinstance(op, ast.Imm | ast.FloatImm):
        return op.text
    if isinstance(op, ast.Sink):
        return "_"
    if isinstance(op, ast.Address):
        items = "".join(", " + render_operand(i) for i in op.items)
        if op.base is None:
            return f"[{op.offset}{items}]"
        off = f"+{op.offset}" if op.offset > 0 else (f"-{-op.offset}" if op.offset < 0 else "")
        return f"[{op.base.name}{off}{items}]"
    if isinstance(op, ast.Vector):
        return "{" + ", ".join(render_operand(o) for o in op.items) + "}"
    if isinstance(op, ast.Expr):  # `%r1|%p1` (elect.sync's destinations), an expression
        return op.text
    raise ValueError(f"cannot render operand {op!r}")


def render_instruction(i: ast.Instruction) -> str:
    ops = ", ".join(render_operand(o) for o in i.operands)
    guard = f"@{'!' if i.guard.negated else ''}{i.guard.predicate} " if i.guard is not None else ""
    return f"{guard}{i.text} {ops};" if ops else f"{guard}{i.text};"


# -- operand shapes --------------------------------------------------------------------------------

def _name(n: str) -> ast.Name:
    return ast.Name(n, P0)


def _imm(v: int) -> ast.Imm:
    return ast.Imm(v, str(v), P0)


def _addr(base: str | None, offset: int = 0) -> ast.Address:
    return ast.Address(_name(base) if base else None, offset, P0)


#: Names no declaration of the generated kernels gives (`DECLARATIONS` has 8 `%r` and `%rd`, 4 `%p`).
UNDECLARED_NAMES: tuple[str, ...] = ("nob", "%r99", "%rd99", "%p99")

#: Every operand shape a slot is tried with.
OPERAND_POOL: tuple[ast.Operand, ...] = (
    _name("%rd3"), _name("%r3"), _name("%sr3"), _name("%ud3"), _name("%sd3"), _name("%h3"),
    _name("%f3"), _name("%fd3"), _name("%p3"), _name("%tid.x"), _name("bar"),
    _imm(0), _imm(1), _imm(2), _imm(-1), _imm(15), _imm(16), _imm((1 << 20) - 1), _imm(1 << 20),
    _imm(1 << 32), ast.FloatImm(1.0, 0x3F800000, 32, "0f3F800000", P0), ast.Sink(P0),
    _addr("bar"), _addr("bar", 8), _addr("%rd3"), _addr("%r3"), _addr("%f3"), _addr("gbar"),
    _addr(None, 16), ast.Vector((_name("%r3"),), P0),
    # names nothing declares: a symbol, a register past its declared range, as values and addresses
    _name("nob"), _name("%r99"), _addr("nob"), _addr("nob", 8), _addr("%rd99"),
)

#: Guards put before an otherwise legal instruction: declared predicates, an undeclared one, a
#: register of another type, an undeclared symbol.
GUARD_POOL: tuple[tuple[str, bool], ...] = (("%p1", False), ("%p1", True), ("%p99", False), ("%r1", False),
                                            ("nob", True))

#: Modifier words inserted into otherwise legal instructions: known ones of every class, words of
#: other instructions of the family, and words ptxas does not know.
MODIFIER_POOL: tuple[str, ...] = (
    ".foo", ".acquire", ".release", ".relaxed", ".acq_rel", ".cta", ".cluster", ".gpu", ".sys",
    ".noinc", ".noComplete", ".parity", ".expect_tx", ".arrive", ".shared", ".shared::cta",
    ".shared::cluster", ".global", ".b32", ".b64", ".u64", ".sync", ".aligned", ".L2::cache_hint",
    ".1d", ".tile",
)

#: Modifier words of other instructions (and some ptxas does not know), one or two of each class of
#: `spec.modifiers` (what ptxas says of them: "Illegal modifier", "Unknown modifier", "Vector
#: qualifier is not allowed", a rounding, comparison, reduction or query message, a class name,
#: an instruction type, nothing at all, a fatal parsing error ...), chosen by hand from the probe's
#: vocabulary (tools/probe_modifiers.py) and inserted into every form after the opcode.
OTHER_WORDS: tuple[str, ...] = (
    ".uni", ".L2::64B", ".op_restrict", ".zzz::w", ".v2", ".v4", ".rn", ".lt", ".eq", ".inc", ".width",
    ".f4e", ".clamp", ".b", ".row", ".a1d", ".2dms", ".L1::evict_last", ".bf16", ".pred", ".rank", ".tex",
)
#: Words tried with each other and with other errors of the line (`_other_word_variants`): the
#: second of a class, a wrong type, state space or operand count, an unknown word, a terminal one.
OTHER_MIX: tuple[str, ...] = (".uni", ".L2::64B", ".v4", ".rn", ".lt", ".inc", ".f4e", ".L1::evict_last",
                              ".op_restrict")
#: A second word of the same class, for each of OTHER_MIX and OTHER_WORDS's classes.
SAME_CLASS: dict[str, str] = {
    ".uni": ".uni", ".v4": ".v2", ".rn": ".rz", ".lt": ".eq", ".inc": ".exch", ".f4e": ".rc16",
    ".L1::evict_last": ".L2::evict_first", ".op_restrict": ".foo", ".width": ".depth", ".clamp": ".trap",
    ".b": ".g", ".row": ".col", ".a1d": ".2dms",
}
#: Words with gates of their own (spec.modifiers.WORD_GATES: checked as ptxas reads the word, or
#: once the operands match), inserted into every form after the opcode.
GATED_POOL: tuple[str, ...] = (".wait", ".async", ".mbarrier", ".xorsign")
#: Words without a class written twice (spec.modifiers.WORD_REPEATS: "Multiple .mbarrier modifiers
#: specified", "Duplicate .ftz modifier" ...), inserted into every form after the opcode.
TWICE_POOL: tuple[str, ...] = (".mbarrier", ".async", ".wait", ".ftz", ".L2::64B", ".aligned", ".noinc")
#: Words ptxas cannot parse there (a fatal error), and one it says more of on some instructions:
#: tried on a few forms only (each fatal error costs the oracle another ptxas run).
OTHER_RARE: tuple[str, ...] = (".reg", ".cc")

#: A form with more optional modifiers than this gets them up to two at a time (and one at a time
#: with each operand shape) rather than every combination.
MANY_FLAGS = 4

SEM_POOL: tuple[str, ...] = (".acquire", ".release", ".relaxed", ".acq_rel", ".sc")
SCOPE_POOL: tuple[str, ...] = (".cta", ".cluster", ".gpu", ".sys")
SPACE_POOL: tuple[str, ...] = ("", ".shared", ".shared::cta", ".shared::cluster", ".global")
SPACE_WORDS: tuple[str, ...] = (".shared", ".global", ".local", ".const", ".param")


@dataclass(frozen=True, slots=True)
class Case:
    """One generated instruction: `label` says how it was made (for reports)."""

    label: str
    instr: ast.Instruction

    @property
    def text(self) -> str:
        return render_instruction(self.instr)


def _instr(words: tuple[str, ...], ops: tuple[ast.Operand, ...]) -> ast.Instruction:
    """`words` may hold several modifiers in one string (".relaxed.cta") or none ("")."""
    return ast.Instruction(words[0], tuple(m for w in words[1:] for m in re.findall(r"\.[^.]+", w)),
                           ops, None, P0)


def _with(i: ast.Instruction, operands: tuple[ast.Operand, ...] | None = None,
          guard: ast.Guard | None = None) -> ast.Instruction:
    return ast.Instruction(i.opcode, i.qualifiers, i.operands if operands is None else operands,
                           guard or i.guard, i.pos)
