"""A vector operand whose registers differ in size, and red.async's vector value, judged as ptxas 13.0
judges them: found on the peer suites' lines with an operand's register of another width (MLIR's and
Triton's stmatrix/ldmatrix lowerings; docs/lint.md). ptxas says "Incompatible elements of vector
expression" of the vector whether or not the operand list matches (stmatrix, ldmatrix; PTX ISA
9.7.9.12 st.async, 9.7.12.7 red.async); red.async's value takes a vector ("Vector operand is not
allowed") only where its first register has the value's size. The messages below
are ptxas's own (measured); `test_as_ptxas` holds the lines against ptxas itself where installed."""

from __future__ import annotations

import os
import shutil

import pytest

from mbarrier.ptx.ast import Instruction
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate_oracle import compare
from mbarrier.ptx.variant_pools import Case

from .helpers import Kernel

KERNEL = Kernel("8.6", "sm_100a", ".reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .b16 %h<4>; .reg .pred %p<4>;")
_errors = KERNEL.errors
RED = "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32"
MIXED = (
    "stmatrix.sync.aligned.x2.m8n8.shared.b16 [%r0], {%rd1, %r2};",
    "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%rd0, %r1, %r2, %r3}, [%r4];",
    "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%r1], {%h1, %r2}, [%r3];",
    "stmatrix.sync.aligned.x2.m8n8.shared.b16 [%r0], {%r1, %rd2};",  # (the first fits: no mismatch)
)
RED_VECTORS = (
    f"{RED} [%r1], {{%r1, %r2}}, [%r3];",
    f"{RED} [%r1], {{%rd1, %r2}}, [%r3];",
    f"{RED} [%r1], {{%r2, %rd1}}, [%r3];",
    f"{RED} [%r1], {{%h2, %r1}}, [%r3];",
    f"{RED} [%r1], {{%p1, %r1}}, [%r3];",
)


def test_elements_of_another_size_with_or_without_a_match() -> None:
    incompatible = "Incompatible elements of vector expression"
    assert _errors("\n".join(MIXED)) == {
        (1, incompatible), (1, "Arguments mismatch for instruction 'stmatrix'"),
        (2, incompatible), (2, "Arguments mismatch for instruction 'ldmatrix'"),
        (3, incompatible), (3, "Arguments mismatch for instruction 'st.async'"),
        (4, incompatible),
    }


def test_red_async_takes_a_vector_whose_first_register_has_the_value_size() -> None:
    not_allowed = "Vector operand is not allowed for instruction 'red.async'"
    mismatch = "Arguments mismatch for instruction 'red.async'"
    incompatible = "Incompatible elements of vector expression"
    assert _errors("\n".join(RED_VECTORS)) == {
        (1, not_allowed),
        (2, mismatch), (2, incompatible),
        (3, not_allowed), (3, incompatible),
        (4, mismatch), (4, incompatible),
        (5, not_allowed),
    }


PAIRS = (((8, 0), "sm_90a"), ((8, 6), "sm_100a"))


def _case(text: str) -> Case:
    module = parse(".version 9.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n" + text + "\n}\n")
    (instr,) = [s for s in module.functions[0].body or () if isinstance(s, Instruction)]
    return Case("vector-elements", instr)


@pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("MBARRIER_REQUIRE_TOOLS"),
                    reason="ptxas (CUDA 13.0) is not on PATH")
def test_as_ptxas() -> None:
    lines = (*MIXED, *RED_VECTORS)
    got = compare([_case(t) for t in lines], PAIRS, workers=1)
    assert len(got) == len(lines) * len(PAIRS)
    bad = [(o.version, o.target, o.case.text, sorted(o.ptxas ^ o.ours)) for o in got if o.disagree]
    assert not bad, bad[:5]
