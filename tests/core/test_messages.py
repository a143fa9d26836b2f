"""Violation messages: the operation as called, the barrier by name, its state, the reason and the
section (README, "The Python API": "a message naming the operation, the barrier and its state")."""

from __future__ import annotations

import pytest

import mbarrier as mb

MAX = (1 << 20) - 1


def at_phase(phase: int, count: int, name: str = "x") -> mb.Barrier:
    b = mb.Barrier(name)
    b.init(count)
    for p in range(phase):
        b.arrive(count=count)
        assert b.test_wait(parity=p & 1)
    return b


def message(call: object) -> str:
    assert callable(call)
    with pytest.raises(mb.Violation) as e:
        call()
    return str(e.value)


def test_pending_underflow_message() -> None:
    b = at_phase(4, 3)
    b.arrive(count=2)
    assert message(lambda: b.arrive(count=3)) == (
        "arrive(count=3) on barrier 'x' at phase 4 with 1 pending arrival, expected 3: the count exceeds "
        "the pending count (9.7.13.15.2)")


def test_state_shows_tx_count_when_nonzero() -> None:
    b = at_phase(1, 2)
    b.arrive(expect_tx=100)
    assert message(lambda: b.arrive_drop(count=2)) == (
        "arrive_drop(count=2) on barrier 'x' at phase 1 with 1 pending arrival, expected 2, tx-count "
        "100: the count exceeds the pending count (9.7.13.15.2)")


def test_unnamed_barrier() -> None:
    b = mb.Barrier()
    assert message(lambda: b.expect_tx(5)) == (
        "expect_tx(count=5) on barrier (not a valid object): the object was never initialized; only "
        "mbarrier.init may touch it (9.7.13.15)")


@pytest.mark.parametrize(("call", "expected"), [
    (lambda b: b.init(2), "init(count=2) on barrier 'x' at phase 0 with 2 pending arrivals, expected 2: "
     "the location already holds a valid object; invalidate it with mbarrier.inval first (9.7.13.15.9)"),
    (lambda b: b.arrive(count=0), "arrive(count=0) on barrier 'x' at phase 0 with 2 pending arrivals, "
     "expected 2: the count must be in [1, 2^20-1] (9.7.13.15.13)"),
    (lambda b: b.arrive_drop(count=2), "arrive_drop(count=2) on barrier 'x' at phase 0 with 2 pending "
     "arrivals, expected 2: the expected count would drop to 0, below 1 (9.7.13.15.2)"),
    (lambda b: b.complete_tx(MAX + 1), "complete_tx(count=1048576) on barrier 'x' at phase 0 with 2 "
     "pending arrivals, expected 2: the tx-count would become -1048576, outside [-(2^20-1), 2^20-1] "
     "(9.7.13.15.2)"),
    (lambda b: b.arrive(count=2, no_complete=True), "arrive(count=2, no_complete=True) on barrier 'x' at "
     "phase 0 with 2 pending arrivals, expected 2: .noComplete must not complete the phase, but this "
     "arrival is the last one the phase waits for (9.7.13.15.13)"),
    (lambda b: b.test_wait(parity=7), "test_wait(parity=7) on barrier 'x' at phase 0 with 2 pending "
     "arrivals, expected 2: phaseParity must be 0 or 1 (9.7.13.15.16)"),
])
def test_messages_of_an_initialized_barrier(call: object, expected: str) -> None:
    b = at_phase(0, 2)
    assert callable(call)
    assert message(lambda: call(b)) == expected


def test_pending_overflow_message() -> None:
    b = at_phase(0, MAX)
    assert message(lambda: b.cp_async_arrive()) == (
        f"cp.async.mbarrier.arrive() on barrier 'x' at phase 0 with {MAX} pending arrivals, expected "
        f"{MAX}: the pending count would become {MAX + 1}, above 2^20-1 (9.7.13.15.15)")


def test_phase_not_waited_message_for_the_async_arrive() -> None:
    b = at_phase(0, 1)
    b.cp_async_arrive(noinc=True)
    b.arrive()
    assert message(b.async_arrive) == (
        "async arrive-on (cp.async.mbarrier.arrive) on barrier 'x' at phase 1 with 1 pending arrival, "
        "expected 1: no test_wait/try_wait returned True for phase 0 before this arrive-on in phase 1 "
        "(9.7.13.15.4)")


def test_wait_messages_name_the_token() -> None:
    b = at_phase(0, 1)
    t = b.arrive()
    b.test_wait(t)
    b.arrive()
    b.test_wait(parity=1)
    assert message(lambda: b.try_wait(t)) == (
        f"try_wait({t!r}) on barrier 'x' at phase 2 with 1 pending arrival, expected 1: the token is "
        f"from phase 0, older than the immediately preceding phase 1 (9.7.13.15.16)")
    assert repr(t) == "Token(0x7ffff80000000000, phase=0)"


def test_invalidated_barrier_message() -> None:
    b = at_phase(1, 2, "gone")
    b.inval()
    assert message(lambda: b.test_wait(parity=0)) == (
        "test_wait(parity=0) on barrier 'gone' (not a valid object): the object was invalidated; only "
        "mbarrier.init may touch it (9.7.13.15)")


def test_pending_count_message_names_the_state() -> None:
    b = at_phase(0, 2)
    t = b.arrive()
    assert message(lambda: mb.pending_count(t)) == (
        "pending_count(0x7ffff00000000000): the state is not the result of an arrive.noComplete or "
        "arrive_drop.noComplete, so its pending count is undefined (9.7.13.15.17)")
