"""Tokens and parities kept in local memory (libcu++'s `barrier::arrival_token token[STAGES]`, which nvcc
-O3 keeps in a local array: `st.local.u64` after the arrive, `ld.local.u64` before the wait).

ld.local and st.local are local steps (PTX ISA 5.1.5: no other agent observes a thread's local memory),
and the futures (`explore.values`) carry the thread's local memory beside its registers: a token stored
by an arrive of the future and loaded back is that arrive's token (a gate), and a token word the thread
stored before (a bare word in its memory) is a parity gate. Before, the loaded token was unknown, so every
future wait counted as passable and every stubborn set held every thread: 6,839 states for four threads
and two trips (the kernel below), 35 now. Same verdicts and kinds of findings as without reductions."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Explorer, Options, check
from mbarrier.explore.code import LOCAL, MB, Code
from mbarrier.explore.code import live_registers as live_sets
from mbarrier.explore.values import FutureToken, Unrolled, resume, unroll
from mbarrier.sim.machine import RUNNABLE

from .helpers import differential, load
from .test_first_try import KERNEL as FIRST_TRY
from .test_first_try import _retry_at
from .test_trap_calls import KERNEL as ASSERTING


def kernel(mode: str = "token", bug: str | None = None) -> str:
    """Every thread arrives on bar[s] and waits for that phase, s = i & 1 for i < n (a kernel parameter),
    with the token (`mode` "token") or the phase parity ("parity") it keeps in slot s of a local array;
    after the wait thread 0 writes data[s^1], which the others read in the next trip, and every thread
    arrives for the next trip. Bugs: `slot` (tokens only: the next trip's token goes to slot s), `skip`
    (thread 1 does not arrive after even trips), `count` (bar expects one thread too many); for tokens,
    `generic` and `narrow` overwrite the stored token's parity with 0 (through a generic address, by a
    4-byte store into its upper half): the third trip's wait passes at once."""
    skip = ["setp.eq.u32 %p5, %r0, 1;", "setp.eq.and.u32 %p5, %r4, 0, %p5;", "@%p5 bra NEXT;"] \
        if bug == "skip" else []
    count = "add.u32 %r30, %r30, 1;" if bug == "count" else ""
    if mode == "token":
        init = ["st.local.u64 [%rd1+8], 0;"]
        first = ["mbarrier.arrive.shared::cta.b64 %rd2, [%r3];", "st.local.u64 [%rd1], %rd2;"]
        wait = ["ld.local.u64 %rd5, [%rd4];", "W:", "mbarrier.try_wait.shared::cta.b64 %p2, [%r7], %rd5;",
                "@!%p2 bra W;"]
        arrive = ["mbarrier.arrive.shared::cta.b64 %rd8, [%r10];",
                  f"st.local.u64 [%rd{4 if bug == 'slot' else 7}], %rd8;"]
        if bug == "generic":    # the token overwritten with 0 through its generic address
            arrive += ["cvta.local.u64 %rd9, %rd7;", "st.u64 [%rd9], 0;"]
        elif bug == "narrow":   # its upper half (the phase parity, bit 63) cleared
            arrive += ["st.local.u32 [%rd7+4], 0;"]
    else:
        init = ["st.local.u32 [depot], 0;", "st.local.u32 [depot+8], 0;"]
        first = ["mbarrier.arrive.shared::cta.b64 _, [%r3];"]
        wait = ["ld.local.u32 %r20, [%rd4];", "W:",
                "mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r7], %r20;", "@!%p2 bra W;",
                "xor.b32 %r21, %r20, 1;", "st.local.u32 [%rd4], %r21;"]
        arrive = ["mbarrier.arrive.shared::cta.b64 _, [%r10];"]
    nl = "\n\t"
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{{
	.local .align 8 .b8 depot[16];
	.reg .pred %p<10>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<20>;
	.shared .align 8 .b64 bar[2];
	.shared .align 16 .b8 data[8];
	mov.u64 %rd1, depot;
	mov.u32 %r0, %tid.x;
	mov.u32 %r30, %ntid.x;
	{count}
	ld.param.u32 %r1, [n];
	{nl.join(init)}
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar], %r30;
	mbarrier.init.shared::cta.b64 [bar+8], %r30;
SYNC:
	bar.sync 0;
	mov.u32 %r2, 0;
	mov.u32 %r3, bar;
	{nl.join(first)}
LOOP:
	setp.ge.u32 %p1, %r2, %r1;
	@%p1 bra DONE;
	and.b32 %r4, %r2, 1;
	shl.b32 %r5, %r4, 3;
	cvt.u64.u32 %rd3, %r5;
	add.u64 %rd4, %rd1, %rd3;
	mov.u32 %r6, bar;
	add.u32 %r7, %r6, %r5;
	{nl.join(wait)}
	shl.b32 %r11, %r4, 2;
	mov.u32 %r12, data;
	add.u32 %r13, %r12, %r11;
	setp.eq.u32 %p3, %r0, 0;
	@%p3 bra WRITE;
	ld.shared.u32 %r14, [%r13];
	bra.uni ARRIVE;
WRITE:
	xor.b32 %r15, %r11, 4;
	add.u32 %r16, %r12, %r15;
	st.shared.u32 [%r16], %r2;
ARRIVE:
	{nl.join(skip)}
	xor.b32 %r8, %r4, 1;
	shl.b32 %r9, %r8, 3;
	cvt.u64.u32 %rd6, %r9;
	add.u64 %rd7, %rd1, %rd6;
	add.u32 %r10, %r6, %r9;
	{nl.join(arrive)}
NEXT:
	add.u32 %r2, %r2, 1;
	bra.uni LOOP;
DONE:
	exit;
}}
"""


# (The wrong slot needs three trips: `test_the_wrong_slot_is_a_race_and_a_deadlock`.)
CASES = [("token", None, 2), ("token", "skip", 2), ("token", "count", 2), ("token", "generic", 3),
         ("token", "narrow", 3),
         ("parity", None, 3), ("parity", "skip", 2), ("parity", "count", 2)]


@pytest.mark.parametrize(("mode", "bug", "n"), CASES, ids=[f"{m}-{b}-n{n}" for m, b, n in CASES])
def test_same_outcomes_as_without_reductions(tmp_path: Path, mode: str, bug: str | None, n: int) -> None:
    on, _ = differential(load(tmp_path, kernel(mode, bug)), block=2, args={"n": n})
    assert (on.verdict == "verified") == (bug is None)


def test_the_wrong_slot_is_a_race_and_a_deadlock(tmp_path: Path) -> None:
    # The third trip waits on bar[0] with the word of an arrive on bar[1]: its parity lets the wait pass
    # at once (a race on data), or leaves it waiting for a phase nobody completes.
    on, _ = differential(load(tmp_path, kernel("token", "slot")), block=2, args={"n": 3})
    assert {str(f.kind) for f in on.findings} == {"deadlock", "race"}


@pytest.mark.parametrize("mode", ["token", "parity"])
def test_few_states_growing_linearly_with_the_trips(tmp_path: Path, mode: str) -> None:
    module = load(tmp_path, kernel(mode))
    states = [check(module, grid=1, block=4, args={"n": n}, options=Options(walks=0)).stats.states
              for n in (2, 4, 6)]
    assert states[0] <= 50, states   # 6,839 (tokens) and 2,444 (parities) with the loads unknown
    assert states[2] - states[1] == states[1] - states[0] > 0, states


def _live(code: Code) -> list[tuple[int, ...]]:
    return [tuple(sorted(s)) for s in live_sets(code)]


def _first_state(tmp_path: Path, n: int) -> Explorer:
    module = load(tmp_path, kernel("token"))
    m = sim.launch(module, grid=1, block=2, args={"n": n})
    ex = Explorer(m, module, Options(walks=0))
    for _ in range(4):   # thread 0 initializes the barriers; all meet at bar.sync, then run to the arrive
        for t in m.threads:
            if t.status == RUNNABLE and ex.ins(t).mb_op == "init":
                ex.step(t, [])
            ex.eager(t, [])
    return ex


def test_the_loaded_tokens_are_the_futures_arrivals(tmp_path: Path) -> None:
    ex = _first_state(tmp_path, 4)
    t = ex.m.threads[1]           # at its first arrive (after bar.sync)
    fp = ex.fp.fps[t.func.name]
    code = fp.code
    assert code.ins[t.pc].kind == MB and code.ins[t.pc].mb_op == "arrive"
    assert all(x.kind == LOCAL for x in code.ins if x.local)   # ld.local, st.local: local steps
    g = unroll(ex.m, code, t, _live(code), lambda j, env: fp.successors(t, j, t.pc, env))
    waits = [(code.ins[g.pcs[k]], g.envs[k]) for k in range(len(g.pcs))
             if code.ins[g.pcs[k]].mb_op == "try_wait"]
    assert len(waits) == 4                                     # one per trip: unrolled
    for x, env in waits:
        slot = x.wait_arg[0]
        assert slot is not None and isinstance(env[slot], FutureToken)   # the arrive's token, stored, loaded
        gate = ex.fp.frozen.gate(fp, t, x, t.pc, env, 0)
        assert gate is not None and gate.parity is None       # a token gate


def test_a_stored_word_is_a_parity_gate(tmp_path: Path) -> None:
    ex = _first_state(tmp_path, 2)
    t = ex.m.threads[1]
    fp = ex.fp.fps[t.func.name]
    code = fp.code
    before = unroll(ex.m, code, t, _live(code), lambda j, env: fp.successors(t, j, t.pc, env))
    ex.step(t, [])   # the arrive; then the store of its token and the load run eagerly to the wait
    ex.eager(t, [])
    x = code.ins[t.pc]
    assert x.mb_op == "try_wait" and t.local[:8] != bytes(8)
    g = unroll(ex.m, code, t, _live(code), lambda j, env: fp.successors(t, j, t.pc, env))
    gates = [ex.fp.frozen.gate(fp, t, code.ins[g.pcs[k]], t.pc, g.envs[k], 0) for k in range(len(g.pcs))
             if code.ins[g.pcs[k]].mb_op == "try_wait"]
    assert gates[0] is not None and gates[0].parity == 0       # the word of phase 0, from memory
    assert all(gt is not None for gt in gates)
    # The earlier future does not stand for this one: its node at the wait holds the arrive's token, not
    # the word now in memory.
    assert resume(before, code, t, _live(code)) is None


def test_call_arguments_are_local_steps(tmp_path: Path) -> None:
    module = load(tmp_path, ASSERTING)
    m = sim.launch(module, grid=1, block=2, args={"bad": 0})
    ex = Explorer(m, module, Options(walks=0))
    stores = [x for x in ex.code.ins if x.op == "st" and "param" in x.opcode]
    assert len(stores) == 5 and all(x.kind == LOCAL and x.local and x.addr is not None for x in stores)


def test_a_future_resumes_where_its_stores_hold_the_bytes_now(tmp_path: Path) -> None:
    module = load(tmp_path, kernel("parity"))
    m = sim.launch(module, grid=1, block=2, args={"n": 4})
    ex = Explorer(m, module, Options(walks=0))
    for _ in range(4):
        for t in m.threads:
            if t.status == RUNNABLE and ex.ins(t).mb_op == "init":
                ex.step(t, [])
            ex.eager(t, [])
    t0, t = m.threads
    fp = ex.fp.fps[t.func.name]
    code = fp.code
    live = _live(code)

    def gates(g: Unrolled) -> list[tuple[int, tuple[int | None, int | None] | None]]:
        out = []
        seen, todo = {g.start}, [g.start]
        while todo:   # the gates reachable from the graph's start
            k = todo.pop()
            x = code.ins[g.pcs[k]]
            if x.mb_op == "try_wait":
                gate = ex.fp.frozen.gate(fp, t, x, t.pc, g.envs[k], 0)
                out.append((x.pc, None if gate is None else (gate.off, gate.parity)))
            for s in g.succ[k]:
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        return sorted(out, key=repr)

    before = unroll(ex.m, code, t, live, lambda j, env: fp.successors(t, j, t.pc, env))
    for u in (t0, t):   # both arrive: the first phase completes
        ex.step(u, [])
        ex.eager(u, [])
    ex.step(t, [])      # its wait passes; it stores the next parity (1) and stops at its load of data
    ex.eager(t, [])
    assert code.ins[t.pc].op == "ld" and not code.ins[t.pc].local and t.local[:4] == (1).to_bytes(4, "little")
    resumed = resume(before, code, t, live)
    assert resumed is not None and resumed.start != before.start
    fresh = unroll(ex.m, code, t, live, lambda j, env: fp.successors(t, j, t.pc, env))
    assert gates(resumed) == gates(fresh)   # the same gates as a future unrolled from here
    assert all(gt is not None for _, gt in gates(resumed))


def test_a_stored_token_is_relevant_where_a_load_may_read_it(tmp_path: Path) -> None:
    ex = _first_state(tmp_path, 2)
    code = ex.code
    stores = [x for x in code.ins if x.local and not x.defs and x.local_value is not None
              and x.local_value[0] is not None]
    assert len(stores) == 2   # the tokens of the first arrive and of the loop's
    for x in stores:
        slot = x.local_value[0] if x.local_value is not None else None
        assert slot is not None and slot in code.relevant[x.pc] and code.reads_local[x.pc]
    assert not code.reads_local[-1]   # the implicit return: no load of local memory follows


def test_a_first_try_that_stores_local_memory_on_failure_hands_over_nothing(tmp_path: Path) -> None:
    # test_first_try's kernel (one try, then a spin on the same operands) with the failure path storing
    # its retry count in local memory: the blocked thread would skip that store, so no hand-over.
    text = FIRST_TRY.format(extra=0, success="DONE", lane=1)
    assert _retry_at(load(tmp_path, text, "plain"))[0] is not None
    bar = ".shared .align 8 .b64 bar;"
    text = text.replace(bar, bar + "\n\t.local .align 4 .b32 tries;")
    text = text.replace("\tmov.u32 %r5, 0;\nLOOP:", "\tmov.u32 %r5, 0;\n\tst.local.u32 [tries], %r5;\nLOOP:")
    assert "[tries]" in text
    assert _retry_at(load(tmp_path, text, "stores"))[0] is None


# Thread 1 spins on `a` and notes in local memory that a try failed; thread 0 arrives on `a`, then waits on
# `b`, on which thread 1 arrives only if no try of its failed. A deadlock exactly where thread 1 tried too
# early: a spin-wait whose failure path writes local memory is no spin the search may skip
# (`explore.spin`), until a failed try no longer changes it.
FLAGGED = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.local .align 4 .b32 failed;
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.shared .align 8 .b64 a;
	.shared .align 8 .b64 b;
	mov.u32 %r1, %tid.x;
	st.local.u32 [failed], 0;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared::cta.b64 [a], 1;
	mbarrier.init.shared::cta.b64 [b], 1;
SYNC:
	bar.sync 0;
	@%p1 bra WAITER;
	mbarrier.arrive.shared::cta.b64 _, [a];
WB:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [b], 0;
	@!%p2 bra WB;
	ret;
WAITER:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [a], 0;
	@%p3 bra PASSED;
	mov.u32 %r2, 1;
	st.local.u32 [failed], %r2;
	bra.uni WAITER;
PASSED:
	ld.local.u32 %r3, [failed];
	setp.ne.u32 %p4, %r3, 0;
	@%p4 bra DONE;
	mbarrier.arrive.shared::cta.b64 _, [b];
DONE:
	ret;
}
"""


def test_a_spin_that_notes_its_failures_in_local_memory(tmp_path: Path) -> None:
    on, _ = differential(load(tmp_path, FLAGGED), block=2)
    assert {str(f.kind) for f in on.findings} == {"deadlock"}
