"""What the commands print: a reader that closes the pipe early (`| head -1`) keeps the verdict's exit
code and gets no traceback; control characters of the input are shown escaped."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mbarrier import examples
from mbarrier.cli import main
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


CONTROL = (".version 8.6\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b64 %rd<3>;\n"
           ".reg .pred %p<2>;\n.shared .align 8 .b64 bar;\n"
           "mbarrier.init.shared.b64 [bar], 2; // \x1b[31mred\x07\n"
           "/*\x1b[2J*/ mbarrier.arrive.release.shared.b64 %rd1, [bar];\n"
           "mbarrier.try_wait.parity.shared.b64 %p1, [bar], 0;\nret;\n}\n")


def test_control_characters_of_the_source_are_printed_escaped(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "k.ptx"
    f.write_text(CONTROL)
    assert main(["run", str(f), "--grid", "1", "--block", "1", "--trace"]) == 0
    out, err = capsys.readouterr()
    assert "line 9     mbarrier.init.shared.b64 [bar], 2; // \\x1b[31mred\\x07" in out
    assert "/*\\x1b[2J*/ mbarrier.arrive" in out and "\x1b" not in out + err and "\x07" not in out
    assert main(["lint", str(f)]) == 1
    out = capsys.readouterr().out.splitlines()
    # The caret stays under the column as printed (the escape before it is 3 characters wider).
    assert out[1] == "  /*\\x1b[2J*/ mbarrier.arrive.release.shared.b64 %rd1, [bar];"
    assert out[2].index("^") == out[1].index(".release")
    f.write_text(CONTROL.replace("ret;", "ret;\x1b"))
    assert main(["check", str(f), "--grid", "1", "--block", "1"]) == 2
    err = capsys.readouterr().err
    assert "Parsing error near '\\x1b'" in err and "\x1b" not in err
