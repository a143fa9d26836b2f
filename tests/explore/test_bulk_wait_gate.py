"""`cp.async.bulk.wait_group{.read} N` as a gate of the frozen futures (`frozen.bulk_hold`, `Gate.keep`,
9.7.9.25.4.3): while a bulk store of its thread is the frozen seed, that thread cannot pass a later wait
that must retire the seed's group (more than N of its groups from the seed's on), so the rest of its future
(the next tile's writes to the buffer the store reads, its exit) stays out of the store's stubborn set;
a wait that may leave the seed's group pending stays passable. A thread blocked at such a wait behind
the seed has no future (`frozen.held_by`). Same verdicts and finding kinds as without reductions,
correct and with bugs (DeepGEMM's epilogue shape, docs/performance.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Explorer, Options
from mbarrier.explore.footprints import WRITE
from mbarrier.sim.machine import Thread

from .helpers import differential, load

# Every thread loads `{work}` words of `inp` (its work between tiles), meets the others at `bar.sync 1,
# {n}`, stores its word of `tile`, and meets them again; thread 0 then stores `tile` to `out` with a bulk
# store (its own bulk group) and, before the next tile's writes, waits with `{inwait}`; before `ret`
# with `{endwait}`.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 tiles, .param .u64 inp)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 128 .b8 tile[64];
	mov.u32 %r1, %tid.x;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	ld.param.u32 %r5, [tiles];
	mov.u32 %r2, tile;
	shl.b32 %r3, %r1, 2;
	add.s32 %r4, %r2, %r3;
	mov.u32 %r6, 0;
	setp.ne.u32 %p1, %r1, 0;
	ld.param.u64 %rd4, [inp];
	cvta.to.global.u64 %rd4, %rd4;
	mul.wide.u32 %rd5, %r1, 4;
	add.s64 %rd4, %rd4, %rd5;
LOOP:
{work}
	@%p1 bra SYNC;
	{inwait}
SYNC:
	bar.sync 1, {n};
	st.shared.u32 [%r4], %r6;
	fence.proxy.async.shared::cta;
	bar.sync 1, {n};
	@%p1 bra NEXT;
	mul.wide.u32 %rd2, %r6, 64;
	add.s64 %rd3, %rd1, %rd2;
	cp.async.bulk.global.shared::cta.bulk_group [%rd3], [%r2], 64;
	cp.async.bulk.commit_group;
NEXT:
	add.s32 %r6, %r6, 1;
	setp.lt.u32 %p2, %r6, %r5;
	@%p2 bra LOOP;
	@%p1 bra DONE;
	{endwait}
DONE:
	ret;
}}
"""
WAIT0, WAIT1 = "cp.async.bulk.wait_group.read 0;", "cp.async.bulk.wait_group.read 1;"


def _kernel(n: int, work: int, inwait: str = WAIT0, endwait: str = WAIT0) -> str:
    loads = "\n".join(f"\tld.global.u32 %r{10 + i}, [%rd4+{128 * i}];" for i in range(work))
    return KERNEL.format(n=n, work=loads, inwait=inwait, endwait=endwait)


def _args(tiles: int) -> dict[str | int, object]:
    return {"out": sim.Buffer(64 * 4), "tiles": tiles, "inp": sim.Buffer(1024)}


# Correct; no wait before the exit (the store may read `tile` after the CTA exited); no wait before the
# next tile's writes (a race with the store's read), or one that may leave the store's group pending
# (the same race); the plain wait_group.
CASES = [("ok", WAIT0, WAIT0, None), ("noend", WAIT0, "", "violation"), ("noin", "", WAIT0, "race"),
         ("keep1", WAIT1, WAIT0, "race"), ("plain", "cp.async.bulk.wait_group 0;", WAIT0, None)]


@pytest.mark.parametrize(("name", "inwait", "endwait", "answer"), CASES, ids=[c[0] for c in CASES])
def test_bulk_waits_same_outcomes_as_without_reductions(tmp_path: Path, name: str, inwait: str, endwait: str,
                                                        answer: str | None) -> None:
    on, off = differential(load(tmp_path, _kernel(2, 1, inwait, endwait)), block=2, args=_args(2))
    assert (off.verdict == "verified") == (answer is None)
    assert answer is None or answer in {str(f.kind) for f in on.findings}


def _store_in_flight(tmp_path: Path, inwait: str) -> tuple[Explorer, list[Thread], int]:
    """Thread 0 has issued its first tile's store and stands at the next tile's first load; thread 1
    too. Returns the explorer, every live agent and the store's index among them."""
    module = load(tmp_path, _kernel(2, 2, inwait))
    m = sim.launch(module, grid=1, block=2, args=_args(2))
    ex = Explorer(m, module, Options(races=False, walks=0))
    first = next(x.pc for x in ex.code.ins if x.opcode == "ld.global.u32")
    for _ in range(200):
        if m.inflight and all(t.pc == first for t in m.threads):
            break
        for t in m.threads:
            if t.status == 0 and not (m.inflight and t.pc == first):
                m.step(t)
    assert m.inflight and all(t.pc == first for t in m.threads)
    everyone = [*m.threads, *m.inflight]
    return ex, everyone, len(m.threads)  # type: ignore[return-value]


@pytest.mark.parametrize(("inwait", "shut"), [(WAIT0, True), (WAIT1, False)], ids=["read0", "read1"])
def test_the_issuer_stops_at_a_wait_for_the_seed(tmp_path: Path, inwait: str, shut: bool) -> None:
    ex, everyone, seed = _store_in_flight(tmp_path, inwait)
    futures, _, _ = ex.fp.frozen_futures(ex.m, everyone, seed, {})  # type: ignore[arg-type]
    writes = [{obj for obj, mode in f.get("sm", []) if mode == WRITE} for f in futures[:2]]
    # Thread 0 (the issuer) writes `tile` only past its wait; thread 1 only past the bar.sync 1, 2 that
    # needs thread 0: both stop while the store is frozen, unless the wait may leave its group pending.
    assert (not writes[0] and not writes[1]) == shut
    assert bool(writes[0]) != shut


def test_a_thread_blocked_at_a_wait_for_the_seed_has_no_future(tmp_path: Path) -> None:
    ex, everyone, seed = _store_in_flight(tmp_path, WAIT0)
    t0 = ex.m.threads[0]
    while t0.status == 0:  # its loads, then the wait, which blocks while the store is in flight
        ex.m.step(t0)
    futures, immortal, _ = ex.fp.frozen_futures(ex.m, everyone, seed, {})  # type: ignore[arg-type]
    assert not futures[0] and 0 in immortal  # it cannot exit before the store lands: CTA 0 lives


def test_another_issuer_alike_passes_its_own_wait(tmp_path: Path) -> None:
    """Threads 0 and 1 both store the tile (each to its own place) and wait: with thread 0's store the
    seed, thread 1's gate stays open (its own store may land), though the two threads' plans are alike
    (the fixpoint takes alike plans as one: the issuer of the seed is never grouped)."""
    text = _kernel(3, 1).replace("setp.ne.u32 %p1, %r1, 0;", "setp.gt.u32 %p1, %r1, 1;").replace(
        "add.s64 %rd3, %rd1, %rd2;", "add.s64 %rd3, %rd1, %rd2;\n\tmul.wide.u32 %rd6, %r1, 128;\n"
        "\tadd.s64 %rd3, %rd3, %rd6;")
    module = load(tmp_path, text)
    m = sim.launch(module, grid=1, block=3, args=_args(2))
    ex = Explorer(m, module, Options(races=False, walks=0))
    first = next(x.pc for x in ex.code.ins if x.opcode == "ld.global.u32")
    visits = [0] * 3  # each thread stops at its second visit of the first load: the next tile's
    for _ in range(300):
        for t in m.threads:
            if visits[t.aid] < 2 and t.status == 0:
                m.step(t)
                visits[t.aid] += t.pc == first
    assert len(m.inflight) == 2 and visits == [2, 2, 2]
    everyone = [*m.threads, *m.inflight]
    seed = next(i for i, a in enumerate(everyone) if getattr(a, "thread", None) is m.threads[0])
    futures, _, _ = ex.fp.frozen_futures(ex.m, everyone, seed, {})  # type: ignore[arg-type]
    bars = [{obj for obj, _ in f.get("bid", [])} for f in futures[:2]]
    assert not bars[0] and bars[1]  # thread 1 passes its wait and arrives at bar.sync 1, 3
