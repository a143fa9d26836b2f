"""What every benchmark script shares: the machine's description, the commit, and writing its own
section of docs/performance.md between its start/end markers."""

from __future__ import annotations

import platform
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "performance.md"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()


def markers(script: str) -> tuple[str, str]:
    return f"<!-- bench/{script}: start -->", f"<!-- bench/{script}: end -->"


def write_section(script: str, body: list[str]) -> None:
    """Put `body` between the script's markers in docs/performance.md (appended the first time)."""
    start, end = markers(script)
    section = "\n".join([start, *body, end])
    text = DOC.read_text() if DOC.exists() else "# Performance\n"
    if start in text:
        text = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: section, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    DOC.write_text(text)
