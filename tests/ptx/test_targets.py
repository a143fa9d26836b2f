"""spec/targets.py against ptxas: each target's lowest PTX ISA version is what ptxas 13.0 accepts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import validate
from mbarrier.ptx.validate_oracle import min_version, ptxas_path
from mbarrier.spec.targets import LATEST_VERSION, TARGET_MIN_VERSION, format_version, parse_target


@pytest.mark.tool("ptxas")
@pytest.mark.parametrize("target", sorted(TARGET_MIN_VERSION))
def test_lowest_version_matches_ptxas(target: str) -> None:
    assert min_version(target) == TARGET_MIN_VERSION[target]


def test_target_names() -> None:
    t = parse_target("sm_90a")
    assert t is not None and (t.sm, t.suffix) == (90, "a") and t.at_least(90) and not t.at_least(100)
    assert parse_target("sm_101") is None  # not a target of ptxas 13.0
    assert parse_target("compute_90") is None


def _module(version: str) -> str:
    return f".version {version}\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\nret;\n}}\n"


@pytest.mark.tool("ptxas")
def test_latest_version_is_the_newest_ptxas_takes(tmp_path: Path) -> None:
    major, minor = LATEST_VERSION
    verdicts = {}
    for v in (format_version(LATEST_VERSION), f"{major}.{minor + 1}", f"{major + 1}.0"):
        f = tmp_path / "v.ptx"
        f.write_text(_module(v))
        r = subprocess.run([ptxas_path(), "-arch=sm_90", str(f), "-o", "/dev/null"], capture_output=True,
                           text=True)
        verdicts[v] = r.returncode == 0 or f"Unsupported .version {v}" not in r.stderr
    assert list(verdicts.values()) == [True, False, False], verdicts


def test_a_newer_version_is_judged_as_the_latest_with_a_warning() -> None:
    major, minor = LATEST_VERSION
    newer = f"{major}.{minor + 1}"
    diags = validate(parse(_module(newer), "k.ptx"))
    assert [(d.severity, d.rule, d.line) for d in diags] == [("warning", "version-beyond-model", 1)]
    assert f".version {newer} is newer than PTX ISA {format_version(LATEST_VERSION)}" in diags[0].message
    assert validate(parse(_module(format_version(LATEST_VERSION)), "k.ptx")) == []
