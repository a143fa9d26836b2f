"""Every rule of the catalogue that the object checks (checked_by="core") is raised, through the public
API, with its class, id, section and a message that ends in the section (9.7.13.15)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import mbarrier as mb
from mbarrier.spec.rules import RULES, rule

MAX = (1 << 20) - 1


def _ready(count: int) -> mb.Barrier:
    b = mb.Barrier("cov")
    b.init(count)
    return b


def _completed_unwaited() -> mb.Barrier:
    b = _ready(1)
    b.arrive()
    return b


def _stale() -> None:
    b = _ready(1)
    t = b.arrive()
    b.test_wait(t)
    b.arrive()
    b.test_wait(parity=1)
    b.test_wait(t)


#: One way to break each core rule; the coverage test below requires an entry for every core rule.
TRIGGERS: dict[str, Callable[[], object]] = {
    "uninitialized": lambda: mb.Barrier("cov").arrive(),
    "init-on-valid": lambda: _ready(2).init(2),
    "init-count-range": lambda: mb.Barrier("cov").init(0),
    "arrive-count-range": lambda: _ready(2).arrive(count=0),
    "pending-underflow": lambda: _ready(2).arrive(count=3),
    "pending-overflow": lambda: _ready(MAX).cp_async_arrive(),
    "expected-underflow": lambda: _ready(2).arrive_drop(count=2),
    "tx-count-range": lambda: _ready(2).complete_tx(MAX + 1),
    "no-complete-completes": lambda: _ready(2).arrive(count=2, no_complete=True),
    "phase-not-waited": lambda: _completed_unwaited().arrive(),
    "wait-stale-token": _stale,
    "wait-foreign-token": lambda: _ready(2).test_wait(_ready(2).arrive()),
    "wait-parity-value": lambda: _ready(2).try_wait(parity=2),
    "pending-count-token": lambda: mb.pending_count(_ready(2).arrive()),
}


def test_every_core_rule_has_a_trigger() -> None:
    core = {r.id for r in RULES if r.checked_by == "core"}
    assert set(TRIGGERS) == core, "a core rule without a test, or a trigger for a rule core does not check"


@pytest.mark.parametrize("rule_id", sorted(TRIGGERS))
def test_trigger_raises_its_violation(rule_id: str) -> None:
    cls = mb.VIOLATION_CLASSES[rule_id]
    with pytest.raises(cls) as e:
        TRIGGERS[rule_id]()
    assert type(e.value) is cls
    assert e.value.rule == rule_id and e.value.section == rule(rule_id).section
    assert str(e.value).endswith(f"({rule(rule_id).section})")
