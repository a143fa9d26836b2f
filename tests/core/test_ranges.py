"""The counts of 9.7.13.15.2 at their edges: 1, 2^20-1, 2^20 and 0 for init, arrive and arrive_drop;
tx-count at +-(2^20-1) and one past; the pending count pushed over by cp.async.mbarrier.arrive; the
expected count pushed under by arrive_drop. A breach raises and leaves the barrier as it was."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import mbarrier as mb

MAX = (1 << 20) - 1   # 2^20 - 1


def ready(count: int) -> mb.Barrier:
    b = mb.Barrier("edge")
    b.init(count)
    return b


def refuses(b: mb.Barrier, cls: type[mb.Violation], call: Callable[[], object]) -> None:
    word, key = b.word, b.key()
    with pytest.raises(cls):
        call()
    assert (b.word, b.key()) == (word, key), "a refused operation changed the barrier"


# -- init (9.7.13.15.9: [1, 2^20-1]) ------------------------------------------------------------------

@pytest.mark.parametrize("count", [1, 2, MAX])
def test_init_accepts(count: int) -> None:
    b = ready(count)
    assert (b.pending, b.expected, b.tx, b.phase) == (count, count, 0, 0)


@pytest.mark.parametrize("count", [0, MAX + 1])
def test_init_refuses(count: int) -> None:
    b = mb.Barrier("edge")
    refuses(b, mb.InitCountRange, lambda: b.init(count))
    assert not b.valid


# -- arrive / arrive_drop count (9.7.13.15.13/.14) -------------------------------------------------

@pytest.mark.parametrize("method", ["arrive", "arrive_drop"])
def test_arrive_count_one(method: str) -> None:
    b = ready(2)
    getattr(b, method)(count=1)
    assert b.pending == 1 and b.expected == (1 if method == "arrive_drop" else 2)


def test_arrive_count_max_completes() -> None:
    b = ready(MAX)
    t = b.arrive(count=MAX)
    assert b.phase == 1 and b.pending == MAX and t.parity == 0


def test_arrive_count_max_no_complete_while_bytes_are_outstanding() -> None:
    b = ready(MAX)
    b.expect_tx(1)
    t = b.arrive(count=MAX, no_complete=True)     # pending 0, tx-count 1: the phase stays open
    assert (b.phase, b.pending, mb.pending_count(t)) == (0, 0, MAX)


@pytest.mark.parametrize("method", ["arrive", "arrive_drop"])
@pytest.mark.parametrize("count", [0, MAX + 1])
def test_arrive_count_refused(method: str, count: int) -> None:
    b = ready(MAX)
    refuses(b, mb.ArriveCountRange, lambda: getattr(b, method)(count=count))
    refuses(b, mb.ArriveCountRange, lambda: getattr(b, method)(count=count, no_complete=True))


def test_arrive_drop_count_max_minus_one_leaves_expected_one() -> None:
    b = ready(MAX)
    b.arrive_drop(count=MAX - 1)
    assert (b.expected, b.pending) == (1, 1)


# -- expected underflow by arrive_drop (9.7.13.15.2: expected >= 1) ------------------------------------

@pytest.mark.parametrize(("init", "count"), [(1, None), (2, 2), (MAX, MAX), (3, 3)])
def test_arrive_drop_expected_underflow(init: int, count: int | None) -> None:
    b = ready(init)
    refuses(b, mb.ExpectedUnderflow, lambda: b.arrive_drop(count))


def test_expected_underflow_when_pending_exceeds_expected() -> None:
    b = ready(1)
    b.cp_async_arrive()                      # pending 2, expected 1
    refuses(b, mb.ExpectedUnderflow, lambda: b.arrive_drop(count=2))
    refuses(b, mb.ExpectedUnderflow, lambda: b.arrive_drop())


def test_expected_underflow_by_expect_tx_form() -> None:
    b = ready(1)
    refuses(b, mb.ExpectedUnderflow, lambda: b.arrive_drop(expect_tx=8))


# -- pending (9.7.13.15.2: [0, 2^20-1]; 9.7.13.15.15) ------------------------------------------------

def test_pending_overflow_by_cp_async_arrive() -> None:
    b = ready(MAX - 1)
    b.cp_async_arrive()
    assert b.pending == MAX
    refuses(b, mb.PendingOverflow, b.cp_async_arrive)
    b.cp_async_arrive(noinc=True)            # .noinc raises nothing: no increment
    assert b.pending == MAX


def test_pending_overflow_after_partial_arrivals() -> None:
    b = ready(MAX)
    b.arrive(count=5)
    for _ in range(5):
        b.cp_async_arrive()
    refuses(b, mb.PendingOverflow, b.cp_async_arrive)


@pytest.mark.parametrize("call", [
    lambda b: b.arrive(count=3), lambda b: b.arrive_drop(count=3), lambda b: b.async_arrive(),
    lambda b: b.arrive(expect_tx=1),
])
def test_pending_underflow(call: Callable[[mb.Barrier], object]) -> None:
    b = ready(2)
    b.expect_tx(4)
    b.arrive(count=2)                        # pending 0, waiting for the 4 bytes
    refuses(b, mb.PendingUnderflow, lambda: call(b))


# -- tx-count (9.7.13.15.2: [-(2^20-1), 2^20-1]) -----------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda b: b.expect_tx(MAX), lambda b: b.arrive(expect_tx=MAX), lambda b: b.arrive_drop(expect_tx=MAX),
])
def test_tx_at_plus_max(call: Callable[[mb.Barrier], object]) -> None:
    b = ready(3)
    call(b)
    assert b.tx == MAX
    refuses(b, mb.TxCountRange, lambda: b.expect_tx(1))
    refuses(b, mb.TxCountRange, lambda: b.arrive(expect_tx=1))
    refuses(b, mb.TxCountRange, lambda: b.arrive_drop(expect_tx=1))
    b.expect_tx(0)
    b.complete_tx(2 * MAX)
    assert b.tx == -MAX


@pytest.mark.parametrize("call", [
    lambda b: b.expect_tx(MAX + 1), lambda b: b.arrive(expect_tx=MAX + 1),
    lambda b: b.arrive_drop(expect_tx=MAX + 1), lambda b: b.complete_tx(MAX + 1),
])
def test_tx_one_past_the_edge_from_zero(call: Callable[[mb.Barrier], object]) -> None:
    b = ready(3)
    refuses(b, mb.TxCountRange, lambda: call(b))


def test_tx_at_minus_max() -> None:
    b = ready(1)
    b.complete_tx(MAX)
    assert b.tx == -MAX
    refuses(b, mb.TxCountRange, lambda: b.complete_tx(1))
    b.complete_tx(0)
    b.arrive(expect_tx=MAX)                  # back to 0 with the last arrival: completes
    assert b.phase == 1 and b.tx == 0


def test_tx_edges_round_trip_through_the_word() -> None:
    for tx in (MAX, -MAX, 1, -1):
        b = ready(2)
        (b.expect_tx if tx > 0 else b.complete_tx)(abs(tx))
        again = mb.Barrier.from_word(b.word)
        assert (again.tx, again.pending, again.expected) == (tx, 2, 2)
