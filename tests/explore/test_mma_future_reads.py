"""A future wgmma.mma_async reads the bytes its descriptors name (`Footprints._engine_reads`,
`sim.mma.engine_chunks`, the engine's own function), not anywhere in the CTA's shared memory: the
stubborn sets of CuTe's NT tutorial (MN-major boxes, 32 TMA loads a stage) took a landing into the next
stage together with the four warps' first engines, because each warp's future engine could read
anything. Held against the simulator: along random schedules of the warpgroup GEMM
(src/mbarrier/examples/races/cuda/wgmma_gemm.cu, correct and with its early release), every engine a
warp starts reads only bytes that the future of each of its lanes named for it, from every state the
schedule passed through."""

from __future__ import annotations

import random

import pytest

from mbarrier import sim
from mbarrier.core.violations import Violation
from mbarrier.examples.races import HERE
from mbarrier.explore.check import Explorer, Options
from mbarrier.explore.values import unroll
from mbarrier.sim.errors import KernelFault
from mbarrier.sim.machine import EXITED, Machine, Thread
from mbarrier.sim.waits import InCollective

LAUNCH = HERE / "nvcc_wgmma_gemm.launch.json"
SM = "sm"
LANES = (0, 5, 17, 31)


def _future_reads(ex: Explorer, t: Thread) -> set[tuple[int, int]] | None:
    """The union of the byte ranges the wgmma engines of t's unrolled future read (None: anywhere)."""
    fp = ex.fp.fps[t.func.name]
    code = fp.code
    g = unroll(ex.m, code, t, code.live, lambda j, env: fp.successors(t, j, t.pc, env))
    out: set[tuple[int, int]] = set()
    for n, pc in enumerate(g.pcs):
        x = code.ins[pc]
        if x.op != "wgmma.mma_async":
            continue
        for (what, *key), _ in fp.of_ins(t, x, t.pc, True, g.envs[n]):  # values from where t stands
            if what != SM:
                continue
            if key[1] is None:
                return None
            out.add((key[1], key[2]))
    return out


def _inside(span: tuple[int, int], named: set[tuple[int, int]]) -> bool:
    """Every 16-byte chunk of `span` lies in some range of `named`."""
    lo, hi = span
    return all(any(a <= at and at + 16 <= b for a, b in named) for at in range(lo, hi, 16))


@pytest.mark.parametrize("name", ["nvcc_wgmma_gemm", "nvcc_wgmma_gemm_bug_early_release"])
@pytest.mark.parametrize("seed", [0, 1])
def test_every_engine_reads_what_its_lanes_futures_named(name: str, seed: int) -> None:
    module = sim.load(HERE / f"{name}.ptx")
    m: Machine = sim.launch(module, spec=sim.read_launch(LAUNCH))
    ex = Explorer(m, module, Options(walks=0))
    issued: list[tuple[int, tuple[tuple[int, int], ...], dict[int, set[tuple[int, int]] | None]]] = []
    named: dict[int, set[tuple[int, int]] | None] = {}  # each consumer lane: what its future names now
    original = m.wg_issue

    def recording(parts: dict[int, tuple[Thread, object]]) -> object:
        c = original(parts)
        assert c.mma is not None
        issued.append((c.thread.aid // 32, c.mma.reads, dict(named)))
        return c

    m.wg_issue = recording  # type: ignore[method-assign]
    rng = random.Random(seed)
    precise = 0
    for _ in range(200_000):
        live = [t for t in m.threads if t.status != EXITED]
        if not live:
            break
        if rng.random() < 0.01:  # from time to time, what some lanes of each consumer warp's futures name
            for t in live:
                # a lane waiting inside a collective leaves its meeting's issue to the lanes still
                # to arrive (the last of them issues it): it is held to the engines after that
                if t.aid < 128 and t.aid % 32 in LANES and not isinstance(t.wait, InCollective):
                    named[t.aid] = _future_reads(ex, t)
                    precise += named[t.aid] is not None
        if not m.runnable:
            break
        a = rng.choice(m.runnable)
        try:
            a.code[a.pc](m, a)
        except (Violation, KernelFault):  # the early release's race: the engines so far still count
            break
    assert issued, "the run issued no wgmma"
    assert precise, "no future named its engines' bytes"
    for warp, reads, futures in issued:
        for aid in range(32 * warp, 32 * warp + 32):
            fut = futures.get(aid)
            if fut is None:  # not sampled yet (or anywhere): nothing to hold it to
                continue
            assert all(_inside(s, fut) for s in reads), (warp, aid, reads, sorted(fut))
