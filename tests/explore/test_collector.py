"""The cycle collector runs less often while a check runs (`check.COLLECT_EVERY`), and the caller's
thresholds are back afterwards, also where the check ends by an exception."""

from __future__ import annotations

import gc

import pytest

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore import check as check_module
from mbarrier.explore.check import Options, check_machine


def test_the_thresholds_are_raised_during_a_check_and_restored_after() -> None:
    shape = SHAPES["ring"].sized(2)
    seen: list[tuple[int, int, int]] = []

    def stop() -> bool:
        seen.append(gc.get_threshold())
        return False

    before = gc.get_threshold()
    r = check_machine(shape.launch(), sim.load(shape.path), Options(walks=0, stop=stop))
    assert r.verdict == "verified"
    assert seen and set(seen) == {check_module.COLLECT_EVERY}
    assert gc.get_threshold() == before != check_module.COLLECT_EVERY


def test_the_thresholds_are_restored_after_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(*args: object) -> None:
        raise RuntimeError("the search failed")

    monkeypatch.setattr(check_module.Explorer, "run", fails)
    before = gc.get_threshold()
    shape = SHAPES["ring"].sized(2)
    with pytest.raises(RuntimeError):
        check_machine(shape.launch(), sim.load(shape.path), Options(walks=0))
    assert gc.get_threshold() == before
