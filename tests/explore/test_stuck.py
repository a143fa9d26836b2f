"""One explanation of why a thread waits (`explore.stuck`) serves `mbarrier run` and `mbarrier check`, and
so does the headline of a deadlock: the mbarrier phase that starves, and of what. A schedule of each
deadlock check finds in the shape corpus replays with `run` to the same threads, words and counts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mbarrier import examples, sim
from mbarrier.cli import main
from mbarrier.examples.shapes import SHAPES, Shape
from mbarrier.explore import Outcome, Replay, run
from mbarrier.explore.check import Options, check, check_machine
from mbarrier.explore.results import Finding, FindingKind, Verdict
from mbarrier.explore.schedulers import RandomScheduler
from mbarrier.explore.stuck import Starved
from mbarrier.explore.who import Layout
from mbarrier.sim.waits import AtBar, OnMbarrier, wants

CORPUS = Path(examples.__file__).parent / "corpus"


@pytest.mark.parametrize("name", ["ring_missing_arrive", "ring_wrong_parity", "exit_no_drop"])
def test_a_deadlock_replayed_by_run_is_explained_in_the_checks_words(name: str) -> None:
    module = sim.load(CORPUS / f"{name}.ptx")
    r = check(module, grid=1, block=3, options=Options(max_states=50_000))
    assert r.verdict == Verdict.FINDING and r.verdict == "finding"
    f = next(f for f in r.findings if f.kind == FindingKind.DEADLOCK)
    replay = run(sim.launch(module, grid=1, block=3), Replay(f.schedule))
    assert replay.outcome == Outcome.STUCK and replay.outcome == "stuck"
    by_check = {(w.thread, w.line, w.detail) for w in f.waiters}
    by_run = {(s.thread, s.site.line, s.reason) for s in replay.stuck}
    assert by_check == by_run
    assert all(w.detail.startswith("waits") for w in f.waiters)


@pytest.mark.parametrize("name", ["ring_missing_arrive", "exit_no_drop"])
def test_run_and_check_print_a_waiting_thread_in_the_same_lines(name: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The text of `mbarrier run` (a stuck run) and of `mbarrier check` (a deadlock's waiters): where each
    thread waits, why, and the awaited mbarrier's state, line for line the same."""
    path = str(CORPUS / f"{name}.ptx")
    assert main(["check", path, "--grid", "1", "--block", "3"]) == 1
    by_check = capsys.readouterr().out.splitlines()
    assert main(["run", path, "--grid", "1", "--block", "3"]) == 1
    by_run = capsys.readouterr().out.splitlines()
    at = [i for i, line in enumerate(by_run) if " at line " in line and line.startswith("  thread")]
    assert at
    for i in at:
        block = by_run[i:i + 3]  # where, why, the mbarrier's state
        assert block[1].startswith("      waits for ") and ": phase " in block[2]
        start = by_check.index(block[0])
        assert by_check[start:start + 3] == block


def test_wait_reasons_are_values_compared_by_what_releases_the_thread() -> None:
    assert AtBar(1) == AtBar(1) != AtBar(2)
    # The operand is left out: the object's state already decides the wait.
    assert OnMbarrier(4, 0, 8, True, 0) == OnMbarrier(4, 0, 8, True, 1)
    assert hash(OnMbarrier(4, 0, 8, True, 0)) == hash(OnMbarrier(4, 0, 8, False, 7))
    assert wants(True, 3) == "parity 1"
    assert wants(False, 0x20) == "the phase of token 0x0000000000000020"


# The planted bugs of the shape corpus that deadlock, each at its smallest launch (one consumer warp, or
# warpgroup; three iterations where `empty` must complete a phase first, two stages; four where the
# named barrier's skipped release is the second one), and the headline
# that must name the starved barrier and its counts: (block, trips, barrier, CTA, what is missing, the
# phase, expected arrivals, arrivals that came, transaction bytes outstanding, the words).
HEADLINES = {
    "ring_bug_count": (
        64, 3, "_ZZ4ringE5empty", 0, "arrivals", 0, 2, 1, 0,
        "mbarrier _ZZ4ringE5empty (shared 0x110, CTA 0) expects 2 arrivals in phase 0 but only 1 came, and "
        "no other can come; thread 32 waits for it"),
    "ring_bug_bytes": (
        64, 1, "_ZZ4ringE4full", 0, "bytes", 0, 1, 1, 4,
        "mbarrier _ZZ4ringE4full (shared 0x100, CTA 0) got its one expected arrival of phase 0 but 4 "
        "transaction bytes are still outstanding, and no copy in flight will complete them; threads 0-31 "
        "(warp 0) wait for it"),
    "warpgroup_bug_count": (
        256, 3, "_ZZ9warpgroupE5empty", 0, "arrivals", 0, 3, 1, 0,
        "mbarrier _ZZ9warpgroupE5empty (shared 0x110, CTA 0) expects 3 arrivals in phase 0 but only 1 came, "
        "and no other can come; thread 0 waits for it"),
    "cluster_bug_mask": (
        64, 1, "_ZZ7clusterE4full", 1, "bytes", 0, 1, 1, 128,
        "mbarrier _ZZ7clusterE4full (shared 0x100, CTA 1) got its one expected arrival of phase 0 but 128 "
        "transaction bytes are still outstanding, and no copy in flight will complete them; threads 64-95 "
        "(CTA 1, warp 0) wait for it"),
    "named_bug_skip": (
        64, 4, "bar.sync 2", 0, "arrivals", 0, 64, 32, 0,
        "bar.sync 2 (CTA 0) expects 64 threads but only 32 arrived, and no other can come; threads 32-63 "
        "(warp 1) wait at it"),
    "branch_bug_skip": (
        64, 3, "_ZZ6branchE5empty", 0, "no arrival", 0, 1, 0, 0,
        "mbarrier _ZZ6branchE5empty (shared 0x110, CTA 0) expects 1 arrival in phase 0 but none came, and no "
        "other can come; thread 32 waits for it"),
    "cpasync_bug_inc": (
        64, 1, "_ZZ7cpasyncE4full", 0, "no arrival", 0, 32, 0, 0,
        "mbarrier _ZZ7cpasyncE4full (shared 0x100, CTA 0) expects 32 arrivals in phase 0 but none came, and "
        "no other can come; threads 0-31 (warp 0) wait for it"),
}


def _shape(name: str) -> Shape:
    block, trips = HEADLINES[name][:2]
    s = SHAPES[name]
    return replace(s.sized(*[trips] * len(s.trips)), block=block)


@pytest.fixture(scope="module")
def shape_deadlocks() -> dict[str, Finding]:
    """Each bug's deadlock as check reports it (random walks first: the first finding ends the check)."""
    out = {}
    for name in HEADLINES:
        s = _shape(name)
        opts = Options(followup=0.0, max_findings=1, walk_first=10.0)  # the first walk's finding ends it
        r = check_machine(s.launch(), sim.load(s.path), opts)
        assert r.verdict == Verdict.FINDING, (name, r.verdict, r.covered)
        (out[name],) = r.findings
    return out


@pytest.mark.parametrize("name", HEADLINES)
def test_a_shape_deadlock_is_headlined_by_the_barrier_and_count_that_are_wrong(
        name: str, shape_deadlocks: dict[str, Finding]) -> None:
    _, _, barrier, cta, missing, phase, expected, arrived, tx, words = HEADLINES[name]
    f = shape_deadlocks[name]
    assert f.kind == FindingKind.DEADLOCK
    top = f.starved[0]
    assert (top.barrier, top.cta, top.short, top.phase, top.expected, top.arrived, top.tx) == (
        barrier, cta, missing, phase, expected, arrived, tx)
    assert f.message.split(": ", 1)[1].startswith(words)
    # Threads that exited without a barrier ever counting them (the producer warp's idle lanes) are not
    # blamed; only cpasync's producer lanes, the arrivals `full` counts on, are named as gone.
    assert ("exited" in f.message) == (name == "cpasync_bug_inc")


@pytest.mark.parametrize("name", HEADLINES)
def test_a_shape_deadlock_replayed_by_run_stops_where_check_says_in_the_same_words(
        name: str, shape_deadlocks: dict[str, Finding], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # check's schedule, saved to a file, replayed by `mbarrier run --schedule @FILE` (as a user would).
    f = shape_deadlocks[name]
    s = _shape(name)
    saved = tmp_path / "schedule.txt"
    saved.write_text(f.schedule)
    assert main(["run", str(s.path), *s.words(), "--schedule", f"@{saved}", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    # Past the schedule, the spinning threads spin until the simulator parks them (the checker blocks them
    # before their first failed try): a few steps more, the same state.
    assert d["outcome"] == "stuck" and d["steps"] >= len(f.aids)
    assert d["message"] == f.message.split(": ", 1)[1]
    assert [x["summary"] for x in d["starved"]] == [x.words(f.layout or Layout(0, ())) for x in f.starved]
    assert {(w.thread, w.line, w.detail) for w in f.waiters} == {(x["thread"], x["line"], x["reason"])
                                                                  for x in d["stuck"]}


@pytest.mark.parametrize("name", HEADLINES)
def test_a_random_run_into_a_shape_deadlock_gets_the_same_headline(name: str) -> None:
    r = run(_shape(name).launch(), RandomScheduler(1))
    assert r.outcome == Outcome.STUCK
    assert r.message.startswith(HEADLINES[name][-1])


def test_a_thread_that_exited_is_named_only_when_no_thread_left_could_arrive() -> None:
    # exit_no_drop: thread 2 leaves without arrive_drop and the two others wait for the phase that
    # counts it; in the ring, the producer warp's 31 idle lanes exit at once and are never counted.
    module = sim.load(CORPUS / "exit_no_drop.ptx")
    r = run(sim.launch(module, grid=1, block=3), RandomScheduler(0))
    assert r.outcome == Outcome.STUCK
    assert r.message.endswith("; every thread left waits for it, so its missing arrivals could only have "
                              "come from thread 2, which exited (a thread counted in the expected arrivals "
                              "must mbarrier.arrive_drop before it leaves)")
    ring = run(_shape("ring_bug_count").launch(), RandomScheduler(0))
    assert ring.outcome == Outcome.STUCK and "exited" not in ring.message


def test_the_words_of_each_way_a_phase_starves() -> None:
    def one(**kw: object) -> str:
        base: dict[str, object] = dict(waits_on="mbarrier", barrier="full", address=0x20, cta=0, cta_name="0",
                                       valid=True, phase=3, expected=2, pending=0, tx=0, landing=0,
                                       waiters=(1, 2))
        return Starved(**(base | kw)).words(Layout(4, ("0",)))  # type: ignore[arg-type]

    obj = "mbarrier full (shared 0x20, CTA 0)"
    assert one(tx=8, landing=4) == (f"{obj} got all 2 expected arrivals of phase 3 but 8 transaction bytes "
                                    "are still outstanding, and the copies in flight complete only 4; "
                                    "threads 1-2 wait for it")
    assert one(tx=-4).startswith(f"{obj} got all its expected arrivals of phase 3 but its copies delivered "
                                 "4 transaction bytes more than expect_tx announced")
    assert one(pending=1, tx=16).startswith(f"{obj} expects 2 arrivals in phase 3 but only 1 came, and no "
                                            "other can come (16 transaction bytes are outstanding too)")
    assert one(valid=False).startswith(f"{obj} is not an initialized object")
    assert one(waits_on="bar", barrier="bar.sync 1", address=1, expected=4, pending=1) == (
        "bar.sync 1 (CTA 0) expects 4 threads but only 3 arrived, and no other can come; threads 1-2 wait "
        "at it")


def test_who_could_still_arrive_reads_each_threads_unrolled_future(
        shape_deadlocks: dict[str, Finding]) -> None:
    """The ring's consumer warp releases `empty` from lane 0 alone (its guard follows from the lane's
    registers), and the producer thread is the only one that arrives on `full`: the report names exactly
    those, not the 31 lanes whose code skips the release."""
    f = shape_deadlocks["ring_bug_count"]
    (on_empty,) = f.arrivers["_ZZ4ringE5empty"]
    (on_full,) = f.arrivers["_ZZ4ringE4full"]
    assert on_empty.startswith("thread 0 at line ") and "but waits itself" in on_empty
    assert on_full.startswith("thread 32 at line ") and "but waits itself" in on_full
