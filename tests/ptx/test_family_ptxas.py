"""tcgen05.commit (the generator leaves it out: `validate_variants.UNGENERATED`) against ptxas 13.0 on
the lines it is modelled for: every well-formed shape, each required modifier left out, and the
state spaces, on targets in and out of the sm_100 family and .versions around its gate (8.6)."""

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

_GROUPS = (".cta_group::1", ".cta_group::2", "")
COMMIT = (
    *(f"tcgen05.commit{g}.mbarrier::arrive::one{s}.b64 [{a}];" for g in _GROUPS
      for s in ("", ".shared::cluster", ".shared::cta", ".shared") for a in ("bar", "%rd2")),
    *(f"tcgen05.commit{g}.mbarrier::arrive::one{s}.multicast::cluster.b64 [bar], %h1;" for g in _GROUPS
      for s in ("", ".shared::cluster")),
    *(f"tcgen05.commit{g}.b64 [bar];" for g in _GROUPS),
    "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b32 [bar];",
    "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [gbar];",
    "tcgen05.commit.cta_group::2.mbarrier::arrive::one.multicast::cluster.b64 [bar], %r1;",
)
PAIRS = (((7, 0), "sm_80"), ((7, 8), "sm_80"), ((8, 5), "sm_90"), ((8, 6), "sm_100"), ((8, 6), "sm_100a"),
         ((9, 0), "sm_90"), ((8, 8), "sm_103f"), ((9, 0), "sm_110f"), ((8, 8), "sm_120"))


def _case(text: str) -> Case:
    module = parse(".version 9.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n" + text + "\n}\n")
    (instr,) = [s for s in module.functions[0].body or () if isinstance(s, Instruction)]
    return Case("tcgen05.commit", instr)


def test_tcgen05_commit_as_ptxas() -> None:
    got = compare([_case(t) for t in COMMIT], PAIRS, workers=1)
    bad = [(o.version, o.target, o.case.text, sorted(o.ptxas ^ o.ours)) for o in got if o.disagree]
    assert len(got) == len(COMMIT) * len(PAIRS)
    assert not bad, bad[:5]
