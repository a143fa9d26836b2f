"""setmaxnreg in the stubborn sets: a collective of its warp (`sim.isa.control.setmaxnreg_facts`), not an
opaque step, so the warp-specialized prologue (producer warpgroup: setmaxnreg.dec, consumers: .inc)
no longer expands every thread of the CTA at once (CUTLASS kernels open every role with it). Its rules
(`sim.warpgroup`) are still found: warps of one warpgroup that disagree."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import load

# Two warpgroups: warpgroup 0 gives registers back, warpgroup 1 takes them, each thread then stores its
# word. `bug`: "differ" (warp 1 asks for 48, its siblings for 40).
KERNEL = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 4 .b8 buf[1024];
	mov.u32 %r0, %tid.x;
	shr.u32 %r1, %r0, 7;
	shr.u32 %r2, %r0, 5;
	bar.sync 0;
	setp.ne.u32 %p0, %r1, 0;
	@%p0 bra CONS;
{producer}
	bra STORE;
CONS:
	setmaxnreg.inc.sync.aligned.u32 232;
STORE:
	shl.b32 %r3, %r0, 2;
	mov.u32 %r4, buf;
	add.u32 %r4, %r4, %r3;
	st.shared.u32 [%r4], %r0;
	exit;
}}
"""
PRODUCER = {
    None: "\tsetmaxnreg.dec.sync.aligned.u32 40;",
    "differ": "\tsetp.eq.u32 %p1, %r2, 1;\n\t@%p1 setmaxnreg.dec.sync.aligned.u32 48;\n"
              "\t@!%p1 setmaxnreg.dec.sync.aligned.u32 40;",
}


@pytest.mark.parametrize("bug", [None, "differ"])
def test_setmaxnreg_prologue_is_linear_and_its_rules_are_found(tmp_path: Path, bug: str | None) -> None:
    module = load(tmp_path, KERNEL.format(producer=PRODUCER[bug]))
    r = check(module, grid=1, block=256, options=Options(max_states=4000, walks=0))
    if bug is None:
        assert r.verdict == "verified"
        assert r.stats.states <= 5 * 256   # a few steps per thread, one interleaving (no branching)
    else:
        assert r.verdict == "finding"
        assert {(str(f.kind), f.rule) for f in r.findings} == {("violation", "setmaxnreg")}
