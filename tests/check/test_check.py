"""The checker's semantics: deadlocks of every waiting kind, explanations, shortest schedules, and the
reductions (same verdicts with and without them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.examples import family
from mbarrier.explore.check import Options, check

CORPUS = Path(sim.__file__).parent.parent / "examples" / "corpus"


def _module(tmp_path: Path, text: str) -> object:
    p = tmp_path / "k.ptx"
    p.write_text(text)
    return sim.load(p)


def test_spin_loop_on_a_barrier_no_one_arrives_on_is_a_deadlock_not_an_endless_search(tmp_path: Path) -> None:
    # 9.7.13.15.16: a try_wait loop whose phase never completes hangs on hardware.
    mod = _module(tmp_path, """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .pred %p<2>;
	.shared .align 8 .b64 bar;
	mbarrier.init.shared::cta.b64 [bar], 2;
	mbarrier.arrive.shared::cta.b64 _, [bar];
W:
	mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;
	@!%p1 bra W;
	exit;
}
""")
    r = check(mod, grid=1, block=1)  # type: ignore[arg-type]
    assert r.verdict == "finding"
    (f,) = r.findings
    assert f.kind == "deadlock" and f.rule == "deadlock"
    (w,) = f.waiters
    assert w.barrier == "bar" and w.wants == "parity 0" and w.line == 11
    assert w.state is not None and w.state.pending == 1 and w.state.expected == 2
    assert f.arrivers == {"bar": []}


def test_bar_sync_that_not_every_thread_reaches_is_a_deadlock(tmp_path: Path) -> None:
    mod = _module(tmp_path, """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .pred %p<2>;
	.reg .b32 %r<2>;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 bra SKIP;
	bar.sync 1, 2;
SKIP:
	exit;
}
""")
    r = check(mod, grid=1, block=2)  # type: ignore[arg-type]
    assert r.verdict == "finding"
    (f,) = r.findings
    assert f.kind == "deadlock"
    assert "bar.sync 1: 1 of 2 threads arrived" in f.waiters[0].detail


def test_deadlock_schedule_is_shortest_over_the_explored_graph() -> None:
    # The tx-count bug is visible once both copies landed: no longer schedule is reported first.
    mod = sim.load(CORPUS / "ring_tx_mismatch.ptx")
    r = check(mod, grid=1, block=3, options=Options(reductions=False, max_states=100_000))
    r2 = check(mod, grid=1, block=3)
    assert r.findings[0].kind == r2.findings[0].kind == "deadlock"
    assert len(r.findings[0].aids) == len(r2.findings[0].aids)


@pytest.mark.parametrize("bug", [None, *family.BUGS])
def test_reductions_keep_every_verdict(bug: str | None) -> None:
    mod_text = family.ring_ptx(1, 2, 1, 2, bug)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "k.ptx"
        p.write_text(mod_text)
        mod = sim.load(p)
        full = check(mod, grid=1, block=3, options=Options(reductions=False, max_states=200_000))
        red = check(mod, grid=1, block=3)
    assert full.verdict == red.verdict != "incomplete"
    assert {f.kind for f in full.findings} == {f.kind for f in red.findings}
    assert red.stats.states < full.stats.states


def test_bounds_give_incomplete_and_say_what_was_covered() -> None:
    mod = sim.load(CORPUS / "ring.ptx")
    r = check(mod, grid=1, block=3, options=Options(max_states=20))
    assert r.verdict == "incomplete"
    assert "stopped after 20 states" in r.covered
    assert r.stopped_by == "max-states"


def test_a_stop_request_ends_the_search_between_states_as_incomplete() -> None:
    mod = sim.load(CORPUS / "ring.ptx")
    polls: list[int] = []
    # polled inside long work too (explore.budget.pulse): 110 polls for the whole check, measured
    r = check(mod, grid=1, block=3, options=Options(stop=lambda: polls.append(1) or len(polls) > 20, walks=0))
    assert r.verdict == "incomplete" and r.stopped_by == "interrupt"
    assert len(polls) == 21 and 1 < r.stats.states < 44  # ring.ptx has 44 states
    assert "stopped after" in r.covered


def test_findings_found_before_a_stop_request_are_kept() -> None:
    mod = sim.load(CORPUS / "ring_wrong_parity.ptx")
    full = check(mod, grid=1, block=3)
    assert full.verdict == "finding" and full.stopped_by == ""
    polls: list[int] = []  # measured: 578 polls for the whole check; 2 findings by the 200th
    r = check(mod, grid=1, block=3,
              options=Options(stop=lambda: polls.append(1) or len(polls) > 200, walks=0))
    assert r.verdict == "finding" and r.stopped_by == "interrupt" and "stopped after" in r.covered
    assert r.findings and {f.rule for f in r.findings} <= {f.rule for f in full.findings}


def test_warp_mode_is_labelled_weaker_and_finds_the_deadlock() -> None:
    mod = sim.load(CORPUS / "exit_no_drop.ptx")
    r = check(mod, grid=1, block=3, options=Options(warp=True))
    assert r.verdict == "finding" and r.findings[0].kind == "deadlock"
    assert "weaker" in r.mode


def test_deadlock_after_an_exit_without_arrive_drop_says_so() -> None:
    # 9.7.13.15.14: a thread that leaves must arrive_drop, or later phases still count it.
    r = check(sim.load(CORPUS / "exit_no_drop.ptx"), grid=1, block=3)
    (f,) = r.findings
    assert "its missing arrivals could only have come from thread 2, which exited" in f.message
    assert "arrive_drop" in f.message
