"""Warp collectives in the stubborn sets: a full-mask elect/vote/shfl/match/redux is a whole-warp meeting
(every live lane of the warp must reach it), so a lane's future stops there while the seed lane has not
arrived, as at a full bar.warp.sync; a lane waiting inside a collective whose mask leaves out the seed's
lane may still be released by the others. Same verdicts and finding kinds as without reductions, on
small kernels with and without bugs, and states linear in the number of lanes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
	.reg .pred %p<20>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<8>;
	.shared .align 8 .b64 bar0;
	.shared .align 16 .b8 data[64];
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar0], %COUNT%;
SYNC:
	bar.sync 0;
"""


def _producer(choose: str, bug: str | None, mask: str = "0xffffffff") -> tuple[str, int]:
    """One lane, chosen by a collective, stores a word and arrives; the other lanes wait and read it. Bugs:
    `parity` (the readers wait for the wrong parity: deadlock), `nowait` (a reader reads before the
    phase: race), `exit` (the chosen lane exits without arriving: deadlock). `mask`: the membermask as
    written (a register holding all ones is how nvcc writes it: `%r30` below)."""
    pick = "mov.u32 %r30, -1;\n\t" + {
        "elect": "elect.sync %r1|%p1, 0xffffffff;",
        "vote": "mov.u32 %r2, %laneid;\n\tsetp.eq.u32 %p2, %r2, 1;\n"
                "\tvote.sync.ballot.b32 %r3, %p2, 0xffffffff;\n\tshr.u32 %r4, %r3, %r2;\n"
                "\tand.b32 %r4, %r4, 1;\n\tsetp.ne.u32 %p1, %r4, 0;",
        "shfl": "mov.u32 %r2, %laneid;\n\tshfl.sync.idx.b32 %r3|%p3, %r2, 1, 31, 0xffffffff;\n"
                "\tsetp.eq.u32 %p1, %r3, %r2;",
        "redux": "mov.u32 %r2, %laneid;\n\tredux.sync.max.u32 %r3, %r2, 0xffffffff;\n"
                 "\tsetp.eq.u32 %p1, %r3, %r2;",
    }[choose].replace("0xffffffff", mask)
    arrive = "" if bug == "exit" else "mbarrier.arrive.shared::cta.b64 _, [bar0];"
    parity = 1 if bug == "parity" else 0
    wait = "" if bug == "nowait" else f"""W:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [bar0], {parity};
	@!%p5 bra W;"""
    body = f"""	{pick}
	@!%p1 bra READ;
	st.shared.u32 [data], 7;
	{arrive}
	exit;
READ:
	{wait}
	ld.shared.u32 %r9, [data];
	exit;
}}
"""
    return HEAD + body, 1


def _partial(bug: str | None) -> tuple[str, int]:
    """A collective of lanes 0 and 1 only (mask 0x3); then lane 1 stores a word and arrives, while lane 2
    waits for that arrival and reads the word. Bugs: `early` (lane 0 stores the word too: a race with lane
    2's read), `count` (the barrier expects two arrivals: deadlock)."""
    extra = "st.shared.u32 [data], 7;" if bug == "early" else ""
    body = f"""	mov.u32 %r2, %laneid;
	setp.gt.u32 %p1, %r2, 1;
	@%p1 bra READ;
	setp.ne.u32 %p2, %r2, 0;
	shfl.sync.idx.b32 %r3|%p3, %r2, 0, 31, 0x3;
	@%p2 bra ARRIVE;
	{extra}
	exit;
ARRIVE:
	st.shared.u32 [data], %r3;
	mbarrier.arrive.shared::cta.b64 _, [bar0];
	exit;
READ:
	setp.ne.u32 %p4, %r2, 2;
	@%p4 bra DONE;
W:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [bar0], 0;
	@!%p5 bra W;
	ld.shared.u32 %r9, [data];
DONE:
	exit;
}}
"""
    return HEAD + body, 2 if bug == "count" else 1






CASES = [(c, b, n) for c in ("elect", "vote", "shfl", "redux") for b in (None, "parity", "nowait", "exit")
         for n in (3,)]
CASES += [("elect", None, 4), ("elect", "nowait", 4)]


@pytest.mark.parametrize(("choose", "bug", "lanes"), CASES, ids=[f"{c}-{b}-{n}" for c, b, n in CASES])
def test_chosen_producer_same_outcomes_as_without_reductions(tmp_path: Path, choose: str, bug: str | None,
                                                             lanes: int) -> None:
    text, count = _producer(choose, bug)
    _, off = differential(load(tmp_path, text.replace("%COUNT%", str(count))), block=lanes)
    assert (off.verdict == "verified") == (bug is None)


@pytest.mark.parametrize("bug", [None, "early", "count"])
def test_a_partial_collective_same_outcomes_as_without_reductions(tmp_path: Path, bug: str | None) -> None:
    text, count = _partial(bug)
    _, off = differential(load(tmp_path, text.replace("%COUNT%", str(count))), block=4)
    assert (off.verdict == "verified") == (bug is None)


def test_an_elected_producer_is_linear_in_the_lanes(tmp_path: Path) -> None:
    """Lanes reach a full-mask elect.sync in one order only (their arrivals commute and nothing else of
    theirs can happen before the collective completes): the same few states per lane (before, the
    arrivals' subsets: 2 to the lanes)."""
    text, count = _producer("elect", None)
    module = load(tmp_path, text.replace("%COUNT%", str(count)))
    lanes = (4, 8, 16, 32)
    states = [check(module, grid=1, block=n, options=Options(walks=0)).stats.states for n in lanes]
    steps = {(b - a) // (m - n) for a, b, n, m in zip(states, states[1:], lanes, lanes[1:], strict=False)}
    assert len(steps) == 1 and steps.pop() <= 5, states


REGISTER_CASES = [(c, b) for c in ("elect", "vote") for b in (None, "parity", "nowait")]


@pytest.mark.parametrize(("choose", "bug"), REGISTER_CASES)
def test_a_mask_register_of_all_ones_same_outcomes_as_without_reductions(tmp_path: Path, choose: str,
                                                                        bug: str | None) -> None:
    text, count = _producer(choose, bug, mask="%r30")
    _, off = differential(load(tmp_path, text.replace("%COUNT%", str(count))), block=3)
    assert (off.verdict == "verified") == (bug is None)


def test_a_mask_register_of_all_ones_meets_as_the_immediate_does(tmp_path: Path) -> None:
    """`mov.u32 %r30, -1` then `elect.sync %r1|%p1, %r30`: the same states as the immediate mask at every
    lane count (before, a register mask was never a whole-warp meeting: 33 and 289 states at 4 and 8
    lanes, against 22 and 42)."""
    def states(mask: str, n: int) -> int:
        text, count = _producer("elect", None, mask=mask)
        module = load(tmp_path, text.replace("%COUNT%", str(count)))
        return check(module, grid=1, block=n, options=Options(walks=0)).stats.states
    assert [states("%r30", n) for n in (4, 8)] == [states("0xffffffff", n) for n in (4, 8)]


def _partial_shfl(source: str, mask: str) -> str:
    """Lanes 0 and 2 meet at a shfl of `mask` (0x5 at run time; `source` sets a mask register first);
    lane 0 then stores 1, and lane 1 waits forever if it reads 1."""
    return HEAD + f"""	mov.u32 %r2, %laneid;
	{source}
	setp.eq.u32 %p1, %r2, 1;
	@%p1 bra READ;
	shfl.sync.idx.b32 %r3|%p3, %r2, 0, 31, {mask};
	setp.ne.u32 %p2, %r2, 0;
	@%p2 bra DONE;
	st.shared.u32 [data], 1;
	exit;
READ:
	ld.shared.u32 %r9, [data];
	setp.ne.u32 %p4, %r9, 1;
	@%p4 bra DONE;
W:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [bar0], 0;
	@!%p5 bra W;
DONE:
	exit;
}}
"""


MASK_SOURCES = ["mov.u32 %r30, 5;", "st.shared.u32 [data+32], 5;\n\tld.shared.u32 %r30, [data+32];"]


@pytest.mark.parametrize("source", MASK_SOURCES)
def test_a_mask_register_not_all_ones_is_no_meeting(tmp_path: Path, source: str) -> None:
    """The partial shfl with its mask in a register: 0x5 (known, not all lanes) or a value loaded from
    memory (unknown to the futures; 0x5 at run time): lane 0's future is not cut at it and the deadlock
    is still found."""
    text = _partial_shfl(source, "%r30")
    _, off = differential(load(tmp_path, text.replace("%COUNT%", "1")), block=3, races=False)
    assert outcome(off) == ("finding", frozenset({"deadlock"}))


def test_a_lane_inside_a_collective_without_the_seed_still_has_a_future(tmp_path: Path) -> None:
    """Lanes 0 and 2 meet at a shfl of mask 0x5; lane 0 then stores 1, and lane 1 waits forever if it
    reads 1. While lane 0 waits inside the shfl, lane 1 (the seed: not in the mask) can read before or
    after lane 0's store: lane 2 completes the shfl without lane 1, so lane 0's future must not be cut
    there, or the order that deadlocks is never explored."""
    text = _partial_shfl("", "0x5")
    _, off = differential(load(tmp_path, text.replace("%COUNT%", "1")), block=3, races=False)
    assert outcome(off) == ("finding", frozenset({"deadlock"}))
