"""The registers a thread's future depends on (`code.relevant_registers`): those whose values may reach a
guard, an address, a wait's parity or token, a count, a byte count, a ctaMask, a membermask or a shfl
operand; data (loaded words, sums, fragments) none of these reads is no part of the unrolled futures'
envs nor of the plans' keys. And a thread's future read off the graph unrolled at an earlier pc of its
path (`values.resume`) is the graph `unroll` builds at its pc now. The reductions find what the search
without them finds on a ring whose consumers sum what they read, and on one whose consumers take their
parity from the word they read (a loaded value that is relevant)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Explorer, Options
from mbarrier.explore.code import Code
from mbarrier.explore.liveregs import LiveRegs
from mbarrier.explore.values import Unrolled, resume, unroll
from mbarrier.sim.machine import EXITED, Thread

from .helpers import differential, load
from .test_unrolled import ring

# The consumers of `ring` sum the words they read (%r21) and store the sum when done (each thread its own
# word); with `loaded`, they
# take the next iteration's parity from the word they read (the producer writes its iteration count, or
# one more with the `off` bug) instead of their counter.
SUM = ("\tld.shared.u32 %r20, [%r12];\n", "\tld.shared.u32 %r20, [%r12];\n\tadd.u32 %r21, %r21, %r20;\n")
LOADED = ("\tshr.u32 %r7, %r2, 1;\n\tand.b32 %r8, %r7, 1;\n\txor.b32 %r9, %r8, 0;\nCW:",
          "\tshr.u32 %r7, %r22, 1;\n\tand.b32 %r8, %r7, 1;\n\txor.b32 %r9, %r8, 0;\nCW:")


def summing(loaded: bool = False, off: bool = False, bug: str | None = None) -> str:
    text = ring(1, bug).replace(*SUM)
    text = text.replace("SYNC:\n\tbar.sync 0;\n",
                        "SYNC:\n\tbar.sync 0;\n\tmov.u32 %r21, 0;\n\tmov.u32 %r22, 0;\n")
    text = text.replace(".b8 data[16]", ".b8 data[32]").replace("DONE:\n\texit;", (
        "DONE:\n\tshl.b32 %r24, %r0, 2;\n\tmov.u32 %r25, data;\n\tadd.u32 %r25, %r25, %r24;\n"
        "\tst.shared.u32 [%r25+16], %r21;\n\texit;"))
    if loaded:
        assert LOADED[0] in text
        text = text.replace(*LOADED).replace(SUM[1], SUM[1] + "\tadd.u32 %r22, %r20, 1;\n")
        if off:
            text = text.replace("\tst.shared.u32 [%r12], %r2;",
                                "\tadd.u32 %r23, %r2, 1;\n\tst.shared.u32 [%r12], %r23;")
    return text


def _explorer(tmp_path: Path, text: str, n: int) -> Explorer:
    module = load(tmp_path, text)
    m = sim.launch(module, grid=1, block=2, args={"n": n})
    ex = Explorer(m, module, Options(walks=0))
    for t in m.threads:
        ex.eager(t, [])
    return ex


def test_data_registers_are_not_relevant(tmp_path: Path) -> None:
    text = summing()
    lines = text.splitlines()
    ex = _explorer(tmp_path, text, 4)
    code = ex.fp.fps[ex.m.threads[0].func.name].code
    add = next(x for x in code.ins if x.line == lines.index("\tadd.u32 %r21, %r21, %r20;") + 1)
    (sum_slot,) = add.defs
    waits = [x for x in code.ins if x.op == "mbarrier.try_wait"]
    assert len(waits) == 2
    for x in waits:
        live, rel = code.live[x.pc], code.relevant[x.pc]
        assert x.addr is not None and x.addr.base in rel and x.wait_arg[0] in rel
        assert rel < live
    consumer = waits[1]
    assert sum_slot in code.live[consumer.pc] and sum_slot not in code.relevant[consumer.pc]
    assert not any(sum_slot in r for r in code.relevant)   # it reaches only a stored value


def _canonical(g: Unrolled, code: Code, t: Thread) -> list[tuple[object, ...]]:
    """The graph from its start, nodes numbered in breadth-first order, envs without what is fixed at
    the thread's pc (a resumed graph's envs also hold what was not yet fixed where it was unrolled)."""
    order, index = [g.start], {g.start: 0}
    for n in order:
        for k in g.succ[n]:
            if k not in index:
                index[k] = len(order)
                order.append(k)
    return [(g.pcs[n], tuple(sorted((s, type(v).__name__, v) for s, v in g.envs[n].items()
                                    if not code.fixed(t.pc, s))),
             tuple(index[k] for k in g.succ[n]), g.on_cycle[n]) for n in order]


@pytest.mark.parametrize("loaded", [False, True])
def test_a_resumed_future_is_the_one_unroll_builds(tmp_path: Path, loaded: bool) -> None:
    ex = _explorer(tmp_path, summing(loaded), 5)
    code = ex.fp.fps[ex.m.threads[0].func.name].code
    fp = ex.fp.fps[ex.m.threads[0].func.name]
    rel = LiveRegs(relevant=True).of(code)[0]
    rng = random.Random(7)
    graphs: dict[int, Unrolled] = {}
    hits = misses = 0
    for _ in range(400):
        live = [t for t in ex.m.threads if t.status != EXITED]
        if not live:
            break
        for t in live:
            fresh = unroll(ex.m, code, t, rel, lambda j, env, t=t: fp.successors(t, j, t.pc, env))
            before = graphs.get(t.aid)
            got = None if before is None else resume(before, code, t, rel)
            if got is None:
                misses += 1
                graphs[t.aid] = fresh
            else:
                hits += 1
                assert _canonical(got, code, t) == _canonical(fresh, code, t), (t.aid, t.pc)
        t = rng.choice([a for a in ex.m.runnable if isinstance(a, Thread)])
        ex.step(t, [])
        ex.settle([t.aid], {a.aid for a in ex.m.runnable if isinstance(a, Thread)})
    assert all(t.status == EXITED for t in ex.m.threads)
    assert hits > misses > 0, (hits, misses)


CASES = [(False, False, n, bug) for n in (2, 3) for bug in (None, "parity", "count", "extra")]
CASES += [(True, False, n, None) for n in (2, 3)] + [(True, True, n, None) for n in (2, 3)]


@pytest.mark.parametrize(("loaded", "off", "n", "bug"), CASES,
                         ids=[f"{c[0]}-{c[1]}-n{c[2]}-{c[3]}" for c in CASES])
def test_summing_rings_same_outcomes_as_without_reductions(tmp_path: Path, loaded: bool, off: bool, n: int,
                                                           bug: str | None) -> None:
    text = summing(loaded, off, bug)
    _, off_result = differential(load(tmp_path, text), block=2, args={"n": n},
                                 max_states=300_000, merge_races=True)
    if bug is None:   # the ring's bugs need n >= 3 for some (a stage used again): the differential decides
        assert off_result.verdict == ("finding" if off else "verified")
