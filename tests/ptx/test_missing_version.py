"""A module without `.version`: ptxas stops with a fatal error at a line we must match."""

import subprocess

import pytest

from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import validate

CASES = [
    ".target sm_90\n",
    "\n\n.target sm_90\n.address_size 64\n",
    "// a comment\n.target sm_90\n",
    ".visible .entry k() { ret; }\n",
    "\n\n\n.visible .entry k() { ret; }\n\n",
    ".target sm_90, texmode_independent\n\n.address_size 64\n",
    "\n\n",
]


def _ptxas_line(path: str) -> tuple[int, str]:
    err = subprocess.run(["ptxas", "-arch=sm_90", path, "-o", "/dev/null"], capture_output=True,
                         text=True).stderr.splitlines()[0]
    head, message = err.split("; fatal   : ")
    return int(head.rsplit("line ", 1)[1]), message


@pytest.mark.tool("ptxas")
@pytest.mark.parametrize("text", CASES)
def test_missing_version_is_fatal_where_ptxas_says(text: str, tmp_path) -> None:
    path = tmp_path / "k.ptx"
    path.write_text(text)
    diags = validate(parse(text, str(path)))
    assert [(d.severity, d.line, d.message) for d in diags] == [("fatal", *_ptxas_line(str(path)))]
