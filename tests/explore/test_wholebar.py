"""An arrival at a whole-CTA bar.sync runs eagerly where no counted bar.sync/bar.arrive and no bar.arrive
can use its id (`explore.wholebar`), and only there. Same verdicts and finding kinds as without
reductions on small kernels: bar.sync ordering memory, threads that exit before it, a counted barrier on
another id (immediate, or in a register whose value the futures know or do not), a counted barrier or a
bar.arrive on the same id; each with its bug."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Explorer, Options, check

from .helpers import differential, load, outcome

# Thread 0 stores, everyone meets at `bar.sync 0` (`sync`; without it: a race), thread 1 reads. Thread 2
# exits first where `leave`. Then threads 0 and 1 meet at `{named}` (a second barrier), and thread 1 reads
# what thread 0 stored after the first one (`named` empty: a race).
KERNEL = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<4>;
	.shared .align 16 .b8 data[64];
	mov.u32 %r0, %tid.x;
	{idsource}
	setp.eq.u32 %p6, %r0, 2;
	@%p6 {leave}
	setp.ne.u32 %p1, %r0, 0;
	@%p1 bra SYNC;
	st.shared.u32 [data], 7;
SYNC:
	{sync}
	setp.gt.u32 %p2, %r0, 1;
	@%p2 bra DONE;
	setp.ne.u32 %p3, %r0, 1;
	@%p3 bra SECOND;
	ld.shared.u32 %r9, [data];
SECOND:
	@!%p3 bra WAIT;
	st.shared.u32 [data+4], 8;
WAIT:
	{named}
	@!%p3 ld.shared.u32 %r9, [data+4];
DONE:
	exit;
}}
"""
NAMED = {
    "imm": "bar.sync 1, 2;",           # a counted barrier on another id
    "reg": "bar.sync %r5, 2;",         # its id in a register the futures know (1)
    "loaded": "bar.sync %r5, 2;",      # its id from memory (1 at run time: 0 + 1; unknown to the futures)
    "same": "bar.sync 0, 2;",          # a counted barrier on the same id as the whole-CTA one
    "arrive": "@%p3 bar.arrive 0, 2;\n\t@!%p3 bar.sync 0, 2;",  # thread 0 arrives, thread 1 waits: same id
    "none": "",                        # nothing orders thread 0's second store before thread 1's read
}
ID_SOURCES = {
    "reg": "mov.u32 %r5, 1;",
    "loaded": "ld.param.u64 %rd1, [out];\n\tld.global.u32 %r6, [%rd1];\n\tadd.u32 %r5, %r6, 1;",
}
CASES = [(named, leave, sync) for named in NAMED for leave in (False, True) for sync in (True, False)]


def _text(named: str, leave: bool, sync: bool) -> str:
    return KERNEL.format(idsource=ID_SOURCES.get(named, ""), leave="exit;" if leave else "bra.uni SYNC;",
                         sync="bar.sync 0;" if sync else "", named=NAMED[named])


@pytest.mark.parametrize(("named", "leave", "sync"), CASES)
def test_same_outcomes_as_without_reductions(tmp_path: Path, named: str, leave: bool, sync: bool) -> None:
    _, off = differential(load(tmp_path, _text(named, leave, sync)), block=3)
    racy = not sync or named == "none"
    assert ("race" in outcome(off)[1]) == racy


def _eager_at_bar_sync_0(tmp_path: Path, named: str) -> bool:
    """Whether thread 1's arrival at `bar.sync 0` runs eagerly (every thread where it stands first)."""
    module = load(tmp_path, _text(named, False, True))
    m = sim.launch(module, grid=1, block=3)
    ex = Explorer(m, module, Options(walks=0))
    t = m.threads[1]
    while ex.ins(t).op != "bar.sync":
        ex.step(t, [])
    return ex.is_local(t)


@pytest.mark.parametrize(("named", "eager"), [("imm", True), ("reg", True), ("none", True), ("loaded", False),
                                              ("same", False), ("arrive", False)])
def test_eager_only_where_no_counted_arrival_can_use_the_id(tmp_path: Path, named: str, eager: bool) -> None:
    assert _eager_at_bar_sync_0(tmp_path, named) == eager


def test_the_last_arrival_is_eager_whatever_the_futures_behind_the_barrier(tmp_path: Path) -> None:
    """A thread waiting at `bar.sync 0` takes no step before it completes, so its future (thread 0's
    counted `bar.sync 0, 2` behind it, `same`) does not keep thread 1's arrival from running eagerly;
    while thread 0 has not arrived, it does (thread 2's future never uses id 0)."""
    module = load(tmp_path, _text("same", False, True))
    m = sim.launch(module, grid=1, block=3)
    ex = Explorer(m, module, Options(walks=0))
    t0, t1 = m.threads[:2]
    for t in (t0, t1):
        while ex.ins(t).op != "bar.sync":
            ex.step(t, [])
    assert not ex.is_local(t1)
    ex.step(t0, [])
    assert t0.wait is not None and ex.is_local(t1)


def test_whole_cta_arrivals_take_no_state(tmp_path: Path) -> None:
    """The three arrivals at `bar.sync 0` take no state where the named barrier is on id 1, and do where
    it is on id 0 (the same kernel otherwise)."""
    def states(named: str) -> int:
        module = load(tmp_path, _text(named, False, True), named)
        return check(module, grid=1, block=3, options=Options(runs=False, walks=0)).stats.states
    assert states("same") - states("imm") == 3


# Lanes 0 and 1 take a barrier id from a shfl (lane 1's 0; lane 1 stores first, so lane 0 waits inside
# the shfl with its old value, 5, in the register); lane 0 then passes `bar.sync id, 1`, lane 1 meets
# lane 2 at `bar.sync 1, 2`, and lane 2 passes `bar.sync 0` (no count) first. Where lane 2 arrives at
# barrier 0 before lane 0, lane 0's counted arrival completes it for both; where lane 0 comes first,
# lane 2 waits there for lane 1, which waits for lane 2 at barrier 1: a deadlock. Had lane 2's arrival
# run eagerly while lane 0 is inside the shfl (its future read from the old value: barrier 5), only the
# first order would be explored: VERIFIED, wrongly.
STALE = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{
	.reg .pred %p<8>;
	.reg .b32 %r<16>;
	.shared .align 16 .b8 data[64];
	mov.u32 %r0, %tid.x;
	mov.u32 %r5, 5;
	setp.eq.u32 %p1, %r0, 2;
	@%p1 bra WHOLE;
	setp.eq.u32 %p2, %r0, 1;
	@!%p2 bra SHFL;
	st.shared.u32 [data+8], 1;
SHFL:
	mov.u32 %r6, 0;
	shfl.sync.idx.b32 %r5|%p3, %r6, 1, 31, 3;
	@%p2 bra MEET;
	bar.sync %r5, 1;
	exit;
MEET:
	bar.sync 1, 2;
	exit;
WHOLE:
	bar.sync 0;
	bar.sync 1, 2;
	exit;
}
"""


def test_a_lane_inside_a_collective_may_use_any_id(tmp_path: Path) -> None:
    on, _ = differential(load(tmp_path, STALE), block=3)
    assert outcome(on) == ("finding", frozenset({"deadlock"}))
