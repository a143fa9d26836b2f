"""The litmus description format (mbarrier.hw.litmus) and the shipped catalogue."""

import importlib.util
import json
from pathlib import Path

import pytest

from mbarrier.hw import litmus
from mbarrier.hw.litmus import CaseError, case_from_dict, catalogue, layout, load_cases
from mbarrier.spec.rules import RULES_BY_ID

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("make_cases", ROOT / "tools" / "make_cases.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_catalogue_json_is_what_the_tool_builds():
    shipped = (ROOT / "src" / "mbarrier" / "hw" / "data" / "cases.json").read_text(encoding="utf-8")
    assert shipped == _tool().render(), "run: python tools/make_cases.py"


def test_catalogue_round_trips_through_its_dicts():
    for case in catalogue():
        assert case_from_dict(case.to_dict()) == case


def test_catalogue_covers_what_the_issue_asks():
    cases = catalogue()
    assert len(cases) >= 150
    inits = {op.count for c in cases if c.group == "encoding" for op in c.ops if op.op == "init"}
    assert {1, 2, 3, 32, 1000, 1 << 19, (1 << 20) - 1} <= inits
    assert {2, 4} <= {c.ctas for c in cases if any(op.remote for op in c.ops)}
    ops = [op for c in cases for op in c.ops]
    assert {True, False} == {op.noinc for op in ops if op.op == "cp_async_arrive"}
    assert any(op.op == "try_wait" and op.hint is not None for op in ops)
    assert any(op.op == "try_wait" and op.hint is None and op.timed for op in ops)
    assert any(op.op == "bulk_copy" for op in ops)
    assert any(op.no_complete for op in ops) and any(op.expect_tx is not None for op in ops)
    assert max(c.threads for c in cases) == 1024
    # Every rule the core checks, plus the simulator's ordinary-access rule, has a recorded UB case.
    ub_rules = {c.ub.rule for c in cases if c.ub}
    core_rules = {r.id for r in RULES_BY_ID.values() if r.checked_by == "core"}
    assert core_rules <= ub_rules
    assert ub_rules <= set(RULES_BY_ID)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"ops": [{"op": "frobnicate"}]}, "unknown operation 'frobnicate'"),
        ({"ops": [{"op": "init"}]}, "init needs count"),
        ({"ops": [{"op": "init", "count": 1, "tx": 3}]}, "init takes no field(s) tx"),
        ({"ops": [{"op": "test_wait"}]}, "exactly one of token and parity"),
        ({"ops": [{"op": "pending_count", "token": "a"}]}, "token 'a' was not set"),
        ({"ops": [{"op": "arrive", "thread": 40}]}, "past the block of 32"),
        ({"ops": [{"op": "arrive", "target": 1}]}, "CTA out of range"),
        ({"ops": [{"op": "arrive", "target": 0, "token": "a"}]}, "returns no token"),
        ({"ops": [{"op": "arrive", "no_complete": True}]}, "needs a count"),
        ({"ops": [{"op": "bulk_copy", "bytes": 20}]}, "multiples of 16"),
        ({"ctas": 3}, "ctas must be one of"),
        ({"ub": {"rule": "x", "op": 5}}, "ub.op must be an integer in [0, 0]"),
        ({"colour": "red"}, "unknown field(s) colour"),
    ],
)
def test_malformed_cases_are_refused_with_the_case_and_op(patch, message):
    d = {"id": "bad-1", "group": "g", "title": "t", "ops": [{"op": "init", "count": 1}], **patch}
    with pytest.raises(CaseError) as e:
        case_from_dict(d)
    assert message in str(e.value)
    assert "bad-1" in str(e.value)


def test_duplicate_ids_are_refused():
    d = {"id": "same", "group": "g", "title": "t", "ops": [{"op": "init", "count": 1}]}
    with pytest.raises(CaseError, match="duplicate case id 'same'"):
        load_cases([d, d])


def test_layout_gives_each_observing_thread_its_slots():
    case = case_from_dict(
        json.loads(
            json.dumps(
                {
                    "id": "lay",
                    "group": "g",
                    "title": "t",
                    "threads": 64,
                    "ops": [
                        {"op": "init", "count": 64},
                        {"op": "arrive", "threads": [0, 64], "token": "a"},
                        {"op": "try_wait", "parity": 0, "timed": True},
                        {"op": "arrive", "target": 0},
                        {"op": "inval"},
                        {"op": "load"},
                    ],
                }
            )
        )
    )
    lay = layout(case)
    assert lay.slots[1] == litmus.Slot(0, 1)
    assert lay.slots[2] == litmus.Slot(64, 3)
    assert 3 not in lay.slots  # a shared::cluster arrive returns no token
    assert lay.slots[5] == litmus.Slot(67, 1)
    assert lay.done_slot == 68


def test_pattern_checksum_sums_the_copied_words():
    assert litmus.pattern_checksum(16, 16) == sum(litmus.pattern_word(i) for i in range(4, 8))
