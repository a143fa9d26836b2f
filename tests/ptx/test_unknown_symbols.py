"""Names that nothing declares: ptxas's "Unknown symbol" pass, checked whole-module against ptxas.

ptxas resolves names after its other checks of the whole file, and only when none of them was fatal
(measured with ptxas 13.0); an undeclared address base of a family instruction also gives "Illegal
operand type", an undeclared value operand "Arguments mismatch", a guard that is no declared `.pred`
register "Predicate expression expected". The per-line differential test (test_ptxas_diff.py) covers
every instruction form; this file covers what only whole modules show: labels, functions, predefined
and special names, and a fatal error elsewhere in the file.
"""

from __future__ import annotations

import pytest

from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import validate
from mbarrier.ptx.validate_oracle import run_ptxas

HEAD = """.version 8.0
.target sm_90
.address_size 64
.extern .func ext(.param .b32 a);
.visible .entry k(.param .u64 pp)
{
\t.reg .b64 %rd<4>;
\t.reg .b32 %r<4>;
\t.reg .pred %p<2>;
\t.shared .align 8 .b64 bar;
"""
TAIL = """\tret;
L1:
\tret;
}
"""

BODIES = {
    "undeclared barrier everywhere": """\tmbarrier.init.shared.b64 [nob], 1;
\tmbarrier.arrive.shared.b64 %rd1, [nob+8];
\tmbarrier.try_wait.parity.shared.b64 %p1, [nob], 0;
\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [bar], [%rd1], 16, [nob];
""",
    "undeclared registers": """\tmbarrier.arrive.shared.b64 %rd9, [bar];
\tmbarrier.init.shared.b64 [%rd9], %r9;
\tmbarrier.test_wait.shared.b64 %p9, [bar], %rd1;
\tadd.u32 %r9, %r1, 1;
""",
    "labels, functions, predefined and special names are known": """\tbra L1;
\tmov.u32 %r1, WARP_SZ;
\tmov.u32 %r1, %envreg31;
\tmov.u32 %r1, %globaltimer_lo;
\tmov.u64 %rd1, %pm3_64;
\tmov.pred %p1, %is_explicit_cluster;
\t{
\t.reg .b32 inner;
\tmov.u32 inner, %tid.w;
\t}
""",
    "unknown labels and special registers": """\tbra L2;
\tmov.u32 %r1, %envreg32;
\tmov.u32 %r1, %pm8;
\tmov.u32 %r1, %reserved_smem_offset_2;
""",
    "guards": """\t@%p9 mbarrier.arrive.shared.b64 %rd1, [bar];
\t@!%p1 mbarrier.arrive.shared.b64 %rd1, [bar];
\t@%r1 bra L1;
\t@nob bra L1;
""",
    "a fatal error anywhere silences the unknown symbols": """\tmbarrier.init.shared.b64 [nob], 1;
\tmbarrier.pending_count.b64 _, %rd1;
\tmbarrier.init.shared.b64 [nob2], 1;
""",
}


# Messages lint gives on any instruction; on instructions outside the family it gives only these (ptxas
# may add its own checks of them, e.g. "Arguments mismatch for instruction 'mov'").
_ANY_INSTRUCTION = ("Unknown symbol", "Predicate expression expected")


def _ours(source: str) -> set[tuple[int, str, str]]:
    return {(d.line, d.severity, d.message) for d in validate(parse(source, "t.ptx"))
            if d.severity != "warning"}


def _theirs(source: str) -> set[tuple[int, str, str]]:
    by_line, _ = run_ptxas(source, "sm_90")
    return {(line, sev, msg) for line, msgs in by_line.items() for sev, msg in msgs}


def _comparable(source: str, diags: set[tuple[int, str, str]]) -> set[tuple[int, str, str]]:
    """Every message on family lines; on other lines the name checks, plus whether it is rejected."""
    lines = source.split("\n")
    out = set()
    for line, sev, msg in diags:
        words = lines[line - 1].split()
        opcode = words[1] if words[0].startswith("@") else words[0]
        if not opcode.startswith(("mbarrier.", "cp.async.")):
            out.add((line, "rejected", ""))
            if not msg.startswith(_ANY_INSTRUCTION):
                continue
        out.add((line, sev, msg))
    return out


@pytest.mark.tool("ptxas")
@pytest.mark.parametrize("name", list(BODIES))
def test_same_as_ptxas(name: str) -> None:
    source = HEAD + BODIES[name] + TAIL
    theirs = _theirs(source)
    assert _comparable(source, _ours(source)) == _comparable(source, theirs)
    if "known" in name and "unknown" not in name:
        assert not theirs  # the test would be empty otherwise: these names must all resolve
    else:
        assert theirs


def test_unknown_symbol_rule_ids() -> None:
    source = HEAD + BODIES["undeclared barrier everywhere"] + TAIL
    rules = {d.rule for d in validate(parse(source, "t.ptx"))}
    assert {"ptxas-unknown-symbol", "ptxas-operand-type"} <= rules
