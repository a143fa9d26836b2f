"""Counted named barriers (`bar.sync id, count`, `bar.arrive id, count`) in the stubborn sets: arrivals at
one id commute while none of them can complete the barrier before the others arrive (`por.Counted`), a
counted bar.sync that cannot complete before the seed moves is a gate of the frozen futures
(`explore.frozen`: a thread waiting there has no future, and none reaches past one), and whole-CTA
bar.sync still cuts futures where counted barriers use other ids. Same verdicts and finding kinds as
without reductions, with and without bugs, and states linear in the threads."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{
	.reg .pred %p<20>;
	.reg .b32 %r<40>;
	.shared .align 16 .b8 data[64];
	mov.u32 %r0, %tid.x;
	ld.param.u32 %r1, [n];
	shl.b32 %r2, %r0, 2;
	mov.u32 %r3, data;
	add.u32 %r4, %r3, %r2;
"""

KERNELS = {
    # Every thread meets at bar.sync 0, writes its word, meets at bar.sync 1, n, reads its neighbour's.
    "meet": """	bar.sync 0;
	st.shared.u32 [%r4], %r0;
	bar.sync 1, {count};
	add.u32 %r5, %r0, 1;
	rem.u32 %r5, %r5, %r1;
	shl.b32 %r5, %r5, 2;
	add.u32 %r6, %r3, %r5;
	ld.shared.u32 %r7, [%r6];
	exit;
""",
    # Threads 1.. write their word and bar.arrive 1, n; thread 0 waits (bar.sync 1, n) and reads them.
    "arrive": """	setp.eq.u32 %p0, %r0, 0;
	@%p0 bra READ;
	st.shared.u32 [%r4], %r0;
	bar.arrive 1, {count};
	exit;
READ:
	bar.sync 1, {count};
	ld.shared.u32 %r7, [data+4];
	exit;
""",
    # Two pairs, each on its own id (1 + tid / 2): write own word, meet, read the partner's. With `first`
    # 2 (1 + tid / 4) both pairs share one id: a barrier may release a thread whose partner has not
    # written yet.
    "pairs": """	shr.u32 %r8, %r0, {first};
	add.u32 %r8, %r8, 1;
	xor.b32 %r9, %r0, 1;
	shl.b32 %r9, %r9, 2;
	add.u32 %r9, %r3, %r9;
	st.shared.u32 [%r4], %r0;
	bar.sync %r8, {count};
	ld.shared.u32 %r7, [%r9];
	exit;
""",
    # Thread 1 releases twice without waiting (bar.arrive in a loop), thread 0 waits twice: with count 2
    # thread 1's two arrivals can complete the first barrier alone, and thread 0 then waits forever.
    "repeat": """	mov.u32 %r10, 0;
	setp.eq.u32 %p0, %r0, 0;
	@%p0 bra WAIT;
	setp.ne.u32 %p2, %r0, 1;
	@%p2 bra DONE;
AGAIN:
	bar.arrive 1, {count};
	add.u32 %r10, %r10, 1;
	setp.lt.u32 %p1, %r10, 2;
	@%p1 bra AGAIN;
	bra.uni DONE;
WAIT:
	bar.sync 1, {count};
	add.u32 %r10, %r10, 1;
	setp.lt.u32 %p1, %r10, 2;
	@%p1 bra WAIT;
DONE:
	exit;
""",
    # Thread 1 reads a word (0 when it runs; unknown to the analysis) and releases on either branch: once,
    # or, where `first` is the thread count, twice on the branch it takes: then it can complete barrier 1
    # alone before thread 0 arrives, and thread 0 waits forever.
    "diamond": """	setp.eq.u32 %p0, %r0, 0;
	@%p0 bra WAIT;
	setp.ne.u32 %p2, %r0, 1;
	@%p2 bra DONE;
	ld.shared.u32 %r11, [data+8];
	setp.eq.u32 %p3, %r11, 0;
	@%p3 bra ZERO;
	bar.arrive 1, {count};
	bra.uni DONE;
ZERO:
	bar.arrive 1, {count};
	setp.ne.u32 %p4, %r1, {first};
	@%p4 bra DONE;
	bar.arrive 1, {count};
	bra.uni DONE;
WAIT:
	bar.sync 1, {count};
DONE:
	exit;
""",
    # Counted and uncounted arrivals at one id: the count the first counted arrival gives decides (with
    # count 2 the two counted threads can complete it before thread 1 wrote, or without thread 2, which
    # then waits forever).
    "mixed": """	setp.lt.u32 %p0, %r0, 2;
	@%p0 bra COUNTED;
	bar.sync 0;
	bra.uni DONE;
COUNTED:
	st.shared.u32 [%r4], %r0;
	bar.sync 0, {count};
	ld.shared.u32 %r7, [data+4];
DONE:
	exit;
""",
    # A turn lock (the pingpong shape's, small): threads 0 and 1 write their words and meet at bar.sync 1, n;
    # then thread 0 hands the turn over (mbarrier at data+32, count 1); thread 2 waits for it with parity
    # `first` (1: it does not wait, and reads the words unordered) and reads both words. Thread 2's read
    # lies behind a wait whose arrival lies behind the counted barrier: while thread 1 is the seed the
    # barrier cannot complete, so thread 2 can do nothing.
    "turn": """	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra MEET;
	mbarrier.init.shared::cta.b64 [data+32], 1;
MEET:
	bar.sync 0;
	setp.eq.u32 %p1, %r0, 2;
	@%p1 bra TURN;
	st.shared.u32 [%r4], %r0;
	bar.sync 1, {count};
	@%p0 bra DONE;
	mbarrier.arrive.shared::cta.b64 _, [data+32];
	bra.uni DONE;
TURN:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [data+32], {first};
	@!%p2 bra TURN;
	ld.shared.u32 %r7, [data];
	ld.shared.u32 %r8, [data+4];
DONE:
	exit;
""",
    # The same with thread 1 releasing by bar.arrive (it does not wait): the barrier completes with its
    # arrival, which the gate must count.
    "turn_arrive": """	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra MEET;
	mbarrier.init.shared::cta.b64 [data+32], 1;
MEET:
	bar.sync 0;
	setp.eq.u32 %p1, %r0, 2;
	@%p1 bra TURN;
	st.shared.u32 [%r4], %r0;
	@%p0 bra LEAVE;
	bar.sync 1, {count};
	mbarrier.arrive.shared::cta.b64 _, [data+32];
	bra.uni DONE;
LEAVE:
	bar.arrive 1, {count};
	bra.uni DONE;
TURN:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [data+32], {first};
	@!%p2 bra TURN;
	ld.shared.u32 %r7, [data];
	ld.shared.u32 %r8, [data+4];
DONE:
	exit;
""",
    # Thread 2 arrives at id 1 without a count (bar.sync 1): with thread 0's counted arrival it can
    # complete the barrier without thread 1 (count 2), and thread 0 then reads thread 1's word unordered.
    "turn_mixed": """	setp.eq.u32 %p1, %r0, 2;
	@%p1 bra WHOLE;
	st.shared.u32 [%r4], %r0;
	bar.sync 1, {count};
	ld.shared.u32 %r7, [data+4];
	bra.uni DONE;
WHOLE:
	bar.sync 1;
DONE:
	exit;
""",
}

# (kernel, threads, count, `first` (pairs: the shift), expected: None = verified, else a finding kind)
CASES = [
    ("meet", 3, "%r1", 1, None), ("meet", 3, "4", 1, "deadlock"), ("meet", 3, "2", 1, "race"),
    ("arrive", 3, "3", 1, None), ("arrive", 3, "2", 1, "race"), ("arrive", 3, "4", 1, "deadlock"),
    ("pairs", 4, "2", 1, None), ("pairs", 4, "2", 2, "race"),
    ("repeat", 2, "2", 1, "deadlock"), ("repeat", 3, "2", 1, "deadlock"),
    ("mixed", 3, "3", 1, None), ("mixed", 3, "2", 1, "race"),
    ("diamond", 2, "2", 0, None), ("diamond", 2, "2", 2, "deadlock"),
    ("turn", 3, "2", 0, None), ("turn", 3, "2", 1, "race"), ("turn", 3, "3", 0, "deadlock"),
    ("turn_arrive", 3, "2", 0, None), ("turn_arrive", 3, "2", 1, "race"),
    ("turn_mixed", 3, "2", 0, "race"),
]




def _kernel(name: str, count: str, first: int) -> str:
    return HEAD + KERNELS[name].format(count=count, first=first) + "}\n"




@pytest.mark.parametrize(("name", "threads", "count", "first", "expected"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CASES])
def test_counted_bars_same_outcomes_as_without_reductions(tmp_path: Path, name: str, threads: int, count: str,
                                                           first: int, expected: str | None) -> None:
    _, off = differential(load(tmp_path, _kernel(name, count, first)), block=threads, args={"n": threads})
    if expected is None:
        assert off.verdict == "verified"
    else:
        assert expected in outcome(off)[1]


def test_a_counted_barrier_costs_what_a_whole_one_does(tmp_path: Path) -> None:
    """`bar.sync 0` then `bar.sync 1, n` (all n threads): one interleaving, as with two `bar.sync 0`: a
    state per thread for the counted arrival and one for the exit (before: exponential, 1,313 states for
    6 threads); the whole-CTA arrivals take none (`explore.wholebar`; before, 3 states per thread both)."""
    counted = load(tmp_path, HEAD + "\tbar.sync 0;\n\tbar.sync 1, %r1;\n\texit;\n}\n")
    whole = load(tmp_path, HEAD + "\tbar.sync 0;\n\tbar.sync 0;\n\texit;\n}\n")
    for n in (4, 8, 16):
        states = [check(k, grid=1, block=n, args={"n": n}, options=Options(runs=False, walks=0)).stats.states
                  for k in (counted, whole)]
        assert states == [2 * n + 1, n + 1], (n, states)


def test_a_counted_arrival_at_a_whole_barrier_id_lifts_the_cut(tmp_path: Path) -> None:
    """Thread 1's `bar.sync 0, 2` gives barrier 0 a count, so thread 2's `bar.sync 0` can pass without
    thread 0; then it stores 1, and thread 0 waits forever if it reads 1. Thread 2's future must not
    stop at bar.sync 0 while thread 0 is the seed, or the order that deadlocks is never explored."""
    body = """	setp.eq.u32 %p0, %r0, 0;
	@%p0 bra READ;
	setp.eq.u32 %p1, %r0, 1;
	@%p1 bra COUNTED;
	bar.sync 0;
	st.shared.u32 [data], 1;
	exit;
COUNTED:
	bar.sync 0, 2;
	exit;
READ:
	ld.shared.u32 %r7, [data];
	setp.ne.u32 %p2, %r7, 1;
	@%p2 bra DONE;
HANG:
	bar.sync 5, 2;
DONE:
	exit;
}
"""
    _, off = differential(load(tmp_path, HEAD + body), block=3, args={"n": 3}, races=False)
    assert "deadlock" in outcome(off)[1]


def test_a_thread_waiting_at_a_counted_barrier_keeps_its_future(tmp_path: Path) -> None:
    """Threads 1 and 2 meet at bar.sync 1, 2; thread 0 stores 1; thread 1 then reads the word and, if it
    was 0, waits forever. With thread 1 waiting and thread 2 about to arrive, thread 1's future is what
    follows the barrier (thread 2 completes it without the seed, thread 0): before, a thread waiting at
    any bar.sync counted as stuck there, thread 0's store ran alone first, and the deadlock was missed
    (verified; races off, where nothing else reports the unordered pair)."""
    body = """	setp.eq.u32 %p0, %r0, 0;
	@%p0 bra STORE;
	bar.sync 1, 2;
	setp.ne.u32 %p1, %r0, 1;
	@%p1 bra DONE;
	ld.shared.u32 %r7, [data];
	setp.ne.u32 %p2, %r7, 0;
	@%p2 bra DONE;
	bar.sync 5, 2;
	bra.uni DONE;
STORE:
	st.shared.u32 [data], 1;
DONE:
	exit;
}
"""
    _, off = differential(load(tmp_path, HEAD + body), block=3, args={"n": 3}, races=False)
    assert "deadlock" in outcome(off)[1]


def test_a_turn_behind_a_counted_barrier_is_one_interleaving(tmp_path: Path) -> None:
    """The turn lock (`turn`) with n - 1 threads meeting at bar.sync 1, n - 1, the last of them handing the
    turn over, and thread n - 1 waiting for it, then reading every word the others wrote. While a
    meeting thread is the seed, the barrier cannot complete, so the hand-over and the reads behind it are
    in no future: each state's set is one thread, and the search runs one interleaving, every visible
    step once (3n + 3 transitions: init, 3 per meeting thread, the hand-over, 4 for the reader; the n
    arrivals at bar.sync 0 run eagerly, `explore.wholebar`). Before, the reader's future pulled the
    hand-over thread into the sets of the first seeds (26 and 50 states for n = 5 and 9)."""
    module = load(tmp_path, _kernel("turn", "%r9", 0).replace(
        "setp.eq.u32 %p1, %r0, 2;",
        "add.u32 %r9, %r1, -1;\n\tsetp.eq.u32 %p1, %r0, %r9;\n\t"
        "add.u32 %r18, %r1, -2;\n\tsetp.ne.u32 %p0, %r0, %r18;"
    ).replace("ld.shared.u32 %r7, [data];\n\tld.shared.u32 %r8, [data+4];",
              "ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [data];\n\t"
              "ld.shared.v4.u32 {%r14, %r15, %r16, %r17}, [data+16];"))
    for n in (3, 5, 9):
        r = check(module, grid=1, block=n, args={"n": n}, options=Options(runs=False, walks=0))
        assert r.verdict == "verified", r.verdict
        assert (r.stats.states, r.stats.transitions) == (3 * n + 4, 3 * n + 3), (n, r.stats)


# One stage refilled n times, its "empty" side the named barrier 1 of every thread, used again each
# round: thread 0 fills `data` and arrives on the mbarrier at data+32 (count 1); the others spin on its
# phase (parity k & 1, or the other one with `flip`), read the word and `bar.arrive 1, count` while
# another round follows; thread 0 waits there (`bar.sync 1, count`) before it refills. `skipper` skips
# its release in round `skipk`.
REUSE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{{
	.reg .pred %p<20>;
	.reg .b32 %r<40>;
	.shared .align 16 .b8 data[64];
	mov.u32 %r0, %tid.x;
	ld.param.u32 %r1, [n];
	mov.u32 %r10, 0;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra MEET;
	mbarrier.init.shared::cta.b64 [data+32], 1;
MEET:
	bar.sync 0;
	@!%p0 bra FILL;
READ:
	and.b32 %r11, %r10, 1;
	xor.b32 %r11, %r11, {flip};
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [data+32], %r11;
	@!%p2 bra WAIT;
	ld.shared.u32 %r7, [data];
	add.u32 %r12, %r10, 1;
	setp.ge.u32 %p3, %r12, %r1;
	@%p3 bra NEXT;
	setp.eq.u32 %p6, %r0, {skipper};
	setp.eq.u32 %p7, %r10, {skipk};
	and.pred %p8, %p6, %p7;
	@%p8 bra NEXT;
	bar.arrive 1, {count};
NEXT:
	mov.u32 %r10, %r12;
	setp.lt.u32 %p4, %r10, %r1;
	@%p4 bra READ;
	exit;
FILL:
	setp.eq.u32 %p5, %r10, 0;
	@%p5 bra STORE;
	bar.sync 1, {count};
STORE:
	st.shared.u32 [data], %r10;
	mbarrier.arrive.shared::cta.b64 _, [data+32];
	add.u32 %r10, %r10, 1;
	setp.lt.u32 %p4, %r10, %r1;
	@%p4 bra FILL;
	exit;
}}
"""

# (threads, count, flip, skipper, expected kinds; none: verified), each at 3 rounds (the id used twice).
REUSE_CASES = [(2, 2, 0, 99, set()), (2, 1, 0, 99, {"race"}), (2, 2, 1, 99, {"deadlock", "race"}),
               (2, 2, 0, 1, {"deadlock"}), (3, 3, 0, 99, set()), (3, 3, 0, 2, {"deadlock"})]


@pytest.mark.parametrize(("threads", "count", "flip", "skipper", "expected"), REUSE_CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in REUSE_CASES])
def test_a_named_barrier_used_again_each_round_same_outcomes(
        tmp_path: Path, threads: int, count: int, flip: int, skipper: int, expected: set[str]) -> None:
    text = REUSE.format(count=count, flip=flip, skipper=skipper, skipk=1)
    _, off = differential(load(tmp_path, text), block=threads, args={"n": 3}, races=threads == 2)
    assert off.verdict == ("verified" if not expected else "finding")
    assert expected <= outcome(off)[1]


def test_a_named_barrier_used_again_each_round_is_one_interleaving(tmp_path: Path) -> None:
    """REUSE's correct kernel: while a reader at its spin-wait is the seed, every other reader arrives at
    barrier 1 once before it completes. Its future holds the region behind that spin-wait's own gate (it
    loops back to the wait it stands at) as well as its start, and both hold the same `bar.arrive`: it
    counted twice, so from the id's second use on (where one path of the future holds two arrivals, so
    the path bound no longer hid it) the arrivals seemed to exceed the count and each was a WRITE
    (8 threads: 2,051 and 6,037 states at 3 and 5 rounds). Counted once per node (`tally.bar_arrivals`):
    one interleaving, 3 steps per thread and round (the arrivals at the first bar.sync 0 run eagerly,
    `explore.wholebar`)."""
    module = load(tmp_path, REUSE.format(count="%r20", flip=0, skipper=99, skipk=0).replace(
        "mov.u32 %r10, 0;", "mov.u32 %r10, 0;\n\tmov.u32 %r20, %ntid.x;"))
    for threads in (3, 8):
        for n in (3, 5):
            r = check(module, grid=1, block=threads, args={"n": n}, options=Options(runs=False, walks=0))
            assert r.verdict == "verified"
            assert (r.stats.states, r.stats.transitions) == (3 * threads * n + 2,
                                                             3 * threads * n + 1), (threads, n)
