"""Each CTA's producer arms its `full` for both halves of a 2-CTA multicast and multicasts its half
(CUTLASS's cooperative kernel in a 2x1 cluster): the issue stands for its landings on both CTAs' `full`,
and each of those items is asked whether it can complete its phase only last (`explore.quiet`, with the
bytes of the issue's size operand or tensor box): the other producer's arming and the other half in
flight then stay out of the issue's stubborn set. The verdicts against reductions off are
`test_cluster_halves.py`'s; here the states: linear in the rounds, at most 20 a round."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_cluster_halves import _check


@pytest.mark.parametrize("copy", ["bulk", "tensor"])
def test_a_multicast_issue_beside_the_other_half_adds_no_branch(tmp_path: Path, copy: str) -> None:
    """27, 47, 87 states for 1, 2, 4 rounds (44, 81, 155 when the issue's items took the other
    producer's arming and the other half into its set)."""
    states = []
    for rounds in (1, 2, 4):
        r = _check(tmp_path, copy, None, 1, rounds, True)
        assert r.verdict == "verified"
        states.append(r.stats.states)
    assert states[2] - states[1] == 2 * (states[1] - states[0])
    assert states[1] - states[0] <= 20
