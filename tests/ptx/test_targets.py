"""spec/targets.py against ptxas: each target's lowest PTX ISA version is what ptxas 13.0 accepts."""

from __future__ import annotations

import pytest

from mbarrier.ptx.validate_oracle import min_version
from mbarrier.spec.targets import TARGET_MIN_VERSION, parse_target


@pytest.mark.parametrize("target", sorted(TARGET_MIN_VERSION))
def test_lowest_version_matches_ptxas(target: str) -> None:
    assert min_version(target) == TARGET_MIN_VERSION[target]


def test_target_names() -> None:
    t = parse_target("sm_90a")
    assert t is not None and (t.sm, t.suffix) == (90, "a") and t.at_least(90) and not t.at_least(100)
    assert parse_target("sm_101") is None  # not a target of ptxas 13.0
    assert parse_target("compute_90") is None
