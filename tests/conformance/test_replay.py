"""CI replay of the recorded GPU observations: the model must agree with every defined case exactly and
flag every undefined one with the rule the case names (PTX ISA 9.7.13.15; records from an H100)."""

import copy
import dataclasses

import pytest

import mbarrier as mb
from mbarrier.core import encoding
from mbarrier.hw import records
from mbarrier.hw.replay import AGREE, DISAGREE, UNDEFINED_FLAGGED, compare, model_run

RECS = records.load(records.default_dir())
BY_ID = {r.case.id: r for r in RECS}


def test_there_are_enough_records_and_they_name_the_gpu():
    assert len(RECS) >= 150
    for r in RECS:
        gpu = r.header["gpu"]
        assert gpu["compute_capability"] == "9.0"
        assert gpu["name"] and gpu["driver"] and gpu["cuda_driver_api"] and r.header["date"]


@pytest.mark.parametrize("rec", RECS, ids=[r.case.id for r in RECS])
def test_model_agrees_with_the_gpu(rec):
    verdict = compare(rec.case, rec.result)
    assert verdict.kind == (AGREE if rec.case.ub is None else UNDEFINED_FLAGGED), verdict.reasons


# -- the comparison can fail ----------------------------------------------------------------------


def _mutated(case_id, index, value):
    rec = BY_ID[case_id]
    result = copy.deepcopy(dict(rec.result))
    result["obs"][str(index)]["values"][0] = value
    return compare(rec.case, result)


def test_a_changed_word_is_a_disagreement():
    v = _mutated("enc-arrive1-32", 3, "0x7fff1000001fffc0")
    assert v.kind == DISAGREE and "op 3 (load)" in v.reasons[0]


def test_a_changed_wait_result_is_a_disagreement():
    assert _mutated("tx-negative-first-100", 5, False).kind == DISAGREE


def test_a_token_differing_in_its_upper_word_is_a_disagreement():
    assert _mutated("enc-arrive1-32", 1, "0x7fff080000000400").kind == DISAGREE


def test_a_trap_in_a_defined_case_is_a_disagreement():
    rec = BY_ID["enc-init-1"]
    result = dict(rec.result, outcome="trap", error="cudaErrorLaunchFailure", obs={})
    assert compare(rec.case, result).kind == DISAGREE


def test_an_undefined_case_must_raise_the_named_rule_at_the_named_op():
    rec = BY_ID["ub-over-2-3"]
    assert rec.case.ub is not None
    wrong_rule = dataclasses.replace(rec.case, ub=dataclasses.replace(rec.case.ub, rule="tx-count-range"))
    assert compare(wrong_rule, rec.result).kind == DISAGREE
    wrong_op = dataclasses.replace(rec.case, ub=dataclasses.replace(rec.case.ub, op=0))
    assert compare(wrong_op, rec.result).kind == DISAGREE


# -- regressions: what the first GPU run taught the replay ----------------------------------------


def test_plain_token_low_word_is_stale_register_content():
    """enc-partial-32: arrive count 31 returned 0x..0000001f (the count operand's register) in the low
    word; only the upper 32 bits are the state, and the model's token agrees there."""
    rec = BY_ID["enc-partial-32"]
    gpu = int(rec.result["obs"]["1"]["values"][0], 16)
    assert gpu & 0xFFFFFFFF == 31
    b = mb.Barrier()
    b.init(32)
    tok = b.arrive(count=31)
    assert tok.word >> 32 == gpu >> 32
    assert compare(rec.case, rec.result).kind == AGREE


def test_no_complete_tokens_set_bit_0_and_plain_tokens_may_too():
    """Every recorded .noComplete token has bit 0 set (low word 1 from one lane, 0xffffffff from a warp
    in thr-nc-32); plain tokens carry stale register bits, bit 0 included (enc-phase3-1 op 3)."""
    nc_low = set()
    for r in RECS:
        for i, op in enumerate(r.case.ops):
            if op.op in ("arrive", "arrive_drop") and op.no_complete and str(i) in r.result.get("obs", {}):
                for v in r.result["obs"][str(i)]["values"]:
                    nc_low.add(int(v, 16) & 0xFFFFFFFF)
    assert nc_low and all(low & encoding.TOKEN_NO_COMPLETE_BIT for low in nc_low)
    assert {1, 0xFFFFFFFF} <= nc_low
    plain = int(BY_ID["enc-phase3-1"].result["obs"]["3"]["values"][0], 16)
    assert plain & 1 and not BY_ID["enc-phase3-1"].case.ops[3].no_complete


def test_a_warp_arrives_once_with_the_summed_count():
    """thr-all-128: each warp's 32 tokens are equal (the state before the warp's arrival)."""
    rec = BY_ID["thr-all-128"]
    tokens = [int(v, 16) >> 32 for v in rec.result["obs"]["1"]["values"]]
    for w in range(0, 128, 32):
        assert len(set(tokens[w : w + 32])) == 1
    pend = sorted({encoding.token_pending(t << 32) for t in tokens})
    assert pend == [32, 64, 96, 128]
    run = model_run(rec.case)
    assert sorted({encoding.token_pending(t) for t in run.obs[1]}) == pend


def test_arrive_expect_tx_token_is_taken_before_the_expect_tx():
    """tok-arrive-expect-65536: the token's tx bits are zero; the object afterwards holds tx 65536."""
    rec = BY_ID["tok-arrive-expect-65536"]
    tok = int(rec.result["obs"]["1"]["values"][0], 16)
    assert encoding.decode(tok & ~0xFFFFFFFF & ~(1 << 42)).tx == 0
    word = int(rec.result["obs"]["4"]["values"][0], 16)
    assert encoding.decode(word).tx == 65536


def test_completion_from_expect_tx_after_the_last_arrive():
    """tx-negative-first-100: complete_tx first, then the last arrive leaves pending 0 and tx -100;
    the expect_tx that brings tx to 0 completes the phase, on the GPU and in the model."""
    rec = BY_ID["tx-negative-first-100"]
    waits = [rec.result["obs"][k]["values"][0] for k in ("3", "5")]
    assert waits == [False, True]
    b = mb.Barrier()
    b.init(1)
    b.complete_tx(100)
    b.arrive()
    assert not b.test_wait(parity=0)
    b.expect_tx(100)
    assert b.test_wait(parity=0)
