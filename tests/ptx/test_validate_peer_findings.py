"""Lines where lint and ptxas 13.0 parted on other projects' test suites (LLVM's NVPTX codegen tests,
MLIR's NVVM lowering; docs/lint.md, "On material nobody here wrote"), each against ptxas itself:
griddepcontrol's two actions read in order (PTX ISA 9.7.13.13), tcgen05.commit's repeated
`.mbarrier::arrive::one` (9.7.16.12.5), a word of the opcode written twice (its own gates, "Multiple
.mbarrier modifiers specified"), fence.proxy's tensor-map operands without `.tensormap::generic`
(9.7.13.4)."""

from __future__ import annotations

import os
import shutil

import pytest

from mbarrier.ptx.ast import Instruction
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate_oracle import compare
from mbarrier.ptx.variant_pools import Case

pytestmark = pytest.mark.skipif(
    shutil.which("ptxas") is None and not os.environ.get("MBARRIER_REQUIRE_TOOLS"),
    reason="ptxas (CUDA 13.0) is not on PATH")

GRIDDEP = tuple(f"griddepcontrol{w};" for w in (
    ".wait", ".launch_dependents", ".wait.launch_dependents", ".launch_dependents.wait",
    ".wait.wait", ".launch_dependents.launch_dependents.wait", ".wait.launch_dependents.wait", ""))
COMMIT = (
    "tcgen05.commit.cta_group::1.mbarrier::arrive::one.mbarrier::arrive::one.shared::cluster.b64 [%rd1];",
    "tcgen05.commit.cta_group::2.mbarrier::arrive::one.mbarrier::arrive::one.multicast::cluster.b64"
    " [%rd1], %h1;",
)
WORDS = (
    "cp.async.async.mbarrier.arrive.b64 [%rd1];",
    "cp.async.mbarrier.mbarrier.arrive.noinc.shared.b64 [%rd1];",
    "barrier.cluster.wait.wait;",
    "clusterlaunchcontrol.try_cancel.async.async.shared::cta.mbarrier::complete_tx::bytes.b128"
    " [%rd1], [%rd2];",
    "cp.async.bulk.mbarrier::complete_tx::bytes.mbarrier.shared::cluster.global [%rd2], [%rd2], 16, [%rd2];",
    "cp.async.bulk.mbarrier.mbarrier::complete_tx::bytes.shared::cluster.global [%rd2], [%rd2], 16, [%rd2];",
    "fence.proxy.acquire.cluster [%rd1], 128;", "fence.proxy.release.gpu [%rd1], 128;",
)
PAIRS = (((7, 0), "sm_80"), ((7, 8), "sm_90"), ((8, 0), "sm_90a"), ((8, 6), "sm_100a"), ((8, 7), "sm_120a"))


def _case(text: str) -> Case:
    module = parse(".version 9.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n" + text + "\n}\n")
    (instr,) = [s for s in module.functions[0].body or () if isinstance(s, Instruction)]
    return Case("peer", instr)


@pytest.mark.parametrize("lines", [GRIDDEP, COMMIT, WORDS], ids=["griddepcontrol", "tcgen05.commit", "words"])
def test_as_ptxas(lines: tuple[str, ...]) -> None:
    got = compare([_case(t) for t in lines], PAIRS, workers=1)
    assert len(got) == len(lines) * len(PAIRS)
    assert any(o.ptxas for o in got)  # (the lines are wrong somewhere: messages to agree on)
    bad = [(o.version, o.target, o.case.text, sorted(o.ptxas ^ o.ours)) for o in got if o.disagree]
    assert not bad, bad[:5]
