"""mbarrier: the executable reference for NVIDIA's PTX mbarrier object (PTX ISA 9.7.13.15).

`__all__` is the public API, written out (not computed) so that a user's `mypy --strict` sees each name
as exported; tests/test_api.py keeps it equal to the Violation subclasses.
"""

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

__version__ = "0.1.0"

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
]
