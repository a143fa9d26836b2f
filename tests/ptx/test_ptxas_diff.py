"""Differential test against ptxas (CUDA 13.0, on PATH in CI): every generated variant of every
instruction of the mbarrier family (PTX ISA 9.7.13.15.9-17, fence.mbarrier_init, and cp.async.bulk
and the tensor load cp.async.bulk.tensor with .mbarrier::complete_tx::bytes), under a spread of
(.version, .target) pairs, gets the same verdict from us as from ptxas: accept/reject and the same set
of error and fatal messages, line by line. `tools/ptxas_sweep.py` runs all 47 pairs.
"""

from __future__ import annotations

import pytest

from mbarrier.ptx.ast import Instruction
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import validate
from mbarrier.ptx.validate_oracle import CRASHED, Outcome, compare, ptxas_verdicts, run_ptxas
from mbarrier.ptx.validate_variants import cases
from mbarrier.ptx.variant_pools import Case
from mbarrier.spec.instructions import INSTRUCTIONS
from mbarrier.spec.modifiers import WORD_MESSAGES
from mbarrier.spec.targets import Version, format_version

#: Each PTX ISA version where a gate of the family opens, on each target the brief names.
PAIRS: tuple[tuple[Version, str], ...] = (
    ((7, 0), "sm_80"), ((7, 1), "sm_80"), ((7, 8), "sm_80"), ((8, 6), "sm_80"),
    ((7, 8), "sm_90"), ((8, 5), "sm_90"), ((9, 0), "sm_90"),
    ((8, 0), "sm_90a"), ((8, 6), "sm_100a"), ((8, 7), "sm_120"),
)


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[Version, str], list[Outcome]]:
    everything = compare(cases(), PAIRS, workers=2)
    by_pair: dict[tuple[Version, str], list[Outcome]] = {}
    for o in everything:
        by_pair.setdefault((o.version, o.target), []).append(o)
    return by_pair


def _explain(bad: list[Outcome]) -> str:
    lines = []
    for o in bad[:10]:
        lines.append(f"{o.case.label}: {o.case.text}")
        lines += [f"    ptxas only: {m}" for _, m in sorted(o.ptxas - o.ours)]
        lines += [f"    ours only:  {m}" for _, m in sorted(o.ours - o.ptxas)]
    return "\n".join(lines)


@pytest.mark.tool("ptxas")
@pytest.mark.parametrize("pair", PAIRS, ids=[f"{format_version(v)}-{t}" for v, t in PAIRS])
def test_same_verdicts_as_ptxas(outcomes: dict[tuple[Version, str], list[Outcome]],
                                pair: tuple[Version, str]) -> None:
    got = outcomes[pair]
    bad = [o for o in got if o.disagree]
    assert not bad, f"{len(bad)} of {len(got)} cases disagree with ptxas:\n{_explain(bad)}"
    crashed = [o.case.text for o in got if o.crashed]
    assert len(crashed) <= len(got) // 1000, f"ptxas gave no verdict on {len(crashed)} cases: {crashed[:3]}"


@pytest.mark.tool("ptxas")
def test_the_corpus_is_large_and_mixed(outcomes: dict[tuple[Version, str], list[Outcome]]) -> None:
    everything = [o for os in outcomes.values() for o in os]
    assert len(everything) >= 3000
    rejected = sum(bool(o.ptxas) for o in everything)
    fatal = sum(any(s == "fatal" for s, _ in o.ptxas) for o in everything)
    # Both verdicts, and ptxas's early stops, are well represented (accepted: 10,027 of 234,190 at
    # a1f9952; the mutations, the tensor operands without an address among them, are mostly rejected,
    # and most of the wgmma/ldmatrix/stmatrix/prefetch variants are wrong on purpose).
    assert rejected > len(everything) // 4
    accepted = len(everything) - rejected
    assert accepted > 5000 and accepted > len(everything) // 30
    assert fatal > 100
    families = {o.case.label.split(":")[0] for o in everything}
    assert {"mbarrier.init", "mbarrier.inval", "mbarrier.expect_tx", "mbarrier.complete_tx",
            "mbarrier.arrive", "mbarrier.arrive.expect_tx", "mbarrier.arrive_drop",
            "mbarrier.arrive_drop.expect_tx", "mbarrier.test_wait", "mbarrier.test_wait.parity",
            "mbarrier.try_wait", "mbarrier.try_wait.parity", "mbarrier.pending_count",
            "cp.async.mbarrier.arrive", "fence", "cp.async.bulk", "cp.async.bulk.tensor", "st.async",
            "red.async", "cp.reduce.async.bulk", "clusterlaunchcontrol.try_cancel.async",
            "wgmma.fence", "wgmma.mma_async", "fence.proxy", "stmatrix", "ldmatrix", "tensormap.replace",
            "prefetch", "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch.tensor"} <= families
    # (the tensor store's variants, labelled apart from the load's: validate_variants_tensor.LABEL)
    assert any(o.case.label.startswith("cp.async.bulk.tensor: no-mbarrier") for o in everything)


@pytest.mark.tool("ptxas")
def test_the_arrive_forms_under_a_version_the_target_does_not_take() -> None:
    """ptxas refuses `.version 7.7` with `.target sm_90` at the .target line, but still judges each
    instruction against both: count without .noComplete needs PTX ISA 7.8 on every target
    (9.7.13.15.13/14, PTX ISA notes), so ptxas requires .noComplete there too."""
    arrives = (("mbarrier", ".arrive"), ("mbarrier", ".arrive_drop"))
    forms = tuple(f for f in INSTRUCTIONS if f.path[:2] in arrives)
    got = compare(cases(forms), [((7, 7), "sm_90")], workers=1)
    bad = [o for o in got if o.disagree]
    assert len(got) > 1000
    assert not bad, f"{len(bad)} of {len(got)} cases disagree with ptxas:\n{_explain(bad)}"


@pytest.mark.tool("ptxas")
def test_a_case_that_crashes_ptxas_is_left_out() -> None:
    """ptxas 13.0 dies (segfault) on this line for sm_120: the oracle finds the case by halving its
    batch, gives it no verdict (CRASHED) and judges the others as usual."""
    crash = Case("crash", _instr_of("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                                     ".L2::cache_hint [%rd2], [%rd2], 16, 1, 1;"))
    fine = Case("fine", _instr_of("mbarrier.inval.shared.b64 [bar];"))
    assert ptxas_verdicts([fine, crash, fine], (8, 7), "sm_120") == [frozenset(), CRASHED, frozenset()]


def _instr_of(text: str) -> Instruction:
    head = ".version 9.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n"
    module = parse(head + text + "\n}\n", "<case>")
    (instr,) = [s for s in module.functions[0].body or () if isinstance(s, Instruction)]
    return instr


@pytest.mark.tool("ptxas")
def test_directive_words_end_the_parse_of_any_instruction() -> None:
    """A directive word (`.func`, `.loc`, `.align` ...) among an instruction's modifiers is a syntax error
    to ptxas whatever the instruction: lint says the same, at the same line, family or not."""
    words = sorted(w for w, said in WORD_MESSAGES.items() if "syntax" in said)
    assert {".func", ".loc", ".align", ".maxntid"} <= set(words)
    head = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<3>;\n"
    for instr in ("cvt.rn{}.f32.s32 %r1, %r2;", "add{}.u32 %r1, %r2, 1;"):
        for w in words:
            text = head + instr.format(w) + "\nret;\n}\n"
            by_line, _ = run_ptxas(text, "sm_90")
            ours = {(d.severity, d.message) for d in validate(parse(text, "k.ptx"))}
            assert by_line == {7: ours} and ours == {("fatal", f"Parsing error near '{w}': syntax error")}, w


#: Lines the random sweep (`--random 3000`, seeds 41 and 11) found, and small variations of them:
#: `.noComplete` with `.shared::cluster` where no state space is taken or on cp.async.mbarrier.arrive,
#: a refused sink with a `.global` address, three state spaces on an arrive or a wait.
SWEPT = (
    "mbarrier.pending_count.noComplete.sys.shared::cluster.b64 %r1, %rd2;",
    "cp.async.mbarrier.arrive.shared::cluster.shared.noComplete.b64 [%rd2];",
    "mbarrier.init.noComplete.shared::cluster.b64 [%rd2], 1;",
    "mbarrier.arrive.cluster.shared::cluster.b64.foo.parity _, [gbar], 1;",
    "mbarrier.arrive.shared.b64.noComplete.shared::cta _, [gbar], 1;",
    "mbarrier.try_wait.shared::cta.b64 _, [gbar], 1;",
    "mbarrier.test_wait.parity.shared::cta.b64 _, [gbar+8], 2;",
    "mbarrier.test_wait.b64 _, [%f1], %rd1;",
    "mbarrier.try_wait.shared.b64.shared::cta.global %p1, [bar], %rd2, 1;",
    "mbarrier.try_wait.shared.global.shared.b64 %p1, [gbar], %rd2;",
    "mbarrier.arrive.shared.shared.shared.global.b64 %rd1, [bar];",
    "mbarrier.init.global.shared.shared.b64 [bar], 1;",
)


@pytest.mark.tool("ptxas")
def test_lines_the_random_sweep_found() -> None:
    got = compare([Case("swept", _instr_of(t)) for t in SWEPT],
                  [((7, 0), "sm_80"), ((8, 0), "sm_90"), ((8, 6), "sm_100a")], workers=1)
    bad = [o for o in got if o.disagree]
    assert not bad, f"{len(bad)} of {len(got)} cases disagree with ptxas:\n{_explain(bad)}"
