"""An exit that is not its CTA's last (another thread of the CTA is alive now) conflicts with no step
that reads the CTA's liveness (`closure._outlived_exit`): a copy's landing or pending arrive-on in it, a
bulk store reading its shared memory, a remote access to it. Where the other threads exit too before
such a step, that order ends in a violation the kernel has (`exit-with-copies-in-flight`,
`remote-cta-exited`), which the search then reports. Same verdicts and finding kinds as without
reductions on small kernels: threads that exit while bulk copies (async proxy), a cp.async with its
arrive-on, or a bulk store are in flight, with and without the wait that makes them correct, and a
2-CTA cluster whose CTA 1 may exit before CTA 0 writes its shared memory; and the exits no longer
multiply the subsets of copies landed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Options, check

from .helpers import TILE_BAR_HEAD, differential, load, outcome

# Thread 0 arms `bar` for `copies` bulk copies of 16 bytes and issues them; every thread stores a word
# of its own, then waits for the phase (`every`: every thread, `zero`: thread 0 only, `none`: nobody)
# and exits. Without a wait the CTA may exit with copies in flight.
BULK = TILE_BAR_HEAD.replace("tile[64]", "tile[128]") + """	@%p1 bra STORE;
	ld.param.u64 %rd1, [src];
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], {bytes};
{copies}STORE:
	ld.param.u64 %rd6, [out];
	mul.wide.u32 %rd7, %r1, 8;
	add.u64 %rd8, %rd6, %rd7;
	st.global.u32 [%rd8], %r1;
{wait}	exit;
}}
"""
WAIT = """W:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra W;
"""
WAITS = {"every": WAIT, "zero": "@%p1 bra DONE;\n" + WAIT + "DONE:\n", "none": ""}
ARGS: dict[str | int, object] = {"src": sim.Buffer(128), "out": sim.Buffer(512)}


def _bulk(copies: int, wait: str) -> str:
    lines = "".join(f"\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [tile+{16 * i}], "
                    f"[%rd1+{16 * i}], 16, [bar];\n" for i in range(copies))
    return BULK.format(count=1, bytes=16 * copies, copies=lines, wait=WAITS[wait])


@pytest.mark.parametrize(("threads", "copies"), [(2, 1), (3, 1), (2, 3), (3, 2)])
@pytest.mark.parametrize("wait", ["every", "zero", "none"])
def test_bulk_copies_beside_exits_same_outcomes(tmp_path: Path, threads: int, copies: int, wait: str) -> None:
    _, off = differential(load(tmp_path, _bulk(copies, wait)), block=threads, args=ARGS)
    assert outcome(off)[1] == (frozenset({"violation"}) if wait == "none" else frozenset()), outcome(off)


def test_exits_do_not_multiply_the_copies_landed(tmp_path: Path) -> None:
    """6 copies in flight beside 4, 8, 16 threads that exit: 84, 96, 120 states to the end of the search
    without the wait (273, 537, 1,065 before: at every exit the copies joined the set, and each subset of
    them landed beside each number of exits); with thread 0 waiting, verified in 28, 40, 64 states (as
    before)."""
    for threads in (4, 8, 16):
        for wait, verdict, most in (("zero", "verified", 4 * threads + 12),
                                    ("none", "finding", 3 * threads + 72)):
            r = check(load(tmp_path, _bulk(6, wait)), grid=1, block=threads, args=ARGS,
                      options=Options(walks=0, max_states=5_000))
            assert r.verdict == verdict, (threads, wait, r.verdict)
            assert r.stats.states <= most, (threads, wait, r.stats.states)


# Thread 0 copies 16 bytes with cp.async into `tile` and leaves an arrive-on on `bar` (count 1) behind
# (`.noinc`); every thread stores a word, waits for the phase as in BULK, and exits. Without a wait the
# CTA may exit with the copy or its arrive-on in flight.
CP_ASYNC = TILE_BAR_HEAD + """	@%p1 bra STORE;
	ld.param.u64 %rd1, [src];
	cvta.to.global.u64 %rd1, %rd1;
	cp.async.ca.shared.global [tile], [%rd1], 16;
	cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar];
STORE:
	ld.param.u64 %rd6, [out];
	mul.wide.u32 %rd7, %r1, 8;
	add.u64 %rd8, %rd6, %rd7;
	st.global.u32 [%rd8], %r1;
{wait}	exit;
}}
"""

# Thread 0 writes `tile` and stores it to global with a bulk copy (a bulk group), then waits until the
# copy has read it (`cp.async.bulk.wait_group.read 0`) unless `skip`; the other threads exit at once.
# Without the wait the copy may read the shared memory of a CTA whose threads have all exited.
BULK_STORE = TILE_BAR_HEAD + """	@%p1 bra DONE;
	st.shared.u32 [tile], %r1;
	fence.proxy.async.shared::cta;
	ld.param.u64 %rd6, [out];
	cvta.to.global.u64 %rd6, %rd6;
	cp.async.bulk.global.shared::cta.bulk_group [%rd6], [tile], 16;
	cp.async.bulk.commit_group;
{wait}DONE:
	exit;
}}
"""


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("wait", ["every", "zero", "none"])
def test_cp_async_arrive_on_beside_exits_same_outcomes(tmp_path: Path, threads: int, wait: str) -> None:
    _, off = differential(load(tmp_path, CP_ASYNC.format(count=1, wait=WAITS[wait])), block=threads,
                          args=ARGS)
    assert outcome(off)[1] == (frozenset({"violation"}) if wait == "none" else frozenset()), outcome(off)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("wait", [True, False])
def test_bulk_store_beside_exits_same_outcomes(tmp_path: Path, threads: int, wait: bool) -> None:
    text = BULK_STORE.format(count=1, wait="\tcp.async.bulk.wait_group.read 0;\n" if wait else "")
    _, off = differential(load(tmp_path, text), block=threads, args=ARGS)
    assert outcome(off)[1] == (frozenset() if wait else frozenset({"violation"})), outcome(off)


# A 2-CTA cluster: after a cluster barrier, thread 0 of CTA 0 writes a word of CTA 1's `tile` through
# mapa, then (with `sync`) every thread meets at a second cluster barrier before it exits. Without it
# CTA 1's threads may all exit first, and the write lands in the shared memory of an exited CTA.
CLUSTER = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.shared .align 16 .b8 tile[16];
	barrier.cluster.arrive.release;
	barrier.cluster.wait.acquire;
	mov.u32 %r0, %tid.x;
	mov.u32 %r1, %cluster_ctarank;
	or.b32 %r2, %r0, %r1;
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra DONE;
	mov.u32 %r3, tile;
	mapa.shared::cluster.u32 %r4, %r3, 1;
	st.shared::cluster.u32 [%r4], %r0;
DONE:
{sync}	exit;
}}
"""
SYNC = "\tbarrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;\n"


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sync", [True, False])
def test_remote_write_beside_the_other_ctas_exits_same_outcomes(tmp_path: Path, threads: int,
                                                               sync: bool) -> None:
    _, off = differential(load(tmp_path, CLUSTER.format(sync=SYNC if sync else "")), block=threads, grid=2,
                          cluster=2)
    assert outcome(off)[1] == (frozenset() if sync else frozenset({"violation"})), outcome(off)
