"""A wait tried once before a spin-wait on the same operands (libcu++'s `barrier::wait`: one try, then its
back-off loop) is blocked like the spin itself when both success paths join where nothing either way
wrote is live (`code._first_try`, `explore.spin`): the first try's failure was a visible step that
conflicted with every arrival, and the states grew with the subsets of threads. Same verdicts and kinds
as without reductions (PTX ISA 9.7.13.15.16: try_wait only reads the phase), states linear."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Options, check
from mbarrier.explore.code import MB, analyse, shared_symbols
from mbarrier.ptx import ast

from .helpers import BLOCK_ARRIVES_HEAD, BLOCK_ARRIVES_TAIL, differential, load, outcome

KERNEL = BLOCK_ARRIVES_HEAD + """\
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [tile], [%rd1], %r4, [bar];
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], %r4;
	bra.uni FIRST;
ARRIVE:
	mbarrier.arrive.shared::cta.b64 %rd2, [bar];
FIRST:
	mbarrier.try_wait.shared::cta.b64 %p2, [bar], %rd2;
	@%p2 bra {success};
	mov.u32 %r5, 0;
LOOP:
	add.u32 %r5, %r5, 1;
	mbarrier.try_wait.shared::cta.b64 %p3, [bar], %rd2;
	@!%p3 bra LOOP;
	bra.uni DONE;
FAST:
	mov.u32 %r5, 7;
""" + BLOCK_ARRIVES_TAIL


def kernel(tmp_path: Path, extra: int = 0, success: str = "DONE", lane: int = 1) -> ast.Module:
    return load(tmp_path, KERNEL.format(extra=extra, success=success, lane=lane))


def _retry_at(module: ast.Module) -> list[int | None]:
    m = sim.launch(module, grid=1, block=2)
    code = analyse(module.functions[0], m.functions["k"], shared_symbols(m))
    return [x.retry_at for x in code.ins if x.kind == MB and x.mb_op == "try_wait"]


def test_the_first_try_hands_over_to_the_loop(tmp_path: Path) -> None:
    first, loop = _retry_at(kernel(tmp_path))
    assert first is not None and loop is None


@pytest.mark.parametrize("success, lane", [("FAST", 5), ("DONE", 5)])
def test_no_hand_over_where_the_paths_differ_after_success(tmp_path: Path, success: str, lane: int) -> None:
    # FAST writes r5, which DONE reads: a success at the first try is not a success at the loop; with
    # DONE, the retry count r5 is read after the loop's success.
    assert _retry_at(kernel(tmp_path, success=success, lane=lane))[0] is None


ANSWERS = {0: ("verified", frozenset()), 1: ("finding", frozenset({"deadlock"}))}  # count one too high


@pytest.mark.parametrize("extra", sorted(ANSWERS))
@pytest.mark.parametrize("threads", [2, 3])
def test_same_answers_as_without_reductions(tmp_path: Path, extra: int, threads: int) -> None:
    on, _ = differential(kernel(tmp_path, extra=extra), block=threads)
    assert outcome(on) == ANSWERS[extra]


def test_states_linear_in_the_threads(tmp_path: Path) -> None:
    k = kernel(tmp_path)
    states = [check(k, grid=1, block=n, options=Options(walks=0)).stats.states for n in (4, 8, 16)]
    assert states[2] - states[1] <= 2 * (states[1] - states[0]) + 4, states
    assert states[2] < 40 * 16, states
