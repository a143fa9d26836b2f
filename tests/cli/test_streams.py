"""A reader that closes the pipe early (`| head -1`) keeps the verdict's exit code and gets no
traceback."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from mbarrier import examples
from mbarrier.cli.streams import PipeGuard


def test_a_closed_pipe_keeps_the_exit_code_of_a_stuck_run() -> None:
    # --trace writes far more than a pipe buffer holds, so the writes after the close do fail.
    bug = str(examples.path("ring_buffer_bug_bytes"))
    p = subprocess.Popen([sys.executable, "-m", "mbarrier", "run", bug, "--grid", "1", "--block", "160",
                          "--trace"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
    assert p.stdout is not None and p.stderr is not None
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 1  # stuck, as without the pipe
    assert first.startswith(b"/") and b"kernel ring_buffer" in first
    assert err == ""


class _Closed(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError


def test_writes_after_the_pipe_closed_are_dropped() -> None:
    g = PipeGuard(_Closed())  # type: ignore[arg-type]
    assert g.write("abc") == 3 and g.broken
    g.write("more")
    g.flush()
