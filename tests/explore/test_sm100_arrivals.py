"""The checker with tcgen05.commit's arrive-on (PTX ISA 9.7.16.12.5) and clusterlaunchcontrol.try_cancel's
response and complete-tx (9.7.12.21.1): both are agents it schedules before or after what their thread
does next, with and without reductions; a wrong expect_tx deadlocks; the response is an async-proxy write
that only a wait on the mbarrier orders before a read."""

from __future__ import annotations

from tests.sim.sm100_kernels import ALL

from mbarrier import sim
from mbarrier.explore.check import Options, check
from mbarrier.ptx.parser import parse

from .helpers import differential, outcome


def _check(name: str, **launch: object) -> tuple[str, frozenset[str]]:
    on, _ = differential(parse(ALL[name], f"{name}.ptx"), args={"out": sim.Buffer(16)}, **launch)  # type: ignore[arg-type]
    return outcome(on)


def test_the_checker_runs_the_arrive_on_before_and_after_the_thread_s_next_step() -> None:
    """A thread that tests the phase once right after its commit ends stuck in one order or the other:
    the checker finds both deadlocks, so it explores both orders."""
    assert _check("commit_once", block=1) == ("verified", frozenset())
    assert _check("commit_stuck_if_done", block=1) == ("finding", frozenset({"deadlock"}))
    assert _check("commit_stuck_if_pending", block=1) == ("finding", frozenset({"deadlock"}))


def test_multicast_commit_and_cancel_verify_across_the_cluster() -> None:
    assert _check("commit_all", grid=2, cluster=2, block=1) == ("verified", frozenset())
    assert _check("cancel_all", grid=2, cluster=2, block=1) == ("verified", frozenset())


def test_try_cancel_completes_16_bytes_and_a_wrong_expect_tx_deadlocks() -> None:
    assert _check("cancel", block=1) == ("verified", frozenset())
    r = check(parse(ALL["cancel_tx32"], "cancel_tx32.ptx"), block=1, args={"out": sim.Buffer(16)})
    assert outcome(r) == ("finding", frozenset({"deadlock"}))
    assert "16 transaction bytes are still outstanding" in r.findings[0].message


def test_the_response_is_ordered_before_a_read_only_by_the_wait() -> None:
    """The async-proxy write of the response happens before a successful wait on the phase its
    complete-tx completes; a read after a bar.sync that follows only the issue races with it."""
    assert _check("cancel_read", block=2) == ("verified", frozenset())
    r = check(parse(ALL["cancel_read_bug"], "cancel_read_bug.ptx"), block=2, args={"out": sim.Buffer(16)},
              options=Options(max_findings=10))
    assert outcome(r) == ("finding", frozenset({"race"}))
    assert all("clusterlaunchcontrol.try_cancel" in f.message for f in r.findings)
