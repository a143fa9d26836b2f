"""Every copy wait runs eagerly (`Explorer.is_local`): one whose thread has no copy of its kind still to
land passes (most threads of a CTA never issue one: Triton's TMA epilogue has every thread run
`cp.async.bulk.wait_group.read 0` behind one elected thread's store), and one that would block blocks
with no visible step, its copies' landings releasing it (CUTLASS's epilogue lanes at
`cp.async.bulk.wait_group.read 1`): same verdicts and finding kinds as without reductions, never more
states."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Explorer, Options, check_machine

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


def test_a_wait_that_would_block_runs_eagerly_and_blocks(tmp_path: Path) -> None:
    module = load(tmp_path, _kernel(CP_ASYNC, False))
    m = sim.launch(module, grid=1, block=3, args={"buf": sim.Buffer(64)})
    ex = Explorer(m, module, Options(walks=0))
    wait = next(x.pc for x in ex.code.ins if x.opcode == "cp.async.wait_group")
    t0, t1 = m.threads[0], m.threads[1]
    while t0.pc != wait:
        m.step(t0)
    while t1.pc != wait:
        m.step(t1)
    assert ex.is_local(t1) and ex.is_local(t0)  # thread 0's copy has not landed: its wait would block
    ex.eager(t0, [])
    assert t0.pc == wait + 1 and t0.wait is not None  # blocked past it, no visible step
    (copy,) = m.inflight
    m.step(copy)  # the landing releases it
    assert t0.wait is None and t0.pc == wait + 1


# Thread 0 pipelines `copies` copies of 16 bytes, one group each, keeping `keep` groups in flight after
# each (`wait_group keep`) and then touching the buffer of the one before: a bulk store's source
# (CUTLASS's epilogue, `cp.async.bulk.wait_group.read 1`) it overwrites, a cp.async's destination it
# reads. With keep 1 the copy before is retired by then; with keep 2 it may still be in flight (a race).
# Thread 1 meanwhile stores three words of its own.
PIPELINE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 buf)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 16 .b8 tile[64];
	.shared .align 16 .b8 word[16];
	mov.u32 %r1, %tid.x;
	ld.param.u64 %rd1, [buf];
	cvta.to.global.u64 %rd1, %rd1;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra OTHER;
{body}	{drain}
	ret;
OTHER:
	st.shared.u32 [word], %r1;
	st.shared.u32 [word+4], %r1;
	st.shared.u32 [word+8], %r1;
	ret;
}}
"""
STAGE = {"bulk": ("\tst.shared.u32 [tile+{o}], %r1;\n\tfence.proxy.async.shared::cta;\n"
                  "\tcp.async.bulk.global.shared::cta.bulk_group [%rd1+{o}], [tile+{o}], 16;\n"
                  "\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read {keep};\n",
                  "\tst.shared.u32 [tile+{o}], %r1;\n", "cp.async.bulk.wait_group 0;"),
         "cp.async": ("\tcp.async.ca.shared.global [tile+{o}], [%rd1+{o}], 16;\n\tcp.async.commit_group;\n"
                      "\tcp.async.wait_group {keep};\n", "\tld.shared.u32 %r2, [tile+{o}];\n",
                      "cp.async.wait_all;")}


def _pipeline(kind: str, copies: int, keep: int) -> str:
    stage, touch, drain = STAGE[kind]
    body = "".join(stage.format(o=16 * i, keep=keep) + (touch.format(o=16 * (i - 1)) if i else "")
                   for i in range(copies))
    return PIPELINE.format(body=body, drain=drain)


@pytest.mark.parametrize("races", [True, False])
@pytest.mark.parametrize(("copies", "keep"), [(2, 1), (3, 1), (2, 2), (3, 2)])
@pytest.mark.parametrize("kind", ["bulk", "cp.async"])
def test_a_wait_that_keeps_groups_in_flight(tmp_path: Path, kind: str, copies: int, keep: int,
                                            races: bool) -> None:
    """A wait_group N that finds at most N groups in flight runs eagerly too: same verdicts and kinds as
    without reductions."""
    on, _ = differential(load(tmp_path, _pipeline(kind, copies, keep)), block=2,
                         args={"buf": sim.Buffer(256)}, races=races)
    assert on.verdict == ("finding" if races and keep == 2 else "verified")


def test_pipelined_stores_take_fewer_states(tmp_path: Path) -> None:
    """CUTLASS's epilogue shape, 2, 3 and 4 stores with `wait_group.read 1`: 13, 17, 21 states (25, 39,
    53 while each wait that passed with the last store in flight was a step of its own, and it and the
    store's landing were explored in both orders; 19, 31, 43 while a wait that would block was one)."""
    states = []
    for n in (2, 3, 4):
        module = load(tmp_path, _pipeline("bulk", n, 1))
        m = sim.launch(module, grid=1, block=2, args={"buf": sim.Buffer(256)})
        r = check_machine(m, module, Options(runs=False, walks=0))
        assert r.verdict == "verified"
        states.append(r.stats.states)
    assert states == [13, 17, 21]
