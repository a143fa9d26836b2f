"""The package's public names: `mbarrier.__all__` is written out so that type checkers see each name as
exported (a user's `mypy --strict` on the README example: tests/test_wheel.py); it must stay complete:
the object, its violations and the API for PTX text (`mbarrier.api`, imported on first use)."""

import mbarrier
import mbarrier.api
from mbarrier.core.violations import VIOLATION_CLASSES


def test_every_violation_class_is_exported() -> None:
    names = {cls.__name__ for cls in VIOLATION_CLASSES.values()}
    assert names <= set(mbarrier.__all__)
    assert set(mbarrier.__all__) - names == {"Barrier", "Token", "Violation", "VIOLATION_CLASSES",
                                             "pending_count", "__version__"} | set(mbarrier.api.__all__)


def test_every_exported_name_exists() -> None:
    for name in mbarrier.__all__:
        assert hasattr(mbarrier, name), name
