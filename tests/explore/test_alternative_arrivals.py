"""A thread whose future releases a stage on either way of a branch on loaded data (a warp vote in
heldout2's `branch`) makes one arrival per path, not two: the fixpoint counts the longest chain of such
alternative arrivals (`frozen.Plan._alternatives`, `frozen._chain`), not their sum. With the sum, the
other consumers' releases seemed to complete `empty` without the seed's, so the producer's next round
joined every consumer's stubborn set (34 of 127 agents on `branch`, incomplete after 60 s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load

ONE = "\tmbarrier.arrive.shared::cta.b64 _, [%r6];"
# On the word read (zero: the TAKEN way is never run), through one of two arrives.
TWO = """	setp.ne.u32 %p6, %r20, 0;
	@%p6 bra TAKEN;
	mbarrier.arrive.shared::cta.b64 _, [%r6];
	bra.uni NEXT;
TAKEN:
	add.u32 %r21, %r20, 1;
	mbarrier.arrive.shared::cta.b64 _, [%r6];"""
# The same, but the way run releases nothing in the last round: the producer waits forever at n = 3.
SKIP = """	setp.ne.u32 %p6, %r20, 0;
	@%p6 bra TAKEN;
	setp.eq.u32 %p7, %r2, 0;
	@%p7 bra NEXT;
	mbarrier.arrive.shared::cta.b64 _, [%r6];
	bra.uni NEXT;
TAKEN:
	add.u32 %r21, %r20, 1;
	mbarrier.arrive.shared::cta.b64 _, [%r6];"""


def ring(consumers: int, release: str) -> str:
    """Thread 0 stores word k of `n` (zero) into stage k % 2 and arrives on `full`; threads 1.. wait, read
    it and release `empty` (count: the consumers) as `release` says."""
    body = f"""
	mov.u32 %r0, %tid.x;
	ld.param.u32 %r1, [n];
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC;
	mbarrier.init.shared::cta.b64 [full], 1;
	mbarrier.init.shared::cta.b64 [full+8], 1;
	mbarrier.init.shared::cta.b64 [empty], {consumers};
	mbarrier.init.shared::cta.b64 [empty+8], {consumers};
SYNC:
	bar.sync 0;
	mov.u32 %r2, 0;
	setp.ne.u32 %p1, %r0, 0;
	@%p1 bra CONS;
PROD:
	setp.ge.u32 %p2, %r2, %r1;
	@%p2 bra DONE;
	and.b32 %r3, %r2, 1;
	shl.b32 %r4, %r3, 3;
	mov.u32 %r5, empty;
	add.u32 %r6, %r5, %r4;
	shr.u32 %r7, %r2, 1;
	and.b32 %r8, %r7, 1;
	xor.b32 %r9, %r8, 1;
PW:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r6], %r9;
	@!%p3 bra PW;
	shl.b32 %r10, %r3, 2;
	mov.u32 %r11, data;
	add.u32 %r12, %r11, %r10;
	st.shared.u32 [%r12], 0;
	mov.u32 %r13, full;
	add.u32 %r14, %r13, %r4;
	mbarrier.arrive.shared::cta.b64 _, [%r14];
	add.u32 %r2, %r2, 1;
	bra.uni PROD;
CONS:
	setp.ge.u32 %p4, %r2, %r1;
	@%p4 bra DONE;
	and.b32 %r3, %r2, 1;
	shl.b32 %r4, %r3, 3;
	mov.u32 %r13, full;
	add.u32 %r14, %r13, %r4;
	shr.u32 %r7, %r2, 1;
	and.b32 %r9, %r7, 1;
CW:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r14], %r9;
	@!%p5 bra CW;
	shl.b32 %r10, %r3, 2;
	mov.u32 %r11, data;
	add.u32 %r12, %r11, %r10;
	ld.shared.u32 %r20, [%r12];
	mov.u32 %r5, empty;
	add.u32 %r6, %r5, %r4;
{release}
NEXT:
	add.u32 %r2, %r2, 1;
	bra.uni CONS;
DONE:
	exit;
"""
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{{
	.reg .pred %p<20>;
	.reg .b32 %r<40>;
	.shared .align 8 .b64 full[2];
	.shared .align 8 .b64 empty[2];
	.shared .align 16 .b8 data[16];
{body}}}
"""


@pytest.mark.parametrize("n", [3, 4])
def test_a_release_on_either_way_of_a_branch_costs_what_one_release_costs(tmp_path: Path, n: int) -> None:
    states = [check(load(tmp_path, ring(3, release), f"k{i}"), grid=1, block=4, args={"n": n},
                    options=Options(walks=0)).stats.states for i, release in enumerate((ONE, TWO))]
    assert states[1] == states[0], states


@pytest.mark.parametrize("release", [TWO, SKIP], ids=["two", "skip"])
def test_alternative_releases_same_outcomes_as_without_reductions(tmp_path: Path, release: str) -> None:
    on, _ = differential(load(tmp_path, ring(2, release)), block=3, args={"n": 3}, max_states=300_000)
    assert on.verdict == ("finding" if release is SKIP else "verified")
