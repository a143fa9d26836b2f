"""Running the program under the interposer: the environment it reads (`interpose.c`) and the raw
records it leaves in OUT/raw."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from mbarrier.capture.interposer import CaptureError, interposer


def run(command: Sequence[str], out: Path, kernel: str | None = None, max_launches: int | None = None,
        max_buffer: int | None = None) -> int:
    """Run `command` with the capture library preloaded, its records in `out`/raw (emptied first);
    returns the command's exit status. `kernel`: an fnmatch pattern of the kernel names to capture (all
    when None); `max_launches`: the most launches captured per process; `max_buffer`: allocations larger
    than this many bytes are named but not copied."""
    if not command:
        raise CaptureError("no command given (mbarrier capture [options] -- COMMAND ...)")
    library = interposer()
    raw = out / "raw"
    if raw.exists():
        shutil.rmtree(raw)
    raw.mkdir(parents=True)
    env = dict(os.environ)
    env["LD_PRELOAD"] = " ".join(p for p in (str(library), env.get("LD_PRELOAD", "")) if p)
    env["MBARRIER_CAPTURE_DIR"] = str(raw.resolve())
    for key, value in (("MBARRIER_CAPTURE_KERNEL", kernel), ("MBARRIER_CAPTURE_MAX_LAUNCHES", max_launches),
                       ("MBARRIER_CAPTURE_MAX_BUFFER", max_buffer)):
        if value is not None:
            env[key] = str(value)
        else:
            env.pop(key, None)
    try:
        return subprocess.run(list(command), env=env, check=False).returncode
    except OSError as e:
        raise CaptureError(f"cannot run {command[0]}: {e.strerror or e}") from None
