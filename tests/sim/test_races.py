"""Race detection (PTX ISA 9.7.13.15.16, the memory model): the corpus of correct kernels and planted race
bugs under many seeds, the nvcc-compiled examples without false positives, the lifetime rules, the
switch, and `mbarrier run`'s race outcome with a replayable schedule."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.cli import main
from mbarrier.examples import cases
from mbarrier.examples.races import CASES, RaceCase
from mbarrier.explore.check import check
from mbarrier.sim.hb import ATOMIC, THREAD, WRITE, Conflict, Shadow
from mbarrier.sim.race_report import Race
from mbarrier.sim.races import RaceMachine, track

from .helpers import module

SEEDS = range(6)
CORRECT = [n for n, c in CASES.items() if c.rule is None]
BUGS = [n for n, c in CASES.items() if c.rule is not None]


def _run(case: RaceCase, seed: int, burst: int = 8) -> explore.RunResult:
    m = case.launch()
    track(m)
    return explore.run(m, explore.RandomScheduler(seed, burst=burst))


@pytest.mark.parametrize("name", CORRECT)
def test_correct_corpus_kernels_report_no_race_for_any_seed(name: str) -> None:
    case = CASES[name]
    for seed in SEEDS:
        for burst in (1, 8):
            m = case.launch()
            track(m)
            r = explore.run(m, explore.RandomScheduler(seed, burst=burst))
            assert r.outcome == "exited", (name, seed, burst, r.message)
            assert case.output(m) == list(case.expect)


@pytest.mark.parametrize("name", BUGS)
def test_each_planted_bug_is_a_race_naming_both_accesses_and_the_missing_edge(name: str) -> None:
    case = CASES[name]
    for seed in SEEDS:
        r = _run(case, seed)
        assert r.outcome == "race" and r.rule == case.rule, (name, seed, r.outcome, r.message)
        assert case.edge in r.message, r.message
        lines = r.message.splitlines()
        first, second = (line for line in lines if line.strip().startswith(("first", "second")))
        for access in (first, second):
            assert " by " in access and "line " in access and "`" in access, access  # who, where, what


def test_the_race_schedule_replays_to_the_same_race() -> None:
    case = CASES["tma_pipeline_bug_relaxed_wait"]
    r = _run(case, 3)
    m = case.launch()
    track(m)
    again = explore.run(m, explore.Replay(r.schedule))
    assert (again.outcome, again.message, again.steps) == ("race", r.message, r.steps)


@pytest.mark.parametrize("name", sorted(cases.CASES) + ["calls"])
def test_nvcc_compiled_examples_have_no_race_and_the_right_output(name: str) -> None:
    case = cases.CASES.get(name, cases.CALLS)
    for seed in range(2):
        m = case.launch()
        track(m)
        r = explore.run(m, explore.RandomScheduler(seed))
        assert r.outcome == "exited", (name, seed, r.message)
        if name in cases.CASES:
            assert case.output(m) == cases.expected(name)


def test_tracking_is_off_unless_switched_on_and_only_before_the_run() -> None:
    m = CASES["tma_pipeline_bug_relaxed_wait"].launch()
    assert type(m) is sim.Machine and not hasattr(m, "hb")
    r = explore.run(m, explore.RandomScheduler(0))
    assert r.outcome == "exited"  # the plain machine is sequentially consistent and checks no ordering
    with pytest.raises(ValueError, match="before the machine runs"):
        track(m)
    fresh = CASES["tma_pipeline"].launch()
    assert track(fresh) is track(fresh) and isinstance(fresh, RaceMachine)


def _info(agent: int, flags: int) -> tuple[int, object, int, str, int, int, int, str]:
    return (agent, None, flags, "shared", 0, 0, 4, "")


def test_shadow_orders_by_vector_clock_and_lets_atomics_meet() -> None:
    s = Shadow()
    s.access(0, 4, {1: 1}, 1, 1, _info(1, THREAD | WRITE))
    s.access(0, 4, {1: 1, 2: 1}, 2, 1, _info(2, THREAD))            # thread 2 saw the write: fine
    with pytest.raises(Conflict) as e:
        s.access(2, 2, {3: 1}, 3, 1, _info(3, THREAD | WRITE))      # thread 3 did not see the read
    assert e.value.rule == "data-race" and e.value.addr == 2
    a = Shadow()
    a.access(8, 4, {1: 1}, 1, 1, _info(1, THREAD | WRITE | ATOMIC))
    a.access(8, 4, {2: 1}, 2, 1, _info(2, THREAD | WRITE | ATOMIC))  # two atomics never race
    with pytest.raises(Conflict):
        a.access(8, 4, {3: 1}, 3, 1, _info(3, THREAD))               # a plain read against them does



def test_a_plain_access_races_with_every_unordered_atomic_not_just_the_last() -> None:
    """Two atomic writes that nothing orders, then a plain read ordered after the second only: it still
    conflicts with the first (PTX ISA 8, data race: a pair of conflicting accesses not morally strong
    and not ordered), so an atomic write keeps the atomic writes and reads it is not ordered after."""
    s = Shadow()
    s.access(0, 4, {1: 1}, 1, 1, _info(1, THREAD | WRITE | ATOMIC))
    s.access(0, 4, {2: 1}, 2, 1, _info(2, THREAD | WRITE | ATOMIC))
    with pytest.raises(Conflict) as e:
        s.access(0, 4, {2: 1, 3: 1}, 3, 1, _info(3, THREAD))        # ordered after agent 2's write only
    assert e.value.earlier[0] == 1
    r = Shadow()
    r.access(0, 4, {1: 1}, 1, 1, _info(1, THREAD | ATOMIC))         # an atomic read
    r.access(0, 4, {2: 1}, 2, 1, _info(2, THREAD | WRITE | ATOMIC))  # an atomic write not after it
    with pytest.raises(Conflict) as e:
        r.access(0, 4, {2: 1, 3: 1}, 3, 1, _info(3, THREAD | WRITE))
    assert e.value.earlier[0] == 1
    ordered = Shadow()
    ordered.access(0, 4, {1: 1}, 1, 1, _info(1, THREAD | WRITE | ATOMIC))
    ordered.access(0, 4, {1: 1, 2: 1}, 2, 1, _info(2, THREAD | WRITE | ATOMIC))  # after agent 1's
    ordered.access(0, 4, {2: 1, 3: 1}, 3, 1, _info(3, THREAD))      # so after both: no race


def test_atomic_writes_that_take_turns_leave_one_history() -> None:
    """Two agents' atomic writes of a lock, neither ordered with the other (failed `atom.cas` tries):
    whichever wrote last, the history is the set of both, so a try made again changes nothing
    (`written_by`) and the key does not move."""
    s = Shadow()
    one, two = _info(1, THREAD | WRITE | ATOMIC), _info(2, THREAD | WRITE | ATOMIC)
    s.access(0, 4, {1: 1}, 1, 1, one)
    assert s.written_by(0, 4, {1: 1}, 1, 1, one) and not s.written_by(0, 4, {2: 1}, 2, 1, two)
    s.access(0, 4, {2: 1}, 2, 1, two)
    key = s.key()
    assert s.written_by(0, 4, {1: 1}, 1, 1, one) and s.written_by(0, 4, {2: 1}, 2, 1, two)
    s.access(0, 4, {1: 1}, 1, 1, one)
    assert s.key() == key
    assert not s.written_by(0, 4, {1: 1, 2: 1}, 1, 1, one)  # having seen agent 2's, it would drop it
    assert not s.written_by(0, 4, {1: 2}, 1, 2, one)        # a later clock is a new epoch

def test_a_generic_write_needs_a_proxy_fence_before_the_async_proxy_reads_it() -> None:
    s = Shadow()
    s.access(0, 4, {1: 1}, 1, 1, _info(1, THREAD | WRITE))
    with pytest.raises(Conflict) as e:
        s.access(0, 4, {1: 1, 9: 1}, 9, 1, _info(9, 0), pvc={})
    assert e.value.rule == "proxy-fence"
    s.access(0, 4, {1: 1, 9: 1}, 9, 1, _info(9, 0), pvc={1: 1})    # a fence made it visible


_INVAL_BODY = """
    .reg .pred %p<3>; .reg .b32 %r<4>; .reg .b64 %rd<3>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SYNC;
    mbarrier.init.shared.b64 [bar], 1;
    fence.proxy.async.shared::cta;
SYNC:
    bar.sync 0;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [out];
    mbarrier.arrive.expect_tx.shared.b64 _, [bar], 16;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd1], 16, [bar];
    mbarrier.inval.shared.b64 [bar];
DONE:
    ret;
"""


def test_inval_while_a_copy_that_completes_on_it_is_in_flight() -> None:
    mod = module(_INVAL_BODY, extra=".shared .align 8 .b64 bar;\n.shared .align 16 .b8 buf[16];")
    m = sim.launch(mod, grid=1, block=2)
    track(m)
    r = explore.run(m, explore.Replay("1*4,0*12"))  # thread 0 reaches the inval before the copy lands
    assert r.outcome == "race" and r.rule == "inval-inflight", r.message
    assert "cp.async.bulk" in r.message and "complete-tx on bar" in r.message


# libcu++'s cuda::pipeline producer: cp.async, cp.async.mbarrier.arrive (without .noinc) and a plain
# arrive on a barrier of count 1; thread 1 waits for the phase, then invalidates the barrier (as the
# pipeline's destructor does). The wait saw the phase complete, so the arrive-on it counted is ordered
# before the inval (9.7.13.15.15): no race.
_ARRIVE_ON_INVAL_BODY = """
    .reg .pred %p<3>; .reg .b32 %r<4>; .reg .b64 %rd<3>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SYNC;
    mbarrier.init.shared.b64 [bar], 1;
SYNC:
    bar.sync 0;
    @%p1 bra WAIT;
    ld.param.u64 %rd1, [out];
    cp.async.ca.shared.global [buf], [%rd1], 4;
    cp.async.mbarrier.arrive.shared.b64 [bar];
    mbarrier.arrive.shared.b64 _, [bar];
    bra.uni DONE;
WAIT:
    mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    ld.shared.u32 %r2, [buf];
    mbarrier.inval.shared.b64 [bar];
DONE:
    ret;
"""


def test_an_inval_after_the_wait_is_ordered_after_the_cp_async_arrive_on_it_counted() -> None:
    mod = module(_ARRIVE_ON_INVAL_BODY, extra=".shared .align 8 .b64 bar;\n.shared .align 16 .b8 buf[16];")
    r = check(mod, grid=1, block=2)
    assert r.verdict == "verified", [f.message for f in r.findings]


_REUSE_BODY = """
    .reg .pred %p<3>; .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SYNC;
    mbarrier.init.shared.b64 [bar], 2;
SYNC:
    bar.sync 0;
    @%p1 bra LATE;
    mbarrier.arrive.shared.b64 _, [bar];
    mbarrier.inval.shared.b64 [bar];
    st.shared.u32 [bar], 7;
    bra.uni DONE;
LATE:
    mbarrier.arrive.relaxed.cta.shared.b64 _, [bar];
DONE:
    ret;
"""


def test_reusing_barrier_memory_after_inval_races_with_a_late_arrival() -> None:
    mod = module(_REUSE_BODY, extra=".shared .align 8 .b64 bar;")
    m = sim.launch(mod, grid=1, block=2)
    track(m)
    # thread 1 arrives (.relaxed: it releases nothing), then thread 0 arrives and invalidates the object
    # to reuse its bytes: nothing orders thread 1's arrival before the inval (the first plain write).
    r = explore.run(m, explore.Replay("0*5,1*6,0*10"))
    assert r.outcome == "race" and r.rule == "data-race", r.message
    assert "first:  mbarrier.arrive" in r.message and "second: mbarrier.inval" in r.message


def test_an_arrive_not_ordered_after_the_init_is_an_init_visibility_race() -> None:
    body = """
    .reg .pred %p<2>; .reg .b32 %r<2>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra LATE;
    mbarrier.init.shared.b64 [bar], 2;
    bra.uni DONE;
LATE:
    mbarrier.arrive.shared.b64 _, [bar];
DONE:
    ret;
"""
    m = sim.launch(module(body, extra=".shared .align 8 .b64 bar;"), grid=1, block=2)
    track(m)
    r = explore.run(m, explore.Replay("0*5,1*5"))
    assert r.outcome == "race" and r.rule == "mbarrier-init-visibility", r.message


def test_race_is_a_violation_with_a_section_from_the_memory_model_catalogue() -> None:
    r = _run(CASES["bulk_store_bug_no_proxy_fence"], 0)
    assert r.section is not None and "fence.proxy.async" in r.section
    assert issubclass(Race, Exception)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["run", *argv])
    return code, capsys.readouterr().out


def test_mbarrier_run_reports_races_by_default_and_not_with_no_races(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    case = CASES["cluster_exchange_bug_cta_scope"]
    argv = [str(case.path), "--grid", "2", "--block", "2", "--cluster", "2", "--seed", "1"]
    code, out = _cli(capsys, *argv, "--save-schedule", str(tmp_path / "s"))
    assert code == 1 and "RACE at step" in out and "rule data-race" in out
    assert "has .cta scope but the waiter is in CTA 0" in out
    code, again = _cli(capsys, *argv[:-2], "--schedule", f"@{tmp_path / 's'}")
    assert code == 1 and out.split("\n", 1)[1] .split("schedule:")[0] in again
    code, out = _cli(capsys, *argv, "--no-races")
    assert code == 0 and "all 4 threads exited" in out


def test_every_spec_example_runs_race_free_with_tracking_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The manual's examples of 9.7.13.15.9-.17, as test_spec_examples wraps them, with race tracking on:
    each still has the outcome the text describes (an unordered access would end the run as a race)."""
    from . import test_spec_examples as spec

    if not spec.EXAMPLES:
        pytest.skip("the spec text is not beside the checkout")
    plain = explore.run
    tracked: list[sim.Machine] = []

    def run_tracked(m: sim.Machine, *args: object, **kwargs: object) -> explore.RunResult:
        track(m)
        tracked.append(m)
        return plain(m, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(explore, "run", run_tracked)
    tests = [getattr(spec, n) for n in dir(spec) if n.startswith("test_9_")]
    assert len(tests) >= 10
    for test in tests:
        test()
    assert tracked and all(isinstance(m, RaceMachine) for m in tracked)


_FLAG = """
    .reg .pred %p<3>; .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra CONSUMER;
    st.shared.u32 [data], 5;
    {store_flag}
    bra.uni DONE;
CONSUMER:
    {load_flag}
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra CONSUMER;
    {after}
    ld.shared.u32 %r3, [data];
DONE:
    ret;
"""


@pytest.mark.parametrize(("store_flag", "load_flag", "after", "race"), [
    ("st.release.cta.shared.u32 [flag], 1;", "ld.acquire.cta.shared.u32 %r2, [flag];", "", False),
    ("fence.acq_rel.cta;\n    st.relaxed.cta.shared.u32 [flag], 1;", "ld.relaxed.cta.shared.u32 %r2, [flag];",
     "fence.acq_rel.cta;", False),
    ("st.relaxed.cta.shared.u32 [flag], 1;", "ld.relaxed.cta.shared.u32 %r2, [flag];", "", True),
    ("st.volatile.shared.u32 [flag], 1;", "ld.volatile.shared.u32 %r2, [flag];", "", True),
])
def test_release_acquire_and_fence_patterns_through_a_flag(store_flag: str, load_flag: str, after: str,
                                                           race: bool) -> None:
    """PTX memory model: st.release/ld.acquire synchronize; relaxed (or volatile) accesses do only with
    fences around them; the flag's own strong accesses never race with each other."""
    body = _FLAG.format(store_flag=store_flag, load_flag=load_flag, after=after)
    mod = module(body, extra=".shared .align 4 .b32 data;\n.shared .align 4 .b32 flag;")
    for seed in range(4):
        m = sim.launch(mod, grid=1, block=2)
        track(m)
        r = explore.run(m, explore.RandomScheduler(seed, burst=2))
        if race:
            assert r.outcome == "race" and "[data]" in r.message, r.message
        else:
            assert r.outcome == "exited", r.message


_FENCED_BARRIER = """
    .reg .pred %p<3>; .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SYNC;
    mbarrier.init.shared.b64 [bar], 1;
SYNC:
    bar.sync 0;
    @%p1 bra CONSUMER;
    st.shared.u32 [data], 5;
    {before_arrive}
    mbarrier.arrive.relaxed.cta.shared.b64 _, [bar];
    bra.uni DONE;
CONSUMER:
    mbarrier.try_wait.parity.relaxed.cta.shared.b64 %p2, [bar], 0;
    @!%p2 bra CONSUMER;
    {after_wait}
    ld.shared.u32 %r3, [data];
DONE:
    ret;
"""


@pytest.mark.parametrize(("before", "after", "race"), [
    ("fence.acq_rel.cta;", "fence.acq_rel.cta;", False),
    ("", "fence.acq_rel.cta;", True),
    ("fence.acq_rel.cta;", "", True),
])
def test_relaxed_arrive_and_wait_synchronize_only_with_fences(before: str, after: str, race: bool) -> None:
    """9.7.13.15.16: .relaxed orders nothing by itself; a release fence before the arrive and an acquire
    fence after the wait make the pair synchronize (the memory model's fence patterns)."""
    body = _FENCED_BARRIER.format(before_arrive=before, after_wait=after)
    mod = module(body, extra=".shared .align 8 .b64 bar;\n.shared .align 4 .b32 data;")
    m = sim.launch(mod, grid=1, block=2)
    track(m)
    r = explore.run(m, explore.RoundRobin())
    assert r.outcome == ("race" if race else "exited"), r.message
    if race:
        assert "is .relaxed" in r.message


def test_wait_all_orders_every_earlier_group_even_one_that_completed_before_an_earlier_wait() -> None:
    """cp.async.wait_group/wait_all (9.7.9.25): a group that had already landed when an earlier
    wait_group 1 returned is still covered by the later wait_all."""
    body = """
    .reg .b32 %r<8>; .reg .b64 %rd<2>;
    ld.param.u64 %rd0, [out];  ld.param.u64 %rd1, [src];
    cp.async.ca.shared.global [buf], [%rd1], 4;
    cp.async.commit_group;
    cp.async.cg.shared.global [buf+16], [%rd1+16], 16;
    cp.async.commit_group;
    cp.async.wait_group 1;
    ld.shared.u32 %r1, [buf];
    cp.async.wait_all;
    ld.shared.v4.u32 {%r2, %r3, %r4, %r5}, [buf+16];
    st.global.v4.u32 [%rd0], {%r1, %r2, %r3, %r4};
    ret;
"""
    mod = module(body, params=".param .u64 out, .param .u64 src", extra=".shared .align 16 .b8 buf[64];")
    # The copies land first, then the thread runs through both waits.
    m = sim.launch(mod, block=1, args={"out": sim.Buffer(16), "src": sim.Buffer.of_ints(range(1, 17))})
    track(m)
    r = explore.run(m, explore.Replay("0*5,c0,c1,0*20"))
    assert r.outcome == "exited", r.message
    m = sim.launch(mod, block=1, args={"out": sim.Buffer(16), "src": sim.Buffer.of_ints(range(1, 17))})
    track(m)
    r = explore.run(m, explore.Replay("0*5,c0,0*3,c1,0*10"))  # wait_all blocks until c1 lands
    assert r.outcome == "exited", r.message


@pytest.mark.parametrize("races", [True, False])
def test_a_bulk_copy_on_no_barrier_is_the_uninitialized_violation(
        tmp_path: Path, races: bool, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13: with race tracking, a bulk copy completing on shared memory that holds no initialized
    mbarrier raised KeyError; it is the core's `uninitialized` violation, with and without tracking."""
    corpus = Path(sim.__file__).parent.parent / "examples" / "corpus"
    text = (corpus / "ring_count_high.ptx").read_text()
    assert "mov.u32 %r6, full;" in text
    f = tmp_path / "no_full.ptx"
    f.write_text(text.replace("mov.u32 %r6, full;", ""))
    flag = [] if races else ["--no-races"]
    for command in ("run", "check"):
        assert main([command, str(f), "--grid", "1", "--block", "3", *flag]) == 1
        out = capsys.readouterr().out
        assert "uninitialized" in out and "complete_tx(count=16)" in out, out
