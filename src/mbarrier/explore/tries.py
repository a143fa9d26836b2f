"""Where a wait tried once leads, by its result, in a thread's unrolled future (`values.Unrolled`).

A `try_wait`/`test_wait` that is no spin-wait (its False result does not lead back to it, nor to a
spin-wait on the same operands through local code alone: CUTLASS's `barrier.try_wait` first try, whose
failure path passes a `brkpt` check of a register before its spin loop) writes its result to a
predicate, and the code branches on it a few instructions later. The unrolled future holds both ways,
since the result is not known. While the wait's barrier cannot complete its phase before the seed
moves, the result is False (PTX ISA 9.7.13.15.16: try_wait and test_wait only read the phase), so the
success way is behind a gate (`explore.frozen`, `Gate.tried`); this finds where each way goes: the
nodes where the paths leave the instructions that only move the result around (selp, setp, not, mov),
or where nothing derived from the result is left to decide a branch.
"""

from __future__ import annotations

from collections.abc import Callable

from mbarrier.explore.code import BRANCH, LOCAL, Code, abstract_step, guard_value
from mbarrier.explore.values import Unrolled

# Nodes followed per way at most; past it the remaining paths are given up as frontier (both ways).
LIMIT = 256


def frontier(code: Code, graph: Unrolled, node: int, result: bool,
             succ: Callable[[int], tuple[int, ...]]) -> list[int]:
    """The nodes where the paths from wait `node` (of `graph`) with result `result` leave the
    result-derived local code: a node that is not local, or where no result-derived value is left.
    Branches decided by the result take their way only; every other successor (`succ`: the plan's, with
    its barrier cuts) is kept. Local nodes passed on the way do nothing visible."""
    w = code.ins[graph.pcs[node]]
    assert w.wait_dst is not None
    start: dict[int, tuple[object, ...]] = {w.wait_dst: ("res", False)}
    todo = [(s, start) for s in succ(node)]
    seen: set[tuple[int, tuple[tuple[int, tuple[object, ...]], ...]]] = set()
    out: list[int] = []
    while todo:
        n, env = todo.pop()
        key = (n, tuple(sorted(env.items())))
        if key in seen:
            continue
        seen.add(key)
        x = code.ins[graph.pcs[n]]
        if not env or x.kind not in (LOCAL, BRANCH) or len(seen) > LIMIT:
            out.append(n)
            continue
        decided = guard_value(x, env, result)
        nxt = succ(n)
        if x.kind == BRANCH:
            if x.guard is not None and decided is not None and x.target is not None and x.target >= 0:
                way = x.target if decided else x.pc + 1
                nxt = tuple(s for s in nxt if graph.pcs[s] == way)
        elif decided is not False:
            env = dict(env)
            if decided is None:  # a guard the result does not decide: what it writes is unknown
                for d in x.defs:
                    env.pop(d, None)
            else:
                abstract_step(code, x, env, result)
        todo.extend((s, env) for s in nxt)
    return out
