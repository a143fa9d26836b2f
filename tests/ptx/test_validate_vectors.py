"""Vectors as ptxas 13.0 reads them (`ptx.validate_vectors`, `spec.forms.VECTOR_LENGTHS`): a length
an instruction takes nowhere is "Illegal vector size: N" wherever the vector stands; a load mode
on an instruction without one ends the line; a vector where the tensor load's words put ctaMask is
"Vector is not expected for argument N"; `[a, x]` fits no operand but a tensor copy's; a vector
of any length stands for an arrive count or cp.async.bulk's ctaMask, one of the type's size
for mapa's and getctarank's address. The
expected messages are ptxas's own (recorded at .version 8.6, .target sm_100a); the last test asks
ptxas itself, on the peer-suite mutations these rules came from, under the sweep's pairs."""

from __future__ import annotations

import pytest

from mbarrier.ptx.ast import Instruction
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate_oracle import compare, our_verdicts
from mbarrier.ptx.variant_pools import Case

_S = "shared::cluster.global.mbarrier::complete_tx::bytes"
_T = f"cp.async.bulk.tensor.3d.{_S}"
_MISMATCH = "Arguments mismatch for instruction '{}'"
_UNEXPECTED = "Vector is not expected for argument {} of instruction 'cp.async.bulk.tensor'"

#: (line, ptxas 13.0's errors at .version 8.6 / .target sm_100a)
RECORDED: tuple[tuple[str, frozenset[str]], ...] = (
    # a tensor load turned into the plain bulk copy (LLVM/MLIR peer mutations `.tensor` dropped,
    # `.bulk` doubled): the coordinates' length, and an illegal load mode ends the line
    (f"cp.async.bulk.5d.{_S} [%rd0], [%r1, {{%r2,%r3,%r4,%r5,%r6}}], [%r7];",
     frozenset({"Illegal vector size: 5", _MISMATCH.format("cp.async.bulk")})),
    (f"cp.async.bulk.bulk.tensor.5d.{_S}.im2col.multicast::cluster.L2::cache_hint [%r0], "
     "[%rd1, {%r2,%r3,%r4,%r5,%r6}], [%r7], {%h0,%h1,%h2}, %h3, %rd4;",
     frozenset({"Illegal modifier '.im2col' for instruction 'cp.async.bulk'", "Illegal vector size: 3",
                "Illegal vector size: 5", "Unknown modifier '.bulk'", "Unknown modifier '.tensor'"})),
    (f"cp.async.bulk.4d.{_S}.im2col.multicast::cluster.L2::cache_hint [%r0], [%rd1, {{%r2,%r3,%r4,%r5}}], "
     "[%r6], {%h3,%h0}, %h1, %rd2;",
     frozenset({"Illegal modifier '.im2col' for instruction 'cp.async.bulk'"})),
    (f"cp.async.bulk.{_S}.im2col_no_offs [%rd0], [%rd1], [%rd2];",
     frozenset({"Illegal modifier '.im2col_no_offs' for instruction 'cp.async.bulk'"})),
    # `.im2col` dropped, its offsets kept: where ctaMask goes now
    (f"{_T}.multicast::cluster.L2::cache_hint [%r0], [%rd1, {{%r2,%r3,%r4}}], [%r5], {{%h2}}, %h3, %rd0;",
     frozenset({_MISMATCH.format("cp.async.bulk.tensor"), _UNEXPECTED.format(4)})),
    (f"cp.async.bulk.tensor.1d.{_S}.multicast::cluster [%rd0], [%rd1, {{%r1}}], [%rd2], {{%h1,%h2}};",
     frozenset({_UNEXPECTED.format(4)})),
    (f"{_T}.im2col.multicast::cluster [%rd0], [%rd1, {{%r1,%r2,%r3}}], [%rd2], {{%h1}}, {{%h2}};",
     frozenset({_UNEXPECTED.format(5)})),
    # (no list fits the operands as written: the mismatch alone)
    (f"{_T}.multicast::cluster [%rd0], [%rd1, {{%r1,%r2,%r3}}], [%rd2], {{%r1}};",
     frozenset({_MISMATCH.format("cp.async.bulk.tensor")})),
    (f"cp.async.bulk.tensor.1d.{_S} [%rd0], [%rd1, {{%r1}}], {{%rd2,%rd3,%rd4,%rd1,%rd1,%rd1}};",
     frozenset({"Illegal vector size: 6",
                "Vector operand is not allowed for instruction 'cp.async.bulk.tensor'"})),
    # any instruction, an unknown one too; not past a fatal parse error
    ("mbarrier.arrive.shared.b64 %rd0, [%rd1], {%r1,%r2,%r3}, {%r1,%r2,%r3,%r4,%r5};",
     frozenset({_MISMATCH.format("mbarrier.arrive"), "Illegal vector size: 3", "Illegal vector size: 5"})),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rd1], {%r1,%r2,%r3,%r4,%r5,%r6,%r1,%r2};",
     frozenset({_MISMATCH.format("mbarrier.try_wait.parity"), "Illegal vector size: 8"})),
    ("mbarrier.bogus.shared.b64 %rd0, {%r1,%r2,%r3};",
     frozenset({"Unknown modifier '.bogus'", "Illegal vector size: 3",
                "Not a name of any known instruction: 'mbarrier'"})),
    ("mbarrier.arrive.shared.b64.func %rd0, {%r1,%r2,%r3};",
     frozenset({"Parsing error near '.func': syntax error"})),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%rd0], {%r1,%r2,%r3}, [%rd1];",
     frozenset({"Argument vector size mismatch for instruction 'st.async'", "Illegal vector size: 3"})),
    # wgmma.mma_async takes vectors of any length
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1,%r2,%r3}, %rd1, %rd2, 1, 1, 1, 0, 0;",
     frozenset({"Argument vector size mismatch for instruction 'wgmma.mma_async with floating point types'",
                "Instruction 'wgmma.mma_async with floating point types' cannot be compiled for "
                "architecture 'sm_100a'",
                "Instruction 'wgmma.mma_async with floating point types' not supported on .target "
                "'sm_100a'"})),
    # a vector of any length as an arrive count or cp.async.bulk's ctaMask: its elements judged only
    ("mbarrier.arrive.shared.b64 %rd1, [%rd1], {%r1,%r2};", frozenset()),
    ("mbarrier.arrive_drop.noComplete.shared.b64 %rd1, [%rd1], {%r1,%r2,%r3,%r4};", frozenset()),
    ("mbarrier.arrive.shared.b64 %rd1, [%rd1], {1,2,3};", frozenset({"Illegal vector size: 3"})),
    ("mbarrier.arrive.shared.b64 %rd1, [%rd1], {%r1,%rd2};",
     frozenset({"Incompatible elements of vector expression"})),
    (f"cp.async.bulk.{_S}.multicast::cluster [%rd0], [%rd1], %r1, [%rd2], {{%h1,%h2}};", frozenset()),
    (f"cp.async.bulk.{_S}.multicast::cluster.L2::cache_hint [%rd0], [%rd1], %r1, [%rd2], {{%h1}}, %rd3;",
     frozenset()),
    # mapa's and getctarank's address (and mapa's destination): a vector whose first register has
    # the type's size is "Vector operand is not allowed", any other a mismatch
    ("mapa.u64 %rd1, {%rd2,%rd3}, %r1;", frozenset({"Vector operand is not allowed for instruction 'mapa'"})),
    ("mapa.u64 {%rd1}, %rd2, %r1;", frozenset({"Vector operand is not allowed for instruction 'mapa'"})),
    ("mapa.u64 %rd1, {%r2}, %r1;", frozenset({_MISMATCH.format("mapa")})),
    ("getctarank.u32 %r1, {%r2};", frozenset({"Vector operand is not allowed for instruction 'getctarank'"})),
    ("getctarank.u64 {%r1}, %rd2;", frozenset({_MISMATCH.format("getctarank")})),
    # `[a, {...}]` outside the tensor copies
    ("mbarrier.arrive.shared.b64 %rd0, [%rd1, {%r1,%r2}];", frozenset({_MISMATCH.format("mbarrier.arrive")})),
    # a load mode ends the line (hiding the operands), ranked with `.tile` after `.sync`
    ("mbarrier.arrive.im2col.shared.b64 %rd0, [%rd1], 1, 2;",
     frozenset({"Illegal modifier '.im2col' for instruction 'mbarrier.arrive'"})),
    ("mbarrier.arrive.im2col.tile.shared.b64 %rd0, [%rd1], 1, 2;",
     frozenset({"Multiple .load_mode modifiers specified",
                "Illegal modifier '.tile' for instruction 'mbarrier.arrive'"})),
    ("mbarrier.arrive.sync.im2col.shared.b64 %rd0, [%rd1], 1, 2;",
     frozenset({"Illegal modifier '.sync' for instruction 'mbarrier.arrive'"})),
)


def _case(text: str) -> Case:
    module = parse(".version 9.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n" + text + "\n}\n")
    (instr,) = [s for s in module.functions[0].body or () if isinstance(s, Instruction)]
    return Case("vectors", instr)


@pytest.mark.parametrize(("text", "expected"), RECORDED, ids=[t[:60] for t, _ in RECORDED])
def test_as_ptxas_said(text: str, expected: frozenset[str]) -> None:
    (got,) = our_verdicts([_case(text)], (8, 6), "sm_100a")
    assert {m for _, m in got} == expected


#: Shapes after the tensor load's mbar: a .b16 register or vector, a .b64 register. (Not here: a
#: one-element .b64 vector, under an im2col mode a scalar for the offsets, and the offsets then a
#: .b64 register with `.multicast::cluster`, where lint still parts from ptxas: docs/lint.md, Limits.)
_SHAPES = {"s": "%h1", "v": "{%h1}", "L": "%rd3"}
PAIRS = (((7, 0), "sm_80"), ((7, 8), "sm_90"), ((8, 0), "sm_90a"), ((8, 6), "sm_100a"), ((8, 7), "sm_120a"))


def _tails() -> list[str]:
    """Every tail of up to two operands under each load mode x optional modifiers, and the peer
    suites' mutated lines."""
    out = [text for text, _ in RECORDED[:9]]
    for mode in ("", ".im2col"):
        for mods in ("", ".multicast::cluster", ".L2::cache_hint", ".multicast::cluster.L2::cache_hint"):
            for tail in ("", *_SHAPES, *(a + b for a in _SHAPES for b in _SHAPES), "vsL", "vvL", "svL"):
                if mode and (tail[:1] != "v" or tail == "vL" and mods == ".multicast::cluster"):
                    continue
                ops = ", ".join(["[%rd0]", "[%rd1, {%r1,%r2,%r3}]", "[%rd2]", *(_SHAPES[t] for t in tail)])
                out.append(f"{_T}{mode}{mods} {ops};")
    return out


@pytest.mark.tool("ptxas")
def test_as_ptxas_says() -> None:
    lines = [*(t for t, _ in RECORDED), *_tails()]
    got = compare([_case(t) for t in lines], PAIRS, workers=1)
    assert len(got) == len(lines) * len(PAIRS)
    assert sum(any("Vector is not expected" in m for _, m in o.ptxas) for o in got) >= 20
    bad = [(o.version, o.target, o.case.text, sorted(o.ptxas ^ o.ours)) for o in got if o.disagree]
    assert not bad, bad[:5]
