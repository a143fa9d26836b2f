"""A copy wait whose thread has no copy of its kind still to land (most threads of a CTA never issue
one: Triton's TMA epilogue has every thread run `cp.async.bulk.wait_group.read 0` behind one elected
thread's store) runs eagerly (`check.copies_landed`): same verdicts and finding kinds as without
reductions, never more states; a wait of the issuing thread stays a step of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Explorer, Options

from .helpers import differential, load

# Thread 0 copies 16 bytes (cp.async into `tile`, or a bulk store of `tile` to global), commits, and,
# unless `skip`, waits with every other thread; after the bar.sync thread 1 touches `tile` (reads
# what the cp.async wrote; overwrites what the bulk store reads).
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 buf)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 16 .b8 tile[64];
	mov.u32 %r1, %tid.x;
	ld.param.u64 %rd1, [buf];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r2, tile;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra WAIT;
	{copy}
	{skip}
WAIT:
	{wait}
SYNC:
	bar.sync 0;
	setp.ne.u32 %p1, %r1, 1;
	@%p1 bra DONE;
	{touch}
DONE:
	ret;
}}
"""
CP_ASYNC = ("cp.async.ca.shared.global [%r2], [%rd1], 16;\n\tcp.async.commit_group;",
            "cp.async.wait_group 0;", "ld.shared.u32 %r3, [%r2];")
BULK = ("cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r2], 16;\n\tcp.async.bulk.commit_group;",
        "cp.async.bulk.wait_group.read 0;", "st.shared.u32 [%r2], %r1;")


def _kernel(kind: tuple[str, str, str], skip: bool) -> str:
    copy, wait, touch = kind
    return KERNEL.format(copy=copy, wait=wait, touch=touch, skip="bra SYNC;" if skip else "")


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("kind", [CP_ASYNC, BULK], ids=["cp.async", "bulk"])
def test_copy_waits_same_outcomes_as_without_reductions(tmp_path: Path, kind: tuple[str, str, str],
                                                        skip: bool) -> None:
    # merge_races: a race ends its path, so a violation behind it may be reported as the race alone.
    on, _ = differential(load(tmp_path, _kernel(kind, skip)), block=3, args={"buf": sim.Buffer(64)},
                         merge_races=True)
    assert on.verdict == ("finding" if skip else "verified")
    if skip:
        assert "race" in {str(f.kind) for f in on.findings}


def test_only_the_waits_of_threads_without_copies_run_eagerly(tmp_path: Path) -> None:
    module = load(tmp_path, _kernel(CP_ASYNC, False))
    m = sim.launch(module, grid=1, block=3, args={"buf": sim.Buffer(64)})
    ex = Explorer(m, module, Options(walks=0))
    wait = next(x.pc for x in ex.code.ins if x.opcode == "cp.async.wait_group")
    t0, t1 = m.threads[0], m.threads[1]
    while t0.pc != wait:
        m.step(t0)
    while t1.pc != wait:
        m.step(t1)
    assert ex.is_local(t1) and not ex.is_local(t0)  # thread 0's copy has not landed
    (copy,) = m.inflight
    m.step(copy)
    assert ex.is_local(t0)
