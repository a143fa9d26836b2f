"""The documents `python -m` generates (docs name these commands) end quietly when the reader closes the
pipe early (`| head -3`): exit 0, nothing on stderr; before, `python -m mbarrier.spec.forms | head -3`
printed a BrokenPipeError traceback about one time in two (the wheel run of the docs' examples)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
GENERATORS = [["mbarrier.spec.forms"], ["mbarrier.spec.forms", "--markdown"], ["mbarrier.spec.checks"],
              ["mbarrier.spec.rules"], ["mbarrier.spec.rules", "--markdown"], ["mbarrier.spec.memmodel"],
              ["mbarrier.report.schema"], ["mbarrier.hw.doc"]]


@pytest.mark.parametrize("argv", GENERATORS, ids=[" ".join(a) for a in GENERATORS])
def test_a_reader_that_closes_the_pipe_ends_the_output_quietly(argv: list[str]) -> None:
    env = os.environ | {"PYTHONPATH": SRC, "PYTHONWARNINGS": "ignore::RuntimeWarning"}
    p = subprocess.Popen([sys.executable, "-m", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # before the first write: every write meets a closed pipe
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0 and err == ""


def test_the_whole_document_still_comes_through() -> None:
    out = subprocess.run([sys.executable, "-m", "mbarrier.spec.forms"], capture_output=True, text=True,
                         env=os.environ | {"PYTHONPATH": SRC}, check=True).stdout
    assert out.count("\n") > 10 and out.startswith("mbarrier.")
