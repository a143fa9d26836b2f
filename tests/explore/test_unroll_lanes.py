"""The futures of a warp's lanes unrolled in one walk (`explore.values.unroll_lanes`): each lane's graph is
the one `unroll` builds for it alone, node for node (pcs, edges, node numbers, equal envs), during whole
searches of the shapes and at every pc of a kernel whose lanes part ways at branches; the search takes
the same steps with the walk shared as with one walk per lane."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore import frozen, values, wholebar
from mbarrier.explore.check import Explorer, Options, check_machine
from mbarrier.explore.code import Code
from mbarrier.explore.values import MAX_PER_PC, Env, Shared, Unrolled, unroll, unroll_lanes
from mbarrier.sim.machine import Machine, Thread

from .helpers import load

Succ = Callable[[Thread, int, int, Env], tuple[int, ...]]


def same_graph(g: Unrolled, h: Unrolled) -> bool:
    return (g.pcs == h.pcs and [tuple(e) for e in g.succ] == [tuple(e) for e in h.succ]
            and g.on_cycle == h.on_cycle and g.start == h.start and g.pc == h.pc and g.at == h.at
            and g.widened == h.widened and len(g.envs) == len(h.envs)
            and all(values._equal(a, b) for a, b in zip(g.envs, h.envs, strict=True)))


@contextmanager
def compared() -> Iterator[list[int]]:
    """Every `unroll_lanes` the checker calls (the frozen futures', `explore.wholebar`'s), compared lane
    by lane with `unroll`: yields [lanes whose graphs matched, lanes left to `unroll` alone]."""
    counts = [0, 0]
    original = frozen.unroll_lanes

    def checked(m: Machine, code: Code, ts: Sequence[Thread], live: list[tuple[int, ...]], succ: Succ,
                shared: Shared | None = None) -> list[Unrolled | None]:
        graphs = original(m, code, ts, live, succ, shared)
        for t, g in zip(ts, graphs, strict=True):
            if g is None:
                counts[1] += 1
                continue
            h = unroll(m, code, t, live, lambda j, env, t=t: succ(t, j, t.pc, env))
            assert same_graph(g, h), (t.aid, t.pc)
            counts[0] += 1
        return graphs

    frozen.unroll_lanes = wholebar.unroll_lanes = checked  # type: ignore[assignment]
    try:
        yield counts
    finally:
        frozen.unroll_lanes = wholebar.unroll_lanes = original  # type: ignore[assignment]


@pytest.mark.parametrize("name", ["ring", "warpgroup", "pingpong", "cluster", "cpasync", "branch", "named"])
def test_each_lane_gets_the_graph_unroll_builds_for_it_alone(name: str) -> None:
    s = SHAPES[name]
    s = s.with_consumers(2) if s.warps else s
    s = s.sized(*([2] * len(s.trips)))
    with compared() as counts:
        r = check_machine(s.launch(), sim.load(s.path), Options(max_states=400, walks=0))
    assert r.verdict != "error"
    assert counts[0] > 0, counts    # some lanes were walked together (and matched)


def _plain_search(name: str, lanes: bool) -> tuple[object, ...]:
    s = SHAPES[name].with_consumers(2).sized(2)
    original = frozen.unroll_lanes

    def alone(m: Machine, code: Code, ts: Sequence[Thread], live: list[tuple[int, ...]], succ: Succ,
              shared: Shared | None = None) -> list[Unrolled | None]:
        return [None] * len(ts)

    if not lanes:
        frozen.unroll_lanes = alone  # type: ignore[assignment]
    try:
        r = check_machine(s.launch(), sim.load(s.path), Options(walks=0))
    finally:
        frozen.unroll_lanes = original  # type: ignore[assignment]
    st = r.stats
    return (r.verdict, st.states, st.transitions, st.enabled, st.pruned, st.full_expansions,
            [(f.kind, f.rule, f.line) for f in r.findings])


@pytest.mark.parametrize("name", ["ring", "ring_bug_count"])
def test_the_search_is_the_same_with_lanes_walked_together(name: str) -> None:
    assert _plain_search(name, True) == _plain_search(name, False)


# 32 lanes: the even ones take one way at the first branch, the odd ones the other; in each part lanes
# 0-15 and 16-31 loop a different number of times (their trip count is `(tid >> 4) + {extra}`), each
# lane computing an address from its tid and a parity from the loop counter; a shfl gives every lane
# lane 0's counter. Lane 3 alone initializes the barrier. With 70 trips the loops are longer than
# `unroll` follows (MAX_PER_PC): it merges their values.
PARTS = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<8>;
	.reg .b32 %r<16>;
	.shared .align 8 .b8 bar[16];
	.shared .align 4 .b8 data[256];
	mov.u32 %r0, %tid.x;
	and.b32 %r1, %r0, 1;
	shr.u32 %r2, %r0, 4;
	add.u32 %r2, %r2, {extra};
	setp.ne.u32 %p0, %r0, 3;
	@%p0 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar], 16;
	mbarrier.init.shared::cta.b64 [bar+8], 16;
SYNC:
	bar.sync 0;
	mov.u32 %r3, 0;
	shfl.sync.idx.b32 %r9, %r3, 0, 0x1f, -1;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra ODD;
EVEN:
	setp.ge.u32 %p2, %r3, %r2;
	@%p2 bra DONE;
	shl.b32 %r4, %r0, 2;
	mov.u32 %r5, data;
	add.u32 %r5, %r5, %r4;
	st.shared.u32 [%r5], %r3;
	mbarrier.arrive.shared::cta.b64 _, [bar];
	add.u32 %r3, %r3, 1;
	bra.uni EVEN;
ODD:
	setp.ge.u32 %p3, %r3, %r2;
	@%p3 bra DONE;
	and.b32 %r6, %r3, 1;
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar+8], %r6;
	@!%p4 bra WAIT;
	add.u32 %r3, %r3, 1;
	bra.uni ODD;
DONE:
	exit;
}}
"""


@pytest.mark.parametrize("extra", [1, 70])
def test_lanes_that_part_ways_are_walked_in_parts(tmp_path: Path, extra: int) -> None:
    module = load(tmp_path, PARTS.format(extra=extra))
    m = sim.launch(module, grid=1, block=32)
    ex = Explorer(m, module, Options(walks=0))
    for t in m.threads:
        ex.eager(t, [])
    fp = ex.fp.fps[m.threads[0].func.name]
    live = [tuple(sorted(s)) for s in fp.code.relevant]
    at_pc: dict[int, list[Thread]] = {}
    for t in m.threads:
        at_pc.setdefault(t.pc, []).append(t)
    walked = 0
    widened = False
    for ts in at_pc.values():
        graphs = unroll_lanes(m, fp.code, ts, live, fp.successors)
        for t, g in zip(ts, graphs, strict=True):
            h = unroll(m, fp.code, t, live, lambda j, env, t=t: fp.successors(t, j, t.pc, env))
            if g is not None:
                assert same_graph(g, h), t.tid
                walked += 1
                widened |= g.widened
        if len(ts) == 31:   # the lanes but the initializing one, which stands at its init
            shapes = {len(g.pcs) for g in graphs if g is not None}
            assert len(shapes) >= 2, shapes   # even and odd lanes, short and long loops: different graphs
    assert walked >= 24, walked
    assert widened == (extra > MAX_PER_PC), widened
