"""Copies in flight beside threads that store and exit (`closure.stubborn`): a copy that may land after
every thread of its CTA exits conflicts with each thread's exit (the CTA's shared memory is gone when the
last one exits, a finding), so a copy as the seed closes over every thread. A thread is always among the
seeds tried (one storing word after word is a set of one), the agent of the last set of one is tried
first, and a thread seed keeps its CTA alive for every other member of its set: only its own next step,
an exit, may be the CTA's last. Same verdicts and kinds as without reductions on kernels of this shape
(CuTe's wgmma+TMA tutorial issues loads past K that nobody waits for, then stores and exits), with and
without the wait that makes it correct; the stores take a state each, the copies no subsets of them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore import snapshot
from mbarrier.explore.check import Explorer, Options, check
from mbarrier.explore.walks import LateCopies, walk
from mbarrier.sim.races import track

from .helpers import TILE_BAR_HEAD, differential, load, outcome

# Thread 0 arms `bar` for two 16-byte copies from `src` and issues them; every thread stores two words of
# its own into `out`, then waits for the phase (`wait`: every thread, `zero`: thread 0 only, else none)
# and exits. Without a wait the CTA may exit with the copies in flight.
KERNEL = TILE_BAR_HEAD + """	@%p1 bra STORE;
	ld.param.u64 %rd1, [src];
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 32;
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [tile], [%rd1], 16, [bar];
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [tile+32], [%rd1+16], 16, [bar];
STORE:
	ld.param.u64 %rd6, [out];
	mul.wide.u32 %rd7, %r1, 8;
	add.u64 %rd8, %rd6, %rd7;
	st.global.u32 [%rd8], %r1;
	st.global.u32 [%rd8+4], %r1;
	{wait}
	exit;
}}
"""
WAIT = """W:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra W;"""
WAITS = {"every": WAIT, "zero": "@%p1 bra DONE;\n" + WAIT + "\nDONE:", "none": ""}
ARGS: dict[str | int, object] = {"src": sim.Buffer(64), "out": sim.Buffer(256)}


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize(("wait", "kinds"), [("every", frozenset()), ("zero", frozenset()),
                                             ("none", frozenset({"violation"}))])
def test_copies_in_flight_beside_exits_same_outcomes(tmp_path: Path, wait: str, kinds: frozenset[str],
                                                     threads: int) -> None:
    _, off = differential(load(tmp_path, KERNEL.format(count=1, wait=WAITS[wait])), block=threads, args=ARGS)
    assert outcome(off)[1] == kinds, outcome(off)


@pytest.mark.parametrize("threads", [4, 8, 16])
def test_stores_and_exits_beside_copies_stay_linear(tmp_path: Path, threads: int) -> None:
    """With thread 0 waiting: verified in 21, 33, 57 states (20, 32, 56 before). Without the wait, the
    finding in 38, 74, 146 states (before: 73, 1,041, and incomplete at 100,000: each thread's exit
    closed over the copies, the copies over every exit, and the search went through the subsets of the
    exits)."""
    for wait, verdict, most in (("zero", "verified", 3 * threads + 10), ("none", "finding", 10 * threads)):
        r = check(load(tmp_path, KERNEL.format(count=1, wait=WAITS[wait])), grid=1, block=threads, args=ARGS,
                  options=Options(walks=0, max_states=5_000))
        assert r.verdict == verdict, (wait, r.verdict)
        assert r.stats.states <= most, (wait, r.stats.states)


def test_the_late_copies_walk_keeps_them_in_flight_to_the_exits(tmp_path: Path) -> None:
    """`walks.LateCopies` lands a copy only when no thread can step: without the wait, every walk of it
    ends at the finding (the copies are still in flight when the last thread exits)."""
    module = load(tmp_path, KERNEL.format(count=1, wait=WAITS["none"]))
    m = sim.launch(module, grid=1, block=16, args=ARGS)
    track(m)
    ex = Explorer(m, module, Options(walks=0))
    init: list[int] = []
    ex.settle(init, {t.aid for t in m.threads})
    root = snapshot.save(m, ex.tokens)
    for seed in range(3):
        f, _, _ = walk(ex, root, init, LateCopies(seed), time.monotonic() + 60)
        assert f is not None and f.rule == "exit-with-copies-in-flight", f
