"""Schedules: the same seed or schedule string gives the same run, bit for bit; strings round-trip."""

from __future__ import annotations

import pytest

from mbarrier import examples, explore, sim
from mbarrier.examples.cases import CASES
from mbarrier.explore.schedule import Fingerprint, ScheduleError, decode, encode, split, stamp
from mbarrier.report.run import format_trace


def _trace(case: str, sched: explore.Scheduler,
           example: str | None = None) -> tuple[list[str], explore.RunResult]:
    c = CASES[case]
    m = c.launch(sim.load(examples.path(example or c.example)))
    r = explore.run(m, sched, trace=True)
    assert r.trace is not None
    return list(format_trace(r.trace)), r


def test_encode_merges_runs_and_decode_expands_them() -> None:
    runs = [0, 3, 0, 2, 5, 1, 7, 0, 9, 4, 9, 1]
    text = encode(runs, 8)
    assert text == "0*5,5,c1*5"
    assert list(decode(text, 8)) == [0] * 5 + [5] + [9] * 5


FP = Fingerprint(module="48fb11c0", kernel="ring", grid="1,1,1", block="3,1,1", cluster="1,1,1",
                 args="aac10290")


def test_a_stamped_schedule_round_trips_and_decodes_like_the_plain_one() -> None:
    text = stamp(FP, "0*2,c0")
    assert text == "v1 module=48fb11c0 kernel=ring grid=1,1,1 block=3,1,1 cluster=1,1,1 args=aac10290; 0*2,c0"
    assert split(text) == (FP, " 0*2,c0")
    assert split("0*2,c0") == (None, "0*2,c0")  # a plain string (as written before fingerprints)
    assert list(decode(text, 3)) == list(decode("0*2,c0", 3)) == [0, 0, 3]


def test_the_differences_of_two_fingerprints_are_named() -> None:
    other = Fingerprint(module="00000000", kernel="ring2", grid="2,1,1", block="3,1,1", cluster="1,1,1",
                        args="ffffffff")
    diff = FP.differences(other)
    assert diff == ["the module's text (digest 48fb11c0; this module's is 00000000)",
                    "kernel ring (this launch: ring2)", "grid 1,1,1 (this launch: 2,1,1)",
                    "the kernel's arguments, --arg and --dynamic-shared (digest aac10290; this launch's is "
                    "ffffffff)"]
    assert FP.differences(FP) == []


@pytest.mark.parametrize("header", ["v2 module=1 kernel=k grid=1 block=1 cluster=1 args=1",
                                    "v1 module=1 kernel=k grid=1 block=1 cluster=1",
                                    "v1 module=1 kernel=k grid=1 block=1 cluster=1 args=1 args=2",
                                    "v1 module= kernel=k grid=1 block=1 cluster=1 args=1", ""])
def test_malformed_headers_are_refused(header: str) -> None:
    with pytest.raises(ScheduleError):
        split(header + "; 0*3")


@pytest.mark.parametrize("bad", ["x", "1**2", "3,,4", "c", "99"])
def test_malformed_schedule_strings_are_refused(bad: str) -> None:
    with pytest.raises(ScheduleError):
        list(decode(bad, 64))


@pytest.mark.parametrize("case", ["ring_buffer", "cluster_handshake"])
def test_same_seed_same_trace(case: str) -> None:
    a, ra = _trace(case, explore.RandomScheduler(11))
    b, rb = _trace(case, explore.RandomScheduler(11))
    assert a == b and ra.schedule == rb.schedule
    c, _ = _trace(case, explore.RandomScheduler(12))
    assert c != a


def test_the_trace_does_not_change_the_run() -> None:
    c = CASES["pipeline"]
    fast = explore.run(c.launch(), explore.RandomScheduler(4))
    _, traced = _trace("pipeline", explore.RandomScheduler(4))
    assert fast.schedule == traced.schedule and fast.steps == traced.steps


@pytest.mark.parametrize(("case", "example"), [("arrive_drop", None),
                                              ("ring_buffer", "ring_buffer_bug_bytes"),
                                              ("ring_buffer", "ring_buffer_bug_parity")])
def test_replaying_the_schedule_string_reproduces_the_run(case: str, example: str | None) -> None:
    lines, r = _trace(case, explore.RandomScheduler(5), example)
    again, r2 = _trace(case, explore.Replay(r.schedule), example)
    assert again == lines
    assert (r2.outcome, r2.steps, r2.message, r2.stuck) == (r.outcome, r.steps, r.message, r.stuck)


def test_a_schedule_that_runs_a_blocked_thread_is_refused() -> None:
    c = CASES["arrive_drop"]
    # Thread 1 waits at bar.sync after a few steps; running it 50 steps in a row is impossible.
    r = explore.run(c.launch(), explore.Replay("1*50"))
    assert r.outcome == "error" and "cannot run" in r.message


def test_replay_says_where_the_schedule_ran_out_or_what_it_left_unused() -> None:
    c = CASES["arrive_drop"]
    full = explore.run(c.launch(), explore.RoundRobin())
    prefix = explore.Replay("0*3")
    r = explore.run(c.launch(), prefix)
    assert prefix.ended_at == 3 and r.steps == full.steps
    exact = explore.Replay(full.schedule)
    explore.run(c.launch(), exact)
    assert exact.ended_at is None and exact.unused(64) == 0
    longer = explore.Replay(full.schedule + ",0*5")
    explore.run(c.launch(), longer)
    assert longer.ended_at is None and longer.unused(64) == 5


def test_round_robin_is_deterministic_and_fair() -> None:
    a, ra = _trace("arrive_drop", explore.RoundRobin())
    b, _ = _trace("arrive_drop", explore.RoundRobin())
    assert a == b and ra.ok
    first = [line.split()[1] for line in a[:64]]
    assert first == [str(i) for i in range(64)]


def test_runs_do_not_depend_on_python_hash_randomization() -> None:
    """The same seed gives the same schedule in processes with different PYTHONHASHSEED."""
    import os
    import subprocess
    import sys
    code = ("from mbarrier import explore; from mbarrier.examples.cases import CASES; "
            "print(explore.run(CASES['cluster_handshake'].launch(), explore.RandomScheduler(5)).schedule)")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": h}).stdout for h in ("1", "2")}
    assert len(outs) == 1 and len(next(iter(outs))) > 100
