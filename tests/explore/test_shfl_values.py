"""A future shfl.sync's value (`explore.values`): where every lane it can read holds the same value as
the reading lane, in registers that can no longer change (a warp-uniform index such as `tid.x / 32` read
from lane 0, CUTLASS's canonical_warp_idx_sync), the thread's future knows it, so a branch on it (the
barrier initialization of one warp) is decided and the other threads' futures do not hold that
initialization. Where lanes differ, the value stays unknown. Same verdicts as without reductions."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Explorer, Options
from mbarrier.explore.code import BRANCH, LOCAL, MB, live_registers
from mbarrier.explore.values import unroll

from .helpers import differential, load, outcome

# 4 lanes in pairs (shfl segment mask 0x1e: lanes 2k and 2k+1 form a segment); `src` is read from the
# first lane of the pair: the pair index (uniform in the segment) or the lane's own tid (not uniform).
# The odd lane that reads 0 (lane 1) initializes `bar` (count `count`); the lanes that read another
# value (pair 1) each store a word and arrive, pair 0 waits and reads both.
KERNEL = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<6>;
	.reg .b32 %r<8>;
	.shared .align 8 .b8 bar[8];
	.shared .align 4 .b8 data[8];
	mov.u32 %r0, %tid.x;
	shr.u32 %r1, %r0, 1;
	shfl.sync.idx.b32 %r3|%p0, {src}, 0, 0x1e1f, -1;
	and.b32 %r6, %r0, 1;
	setp.ne.u32 %p1, %r3, 0;
	@%p1 bra SKIP;
	setp.eq.u32 %p2, %r6, 0;
	@%p2 bra SKIP;
	mbarrier.init.shared::cta.b64 [bar], {count};
SKIP:
	bar.sync 0;
	@!%p1 bra WAIT;
	shl.b32 %r7, %r6, 2;
	mov.u32 %r4, data;
	add.u32 %r4, %r4, %r7;
	st.shared.u32 [%r4], %r0;
	mbarrier.arrive.shared::cta.b64 _, [bar];
	exit;
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
	@!%p4 bra WAIT;
	ld.shared.u32 %r5, [data];
	ld.shared.u32 %r5, [data+4];
	exit;
}}
"""


def _inits_in_future(tmp_path: Path, src: str, tid: int) -> int:
    module = load(tmp_path, KERNEL.format(src=src, count=2))
    m = sim.launch(module, grid=1, block=4)
    ex = Explorer(m, module, Options(walks=0))
    for t in m.threads:  # each at its shfl, the registers it reads computed (the search runs the
        while ex.ins(t).kind in (LOCAL, BRANCH):  # shfl eagerly too: futures from before one need this)
            ex.step(t, [])
    t = m.threads[tid]
    fp = ex.fp.fps[t.func.name]
    live = [tuple(sorted(s)) for s in live_registers(fp.code)]
    g = unroll(m, fp.code, t, live, lambda j, env: fp.successors(t, j, t.pc, env))
    return sum(1 for pc in g.pcs if fp.code.ins[pc].kind == MB and fp.code.ins[pc].mb_op == "init")


def test_a_uniform_value_read_from_another_lane_is_known(tmp_path: Path) -> None:
    assert _inits_in_future(tmp_path, "%r1", 3) == 0   # lane 3 reads 1 from lane 2: it never initializes
    assert _inits_in_future(tmp_path, "%r1", 1) == 1   # lane 1 reads 0 from lane 0: it initializes


def test_a_value_that_differs_between_lanes_stays_unknown(tmp_path: Path) -> None:
    # lane 3 reads lane 2's tid (2), not its own (3): the analysis does not know which it gets
    assert _inits_in_future(tmp_path, "%r0", 3) == 1


@pytest.mark.parametrize("src", ["%r1", "%r0"])
@pytest.mark.parametrize("count,expected", [(2, "verified"), (3, "finding")])
def test_same_outcomes_as_without_reductions(tmp_path: Path, src: str, count: int, expected: str) -> None:
    on, _ = differential(load(tmp_path, KERNEL.format(src=src, count=count)), block=4)
    assert outcome(on)[0] == expected
