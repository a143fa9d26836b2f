"""nvcc-compiled kernels (src/mbarrier/examples/cuda/*.cu, CUDA 13.0, sm_90): correct ones finish with
the right memory for several seeds; planted bugs end stuck with the stuck threads reported."""

from __future__ import annotations

import functools

import pytest

from mbarrier import examples, explore, sim
from mbarrier.examples.cases import CALLS, CASES, expected
from mbarrier.ptx import ast

SEEDS = (0, 1, 2, 3)


@functools.cache
def _module(name: str) -> ast.Module:
    return sim.load(examples.path(name))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", SEEDS)
def test_kernel_completes_with_the_right_memory(name: str, seed: int) -> None:
    case = CASES[name]
    m = case.launch(_module(name))
    r = explore.run(m, explore.RandomScheduler(seed, burst=1 + seed * 3))
    assert r.outcome == "exited", (r.outcome, r.message, r.stuck[:2])
    assert case.output(m) == expected(name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_completes_round_robin(name: str) -> None:
    case = CASES[name]
    m = case.launch(_module(name))
    r = explore.run(m, explore.RoundRobin())
    assert r.ok, (r.outcome, r.message)
    assert case.output(m) == expected(name)


# (bug variant, base kernel, line fragment every stuck waiter is at, barrier, a fact of its state)
BUGS = [
    ("ring_buffer_bug_parity", "ring_buffer", "try_wait.parity", "ring_bufferE", "pending"),
    ("ring_buffer_bug_bytes", "ring_buffer", "try_wait.parity", "ring_bufferE4full",
     "4 transaction bytes still outstanding"),
    ("ring_buffer_bug_count", "ring_buffer", "try_wait.parity", "ring_bufferE",
     "of 5 arrivals still pending"),
    ("cluster_handshake_bug_count", "cluster_handshake", "try_wait.parity", "cluster_handshakeE3bar",
     "1 of 65 arrivals still pending"),
    ("arrive_drop_bug_no_drop", "arrive_drop", "test_wait", "arrive_dropE3bar",
     "24 of 64 arrivals still pending"),
]


@pytest.mark.parametrize(("bug", "base", "where", "barrier", "fact"), BUGS)
@pytest.mark.parametrize("seed", (1, 7))
def test_planted_bug_ends_stuck_with_the_waiters_reported(bug: str, base: str, where: str, barrier: str,
                                                          fact: str, seed: int) -> None:
    m = CASES[base].launch(_module(bug))
    r = explore.run(m, explore.RandomScheduler(seed))
    assert r.outcome == "stuck", (r.outcome, r.message)
    live = [t.aid for t in m.threads if t.status != 3]
    assert [s.thread for s in r.stuck] == live and live
    on_mbarrier = [s for s in r.stuck if s.barrier is not None]
    assert on_mbarrier
    for s in on_mbarrier:
        assert where in s.site.text and s.reason.startswith("waits for")
    for s in r.stuck:  # the others wait behind them (bar.warp.sync of a warp with a stuck lane)
        assert s.reason.startswith("waits")
    # The barrier the bug starves is among them, in the state that shows the bug.
    assert any(barrier in (s.barrier or "") and fact in (s.state or "") for s in on_mbarrier)


def test_wrong_parity_lets_consumers_read_before_the_copy_landed() -> None:
    """The parity bug (consumers wait for parity 1 first) passes the first wait at once: 9.7.13.15.16 says
    a wait on the immediately preceding phase's parity returns True."""
    m = CASES["ring_buffer"].launch(_module("ring_buffer_bug_parity"))
    r = explore.run(m, explore.RandomScheduler(1), trace=True)
    assert r.trace is not None
    first_full_wait = next(s for s in r.trace if s.agent == "32" and "try_wait" in s.site.text)
    nxt = next(s for s in r.trace if s.agent == "32" and s.step > first_full_wait.step)
    assert "selp" in nxt.site.text  # the wait returned; thread 32 went on at once


def test_wrong_parity_can_also_break_the_wait_rule_of_each_phase() -> None:
    """On some schedules the parity bug shows first as undefined behaviour: the producer re-arms a stage
    whose previous phase no wait ever saw complete (9.7.13.15.4)."""
    m = CASES["ring_buffer"].launch(_module("ring_buffer_bug_parity"))
    r = explore.run(m, explore.RandomScheduler(0))
    assert r.outcome == "violation" and r.rule == "phase-not-waited" and r.section == "9.7.13.15.4"
    assert r.site is not None and "mbarrier.arrive.expect_tx" in r.site.text
    assert r.agent is not None and r.agent.startswith("thread 0 ")


@pytest.mark.parametrize("seed", SEEDS)
def test_calls_to_device_functions_and_local_memory(seed: int) -> None:
    """nvcc keeps __noinline__ functions as .func calls with .param arguments and results; the kernel
    also indexes a local-memory array at run time."""
    m = CALLS.launch(_module("calls"))
    r = explore.run(m, explore.RandomScheduler(seed))
    assert r.ok, (r.outcome, r.message)
    assert CALLS.output(m) == expected("calls")
    assert {t.func.name for t in m.threads} == {"calls"} and not any(t.frames for t in m.threads)


@pytest.mark.parametrize("name", ["ring_buffer", "cluster_handshake", "arrive_drop"])
def test_debug_builds_compute_what_the_optimized_builds_do(name: str) -> None:
    """nvcc -G builds of the same sources (device-function calls, local memory, no optimization): an
    independent compilation, the same memory results."""
    case = CASES[name]
    for seed in (0, 5):
        m = case.launch(_module(f"{name}.G"))
        r = explore.run(m, explore.RandomScheduler(seed))
        assert r.ok, (r.outcome, r.message)
        assert case.output(m) == expected(name)
