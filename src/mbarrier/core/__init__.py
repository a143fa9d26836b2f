"""The mbarrier object itself: state, operations, sm_90 encoding, undefined behaviour."""

from mbarrier.core.barrier import Barrier, pending_count
from mbarrier.core.token import Token
from mbarrier.core.violations import VIOLATION_CLASSES, Violation

__all__ = ["Barrier", "Token", "Violation", "VIOLATION_CLASSES", "pending_count"]
