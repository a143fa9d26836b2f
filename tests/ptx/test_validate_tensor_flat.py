"""A tensor load whose tensorMap is 32 bits wide (`ptx.validate_tensor_flat`): ptxas 13.0 reads
`[tensorMap, {...}]` also as two operands, against the lists of a tensor operand that is no
address, and says "Vector operand is not allowed" where one fits. The expected messages are
ptxas's own (recorded at .version 8.6, .target sm_100a); the last test asks ptxas itself on the
same lines and a sweep of their shapes, under the sweep's pairs."""

from __future__ import annotations

import itertools

import pytest

from mbarrier.ptx.ast import Instruction
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate_oracle import compare, our_verdicts
from mbarrier.ptx.variant_pools import Case

_L = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
_VEC = "Vector operand is not allowed for instruction 'cp.async.bulk.tensor'"
_MISMATCH = "Arguments mismatch for instruction 'cp.async.bulk.tensor'"
_REG = "Argument {} of instruction 'cp.async.bulk.tensor': must be register"

#: (line, ptxas 13.0's errors at .version 8.6 / .target sm_100a)
RECORDED: tuple[tuple[str, frozenset[str]], ...] = (
    # the line of issue 18 (mbar a 64-bit register, an integer, a .b64 variable, or none)
    (f"{_L} [%rd0], [%r1, {{%r2, %r3}}], %rd3;", frozenset({_VEC})),
    (f"{_L} [%rd0], [%r1, {{%r2, %r3}}], 16;", frozenset({_VEC})),
    (f"{_L} [%rd0], [%r1, {{%r2, %r3}}], bar;", frozenset({_REG.format(3), _VEC})),
    (f"{_L} [%rd0], [%r1, {{%r2, %r3}}];", frozenset({_MISMATCH, _VEC})),
    # a .b32 variable as the tensor map; the coordinates still judged by the usual list
    (f"{_L} [%rd0], [sb32, {{%r2, %r3}}], %rd3;", frozenset({_REG.format(1), _VEC})),
    (f"{_L} [%rd0], [%r1, {{%r2}}], %rd3;",
     frozenset({"Argument 2 of instruction 'cp.async.bulk.tensor': Argument vector size mismatch", _VEC})),
    (f"{_L} [%rd0], [%r1, %r2], bar;", frozenset({_REG.format(3), "Vector expected for argument 2"})),
    # a count no usual list has: ptxas goes on (the destination's address, the gates)
    (f"{_L} 16, [%r1, {{%r2, %r3}}];",
     frozenset({_MISMATCH, "Immediate addresses allowed only for .local state space", _VEC})),
    (f"{_L}.L2::cache_hint [%rd0], [%r1, {{%r2, %r3}}], %rd3;", frozenset({_MISMATCH, _VEC})),
    ("cp.async.bulk.tensor.3d.shared::cta.global.im2col.mbarrier::complete_tx::bytes "
     "[%rd0], [%sr1, {%r2, %r3, %r4}], %rd3;", frozenset({_MISMATCH, _VEC})),
    # no such list fits: the usual verdicts
    (f"{_L}.L2::cache_hint [%rd0], [%r1, {{%r2, %r3}}];", frozenset({_MISMATCH})),
    (f"{_L}.multicast::cluster [%rd0], [%r1, {{%r2, %r3}}], %rd3;", frozenset({_MISMATCH})),
    (f"{_L} [%rd0], [%r1, {{%r2, %r3}}], %r3;", frozenset()),
    (f"{_L} [%rd0], [%r1, {{%r2, %r3}}], [bar];", frozenset()),
    (f"{_L} [%rd0], [%rd1, {{%r2, %r3}}], 16;",
     frozenset({"Immediate addresses allowed only for .local state space"})),
    (f"{_L} [%rd0], [%f1, {{%r2, %r3}}], %rd3;", frozenset()),
)


def _case(text: str) -> Case:
    module = parse(".version 9.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n" + text + "\n}\n")
    (instr,) = [s for s in module.functions[0].body or () if isinstance(s, Instruction)]
    return Case("tensor-flat", instr)


@pytest.mark.parametrize(("text", "expected"), RECORDED, ids=[t[len(_L) - 20:][:70] for t, _ in RECORDED])
def test_as_ptxas_said(text: str, expected: frozenset[str]) -> None:
    (got,) = our_verdicts([_case(text)], (8, 6), "sm_100a")
    assert {m for _, m in got} == expected


PAIRS = (((7, 0), "sm_80"), ((7, 8), "sm_90"), ((8, 0), "sm_90a"), ((8, 6), "sm_100a"), ((8, 7), "sm_120a"))


def _sweep() -> list[str]:
    """Tensor maps of each width and kind x the operand after the tensor operand, or none, under
    each destination state space and load mode, 1 to 5 dimensions."""
    heads = [f"cp.async.bulk.tensor.{d}d.shared::{sp}.global{m}.mbarrier::complete_tx::bytes{f}"
             for d, sp, m, f in (("1", "cluster", "", ""), ("5", "cta", ".tile", ""),
                                 ("3", "cluster", ".im2col", ""), ("2", "cta", "", ".L2::cache_hint"))]
    coords = {"1": "{%r2}", "2": "{%r2, %r3}", "3": "{%r2, %r3, %r4}", "5": "{%r2, %r3, %r4, %r5, %r6}"}
    out = []
    for head, base, tail in itertools.product(heads, ("%r1", "%sr1", "%rd1", "%h1", "%f1", "sb32"),
                                              ("", ", %rd3", ", %sd1", ", -1", ", 1.5", ", bar", ", sb32",
                                               ", %r3", ", [bar]", ", %fd1")):
        out.append(f"{head} [%rd0], [{base}, {coords[head.split('.')[4][0]]}]{tail};")
    return out


@pytest.mark.tool("ptxas")
def test_as_ptxas_says() -> None:
    lines = [*(t for t, _ in RECORDED), *_sweep()]
    got = compare([_case(t) for t in lines], PAIRS, workers=1)
    assert len(got) == len(lines) * len(PAIRS)
    assert sum(any(m == _VEC for _, m in o.ptxas) for o in got) >= 100
    bad = [(o.version, o.target, o.case.text, sorted(o.ptxas ^ o.ours)) for o in got if o.disagree]
    assert not bad, bad[:5]
