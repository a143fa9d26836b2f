"""External tools. A test that runs one declares it, `@pytest.mark.tool("ptxas")`; where the tool is not on
PATH the test is skipped with a reason naming it, so the README's test command passes on a machine without
SPIN or CUDA. With MBARRIER_REQUIRE_TOOLS=1 (.ci/run sets it) a missing tool fails the test instead:
CI never skips them."""

from __future__ import annotations

import os
import shutil

import pytest

#: What each tool is and where it comes from, for the skip reason.
TOOLS = {
    "spin": "SPIN (apt-get install spin)",
    "ptxas": "ptxas (CUDA 13.0 toolkit)",
    "nvcc": "nvcc (CUDA 13.0 toolkit)",
    "cc": "a C compiler (cc)",
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "tool(*names): the test runs these programs (one of: " + ", ".join(TOOLS) + "); "
        "skipped where one is not on PATH, failed instead when MBARRIER_REQUIRE_TOOLS=1")


def missing_tool(name: str) -> str | None:
    """Why a test that needs `name` cannot run here, or None when it is on PATH."""
    if name not in TOOLS:
        raise ValueError(f"unknown tool {name!r}: add it to tests/conftest.py TOOLS")
    return None if shutil.which(name) else f"needs {TOOLS[name]}: `{name}` is not on PATH"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("tool"):
        for name in mark.args:
            why = missing_tool(name)
            if why is None:
                continue
            if os.environ.get("MBARRIER_REQUIRE_TOOLS") == "1":
                pytest.fail(f"{why} (MBARRIER_REQUIRE_TOOLS=1: tools are required)", pytrace=False)
            pytest.skip(why)
