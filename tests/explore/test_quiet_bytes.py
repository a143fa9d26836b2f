"""An expect_tx whose byte count the code does not fix (`Code.tx_amounts` unknown: read from a kernel
parameter here, a register in CUTLASS's epilogue loads) can still be quiet (`explore.quiet`): its bytes
are known from the thread's registers when it is the next step, so the tx-count's range is bounded by
them rather than by the largest amount any instruction names. Before, it conflicted with every other
thread's arrival on the barrier, and the states were the subsets of arrived threads. Same verdicts and
kinds as without reductions (PTX ISA 9.7.13.15.5, 9.7.13.15.6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

# Thread 0 copies 64 bytes into `tile` and then expects `bytes` on `bar` (the copy first, as CUTLASS's
# epilogue loads do); every thread arrives, waits for the phase and reads its word of the tile.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out, .param .u32 bytes)
{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 16 .b8 tile[64];
	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ntid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar], %r2;
SYNC:
	bar.sync 0;
	@%p1 bra ARRIVE;
	ld.param.u64 %rd1, [src];
	ld.param.u32 %r4, [bytes];
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [tile], [%rd1], 64, [bar];
	mbarrier.expect_tx.shared::cta.b64 [bar], %r4;
ARRIVE:
	mbarrier.arrive.shared::cta.b64 %rd2, [bar];
WAIT:
	mbarrier.try_wait.shared::cta.b64 %p2, [bar], %rd2;
	@!%p2 bra WAIT;
	and.b32 %r6, %r1, 15;
	shl.b32 %r7, %r6, 2;
	mov.u32 %r8, tile;
	add.u32 %r9, %r8, %r7;
	ld.shared.u32 %r10, [%r9];
	ld.param.u64 %rd6, [out];
	mul.wide.u32 %rd7, %r1, 4;
	add.u64 %rd8, %rd6, %rd7;
	st.global.u32 [%rd8], %r10;
	ret;
}
"""

# The bytes expected: as many as the copy brings, or 4 more or fewer (the tx-count never gets back to 0:
# the phase never completes).
ANSWERS = {64: ("verified", frozenset()), 68: ("finding", frozenset({"deadlock"})),
           60: ("finding", frozenset({"deadlock"}))}


@pytest.mark.parametrize("nbytes", sorted(ANSWERS))
@pytest.mark.parametrize("threads", [2, 3])
def test_same_answers_as_without_reductions(tmp_path: Path, nbytes: int, threads: int) -> None:
    on, _ = differential(load(tmp_path, KERNEL), block=threads, args={"bytes": nbytes})
    assert outcome(on) == ANSWERS[nbytes]


def test_states_linear_in_the_threads(tmp_path: Path) -> None:
    # Before: 20, 34, 58, 186 states at 2, 3, 4, 6 threads; now 15, 20, 25, 35.
    k = load(tmp_path, KERNEL)
    states = [check(k, grid=1, block=n, args={"bytes": 64}, options=Options(walks=0)).stats.states
              for n in (2, 4, 6)]
    assert states[2] - states[1] == states[1] - states[0], states
