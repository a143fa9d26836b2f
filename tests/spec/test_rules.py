"""The undefined-behaviour catalogue (spec.rules): well formed, quoted from the manual, one exception
class per rule, and docs/rules.md generated from it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import mbarrier as mb
from mbarrier.core.violations import Violation
from mbarrier.spec import rules

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "spec" / "001_f8cbe79d1de95f85.txt"


def normalize(text: str) -> str:
    """The manual's Markdown rendering reduced to plain words, as the catalogue quotes it."""
    text = re.sub(r"\[([^\]]*)\]\(<[^>]*>\)", r"\1", text)          # links
    text = re.sub(r"(?<!\w)_(\S(?:[^\n]*?\S)?)_(?!\w)", r"\1", text)  # _emphasis_
    text = text.replace("`", "").replace("\\-", "-").replace("…", "...")
    text = text.replace("‘", "'").replace("’", "'")
    text = re.sub(r"220 - 1", "2^20 - 1", text)                       # the lost superscript
    return re.sub(r"\s+", " ", text)


def test_ids_unique_and_well_formed() -> None:
    ids = [r.id for r in rules.RULES]
    assert len(ids) == len(set(ids))
    for r in rules.RULES:
        assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", r.id), r.id
        assert re.fullmatch(r"9\.7\.13\.15(\.\d+)*", r.section), r.section
        assert r.checked_by in ("core", "sim"), r.checked_by
        assert r.title and r.sentence
    assert rules.rule("phase-not-waited").section == "9.7.13.15.4"
    with pytest.raises(KeyError, match="unknown mbarrier rule id 'nope'"):
        rules.rule("nope")


@pytest.mark.skipif(not SPEC.exists(), reason=f"the manual's text is not beside the checkout ({SPEC})")
@pytest.mark.parametrize("r", rules.RULES, ids=lambda r: r.id)
def test_sentence_is_quoted_from_the_manual(r: rules.Rule) -> None:
    """Every piece of the rule's sentence occurs in the manual, and its section heading exists."""
    manual = normalize(SPEC.read_text(encoding="utf-8"))
    for piece in r.sentence.split(" ... "):
        assert normalize(piece) in manual, f"{r.id}: not in the manual: {piece!r}"
    assert f"{r.section}. " in manual or r.section == "9.7.13.15"


def test_every_rule_has_exactly_one_violation_class() -> None:
    # The memory model's race rules (spec.memmodel) subclass Violation in sim.races: not this catalogue.
    classes = [c for c in Violation.__subclasses__() if c.__module__ == "mbarrier.core.violations"]
    assert sorted(c.rule for c in classes) == sorted(r.id for r in rules.RULES)
    others = [c for c in Violation.__subclasses__() if c not in classes]
    assert not {c.rule for c in others} & {r.id for r in rules.RULES}, "a catalogue rule claimed twice"
    for r in rules.RULES:
        cls = mb.VIOLATION_CLASSES[r.id]
        assert cls.__name__ == r.class_name
        assert getattr(mb, r.class_name) is cls          # public as mb.<ClassName>
        assert issubclass(cls, mb.Violation)


def test_violation_reads_section_from_the_catalogue() -> None:
    v = mb.TxCountRange("message")
    assert (v.rule, v.section, str(v)) == ("tx-count-range", "9.7.13.15.2", "message")
    assert v.spec_rule is rules.rule("tx-count-range")


def test_docs_rules_md_is_generated_from_the_catalogue() -> None:
    """docs/rules.md must be exactly `python -m mbarrier.spec.rulesdoc --markdown` (regenerate it)."""
    doc = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert doc == rules.markdown_document(), "docs/rules.md is stale: run " \
        "`python -m mbarrier.spec.rulesdoc --markdown > docs/rules.md`"
    for r in rules.RULES:
        assert f"| `{r.id}` | `mb.{r.class_name}` | {r.section} |" in doc


def test_generator_command_line() -> None:
    """The generator prints the document and nothing on stderr (`python -m mbarrier.spec.rules`, a
    module `import mbarrier` imports, made runpy warn there)."""
    run = subprocess.run([sys.executable, "-m", "mbarrier.spec.rulesdoc", "--markdown"], capture_output=True,
                         text=True, check=True)
    assert run.stdout == rules.markdown_document()
    assert run.stderr == ""
    bad = subprocess.run([sys.executable, "-m", "mbarrier.spec.rulesdoc", "--bogus"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr
