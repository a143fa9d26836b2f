"""Every thread of a block arrives on one mbarrier and waits on its token, as libcu++'s
`cuda::barrier::arrive_and_wait` does, while one thread brings the bytes with a bulk copy: arrive-ons,
expect_tx and the copy's landing that cannot complete the phase before the stubborn set's seed moves
commute with every step outside the set (`explore.quiet`); a token wait whose token comes from the
thread's own arrival is a gate of the frozen futures (`explore.frozen`), the back-off loop around it
too. The same verdicts and finding kinds as
without reductions, correct and with bugs, and states linear in the threads (they were exponential:
PTX ISA 9.7.13.15.6, a phase completes when its pending count and tx-count are both 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check
from mbarrier.ptx import ast

from .helpers import BLOCK_ARRIVES_HEAD, BLOCK_ARRIVES_TAIL, differential, load, outcome

KERNEL = BLOCK_ARRIVES_HEAD + """{producer}
ARRIVE:
	mbarrier.arrive.shared::cta.b64 %rd2, [bar];
{after}
	mov.u32 %r5, 0;
	mov.u64 %rd3, %globaltimer;
WAIT:
	mbarrier.try_wait.shared::cta.b64 %p2, [bar], %rd2;
	@%p2 bra DONE;
	add.u32 %r5, %r5, 1;
	setp.lt.u32 %p3, %r5, 16;
	@%p3 bra WAIT;
	mov.u64 %rd4, %globaltimer;
	sub.u64 %rd5, %rd4, %rd3;
	setp.lt.u64 %p4, %rd5, 40000;
	@%p4 bra WAIT;
	nanosleep.u32 100;
	bra.uni WAIT;
""" + BLOCK_ARRIVES_TAIL.replace("{lane}", "1")

EXPECT = "\tmbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], %r4;"
COPY = "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [tile], [%rd1], %r4, [bar];"
# The thread that issues the copy does its expect_tx after its own arrival (the `after` slot, guarded).
LATE = "\t@!%p1 " + EXPECT.strip()

VARIANTS = {
    "expect-first": dict(producer=EXPECT + "\n" + COPY, after="", extra=0),   # CUTLASS's order
    "copy-first": dict(producer=COPY + "\n" + EXPECT, after="", extra=0),     # libcu++'s memcpy_async
    "late-expect": dict(producer=COPY, after=LATE, extra=0),     # the phase may complete before the bytes
    "count-high": dict(producer=EXPECT + "\n" + COPY, after="", extra=1),     # one arrival never comes
}


def kernel(tmp_path: Path, name: str) -> ast.Module:
    return load(tmp_path, KERNEL.format(**VARIANTS[name]), name.replace("-", "_"))


@pytest.mark.parametrize("name", sorted(VARIANTS))
@pytest.mark.parametrize("threads", [2, 3])
def test_same_answers_as_without_reductions(tmp_path: Path, name: str, threads: int) -> None:
    on, _ = differential(kernel(tmp_path, name), block=threads)
    expected = {"expect-first": ("verified", frozenset()), "copy-first": ("verified", frozenset()),
                "late-expect": ("finding", frozenset({"race", "violation"})),
                "count-high": ("finding", frozenset({"deadlock"}))}
    assert outcome(on) == expected[name]


@pytest.mark.parametrize("name", ["expect-first", "copy-first"])
def test_states_linear_in_the_threads(tmp_path: Path, name: str) -> None:
    k = kernel(tmp_path, name)
    states = [check(k, grid=1, block=n, options=Options(walks=0)).stats.states
              for n in (4, 8, 16)]
    # Exponential before (2^N subsets of arrived threads): 16 threads did not finish in 60 s.
    assert states[2] - states[1] <= 2 * (states[1] - states[0]) + 4, states
    assert states[2] < 40 * 16, states
