"""External tools. A test that runs one declares it, `@pytest.mark.tool("ptxas")`; where the tool is not on
PATH the test is skipped with a reason naming it, so the README's test command passes on a machine without
SPIN or CUDA. With MBARRIER_REQUIRE_TOOLS=1 (.ci/run sets it) a missing tool fails the test instead:
CI never skips them."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

#: What each tool is and where it comes from, for the skip reason.
TOOLS = {
    "spin": "SPIN (apt-get install spin)",
    "ptxas": "ptxas (CUDA 13.0 toolkit)",
    "nvcc": "nvcc (CUDA 13.0 toolkit)",
    "cc": "a C compiler (cc)",
}
#: Python packages a test may need like a tool (`@pytest.mark.tool("triton")`): missing where not importable.
PACKAGES = {
    "triton": "Triton 3.6 (pip install 'mbarrier[triton]')",
}

#: The CUTLASS headers our own .cu files instantiate: the nvidia-cutlass wheel from the package index,
#: pinned by version and hash, unzipped once into the user's cache (the repository holds no CUTLASS text).
CUTLASS_WHEEL = "nvidia-cutlass==4.2.0.0"
CUTLASS_SHA256 = "f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6"
CUTLASS_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"),
                     "mbarrier", "nvidia-cutlass-4.2.0.0")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "tool(*names): the test runs these programs or packages (one of: "
        + ", ".join([*TOOLS, *PACKAGES]) + "); "
        "skipped where one is not on PATH, failed instead when MBARRIER_REQUIRE_TOOLS=1")


def missing_tool(name: str) -> str | None:
    """Why a test that needs `name` cannot run here, or None when it is on PATH."""
    if name in PACKAGES:
        found = importlib.util.find_spec(name) is not None
        return None if found else f"needs {PACKAGES[name]}: the package `{name}` is not importable"
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


def _require(why: str) -> None:
    """Skip with `why`, or fail where MBARRIER_REQUIRE_TOOLS=1."""
    if os.environ.get("MBARRIER_REQUIRE_TOOLS") == "1":
        pytest.fail(f"{why} (MBARRIER_REQUIRE_TOOLS=1: tools are required)", pytrace=False)
    pytest.skip(why)


def _fetch_cutlass() -> str | None:
    """Unzip the pinned wheel's CUTLASS sources into CUTLASS_CACHE; why not, or None when done."""
    with tempfile.TemporaryDirectory() as tmp:
        got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                              "--only-binary=:all:", "-d", tmp, CUTLASS_WHEEL],
                             capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if got.returncode != 0 or len(wheels) != 1:
            return f"pip download {CUTLASS_WHEEL} failed: {(got.stderr or got.stdout).strip()[-300:]}"
        digest = hashlib.sha256(wheels[0].read_bytes()).hexdigest()
        if digest != CUTLASS_SHA256:
            return f"{wheels[0].name} has sha256 {digest}, not the pinned {CUTLASS_SHA256}"
        part = CUTLASS_CACHE.with_name(CUTLASS_CACHE.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        with zipfile.ZipFile(wheels[0]) as z:
            z.extractall(part, [n for n in z.namelist() if n.startswith("cutlass_library/source/")])
        shutil.rmtree(CUTLASS_CACHE, ignore_errors=True)
        part.rename(CUTLASS_CACHE)
    return None


@pytest.fixture(scope="session")
def cutlass_source() -> Path:
    """The nvidia-cutlass 4.2.0.0 wheel's `cutlass_library/source` (include/, tools/util/include/):
    MBARRIER_CUTLASS_DIR if set, else the pinned wheel fetched from the package index into the cache."""
    given = os.environ.get("MBARRIER_CUTLASS_DIR")
    if given:
        return Path(given)
    source = CUTLASS_CACHE / "cutlass_library" / "source"
    if not (source / "include" / "cutlass" / "cutlass.h").is_file():
        why = _fetch_cutlass()
        if why is not None:
            _require(f"needs the {CUTLASS_WHEEL} wheel's headers: {why}")
    return source
