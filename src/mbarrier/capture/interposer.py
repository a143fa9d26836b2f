"""The LD_PRELOAD library of `mbarrier capture`, compiled from `interpose.c` on first use with the
system C compiler (`$CC`, else `cc`, `gcc`, `clang`) and cached by the digest of its source under
`$MBARRIER_CACHE` (default `~/.cache/mbarrier`). It needs no CUDA header: the driver types it uses are
declared in the source."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("interpose.c")


class CaptureError(Exception):
    """A capture that cannot be made or converted (no C compiler, a command that cannot start, records
    that cannot be read): a clear message for the user."""


def cache_dir() -> Path:
    given = os.environ.get("MBARRIER_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mbarrier"


def compiler() -> str:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    raise CaptureError("no C compiler found (set CC, or install cc, gcc or clang): capture builds its "
                       "LD_PRELOAD library from C source on first use")


def interposer() -> Path:
    """The compiled library (built now if the cache lacks this source's build)."""
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    target = cache_dir() / f"capture-{digest}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    cmd = [compiler(), "-O2", "-shared", "-fPIC", "-o", str(partial), str(SOURCE), "-ldl", "-lpthread"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CaptureError(f"building the capture library failed ({' '.join(cmd)}):\n{done.stderr.strip()}")
    partial.replace(target)  # atomic: another capture building at the same time finds a whole file
    return target
