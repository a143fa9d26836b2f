"""cp.async with cp.async.mbarrier.arrive.noinc in the stubborn sets: the issue of a .noinc arrive-on only
reads whether the object is valid (`("mbv", ...)`), the arrive-on is a plain arrival of its own, the
issue and its thread's copies landing commute (landed copies leave the state), a tracked copy's landing
commutes with its thread's exit, and the frozen futures count no arrive-on that waits for the seed copy
(`explore.frozen`). Same verdicts and finding kinds as without reductions at 1..3 producer lanes, with
and without bugs, on one round and on two rounds of one stage."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

# Threads 0..n-1 are producer lanes, thread n the consumer. Thread 0 initializes `full` (count n, the
# arrive-ons are the expected arrivals) and `empty` (count 1); all meet at bar.sync 0. Every lane copies
# the same source word into its own word of `tile` (few instructions: the search without reductions
# interleaves every one of them).
HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<8>;
	.shared .align 8 .b8 full[8];
	.shared .align 8 .b8 empty[8];
	.shared .align 16 .b8 tile[{size}];
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra MEET;
	mbarrier.init.shared::cta.b64 [full], {count};
	mbarrier.init.shared::cta.b64 [empty], 1;
MEET:
	bar.sync 0;
	setp.eq.u32 %p1, %r0, {lanes};
	@%p1 bra CONSUME;
	ld.param.u64 %rd0, [src];
	cvta.to.global.u64 %rd0, %rd0;
	shl.b32 %r2, %r0, 2;
	mov.u32 %r3, tile;
	add.u32 %r4, %r3, %r2;
"""

# One round: each lane copies its word and arrives; the consumer waits on `full` and reads every word.
ONE = {
    None: """	cp.async.ca.shared.global [%r4], [%rd0], 4;
	cp.async.mbarrier.arrive.noinc.shared.b64 [full];
	exit;
CONSUME:
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], 0;
	@!%p2 bra WAIT;
	ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [tile];
	exit;
""",
    # Without .noinc the issue raises the pending count: the n arrive-ons never complete the phase.
    "inc": """	cp.async.ca.shared.global [%r4], [%rd0], 4;
	cp.async.mbarrier.arrive.shared.b64 [full];
	exit;
CONSUME:
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], 0;
	@!%p2 bra WAIT;
	ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [tile];
	exit;
""",
    # The consumer reads before it waits: a race with the copies.
    "early": """	cp.async.ca.shared.global [%r4], [%rd0], 4;
	cp.async.mbarrier.arrive.noinc.shared.b64 [full];
	exit;
CONSUME:
	ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [tile];
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], 0;
	@!%p2 bra WAIT;
	exit;
""",
    # The arrive comes before the copy: the arrive-on tracks nothing, the copy is untracked at the exit.
    "order": """	cp.async.mbarrier.arrive.noinc.shared.b64 [full];
	cp.async.ca.shared.global [%r4], [%rd0], 4;
	exit;
CONSUME:
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], 0;
	@!%p2 bra WAIT;
	ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [tile];
	exit;
""",
    # Each lane waits for its own copy, then arrives; nobody waits on `full`: the CTA may exit while an
    # arrive-on is still pending (its landing must not commute with the CTA's last exit).
    "gone": """	cp.async.ca.shared.global [%r4], [%rd0], 4;
	cp.async.wait_all;
	cp.async.mbarrier.arrive.noinc.shared.b64 [full];
	exit;
CONSUME:
	exit;
""",
}

# Two rounds through one stage: each lane waits for `empty` (the consumer's release), copies its word
# again and arrives; the consumer waits for each phase of `full`, reads, and releases `empty`. Bugs:
# `parity` (the consumer's second wait is for parity 0 again: it reads while the copies land), `norelease`
# (the consumer never releases: the lanes wait forever).
TWO = """	mov.u32 %r20, 0;
LOOP:
	setp.eq.u32 %p3, %r20, 0;
	@%p3 bra COPY;
EMPTY:
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [empty], 0;
	@!%p4 bra EMPTY;
COPY:
	cp.async.ca.shared.global [%r4], [%rd0], 4;
	cp.async.mbarrier.arrive.noinc.shared.b64 [full];
	add.u32 %r20, %r20, 1;
	setp.lt.u32 %p5, %r20, 2;
	@%p5 bra LOOP;
	exit;
CONSUME:
WAIT0:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], 0;
	@!%p2 bra WAIT0;
	ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [tile];
	{release}
WAIT1:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], {parity};
	@!%p2 bra WAIT1;
	ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [tile];
	exit;
"""
RELEASE = "mbarrier.arrive.shared::cta.b64 _, [empty];"
TWO_BUGS = {None: (RELEASE, 1), "parity": (RELEASE, 0), "norelease": ("", 1)}

EXPECTED = {None: None, "inc": "deadlock", "early": "race", "order": "violation", "gone": "violation",
            "count": "deadlock",
            "parity": "race", "norelease": "deadlock"}




def _kernel(rounds: int, bug: str | None, lanes: int) -> str:
    count = lanes + (1 if bug == "count" else 0)
    if rounds == 1:
        body = ONE[None if bug == "count" else bug]
    else:
        release, parity = TWO_BUGS[bug]
        body = TWO.format(release=release, parity=parity)
    return HEAD.format(count=count, lanes=lanes, size=max(16, 4 * lanes)) + body + "}\n"




# (rounds, bug, lanes, races): without reductions every instruction of every thread interleaves, and
# the race tracker's clocks keep orders apart, so the larger sizes run without race tracking.
CASES = ([(1, bug, n, True) for bug in (None, "inc", "early", "order", "gone", "count") for n in (1, 2)]
         + [(2, bug, 1, True) for bug in TWO_BUGS] + [(2, None, 2, False), (2, "norelease", 2, False)])


@pytest.mark.parametrize(("rounds", "bug", "lanes", "races"), CASES,
                         ids=[f"{r}-{b}-{n}-{'races' if x else 'noraces'}" for r, b, n, x in CASES])
def test_cpasync_arrive_same_outcomes_as_without_reductions(tmp_path: Path, rounds: int, bug: str | None,
                                                            lanes: int, races: bool) -> None:
    _, off = differential(load(tmp_path, _kernel(rounds, bug, lanes)), block=lanes + 1, races=races,
                          max_states=200_000)
    expected = EXPECTED[bug]
    assert (off.verdict == "verified") == (expected is None)
    assert expected is None or expected in outcome(off)[1]


def test_cpasync_lanes_are_linear(tmp_path: Path) -> None:
    """n lanes that each copy and arrive (.noinc), one consumer: states grow linearly with the lanes, 6n +
    7 (13, 19, 31, 55 for 1, 2, 4, 8; 199 for 32). Before these reductions: 27, 242, 5,441 for 1..3, and
    incomplete at 4 after 40 s."""
    states = [check(load(tmp_path, _kernel(1, None, n)), grid=1, block=n + 1,
                    options=Options(walks=0)).stats.states for n in (1, 2, 4, 8)]
    steps = [b - a for a, b in zip(states, states[1:], strict=False)]
    assert steps[1] == 2 * steps[0] and steps[2] == 4 * steps[0], states
