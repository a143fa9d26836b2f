"""The gate fixpoint's tally of sources (`explore.frozen._add`): one instruction that acts on several
barriers (a multicast bulk copy's complete_tx on each CTA of its ctaMask) is a source for each of them,
while the same instruction met again in another segment of the thread's future is counted once. And its
test of a gate (`explore.frozen._passable`): the bytes the sources can still move against the tx-count."""

from __future__ import annotations

from pathlib import Path

from mbarrier import sim
from mbarrier.core import Barrier
from mbarrier.explore.frozen import (
    ARRIVE,
    ARRIVE_ON,
    INF,
    PLAIN,
    TX_DOWN,
    TX_UP,
    XMIN,
    Gate,
    Segment,
    _add,
    _add_start,
    _passable,
)

from .helpers import load

EMPTY = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"


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
    assert exact == {(ARRIVE, 0, 8): INF, (PLAIN, 0, 8): 1}  # an arrive-on is a plain arrival
    exact = {}
    _add_start(_segment((4, ARRIVE_ON, (0, 8), 1)), set(), exact, False)
    assert exact == {(ARRIVE, 0, 8): 1, (PLAIN, 0, 8): 1}


def test_the_fewest_bytes_of_an_arrive_expect_tx_are_kept_not_summed() -> None:
    start = _segment((3, XMIN, (0, 8), 256), (4, XMIN, (0, 8), 128))
    exact: dict[tuple[int, int | None, int | None], int] = {}
    counted: set[tuple[int, int, tuple[int | None, int | None]]] = set()
    _add_start(start, counted, exact, False)
    assert exact == {(XMIN, 0, 8): 128}
    assert _add(_segment((9, XMIN, (0, 8), 64)), counted, exact, False) == {(0, 8)}
    assert exact == {(XMIN, 0, 8): 64}


def test_a_gate_opens_only_when_the_sources_bring_the_bytes_its_phase_still_needs(tmp_path: Path) -> None:
    """9.7.13.15.6: a phase completes when its pending count and its tx-count are both 0. A phase armed for
    256 bytes (two multicast halves of 128) stays closed with one half outside the frozen seed."""
    m = sim.launch(load(tmp_path, EMPTY))
    armed = Barrier()
    armed.init(1)
    armed.arrive(expect_tx=256)              # pending 0, tx-count 256
    early = Barrier()
    early.init(1)
    early.complete_tx(64)                    # a copy landed first: pending 1, tx-count -64
    m.ctas[0].barriers.update({16: armed, 24: early})
    full, ahead = Gate(0, 0, 0, 16, 0), Gate(0, 0, 0, 24, 0)
    assert not _passable(m, full, {})
    assert not _passable(m, full, {(TX_DOWN, 0, 16): 128})
    assert _passable(m, full, {(TX_DOWN, 0, 16): 256})
    assert _passable(m, full, {(TX_DOWN, 0, 16): 128, (TX_DOWN, 0, None): 128})  # an unknown offset counts
    assert _passable(m, full, {(TX_DOWN, None, None): INF})
    assert not _passable(m, full, {(TX_UP, 0, 16): INF})  # bytes the wrong way
    assert _passable(m, Gate(0, 0, 0, 16, 1), {})         # (a): the other parity passes now
    assert not _passable(m, ahead, {(ARRIVE, 0, 24): 1, (TX_UP, 0, 24): 32})
    assert not _passable(m, ahead, {(TX_UP, 0, 24): 64})  # no arrival
    assert _passable(m, ahead, {(ARRIVE, 0, 24): 1, (TX_UP, 0, 24): 64})


def test_a_phase_that_must_take_an_arrive_expect_tx_needs_its_bytes_too(tmp_path: Path) -> None:
    """The last arrival of a phase whose tx-count is 0 now may be an arrive.expect_tx: it raises the
    tx-count by its bytes (9.7.13.15.13: the expect-tx before the arrive-on), which must then land before
    the phase completes (9.7.13.15.6). One half of a 2-CTA multicast is not enough; a plain arrival is."""
    m = sim.launch(load(tmp_path, EMPTY))
    idle = Barrier()
    idle.init(1)                             # pending 1, tx-count 0
    m.ctas[0].barriers[16] = idle
    full = Gate(0, 0, 0, 16, 0)
    arm = {(ARRIVE, 0, 16): 1, (TX_UP, 0, 16): 256, (XMIN, 0, 16): 256}
    assert not _passable(m, full, arm)
    assert not _passable(m, full, arm | {(TX_DOWN, 0, 16): 128})
    assert _passable(m, full, arm | {(TX_DOWN, 0, 16): 256})
    assert _passable(m, full, arm | {(TX_DOWN, 0, 16): 128, (ARRIVE, 0, None): 1, (PLAIN, 0, None): 1})
    assert _passable(m, full, arm | {(TX_DOWN, 0, 16): 128, (XMIN, None, None): 0})  # unknown bytes
    # (e): the phase after this one too: two arrivals, each arming 128 bytes
    two = {(ARRIVE, 0, 16): 2, (TX_UP, 0, 16): 256, (XMIN, 0, 16): 128}
    assert not _passable(m, Gate(0, 0, 0, 16, 1, prior=frozenset({0})), two | {(TX_DOWN, 0, 16): 128})
    assert _passable(m, Gate(0, 0, 0, 16, 1, prior=frozenset({0})), two | {(TX_DOWN, 0, 16): 256})
