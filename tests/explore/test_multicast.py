"""A 2-CTA cluster with a multicast bulk copy in the stubborn sets: the copy's footprint names the same
offsets in every CTA of its ctaMask (every CTA of the cluster when the mask is not known), not "any
shared memory and any mbarrier", and the gate fixpoint counts its complete-tx on each of those barriers
only. Same verdicts and finding kinds as without reductions, with and without bugs, for 2 CTAs of 1 and
2 threads, one round and two rounds through one stage."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

# Thread 0 of CTA 0 is the producer: it arms `full` of its CTA (arrive.expect_tx) and of CTA 1 (remotely,
# through mapa), and issues one multicast copy of 16 bytes into `tile` of the CTAs of its mask. Every
# thread of both CTAs (the producer too) waits on its CTA's `full`, reads the tile and releases the stage
# on CTA 0's `empty` remotely (count: every thread of the cluster). Before a later round the producer
# waits on `empty`. A cluster barrier follows the initialization and precedes the exit.
KERNEL = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 src)
{{
	.reg .pred %p<12>;
	.reg .b16 %rs<4>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b8 full[8];
	.shared .align 8 .b8 empty[8];
	.shared .align 128 .b8 tile[16];
	mov.u32 %r0, %tid.x;
	mov.u32 %r1, %cluster_ctarank;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC0;
	mbarrier.init.shared::cta.b64 [full], 1;
	mbarrier.init.shared::cta.b64 [empty], {count};
	fence.mbarrier_init.release.cluster;
SYNC0:
	barrier.cluster.arrive.release;
	barrier.cluster.wait.acquire;
	mov.u32 %r20, 0;
LOOP:
	or.b32 %r2, %r0, %r1;
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra CONSUME;
	setp.eq.u32 %p2, %r20, 0;
	@%p2 bra ARM;
EMPTY:
	mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p3, [empty], 0;
	@!%p3 bra EMPTY;
ARM:
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [full], 16;
	mov.u32 %r6, full;
	mapa.shared::cluster.u32 %r7, %r6, 1;
	mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%r7], {bytes};
	ld.param.u64 %rd0, [src];
	cvta.to.global.u64 %rd0, %rd0;
	mov.u32 %r8, tile;
{mask}	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
		[%r8], [%rd0], 16, [%r6], %rs1;
CONSUME:
	and.b32 %r21, %r20, {parity};
WAITF:
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [full], %r21;
	@!%p4 bra WAITF;
	ld.shared.u32 %r9, [tile];
	mov.u32 %r10, empty;
	mapa.shared::cluster.u32 %r11, %r10, 0;
	mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r11];
	add.u32 %r20, %r20, 1;
	setp.lt.u32 %p5, %r20, {rounds};
	@%p5 bra LOOP;
{end}	exit;
}}
"""
SYNC = "\tbarrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;\n"

# Bugs: `mask` (the multicast leaves CTA 1 out: its `full` waits for bytes that never come), `bytes` (CTA
# 1's `full` is armed for 4 bytes more than the copy brings), `count` (`empty` expects one arrival more
# than there are threads: the producer's second wait never ends), `parity` (the second round waits for
# parity 0 again: it reads while the copy lands), `leave` (no cluster barrier before the exit: a CTA may
# exit while the other still arrives on its barrier or copies into it); `unknown` is no bug: the mask
# comes from memory, which the analysis does not read.
EXPECTED = {None: None, "unknown": None, "mask": "deadlock", "bytes": "deadlock", "count": "deadlock",
            "parity": "race", "leave": "violation"}


def _kernel(bug: str | None, threads: int, rounds: int) -> str:
    mask = f"\tmov.u16 %rs1, {1 if bug == 'mask' else 3};\n"
    if bug == "unknown":  # the mask from memory (3 at run time): the footprint takes every CTA
        mask = "\tld.global.u16 %rs2, [%rd0];\n\tor.b16 %rs1, %rs2, 3;\n"
    return KERNEL.format(count=2 * threads + (bug == "count"), bytes=20 if bug == "bytes" else 16,
                         mask=mask, parity=0 if bug == "parity" else 1, rounds=rounds,
                         end="" if bug == "leave" else SYNC)


# (bug, threads per CTA, rounds): `count` and `parity` need a second round. One thread per CTA: without
# reductions two threads per CTA take 20,000-100,000 states and minutes (the linear test below runs more
# threads with reductions on).
CASES = ([(bug, 1, 1) for bug in (None, "unknown", "mask", "bytes", "leave")]
         + [(bug, 1, 2) for bug in (None, "unknown", "count", "parity")])


@pytest.mark.parametrize(("bug", "threads", "rounds"), CASES, ids=[f"{b}-{n}-{r}" for b, n, r in CASES])
def test_multicast_cluster_same_outcomes_as_without_reductions(tmp_path: Path, bug: str | None, threads: int,
                                                               rounds: int) -> None:
    _, off = differential(load(tmp_path, _kernel(bug, threads, rounds)), grid=2, block=threads, cluster=2)
    expected = EXPECTED[bug]
    assert (off.verdict == "verified") == (expected is None)
    assert expected is None or expected in outcome(off)[1]


def test_multicast_consumers_are_linear(tmp_path: Path) -> None:
    """Two CTAs of n threads, one round: states grow linearly with the threads (26, 42, 74, 138 for 1,
    2, 4, 8; the same with the coarse multicast footprint: here the producer cannot run ahead of the
    consumers, so this guards the growth rather than the change)."""
    states = [check(load(tmp_path, _kernel(None, n, 1)), grid=2, block=n, cluster=2,
                    options=Options(walks=0)).stats.states for n in (1, 2, 4, 8)]
    steps = [b - a for a, b in zip(states, states[1:], strict=False)]
    assert steps[1] == 2 * steps[0] and steps[2] == 4 * steps[0], states
