"""The gate fixpoint's tally of sources (`explore.frozen._add`): one instruction that acts on several
barriers (a multicast bulk copy's complete_tx on each CTA of its ctaMask) is a source for each of them,
while the same instruction met again in another segment of the thread's future is counted once."""

from __future__ import annotations

from mbarrier.explore.frozen import ARRIVE, ARRIVE_ON, INF, TX_DOWN, Segment, _add, _add_start


def _segment(*arrivals: tuple[int, int, tuple[int | None, int | None], int]) -> Segment:
    return Segment([], (), list(arrivals), False, [])


def test_multicast_copy_completes_on_every_cta_of_its_mask() -> None:
    # node 7: a multicast copy into CTAs 0 and 1, completing on `full` (offset 16) in each
    seg = _segment((7, TX_DOWN, (0, 16), 1), (7, TX_DOWN, (1, 16), 1))
    for first in (True, False):
        exact: dict[tuple[int, int | None, int | None], int] = {}
        counted: set[tuple[int, int, tuple[int | None, int | None]]] = set()
        if first:
            _add_start(seg, counted, exact, False)
        else:
            assert _add(seg, counted, exact, False) == {(0, 16), (1, 16)}
        assert exact == {(TX_DOWN, 0, 16): 1, (TX_DOWN, 1, 16): 1}


def test_an_instruction_is_counted_once_per_thread() -> None:
    start = _segment((3, ARRIVE, (0, 8), 1), (3, ARRIVE, (0, 8), 1), (5, ARRIVE, (0, 8), 2))
    behind = _segment((5, ARRIVE, (0, 8), 2), (9, ARRIVE, (0, 8), 1))  # node 5 again, past a gate
    exact: dict[tuple[int, int | None, int | None], int] = {}
    counted: set[tuple[int, int, tuple[int | None, int | None]]] = set()
    _add_start(start, counted, exact, False)
    assert exact == {(ARRIVE, 0, 8): 3}
    assert _add(behind, counted, exact, False) == {(0, 8)}
    assert exact == {(ARRIVE, 0, 8): 4}


def test_a_mute_thread_leaves_its_arrive_ons_out() -> None:
    seg = _segment((4, ARRIVE_ON, (0, 8), 1), (6, ARRIVE, (0, 8), INF))
    exact: dict[tuple[int, int | None, int | None], int] = {}
    _add_start(seg, set(), exact, True)
    assert exact == {(ARRIVE, 0, 8): INF}
    exact = {}
    _add_start(seg, set(), exact, False)
    assert exact == {(ARRIVE, 0, 8): INF}
    exact = {}
    _add_start(_segment((4, ARRIVE_ON, (0, 8), 1)), set(), exact, False)
    assert exact == {(ARRIVE, 0, 8): 1}
