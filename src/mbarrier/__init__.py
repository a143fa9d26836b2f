"""mbarrier: the executable reference for NVIDIA's PTX mbarrier object (PTX ISA 9.7.13.15).

`__all__` is the public API, written out (not computed) so that a user's `mypy --strict` sees each name
as exported; tests/test_api.py keeps it equal to the Violation subclasses and the API for PTX text.

The API for PTX text (`lint`, `run`, `check`, `Launch` and the result types, from `mbarrier.api`) is
imported on first use, so that `import mbarrier` for the object alone stays light; type checkers see it
through the TYPE_CHECKING import.
"""

from typing import TYPE_CHECKING

from mbarrier.core.barrier import Barrier, pending_count
from mbarrier.core.token import Token
from mbarrier.core.violations import (
    VIOLATION_CLASSES,
    AddressWindow,
    Alignment,
    ArriveCountRange,
    ClusterArriveResult,
    ClusterOperation,
    ExpectedUnderflow,
    InitCountRange,
    InitOnValid,
    NoCompleteCompletes,
    NonMbarrierAccess,
    PendingCountToken,
    PendingOverflow,
    PendingUnderflow,
    PhaseNotWaited,
    TxCountRange,
    Uninitialized,
    Violation,
    WaitForeignToken,
    WaitParityValue,
    WaitStaleToken,
)

if TYPE_CHECKING:
    from mbarrier.api import (
        Buffer,
        CheckReport,
        Finding,
        InputError,
        Launch,
        LintReport,
        RunReport,
        check,
        lint,
        run,
    )

__version__ = "0.1.0"

_API = frozenset({"Buffer", "CheckReport", "Finding", "InputError", "Launch", "LintReport", "RunReport",
                  "check", "lint", "run"})


def __getattr__(name: str) -> object:
    if name in _API:
        from mbarrier import api
        return getattr(api, name)
    raise AttributeError(f"module 'mbarrier' has no attribute {name!r}")

__all__ = [
    "Barrier",
    "Token",
    "Violation",
    "VIOLATION_CLASSES",
    "pending_count",
    "__version__",
    "Uninitialized",
    "InitOnValid",
    "InitCountRange",
    "ArriveCountRange",
    "PendingUnderflow",
    "PendingOverflow",
    "ExpectedUnderflow",
    "TxCountRange",
    "NoCompleteCompletes",
    "PhaseNotWaited",
    "WaitStaleToken",
    "WaitForeignToken",
    "WaitParityValue",
    "PendingCountToken",
    "ClusterOperation",
    "ClusterArriveResult",
    "AddressWindow",
    "Alignment",
    "NonMbarrierAccess",
    "lint",
    "run",
    "check",
    "Launch",
    "Buffer",
    "InputError",
    "LintReport",
    "RunReport",
    "CheckReport",
    "Finding",
]
