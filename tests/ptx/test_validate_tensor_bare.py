"""A variable's bare name as the tensor load's dstMem or mbar (`[dst], [tmap, {x}], gbar`): an
address to ptxas 13.0, whose state space it judges against the line's ("State space mismatch"),
which lint took silently (a wrong verdict; `validate._check_addresses`). The expected messages are
ptxas's own (recorded at .version 8.6, .target sm_100a); the last test asks ptxas itself."""

from __future__ import annotations

import pytest

from mbarrier.ptx.ast import Instruction
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate_oracle import compare, our_verdicts
from mbarrier.ptx.variant_pools import Case

_B = ".mbarrier::complete_tx::bytes"
_L = f"cp.async.bulk.tensor.2d.shared::cluster.global{_B}"
_MISMATCH = "State space mismatch between instruction and address in instruction 'cp.async.bulk.tensor'"

#: (line, ptxas 13.0's errors at .version 8.6 / .target sm_100a)
RECORDED: tuple[tuple[str, frozenset[str]], ...] = (
    (f"{_L} [%rd0], [%rd1, {{%r2, %r3}}], gbar;", frozenset({_MISMATCH})),
    (f"{_L} gbar, [%rd1, {{%r2, %r3}}], [bar];", frozenset({_MISMATCH})),
    (f"cp.async.bulk.tensor.2d.shared::cta.global{_B} [%rd0], [%rd1, {{%r2, %r3}}], gbar;",
     frozenset({_MISMATCH})),
    (f"cp.async.bulk.tensor.2d.global{_B} [%rd0], [%rd1, {{%r2, %r3}}], bar;",
     frozenset({_MISMATCH, "State space incorrect for instruction 'cp.async.bulk.tensor'",
                "Unexpected number of state spaces specified in instruction 'cp.async.bulk.tensor'"})),
    # a .shared variable, or a register, as before
    (f"{_L} [%rd0], [%rd1, {{%r2, %r3}}], bar;", frozenset()),
    (f"{_L} sb32, [%rd1, {{%r2, %r3}}], bar;", frozenset()),
    (f"{_L} [%rd0], [%rd1, {{%r2, %r3}}], %fd1;", frozenset()),
)


def _case(text: str) -> Case:
    module = parse(".version 9.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n" + text + "\n}\n")
    (instr,) = [s for s in module.functions[0].body or () if isinstance(s, Instruction)]
    return Case("tensor-bare", instr)


@pytest.mark.parametrize(("text", "expected"), RECORDED, ids=[t[:90] for t, _ in RECORDED])
def test_as_ptxas_said(text: str, expected: frozenset[str]) -> None:
    (got,) = our_verdicts([_case(text)], (8, 6), "sm_100a")
    assert {m for _, m in got} == expected


PAIRS = (((7, 0), "sm_80"), ((7, 8), "sm_90"), ((8, 0), "sm_90a"), ((8, 6), "sm_100a"), ((8, 7), "sm_120a"))


@pytest.mark.tool("ptxas")
def test_as_ptxas_says() -> None:
    """Each variable, in either place, under each state-space set and optional modifier."""
    lines = [t for t, _ in RECORDED]
    for spaces in ("shared::cluster.global", "shared::cta.global", "global.shared::cta", "shared::cluster"):
        for mods, tail in (("", ""), (".multicast::cluster", ", %h1"), (".L2::cache_hint", ", %rd4")):
            for name in ("gbar", "bar", "sb32"):
                head = f"cp.async.bulk.tensor.2d.{spaces}{_B}{mods}"
                lines.append(f"{head} {name}, [%rd1, {{%r2, %r3}}], [bar]{tail};")
                lines.append(f"{head} [%rd0], [%r1, {{%r2, %r3}}], {name}{tail};")
    got = compare([_case(t) for t in lines], PAIRS, workers=1)
    assert len(got) == len(lines) * len(PAIRS)
    assert sum(any(m == _MISMATCH for _, m in o.ptxas) for o in got) >= 50
    bad = [(o.version, o.target, o.case.text, sorted(o.ptxas ^ o.ours)) for o in got if o.disagree]
    assert not bad, bad[:5]
