"""The frozen futures of copy seeds within one state (`explore.por.AllFootprints._futures`): while a state's
stubborn set is built the machine stands still, and two copy seeds whose keys are equal
(`por._copy_seed_key`: the cuts, the threads whose copy gates the seed keeps shut, the other copies'
sources) have the same fixpoint, so the second takes the first's with only the two copies' own entries
changed (`AllFootprints._reseeded`). Every such answer is compared with the one computed afresh: the same
items, bar arrivals, CTAs kept alive, sources, indexed futures and bar.sync tally; and the search takes the
same stubborn sets and verdicts (PTX ISA 9.7.9.25.3: cp.async; 9.7.13.15.15: cp.async.mbarrier.arrive)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mbarrier.explore import closure as CL
from mbarrier.explore import por as P
from mbarrier.explore.check import Options, check
from mbarrier.explore.footprints import copy_items, group
from mbarrier.sim.machine import Copy

from .helpers import load

# Thread 0 issues `copies` cp.async copies of one word into words 16 bytes apart of `tile`, one group, and a
# cp.async.mbarrier.arrive.noinc on `full` (count 1); thread 1 waits on `full` and reads the tile ({read}:
# after the wait, or before it: a race with the copies). Several copies of one thread are in flight at
# once, equal seeds for the frozen futures.
COPIES = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<8>;
	.shared .align 8 .b8 full[8];
	.shared .align 16 .b8 tile[64];
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra MEET;
	mbarrier.init.shared::cta.b64 [full], 1;
MEET:
	bar.sync 0;
	@%p0 bra CONSUME;
	ld.param.u64 %rd0, [src];
	cvta.to.global.u64 %rd0, %rd0;
	mov.u32 %r3, tile;
{issue}
	cp.async.mbarrier.arrive.noinc.shared.b64 [full];
	exit;
CONSUME:
{early}
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], 0;
	@!%p2 bra WAIT;
{late}
	exit;
}}
"""
READ = "\tld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [tile];"


def _copies(copies: int, early: bool) -> str:
    issue = "\n".join(f"\tadd.u32 %r4, %r3, {16 * k};\n\tcp.async.ca.shared.global [%r4], [%rd0], 4;"
                      for k in range(copies))
    return COPIES.format(issue=issue, early=READ if early else "", late="" if early else READ)


def _same(a: P.Kept, b: P.Kept) -> None:
    assert a.cuts == b.cuts and a.whole == b.whole
    assert a.fix.lists == b.fix.lists
    assert a.fix.bars == b.fix.bars
    assert a.fix.lives == b.fix.lives
    assert a.fix.exact == b.fix.exact
    assert all(p is q for p, q in zip(a.fix.plans, b.fix.plans, strict=True))
    assert [ix.future for ix in a.indexes] == [ix.future for ix in b.indexes]
    assert a.immortal == b.immortal
    assert (a.counted.total, a.counted.counts, a.counted.unknown, a.counted.mixed, a.counted.own) == \
        (b.counted.total, b.counted.counts, b.counted.unknown, b.counted.mixed, b.counted.own)
    assert a.quiet.seed is b.quiet.seed and a.quiet.exact == b.quiet.exact


@pytest.mark.parametrize(("copies", "early", "first"), [(3, False, 1), (3, False, CL.FIRST_PASS),
                                                      (4, True, 1)])
def test_a_copy_seeds_reused_futures_are_the_ones_computed_afresh(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copies: int, early: bool, first: int) -> None:
    original = P.AllFootprints._futures
    reused = P.AllFootprints._reseeded
    seen = {"reused": 0, "compared": 0}

    def counted(self: P.AllFootprints, *args: Any) -> P.Kept:
        seen["reused"] += 1
        return reused(self, *args)

    def both(self: P.AllFootprints, *args: Any) -> P.Kept:
        kept = original(self, *args)
        memo = self._by_copy
        self._by_copy = {}
        try:
            fresh = original(self, *args)
        finally:
            self._by_copy = memo
        _same(kept, fresh)
        seen["compared"] += 1
        return kept

    monkeypatch.setattr(P.AllFootprints, "_futures", both)
    monkeypatch.setattr(P.AllFootprints, "_reseeded", counted)
    monkeypatch.setattr(CL, "FIRST_PASS", first)  # 1: each seed's closure pauses at once, every seed is tried
    r = check(load(tmp_path, _copies(copies, early)), grid=1, block=2,
              options=Options(walks=0, max_findings=100))
    assert r.verdict == ("finding" if early else "verified")
    assert seen["reused"] > 0 and seen["compared"] > seen["reused"], seen


@pytest.mark.parametrize(("copies", "early", "first"), [(2, False, 1), (3, False, CL.FIRST_PASS),
                                                      (3, True, 1), (4, True, CL.FIRST_PASS)])
def test_the_same_sets_as_without_reuse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copies: int,
                                        early: bool, first: int) -> None:
    module = load(tmp_path, _copies(copies, early))
    monkeypatch.setattr(CL, "FIRST_PASS", first)
    original = CL.stubborn

    reused = P.AllFootprints._reseeded
    seen = {"reused": 0}

    def counted(self: P.AllFootprints, *args: Any) -> P.Kept:
        seen["reused"] += 1
        return reused(self, *args)

    monkeypatch.setattr(P.AllFootprints, "_reseeded", counted)

    def run() -> tuple[list[list[int]], str, int]:
        sets: list[list[int]] = []

        def traced(*args: Any, **kwargs: Any) -> list[int]:
            out = original(*args, **kwargs)
            sets.append(out)
            return out

        monkeypatch.setattr("mbarrier.explore.check.stubborn", traced)
        r = check(module, grid=1, block=2, options=Options(walks=0, max_findings=100))
        return sets, r.verdict, r.stats.states

    with_reuse = run()
    assert seen["reused"] > 0
    monkeypatch.setattr(P, "_copy_seed_key", lambda *args: (object(),))  # every copy seed its own key
    assert run() == with_reuse


@pytest.mark.parametrize("early", [False, True])
def test_a_copys_kept_future_is_the_one_its_items_give_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          early: bool) -> None:
    """A copy's indexed future is kept while what its items read beyond its fixed fields stays the same
    (`footprints.copy_state`: tracked or not, its barrier's landing mode); compared with the items of the
    copy as it stands, at every query, as the arrive-on comes to watch the copies."""
    original = P.AllFootprints.future
    seen = {"copies": 0, "tracked": 0}

    def fresh(self: P.AllFootprints, a: Any) -> P.FutureIndex:
        found = original(self, a)
        if isinstance(a, Copy):
            assert found.future == group(copy_items(a, self.machine))
            seen["copies"] += 1
            seen["tracked"] += a.kind == "cp.async" and bool(a.watchers)
        return found

    monkeypatch.setattr(P.AllFootprints, "future", fresh)
    r = check(load(tmp_path, _copies(3, early)), grid=1, block=2, options=Options(walks=0, max_findings=100))
    assert r.verdict == ("finding" if early else "verified")
    assert seen["copies"] > seen["tracked"] > 0, seen
