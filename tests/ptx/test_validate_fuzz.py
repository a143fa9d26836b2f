"""Property test: whatever mix of opcode path, modifiers and operands an instruction of the family
has, the validator answers with diagnostics of known rules (never an exception), and its verdict does
not depend on anything but the instruction (the same instruction twice, the same answer)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mbarrier.ptx import ast
from mbarrier.ptx.validate import check_instruction
from mbarrier.ptx.validate_line import Context, Line
from mbarrier.ptx.validate_scope import Scope
from mbarrier.ptx.variant_pools import MODIFIER_POOL, OPERAND_POOL, P0, declarations
from mbarrier.spec.forms import RULE_IDS
from mbarrier.spec.instructions import INSTRUCTIONS
from mbarrier.spec.targets import TARGET_MIN_VERSION, parse_target

WORDS = st.sampled_from((*MODIFIER_POOL, ".b64", ".shared::cta", ".mbarrier::complete_tx::bytes",
                         ".multicast::cluster", ".mbarrier_init", ".xyz", ".shared::nowhere"))
PATHS = st.sampled_from([(*f.path, *((f.marker,) if f.marker else ())) for f in INSTRUCTIONS])
TARGETS = st.sampled_from(sorted(TARGET_MIN_VERSION))
VERSIONS = st.sampled_from([(7, m) for m in range(9)] + [(8, m) for m in range(9)] + [(9, 0)])

_MODULE = ast.Module((9, 0), ("sm_90",), 64, (), (), ())
_SCOPE = Scope(_MODULE, ast.Function("entry", "k", (), (), declarations(), P0))


def _verdict(instr: ast.Instruction, version: tuple[int, int], target: str) -> list[tuple[str, str, str]]:
    line = Line(instr, "<fuzz>")
    check_instruction(instr, _SCOPE, Context(version, parse_target(target)), line)
    return [(d.severity, d.message, d.rule) for d in line.out]


@settings(max_examples=400, deadline=None)
@given(PATHS, st.lists(WORDS, max_size=6), st.lists(st.sampled_from(OPERAND_POOL), max_size=7),
       VERSIONS, TARGETS)
def test_any_family_instruction_gets_known_rules(path: tuple[str, ...], words: list[str],
                                                 operands: list[ast.Operand], version: tuple[int, int],
                                                 target: str) -> None:
    instr = ast.Instruction(path[0], (*path[1:], *words), tuple(operands), None, P0)
    first = _verdict(instr, version, target)
    assert {rule for _, _, rule in first} <= set(RULE_IDS.values())
    assert all(sev in ("error", "fatal") for sev, _, _ in first)
    assert first == _verdict(instr, version, target)
