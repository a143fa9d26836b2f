"""Undefined behaviour as exceptions: one subclass of `Violation` per rule of `spec.rules`.

The class carries only its rule id; section and sentence are read from the catalogue, so the manual's
facts stay in one place.
"""

from __future__ import annotations

from typing import ClassVar

from mbarrier.spec.rules import Rule, rule


class Violation(Exception):
    """An operation whose behaviour the PTX ISA leaves undefined.

    `.rule` is the stable rule id, `.section` the manual's section, and the message names the
    operation, the barrier and its state.
    """

    rule: ClassVar[str] = ""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def section(self) -> str:
        return self.spec_rule.section

    @property
    def spec_rule(self) -> Rule:
        return rule(type(self).rule)


class Uninitialized(Violation):
    rule = "uninitialized"


class InitOnValid(Violation):
    rule = "init-on-valid"


class InitCountRange(Violation):
    rule = "init-count-range"


class ArriveCountRange(Violation):
    rule = "arrive-count-range"


class PendingUnderflow(Violation):
    rule = "pending-underflow"


class PendingOverflow(Violation):
    rule = "pending-overflow"


class ExpectedUnderflow(Violation):
    rule = "expected-underflow"


class TxCountRange(Violation):
    rule = "tx-count-range"


class NoCompleteCompletes(Violation):
    rule = "no-complete-completes"


class PhaseNotWaited(Violation):
    rule = "phase-not-waited"


class WaitStaleToken(Violation):
    rule = "wait-stale-token"


class WaitForeignToken(Violation):
    rule = "wait-foreign-token"


class WaitParityValue(Violation):
    rule = "wait-parity-value"


class PendingCountToken(Violation):
    rule = "pending-count-token"


class ClusterOperation(Violation):
    rule = "cluster-operation"


class ClusterArriveResult(Violation):
    rule = "cluster-arrive-result"


class AddressWindow(Violation):
    rule = "address-window"


class Alignment(Violation):
    rule = "alignment"


class NonMbarrierAccess(Violation):
    rule = "non-mbarrier-access"


def _subclasses() -> dict[str, type[Violation]]:
    # Only this module's classes: other layers may add findings of their own (sim.races.Race).
    return {cls.rule: cls for cls in Violation.__subclasses__() if cls.__module__ == __name__}


#: rule id -> exception class; every rule of the catalogue has exactly one.
VIOLATION_CLASSES: dict[str, type[Violation]] = _subclasses()
