"""Path-sensitive futures (`explore.values.unroll`): a loop whose trip count is a kernel parameter is
unrolled in a thread's future, each iteration with its own barrier address and parity, so the stubborn
sets prune as they do for nvcc's unrolled code; the graph stays finite where the count is not known. The
reductions find what the search without them finds, on rolled rings with runtime trip counts and their
bugs, and their state counts grow linearly with the trip count."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Explorer, Options, check
from mbarrier.explore.code import MB, Code
from mbarrier.explore.code import live_registers as live_sets
from mbarrier.explore.values import MAX_PER_PC, Shared, unroll

from .helpers import differential, load


def ring(consumers: int, bug: str | None = None) -> str:
    """A rolled ring: thread 0 produces `n` (a kernel parameter) words through two stages, threads 1.. each
    consume every word. The stage, its barriers' addresses and the parity are computed from the loop
    counter in the loop, as nvcc does for `#pragma unroll 1`. Bugs: `parity` (consumers wait for the
    wrong first parity), `count` (`empty` expects one arrival too many), `skip` (consumer 1 does not
    release odd rounds), `extra` (consumers run one iteration more than the producer)."""
    empty_count = consumers + (bug == "count")
    flip = 1 if bug == "parity" else 0
    skip = ["setp.eq.u32 %p9, %r0, 1;", "and.b32 %r30, %r2, 1;", "setp.eq.and.u32 %p9, %r30, 1, %p9;",
            "@%p9 bra NEXT;"] if bug == "skip" else []
    bound = "add.u32 %r29, %r1, 1;" if bug == "extra" else "mov.u32 %r29, %r1;"
    body = f"""
	mov.u32 %r0, %tid.x;
	ld.param.u32 %r1, [n];
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC;
	mbarrier.init.shared::cta.b64 [full], 1;
	mbarrier.init.shared::cta.b64 [full+8], 1;
	mbarrier.init.shared::cta.b64 [empty], {empty_count};
	mbarrier.init.shared::cta.b64 [empty+8], {empty_count};
SYNC:
	bar.sync 0;
	mov.u32 %r2, 0;
	setp.ne.u32 %p1, %r0, 0;
	@%p1 bra CONS;
PROD:
	setp.ge.u32 %p2, %r2, %r1;
	@%p2 bra DONE;
	and.b32 %r3, %r2, 1;
	shl.b32 %r4, %r3, 3;
	mov.u32 %r5, empty;
	add.u32 %r6, %r5, %r4;
	shr.u32 %r7, %r2, 1;
	and.b32 %r8, %r7, 1;
	xor.b32 %r9, %r8, 1;
PW:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r6], %r9;
	@!%p3 bra PW;
	shl.b32 %r10, %r3, 2;
	mov.u32 %r11, data;
	add.u32 %r12, %r11, %r10;
	st.shared.u32 [%r12], %r2;
	mov.u32 %r13, full;
	add.u32 %r14, %r13, %r4;
	mbarrier.arrive.shared::cta.b64 _, [%r14];
	add.u32 %r2, %r2, 1;
	bra.uni PROD;
CONS:
	{bound}
CLOOP:
	setp.ge.u32 %p4, %r2, %r29;
	@%p4 bra DONE;
	and.b32 %r3, %r2, 1;
	shl.b32 %r4, %r3, 3;
	mov.u32 %r13, full;
	add.u32 %r14, %r13, %r4;
	shr.u32 %r7, %r2, 1;
	and.b32 %r8, %r7, 1;
	xor.b32 %r9, %r8, {flip};
CW:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r14], %r9;
	@!%p5 bra CW;
	shl.b32 %r10, %r3, 2;
	mov.u32 %r11, data;
	add.u32 %r12, %r11, %r10;
	ld.shared.u32 %r20, [%r12];
	{chr(10).join(chr(9) + x for x in skip)}
	mov.u32 %r5, empty;
	add.u32 %r6, %r5, %r4;
	mbarrier.arrive.shared::cta.b64 _, [%r6];
NEXT:
	add.u32 %r2, %r2, 1;
	bra.uni CLOOP;
DONE:
	exit;
"""
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{{
	.reg .pred %p<20>;
	.reg .b32 %r<40>;
	.shared .align 8 .b64 full[2];
	.shared .align 8 .b64 empty[2];
	.shared .align 16 .b8 data[16];
{body}}}
"""




# Two consumers take seconds each without reductions: a few cases (skip needs a second consumer).
CASES = [(1, n, bug) for n in (1, 2, 3) for bug in (None, "parity", "count", "extra")]
CASES += [(2, 2, bug) for bug in (None, "skip")]


@pytest.mark.parametrize(("consumers", "n", "bug"), CASES,
                         ids=[f"c{c}-n{n}-{b}" for c, n, b in CASES])
def test_a_rolled_ring_same_outcomes_as_without_reductions(tmp_path: Path, consumers: int, n: int,
                                                           bug: str | None) -> None:
    differential(load(tmp_path, ring(consumers, bug)), block=1 + consumers, args={"n": n}, max_states=300_000,
                 merge_races=True)


def test_a_rolled_ring_grows_linearly_with_its_trip_count(tmp_path: Path) -> None:
    module = load(tmp_path, ring(3))
    states = [check(module, grid=1, block=4, args={"n": n}, options=Options(walks=0)).stats.states
              for n in (2, 4, 6, 8)]
    steps = [b - a for a, b in zip(states, states[1:], strict=False)]
    assert len(set(steps)) == 1 and steps[0] > 0, states   # the same number of states per two iterations


def _live(code: Code) -> list[tuple[int, ...]]:
    return [tuple(sorted(s)) for s in live_sets(code)]


def _explorer(tmp_path: Path, n: int) -> Explorer:
    module = load(tmp_path, ring(1))
    m = sim.launch(module, grid=1, block=2, args={"n": n})
    ex = Explorer(m, module, Options(walks=0))
    for t in m.threads:
        ex.eager(t, [])
    return ex


def test_each_iteration_has_its_own_parity_and_address(tmp_path: Path) -> None:
    ex = _explorer(tmp_path, 4)
    t = ex.m.threads[1]                            # the consumer, at its first wait
    fp = ex.fp.fps[t.func.name]
    g = unroll(ex.m, fp.code, t, _live(fp.code), lambda j, env: fp.successors(t, j, t.pc, env))
    waits = [(fp.code.ins[g.pcs[n]], g.envs[n]) for n in range(len(g.pcs))
             if fp.code.ins[g.pcs[n]].kind == MB and fp.code.ins[g.pcs[n]].mb_op == "try_wait"]
    gates = {ex.fp.frozen.gate(fp, t, x, t.pc, env, 0) for x, env in waits}
    full = {(gt.off, gt.parity) for gt in gates if gt is not None}
    base = min(off for off, _ in full)
    assert full == {(base, 0), (base + 8, 0), (base, 1), (base + 8, 1)}   # 4 iterations, 2 stages
    arrives = [n for n in range(len(g.pcs)) if fp.code.ins[g.pcs[n]].mb_op == "arrive"]
    assert len(arrives) == 4 and not any(g.on_cycle[n] for n in arrives)


def test_a_loop_too_long_to_unroll_is_merged_and_stays_finite(tmp_path: Path) -> None:
    ex = _explorer(tmp_path, 10**6)   # a trip count far beyond what is unrolled
    t = ex.m.threads[1]
    fp = ex.fp.fps[t.func.name]
    g = unroll(ex.m, fp.code, t, _live(fp.code), lambda j, env: fp.successors(t, j, t.pc, env))
    per_pc: dict[int, int] = {}
    for pc in g.pcs:
        per_pc[pc] = per_pc.get(pc, 0) + 1
    assert max(per_pc.values()) <= MAX_PER_PC + 1
    arrives = [n for n in range(len(g.pcs)) if fp.code.ins[g.pcs[n]].mb_op == "arrive"]
    assert any(g.on_cycle[n] for n in arrives)   # the merged iterations: any number of arrivals


def test_equal_envs_and_edges_are_one_object(tmp_path: Path) -> None:
    ex = _explorer(tmp_path, 4)
    t = ex.m.threads[1]
    fp = ex.fp.fps[t.func.name]
    shared = Shared()
    g1, g2 = (unroll(ex.m, fp.code, t, _live(fp.code), lambda j, env: fp.successors(t, j, t.pc, env), shared)
              for _ in range(2))
    assert all(a is b for a, b in zip(g1.envs, g2.envs, strict=True))   # the first unrolling's
    assert all(a is b for a, b in zip(g1.succ, g2.succ, strict=True))
    by_value = {tuple(sorted((s, type(v).__name__, v) for s, v in e.items())) for e in g1.envs}
    assert len({id(e) for e in g1.envs}) == len(by_value) < len(g1.envs)   # equal ones shared, others apart


# The consumer's wait in libcu++'s style (`barrier::wait_parity`): it counts its failed tries and, past
# 16, backs off on %globaltimer. Each try's count would be a node of its own at every pc of the loop,
# and past MAX_PER_PC the merge forgets the later iterations' parity and address: what the failure path
# computes stays unknown instead (`Code.backoff`).
BACKOFF = """CW:
	mov.u32 %r31, 0;
	mov.u64 %rd1, %globaltimer;
CTRY:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r14], %r9;
	@%p5 bra CGOT;
	add.u32 %r31, %r31, 1;
	setp.lt.u32 %p6, %r31, 16;
	@%p6 bra CTRY;
	mov.u64 %rd2, %globaltimer;
	sub.s64 %rd3, %rd2, %rd1;
	setp.lt.s64 %p7, %rd3, 4000000;
	@%p7 bra CTRY;
	nanosleep.u32 1000;
	bra.uni CTRY;
CGOT:
"""


def test_a_back_off_wait_keeps_each_iterations_parity_and_address(tmp_path: Path) -> None:
    spin = "CW:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p5, [%r14], %r9;\n\t@!%p5 bra CW;\n"
    regs = ".reg .b32 %r<40>;"
    text = ring(1).replace(spin, BACKOFF).replace(regs, regs + "\n\t.reg .b64 %rd<4>;")
    assert "CGOT" in text
    module = load(tmp_path, text)
    m = sim.launch(module, grid=1, block=2, args={"n": 8})
    ex = Explorer(m, module, Options(walks=0))
    for t in m.threads:
        ex.eager(t, [])
    t = ex.m.threads[1]
    fp = ex.fp.fps[t.func.name]
    g = unroll(ex.m, fp.code, t, _live(fp.code), lambda j, env: fp.successors(t, j, t.pc, env))
    waits = [(fp.code.ins[g.pcs[n]], g.envs[n]) for n in range(len(g.pcs))
             if fp.code.ins[g.pcs[n]].kind == MB and fp.code.ins[g.pcs[n]].mb_op == "try_wait"]
    gates = [ex.fp.frozen.gate(fp, t, x, t.pc, env, 0) for x, env in waits]
    assert None not in gates   # every iteration's wait is a gate: parity and address known
    full = {(gt.off, gt.parity) for gt in gates if gt is not None}
    base = min(off for off, _ in full)
    assert full == {(base, 0), (base + 8, 0), (base, 1), (base + 8, 1)}
    differential(module, block=2, args={"n": 3})


# nvcc with a compile-time trip count (`#pragma unroll 1`, or a loop of 4 it leaves rolled) computes the
# stage, in 16-bit arithmetic, and the barrier's address after the label the spin loop branches back to:
# those instructions lie on the wait's failure path too, but they give the same value on every try
# (`code._varying`), unlike a retry counter on the same path.
IN_LOOP = """	shr.u32 %r7, %r2, 1;
	and.b32 %r8, %r7, 1;
	xor.b32 %r9, %r8, 0;
CW:
	cvt.u16.u32 %rs1, %r2;
	and.b16 %rs2, %rs1, 1;
	mul.wide.u16 %r4, %rs2, 8;
	mov.u32 %r13, full;
	add.u32 %r14, %r13, %r4;
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r14], %r9;
	@%p5 bra CGOT;
	add.u32 %r31, %r31, 1;
	bra.uni CW;
CGOT:
"""


def test_an_address_computed_inside_the_spin_loop_is_known_each_iteration(tmp_path: Path) -> None:
    before = """	and.b32 %r3, %r2, 1;
	shl.b32 %r4, %r3, 3;
	mov.u32 %r13, full;
	add.u32 %r14, %r13, %r4;
	shr.u32 %r7, %r2, 1;
	and.b32 %r8, %r7, 1;
	xor.b32 %r9, %r8, 0;
CW:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r14], %r9;
	@!%p5 bra CW;
"""
    regs = ".reg .b32 %r<40>;"
    text = ring(1).replace(before, "\tand.b32 %r3, %r2, 1;\n" + IN_LOOP)
    text = text.replace(regs, regs + "\n\t.reg .b16 %rs<4>;")
    assert "CGOT" in text
    module = load(tmp_path, text)
    m = sim.launch(module, grid=1, block=2, args={"n": 4})
    ex = Explorer(m, module, Options(walks=0))
    for t in m.threads:
        ex.eager(t, [])
    t = ex.m.threads[1]
    fp = ex.fp.fps[t.func.name]
    code = fp.code
    counter = next(x.pc for x in code.ins if code.fn.sites[x.pc].text.startswith("add.u32 %r31"))
    # the consumer's address (the producer's comes first)
    address = max(x.pc for x in code.ins if code.fn.sites[x.pc].text.startswith("add.u32 %r14"))
    assert counter in code.backoff and address not in code.backoff
    g = unroll(ex.m, code, t, _live(code), lambda j, env: fp.successors(t, j, t.pc, env))
    waits = [(code.ins[g.pcs[n]], g.envs[n]) for n in range(len(g.pcs))
             if code.ins[g.pcs[n]].kind == MB and code.ins[g.pcs[n]].mb_op == "try_wait"]
    gates = [ex.fp.frozen.gate(fp, t, x, t.pc, env, 0) for x, env in waits]
    assert None not in gates   # every iteration's wait is a gate: parity and address known
    full = {(gt.off, gt.parity) for gt in gates if gt is not None}
    base = min(off for off, _ in full)
    assert full == {(base, 0), (base + 8, 0), (base, 1), (base + 8, 1)}
    differential(module, block=2, args={"n": 3})
