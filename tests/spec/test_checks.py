"""Every rule catalogue lives in `spec`: the checker's own findings (`spec.checks`) beside the object's
rules and the memory model's, one id space, with docs/checker.md showing the table."""

from __future__ import annotations

import ast as pyast
from pathlib import Path

import pytest

from mbarrier.spec import checks, memmodel, rules
from mbarrier.spec.limits import MAX_CLUSTER_CTAS, MAX_THREADS_PER_CTA

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "mbarrier"


def test_the_catalogues_share_one_id_space() -> None:
    ids = [r.id for r in (*rules.RULES, *memmodel.RACE_RULES, *checks.CHECKER_RULES)]
    assert len(ids) == len(set(ids))
    assert {r.checked_by for r in checks.CHECKER_RULES} <= {"checker", "sim"}
    assert checks.checker_rule("deadlock").section == "9.7.13.15.16"
    with pytest.raises(KeyError, match="unknown checker rule id 'nope'"):
        checks.checker_rule("nope")


def test_docs_checker_md_shows_the_checkers_rules() -> None:
    doc = (ROOT / "docs" / "checker.md").read_text()
    flat = " ".join(doc.split())
    for row in checks.markdown_table().splitlines():
        assert " ".join(row.split()) in flat, row


def test_every_rule_id_the_checker_reports_is_catalogued() -> None:
    """The rule ids explore/check.py passes to a Finding are names from spec.checks, not strings."""
    tree = pyast.parse((SRC / "explore" / "check.py").read_text())
    literal_rules = [node.args[1].value for node in pyast.walk(tree)
                     if isinstance(node, pyast.Call) and getattr(node.func, "id", "") == "Finding"
                     and len(node.args) > 1 and isinstance(node.args[1], pyast.Constant)]
    assert not literal_rules


def test_the_launch_limits_are_stated_once() -> None:
    """Only spec.limits defines a thread or cluster limit; the simulator and the GPU suite import it."""
    assert (MAX_THREADS_PER_CTA, MAX_CLUSTER_CTAS) == (1024, 16)
    for path in SRC.rglob("*.py"):
        if path.parent.name == "spec":
            continue
        for node in pyast.walk(pyast.parse(path.read_text())):
            if isinstance(node, pyast.Assign | pyast.AnnAssign):
                targets = node.targets if isinstance(node, pyast.Assign) else [node.target]
                for target in targets:
                    name = getattr(target, "id", "")
                    assert not name.startswith(("MAX_THREADS", "MAX_CLUSTER")), \
                        f"{path.relative_to(ROOT)}:{node.lineno}: {name}; the limits are in spec.limits"
