"""mbarrier: the executable reference for NVIDIA's PTX mbarrier object (PTX ISA 9.7.13.15)."""

from mbarrier.core.barrier import Barrier, pending_count
from mbarrier.core.token import Token
from mbarrier.core.violations import *  # noqa: F403 - every Violation subclass is public API
from mbarrier.core.violations import VIOLATION_CLASSES, Violation

__version__ = "0.1.0"

__all__ = ["Barrier", "Token", "Violation", "VIOLATION_CLASSES", "pending_count", "__version__"] + [
    cls.__name__ for cls in VIOLATION_CLASSES.values()
]
