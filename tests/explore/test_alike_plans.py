"""Alike threads in the frozen futures' fixpoint (`explore.frozen.Frozen.futures`): threads of one CTA whose
plans have the same sources (`Plan.sources`: arrivals, tx-count changes, bar arrivals, gates and the
segments behind them) take part as one, their counts multiplied. The fixpoint's answer is the one the
threads give one by one (every agent's items, bar arrivals, the CTAs kept alive, the sources), and the
checks give the same verdicts and finding kinds as without reductions, with counts off by one that only
the multiplied counts decide (PTX ISA 9.7.13.15.14: a phase completes when its pending count reaches 0;
9.7.12.1: bar.sync with a thread count)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mbarrier.explore import frozen as F
from mbarrier.explore.check import Options, check
from mbarrier.explore.tally import BarUse, Tally, bar_arrivals

from .helpers import differential, load, outcome

# Thread 0 produces `trips` values into `slot` (waits for `empty`, stores, arrives on `full`); threads
# 1.. consume each (wait for `full`, read) and release it: {release}. `empty` expects `need` arrivals.
# Thread `by` (none where it is past the block) stands by: it stores twice to `out` and exits (a seed
# whose futures leave the others free).
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 trips, .param .u32 need, .param .u32 by)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<24>;
	.reg .b64 %rd<12>;
	.shared .align 4 .b32 slot;
	.shared .align 8 .b64 full;
	.shared .align 8 .b64 empty;
	mov.u32 %r1, %tid.x;
	ld.param.u32 %r3, [trips];
	ld.param.u32 %r4, [need];
	ld.param.u32 %r9, [by];
	ld.param.u64 %rd3, [out];
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared::cta.b64 [full], 1;
	mbarrier.init.shared::cta.b64 [empty], %r4;
SYNC:
	bar.sync 0;
	mov.u32 %r5, 0;
	mov.u32 %r6, 0;
	setp.eq.u32 %p5, %r1, %r9;
	@%p5 bra BY;
	@%p1 bra CONSUME;
PRODUCE:
	xor.b32 %r7, %r6, 1;
PWAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [empty], %r7;
	@!%p2 bra PWAIT;
	st.shared.u32 [slot], %r5;
	mbarrier.arrive.shared::cta.b64 %rd1, [full];
	xor.b32 %r6, %r6, 1;
	add.u32 %r5, %r5, 1;
	setp.lt.u32 %p3, %r5, %r3;
	@%p3 bra PRODUCE;
	ret;
CONSUME:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [full], %r6;
	@!%p2 bra CONSUME;
	ld.shared.u32 %r8, [slot];
{release}
	xor.b32 %r6, %r6, 1;
	add.u32 %r5, %r5, 1;
	setp.lt.u32 %p3, %r5, %r3;
	@%p3 bra CONSUME;
	mul.wide.u32 %rd4, %r1, 4;
	add.u64 %rd5, %rd3, %rd4;
	st.global.u32 [%rd5], %r8;
	ret;
BY:
	st.global.u32 [%rd3], %r1;
	st.global.u32 [%rd3], %r9;
	ret;
}}
"""

RELEASES = {
    # every consumer arrives on `empty` (`need`: the consumers)
    "arrive": "\tmbarrier.arrive.shared::cta.b64 %rd2, [empty];",
    # the consumers meet at `bar.sync 1, {bars}` (the consumers), then consumer 1 alone arrives (`need` 1)
    "meet": """	bar.sync 1, {bars};
	setp.ne.u32 %p4, %r1, 1;
	@%p4 bra NEXT;
	mbarrier.arrive.shared::cta.b64 %rd2, [empty];
NEXT:""",
}


def kernel(tmp_path: Path, release: str, bars: int = 0) -> Any:
    return load(tmp_path, KERNEL.format(release=RELEASES[release].format(bars=bars)))


@pytest.mark.parametrize("off", [0, 1])  # one short (a deadlock): the bar test below has that kind
def test_arrivals_of_alike_threads_same_answers_as_without_reductions(tmp_path: Path, off: int) -> None:
    consumers = 3
    on, _ = differential(kernel(tmp_path, "arrive"), block=consumers + 1,
                         args={"trips": 2, "need": consumers + off, "by": 99})
    if off == 0:
        assert outcome(on) == ("verified", frozenset())
    else:
        assert on.verdict == "finding"  # one arrival too many: the slot races


@pytest.mark.parametrize("off", [0, 1])
def test_bar_arrivals_of_alike_threads_same_answers_as_without_reductions(tmp_path: Path, off: int) -> None:
    consumers = 3
    on, _ = differential(kernel(tmp_path, "meet", consumers + off), block=consumers + 1,
                         args={"trips": 2, "need": 1, "by": 99})
    assert outcome(on) == (("verified", frozenset()) if off == 0 else ("finding", frozenset({"deadlock"})))


# 1 producer, 3 consumers, the bystander (thread 4)
@pytest.mark.parametrize(("release", "bars", "need"), [("arrive", 0, 3), ("arrive", 0, 2), ("meet", 3, 1)])
def test_the_fixpoint_is_the_one_of_the_threads_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          release: str, bars: int, need: int) -> None:
    original = F.Frozen.futures
    seen = {"calls": 0, "grouped": 0}

    def both(self: F.Frozen, *args: Any, **kwargs: Any) -> F.Fixpoint:
        grouped = original(self, *args, **kwargs)
        agents = args[2]
        plans = [(a, p) for a, p in zip(agents, grouped.plans, strict=True) if p is not None and not p.pure]
        kept = {id(p): p.sources for _, p in plans}
        alike = len({(a.cta.index, id(p.sources)) for a, p in plans})
        for _, p in plans:
            p.sources = object()  # every plan its own: the threads one by one
        try:
            alone = original(self, *args, **kwargs)
        finally:
            for _, p in plans:
                p.sources = kept[id(p)]
        seen["calls"] += 1
        seen["grouped"] += alike < len(plans)
        assert grouped.lists == alone.lists
        assert grouped.bars == alone.bars
        assert grouped.lives == alone.lives
        assert grouped.exact == alone.exact
        return grouped

    monkeypatch.setattr(F.Frozen, "futures", both)
    r = check(kernel(tmp_path, release, bars), grid=1, block=5, args={"trips": 2, "need": need, "by": 4},
              options=Options(walks=0, max_findings=1000))
    assert r.verdict != "incomplete"
    assert seen["grouped"] > 0, seen  # some fixpoint had alike threads


def test_the_bar_tally_of_alike_threads_is_theirs_one_by_one() -> None:
    # A thread's bar.sync 1, 4 in its first segment and, behind a gate, a bar.arrive 2, 8 and a bar.sync at
    # an id it cannot name (node, id, count, waits, repeats): three threads one by one, or one for three.
    first: list[BarUse] = [(1, 1, 4, True, False)]
    behind: list[BarUse] = [(5, 2, 8, False, False), (6, None, 0, True, False)]
    paths: dict[int | None, int] = {2: 1}
    plan = SimpleNamespace(start=SimpleNamespace(bars=first), bar_paths=paths,
                           start_own=bar_arrivals(first, paths), start_counts=[(1, 4)])
    one_by_one, as_one = Tally(), Tally()
    for li in range(3):
        one_by_one.start(li, 0, plan)  # type: ignore[arg-type]
    as_one.start(0, 0, plan, 3)  # type: ignore[arg-type]
    touched = [one_by_one.add(li, 0, plan, behind) for li in range(3)]  # type: ignore[arg-type]
    assert touched[0] == as_one.add(0, 0, plan, behind, 3) == {(0, 2), (0, None)}  # type: ignore[arg-type]
    assert one_by_one.total == as_one.total == {(0, 1): 3, (0, 2): 3}
    assert one_by_one.counts == as_one.counts and one_by_one.unknown == as_one.unknown == {0}
