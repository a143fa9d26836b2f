"""docs/semantics.md names a test for every decision, and the README links both docs pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mbarrier.hw import records

ROOT = Path(__file__).resolve().parents[2]


def test_every_decision_names_existing_tests() -> None:
    text = (ROOT / "docs" / "semantics.md").read_text(encoding="utf-8")
    sections = re.split(r"\n## ", text)[1:]
    assert len(sections) >= 10
    for section in sections:
        refs = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", section)
        assert refs, f"decision without a test: {section.splitlines()[0]}"
        for path, name in refs:
            source = (ROOT / path).read_text(encoding="utf-8")
            assert re.search(rf"^def {name}\(", source, flags=re.M), f"{path}::{name} does not exist"


def test_semantics_cites_sections_of_the_manual() -> None:
    text = (ROOT / "docs" / "semantics.md").read_text(encoding="utf-8")
    for section in re.split(r"\n## ", text)[1:]:
        assert re.search(r"9\.7\.13\.15(\.\d+)*", section), section[:60]


def test_readme_links_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("docs/rules.md", "docs/semantics.md"):
        assert f"]({page})" in readme, f"README does not link {page}"
        assert (ROOT / page).is_file()


def test_hardware_observations_name_recorded_cases() -> None:
    """The "H100" paragraphs cite conformance records by case id; each id must be a recorded case."""
    text = (ROOT / "docs" / "semantics.md").read_text(encoding="utf-8")
    recorded = {r["id"] for f in (ROOT / records.REPO_DIR).glob("*.json")
                for r in json.loads(f.read_text(encoding="utf-8"))["results"]}
    cited = set()
    for para in re.findall(r"\*\*H100\*\*:(.*?)(?:\n\n|\Z)", text, flags=re.S):
        cited |= set(re.findall(r"`([a-z]+(?:-[\w^]+)+)`", para))
    assert len(cited) >= 10
    assert cited <= recorded, f"not recorded: {sorted(cited - recorded)}"
