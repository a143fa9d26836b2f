"""`--format sarif` of lint and check: valid SARIF 2.1.0 (the OASIS schema, vendored under data/, see
data/PROVENANCE.md), rules with help from spec's catalogues, results with locations, a finding's
schedule as a codeFlow with a threadFlow per agent, the tool's limits as notifications."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mbarrier.cli import main
from mbarrier.examples import HERE
from mbarrier.examples.races import HERE as RACES
from mbarrier.report.rules import catalogue
from mbarrier.report.sarif import artifact_uri
from mbarrier.spec.checks import CHECKER_RULES
from mbarrier.spec.forms import FRONT_END_RULES, MESSAGES, RULE_IDS
from mbarrier.spec.memmodel import RACE_RULES
from mbarrier.spec.rules import RULES

SARIF_SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SARIF_SCHEMA)
CORPUS = HERE / "corpus"


def _sarif(argv: list[str], code: int, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main([*argv, "--format", "sarif"]) == code
    log: dict[str, Any] = json.loads(capsys.readouterr().out)
    VALIDATOR.validate(log)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for r in run["results"]:  # each result names its rule, which the driver describes
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    for rule in rules:  # ... in spec's words
        assert SPEC_TEXT[rule["id"]] in rule["fullDescription"]["text"], rule["id"]
    return run


def _spec_text() -> dict[str, str]:
    """Each rule id of spec's catalogues and the words they give it."""
    out = {RULE_IDS[key]: template for key, template in MESSAGES.items()}
    for r in (*RULES, *RACE_RULES, *CHECKER_RULES, *FRONT_END_RULES):
        out[r.id] = r.sentence
    return out


SPEC_TEXT = _spec_text()


def test_every_rules_help_comes_from_spec() -> None:
    """report.rules adds no words of its own (one fact, one place): each entry's title and text are a
    spec catalogue's, a ptxas message's help is its template."""
    rules = {r.id: r for r in (*RULES, *RACE_RULES, *CHECKER_RULES, *FRONT_END_RULES)}
    assert set(catalogue()) == set(SPEC_TEXT)
    for rid, h in catalogue().items():
        assert SPEC_TEXT[rid] in h.text, rid
        if rid in rules:
            assert (h.title, h.text, h.section) == (rules[rid].title, rules[rid].sentence, rules[rid].section)


def test_the_catalogue_has_every_rule_of_spec() -> None:
    ids = set(catalogue())
    assert {r.id for r in (*RULES, *RACE_RULES, *CHECKER_RULES)} <= ids
    assert set(RULE_IDS.values()) <= ids and {r.id for r in FRONT_END_RULES} <= ids
    assert {r.id for r in FRONT_END_RULES} == {"syntax", "version-beyond-model", "ptxas-address-size"}
    assert all(h.text and h.title for h in catalogue().values())


def test_lint_sarif(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run = _sarif(["lint", str(HERE / "ring_buffer.ptx"), "--target", "sm_80"], 1, capsys)
    r = run["results"][0]
    assert r["ruleId"] == "ptxas-gate-target" and r["level"] == "error"
    region = r["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (68, 2)
    (rule,) = run["tool"]["driver"]["rules"]
    assert rule["id"] == "ptxas-gate-target" and "requires .target sm_" in rule["fullDescription"]["text"]
    assert run["invocations"][0]["executionSuccessful"] is True
    missing = str(tmp_path / "missing.ptx")
    run = _sarif(["lint", missing], 2, capsys)
    assert run["results"] == [] and run["invocations"][0]["executionSuccessful"] is False
    note = run["invocations"][0]["toolExecutionNotifications"][0]
    assert "cannot read" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == Path(missing).as_uri()


def test_lint_warnings_are_warnings_with_the_manuals_section(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    f = tmp_path / "w.ptx"
    f.write_text(".version 8.6\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                 "\t.shared .align 8 .b64 bar;\n\tmbarrier.init.shared::cta.b64 [bar], 0;\n\tret;\n}\n")
    run = _sarif(["lint", str(f)], 0, capsys)
    (r,) = run["results"]
    (rule,) = run["tool"]["driver"]["rules"]
    assert r["level"] == "warning" and rule["id"] == "init-count-range"
    assert rule["defaultConfiguration"]["level"] == "warning" and "9.7.13.15.9" in rule["help"]["text"]


def test_check_race_sarif_has_both_accesses_and_a_flow_per_agent(capsys: pytest.CaptureFixture[str]) -> None:
    run = _sarif(["check", str(RACES / "cluster_exchange_bug_cta_scope.ptx"), "--grid", "2", "--block", "2",
                  "--cluster", "2"], 1, capsys)
    (r,) = run["results"]
    assert r["ruleId"] == "data-race" and r["locations"][0]["physicalLocation"]["region"]["startLine"] == 56
    lines = [loc["physicalLocation"]["region"]["startLine"] for loc in r["relatedLocations"]]
    assert lines == [44, 56]
    (flow,) = r["codeFlows"]
    ids = [t["id"] for t in flow["threadFlows"]]
    assert len(ids) == len(set(ids)) and {"thread 0", "thread 2"} <= set(ids)
    steps = [loc["executionOrder"] for t in flow["threadFlows"] for loc in t["locations"]]
    assert len(steps) == len(set(steps))  # each step in one thread's flow
    last = max(steps)
    (essential,) = [loc for t in flow["threadFlows"] for loc in t["locations"]
                    if loc["executionOrder"] == last]
    assert essential["importance"] == "essential"
    assert essential["location"]["physicalLocation"]["region"]["startLine"] == 56
    assert run["tool"]["driver"]["rules"][0]["properties"]["tags"] == ["mbarrier", "memory-model"]


def test_check_deadlock_verified_incomplete_and_unsupported(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    run = _sarif(["check", str(CORPUS / "ring_tx_mismatch.ptx"), "--grid", "1", "--block", "3"], 1, capsys)
    (r,) = run["results"]
    assert r["ruleId"] == "deadlock" and len(r["relatedLocations"]) == 3  # the three waiters
    flows = r["codeFlows"][0]["threadFlows"]
    assert {"thread 0", "thread 1", "thread 2", "copy c0"} <= {t["id"] for t in flows}
    run = _sarif(["check", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3"], 0, capsys)
    assert run["results"] == [] and run["tool"]["driver"]["rules"] == []
    run = _sarif(["check", str(CORPUS / "ring.ptx"), "--grid", "1", "--block", "3", "--max-states", "5"], 3,
                 capsys)
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "warning" and "stopped after 5 states" in note["message"]["text"]
    wg = tmp_path / "wg.ptx"
    wg.write_text(".version 8.6\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                  "\ttcgen05.fence::before_thread_sync;\n\tret;\n}\n")
    run = _sarif(["check", str(wg), "--grid", "1", "--block", "1"], 2, capsys)
    assert run["results"] == [] and run["invocations"][0]["executionSuccessful"] is False
    note = run["invocations"][0]["toolExecutionNotifications"][0]
    assert "not a finding" in note["message"]["text"]


@pytest.mark.parametrize(("path", "uri"), [("k.ptx", "k.ptx"), ("dir with space/k#1.ptx",
                                                                 "dir%20with%20space/k%231.ptx"),
                                           ("/abs/k.ptx", "file:///abs/k.ptx")])
def test_artifact_uris(path: str, uri: str) -> None:
    assert artifact_uri(path) == uri
