"""`.pre-commit-hooks.yaml`: one hook, `mbarrier lint` on `*.ptx` files, whose entry works as pre-commit
calls it (the entry's words, then the staged files' names: exit 0 clean, 1 findings)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mbarrier.cli import main
from mbarrier.examples import HERE

HOOKS = Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml"


def _hooks() -> list[dict[str, str]]:
    """The file's list of flat mappings (the YAML subset it is written in: `- key: value` items)."""
    hooks: list[dict[str, str]] = []
    for line in HOOKS.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.fullmatch(r"(- |  )(\w+): (.*)", line)
        assert m, f"unexpected line {line!r}"
        if m.group(1) == "- ":
            hooks.append({})
        hooks[-1][m.group(2)] = m.group(3)
    return hooks


def test_the_hook(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (hook,) = _hooks()
    assert hook["id"] == "mbarrier-lint" and hook["language"] == "python" and hook["types"] == "[file]"
    files = re.compile(hook["files"])
    assert files.search("kernels/ring.ptx") and not files.search("ring.ptx.bak") and not files.search("k.cu")
    words = hook["entry"].split()
    assert words[0] == "mbarrier"  # the console script pyproject.toml declares
    assert 'mbarrier = "mbarrier.cli:main"' in (HOOKS.parent / "pyproject.toml").read_text()
    good = str(HERE / "ring_buffer.ptx")
    bad = tmp_path / "bad.ptx"
    bad.write_text((HERE / "ring_buffer.ptx").read_text().replace(".target sm_90", ".target sm_80"))
    assert main([*words[1:], good]) == 0
    assert main([*words[1:], good, str(bad)]) == 1
    assert "bad.ptx:" in capsys.readouterr().out
