"""A lane's arrival at a warp collective runs eagerly, as part of the step before it (`Explorer.is_local`):
it commutes with every other agent's step, exits of its warp's lanes included, so the search takes no
state for it. The lanes its arrival releases run theirs too (`Explorer.settle`), a chain of collectives
included. Same verdicts and finding kinds as without reductions on small kernels of the warp-specialized
shape: lanes that exit next to collectives, bar.warp.sync ordering memory, setmaxnreg then exits (the
producer warpgroup's idle warps), each with its bugs; and no state per collective."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

HEAD = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{{
	.reg .pred %p<20>;
	.reg .b32 %r<40>;
	.shared .align 8 .b64 bar0;
	.shared .align 16 .b8 data[64];
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar0], 1;
SYNC:
	bar.sync 0;
	mov.u32 %r2, %laneid;
"""
WAIT = """W:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [bar0], {parity};
	@!%p5 bra W;"""

# Lane `leaver` exits at once (after `leave`); the others meet at two full-mask shfl (which complete at
# its exit), then lane 0 stores and arrives, the rest wait and read. Bugs: `parity` (the readers wait for
# the phase before the first: it has completed until lane 0 arrives, so a reader reads before the store (a
# race) or, after the arrival, waits for a phase nobody completes (a deadlock); `race` (the leaver
# stores the word too). With lane 0 leaving, nobody arrives: the readers wait forever.
EXITS = HEAD + """	setp.eq.u32 %p1, %r2, {leaver};
	@%p1 bra LEAVE;
	shfl.sync.idx.b32 %r3|%p3, %r2, 0, 31, -1;
	shfl.sync.idx.b32 %r4|%p4, %r3, 1, 31, -1;
	setp.ne.u32 %p2, %r2, 0;
	@%p2 bra READ;
	st.shared.u32 [data], %r4;
	mbarrier.arrive.shared::cta.b64 _, [bar0];
	exit;
READ:
""" + WAIT + """
	ld.shared.u32 %r9, [data];
	exit;
LEAVE:
	{leave}
	exit;
}}
"""
EXIT_CASES = [(1, None, set()), (2, None, set()), (2, "parity", {"race", "deadlock"}), (1, "race", {"race"}),
              (0, None, {"deadlock"}), (0, "race", {"deadlock"})]


@pytest.mark.parametrize(("leaver", "bug", "kinds"), EXIT_CASES)
def test_lanes_exiting_next_to_collectives_same_outcomes(tmp_path: Path, leaver: int, bug: str | None,
                                                         kinds: set[str]) -> None:
    leave = "st.shared.u32 [data], 1;" if bug == "race" else ""
    text = EXITS.format(leaver=leaver, leave=leave, parity=1 if bug == "parity" else 0)
    _, off = differential(load(tmp_path, text), block=3)
    assert set(outcome(off)[1]) == kinds


# Lane 0 stores, the lanes meet at bar.warp.sync (`sync`), lane 1 reads: ordered only by the
# bar.warp.sync (without it: a race). `leave`: lane 2 exits before the bar.warp.sync.
WARP_SYNC = HEAD + """	setp.eq.u32 %p6, %r2, 2;
	@%p6 {leave}
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra SYNC2;
	st.shared.u32 [data], 7;
SYNC2:
	{sync}
	setp.ne.u32 %p2, %r2, 1;
	@%p2 bra DONE;
	ld.shared.u32 %r9, [data];
DONE:
	exit;
}}
"""


@pytest.mark.parametrize("leave", [True, False])
@pytest.mark.parametrize("sync", [True, False])
def test_bar_warp_sync_orders_memory_same_outcomes(tmp_path: Path, leave: bool, sync: bool) -> None:
    text = WARP_SYNC.format(leave="exit;" if leave else "bra.uni SYNC2;",
                            sync="bar.warp.sync -1;" if sync else "")
    _, off = differential(load(tmp_path, text), block=3)
    assert outcome(off) == (("verified", frozenset()) if sync else ("finding", frozenset({"race"})))


# The warp-specialized prologue in one warp: every lane gives registers back (setmaxnreg.dec), lane 0
# then stores and arrives, lane 1 waits and reads, the other lanes exit (the producer warpgroup's idle
# warps); lanes 0 and 1 then take registers (setmaxnreg.inc, which completes without the exited lanes).
# Bugs: `differ` (lane 2 asks for another count: setmaxnreg's rule), `parity` (as above: a race or a
# deadlock).
SETMAXNREG = HEAD + """{dec}
	setp.gt.u32 %p1, %r2, 1;
	@%p1 bra IDLE;
	setp.ne.u32 %p2, %r2, 0;
	@%p2 bra READ;
	st.shared.u32 [data], 7;
	mbarrier.arrive.shared::cta.b64 _, [bar0];
	bra.uni MORE;
READ:
""" + WAIT + """
	ld.shared.u32 %r9, [data];
MORE:
	setmaxnreg.inc.sync.aligned.u32 232;
	exit;
IDLE:
	exit;
}}
"""
DIFFER = """	setp.eq.u32 %p7, %r2, 2;
	@%p7 setmaxnreg.dec.sync.aligned.u32 48;
	@!%p7 setmaxnreg.dec.sync.aligned.u32 40;"""


@pytest.mark.parametrize("lanes", [3, 4])
@pytest.mark.parametrize("bug", [None, "differ", "parity"])
def test_setmaxnreg_then_exits_same_outcomes(tmp_path: Path, lanes: int, bug: str | None) -> None:
    dec = DIFFER if bug == "differ" else "\tsetmaxnreg.dec.sync.aligned.u32 40;"
    text = SETMAXNREG.format(dec=dec, parity=1 if bug == "parity" else 0)
    _, off = differential(load(tmp_path, text), block=lanes)
    kinds = {None: set(), "differ": {"violation"}, "parity": {"race", "deadlock"}}[bug]
    assert set(outcome(off)[1]) == kinds


# A chain of collectives (shfl, vote, elect: each completes at its last lane, which releases the others
# into the next) before each lane stores its own word: nothing but the stores and exits takes a state.
CHAIN = HEAD + """	shfl.sync.idx.b32 %r3|%p3, %r2, 0, 31, -1;
	vote.sync.all.pred %p4, %p3, -1;
	elect.sync %r5|%p5, -1;
	shl.b32 %r6, %r2, 2;
	mov.u32 %r7, data;
	add.u32 %r7, %r7, %r6;
	st.shared.u32 [%r7], %r3;
	exit;
}}
"""


def test_collectives_take_no_state(tmp_path: Path) -> None:
    module = load(tmp_path, CHAIN.format())
    _, off = differential(module, block=3)
    assert outcome(off) == ("verified", frozenset())
    lanes = (4, 8, 16)
    states = [check(module, grid=1, block=n,
        options=Options(runs=False, walks=0)).stats.states for n in lanes]
    # One interleaving: the store and the exit of each lane, and the init (a state each; with a state per
    # collective arrival and per bar.sync arrival, 6 per lane: 26, 50, 98; `explore.wholebar`).
    assert states == [2 * n + 2 for n in lanes], states
