"""docs/hardware.md and the README's conformance figures are generated from the records."""

import re
from pathlib import Path

from mbarrier.hw import doc, records
from mbarrier.hw.replay import AGREE, UNDEFINED_FLAGGED, compare

ROOT = Path(__file__).resolve().parents[2]


def test_hardware_doc_is_current():
    want = doc.render(records.load(records.default_dir()))
    have = (ROOT / "docs" / "hardware.md").read_text(encoding="utf-8")
    assert have == want, "stale: run `python -m mbarrier.hw.doc > docs/hardware.md`"


def test_the_docs_link_to_the_records_the_package_ships():
    """docs/hardware.md links each case to REPO_DIR in the repository: the same files the package reads."""
    shipped = sorted(f.name for f in records.default_dir().iterdir())
    assert shipped and sorted(p.name for p in (ROOT / records.REPO_DIR).iterdir()) == shipped


def test_readme_states_the_measured_agreement():
    recs = records.load(records.default_dir())
    kinds = [compare(r.case, r.result).kind for r in recs]
    row = f"| {len(recs)} | {kinds.count(AGREE)} | {kinds.count(UNDEFINED_FLAGGED)} | 0 |"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"## Hardware conformance\n(.*?)(\n## |\Z)", readme, flags=re.S)
    assert section, "README has no '## Hardware conformance' section"
    assert row in section.group(1)
