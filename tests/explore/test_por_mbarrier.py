"""The stubborn sets' mbarrier knowledge (explore/frozen.py, explore/por.py): with reductions on, the
checker reaches the same verdicts and the same kinds of findings as with reductions off, on fewer
states; and the passability fixpoint (waits other threads cannot pass while the seed is frozen) on
states built by hand."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.examples import family
from mbarrier.explore.check import Explorer, Options, check
from mbarrier.explore.closure import stubborn
from mbarrier.explore.code import shared_symbols
from mbarrier.explore.footprints import JOIN, READ, TX, WRITE, XJ, conflict
from mbarrier.explore.frozen import Gate
from mbarrier.sim.machine import Thread

from .helpers import differential, load

# The checks a user runs have random walks on (Options' default).
WALKS = Options().walks

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src)
{
	.reg .pred %p<200>;
	.reg .b32 %r<200>;
	.reg .b64 %rd<200>;
	.shared .align 8 .b64 bar0;
	.shared .align 8 .b64 bar1;
	.shared .align 16 .b8 data[64];
"""








# -- the TMA ring family, correct and with every planted bug -----------------------------------------
FAMILY = [((1, 1, 1, 2), bug) for bug in (None, *family.BUGS) if bug != "count-low"]
# Larger sizes take seconds each without reductions: a few cases (count-low needs two consumers).
FAMILY += [((1, 2, 1, 2), bug) for bug in (None, "count-low", "extra-arrive")] + [((2, 1, 1, 2), None)]


@pytest.mark.parametrize(("size", "bug"), FAMILY, ids=[f"{'-'.join(map(str, s))}-{b}" for s, b in FAMILY])
def test_family_same_outcomes_as_without_reductions(tmp_path: Path, size: tuple[int, int, int, int],
                                                    bug: str | None) -> None:
    p, c, s, k = size
    module = load(tmp_path, family.ring_ptx(p, c, s, k, bug=bug))
    on, off = differential(module, block=p + c, races=False, max_states=200_000, walks=WALKS)
    assert (on.verdict == "verified") == (bug is None)
    assert on.stats.states < off.stats.states


# -- hand-written protocols ------------------------------------------------------------------------------
def _kernel(init: tuple[int, int], threads: list[list[str]]) -> str:
    """Thread 0 initializes bar0/bar1 with the counts in `init`; after bar.sync, thread i runs threads[i]."""
    lines = [HEAD, "\tmov.u32 %r0, %tid.x;", "\tsetp.ne.u32 %p0, %r0, 0;", "\t@%p0 bra SYNC;",
             f"\tmbarrier.init.shared::cta.b64 [bar0], {init[0]};",
             f"\tmbarrier.init.shared::cta.b64 [bar1], {init[1]};", "SYNC:", "\tbar.sync 0;"]
    for i in range(1, len(threads)):
        lines += [f"\tsetp.eq.u32 %p{i}, %r0, {i};", f"\t@%p{i} bra T{i};"]
    for i, body in enumerate(threads):
        lines += [f"T{i}:"] + ["\t" + b if not b.endswith(":") else b for b in body] + ["\texit;"]
    return "\n".join(lines) + "\n}\n"


def _wait(b: int, parity: int, n: int) -> list[str]:
    return [f"W{n}:", f"mbarrier.try_wait.parity.shared::cta.b64 %p{n}, [bar{b}], {parity};",
            f"@!%p{n} bra W{n};"]


def _backoff_wait(b: int, parity: int, n: int) -> list[str]:
    """A wait in libcu++'s style (`barrier::wait_parity`): retries counted, then timer back-off."""
    return [f"mov.u32 %r{100 + n}, 0;", f"mov.u64 %rd{100 + n}, %globaltimer;", f"bra.uni W{n};", f"R{n}:",
            f"add.s32 %r{100 + n}, %r{100 + n}, 1;", f"W{n}:",
            f"mbarrier.try_wait.parity.shared::cta.b64 %p{n}, [bar{b}], {parity};", f"@%p{n} bra D{n};",
            f"setp.lt.s32 %p{100 + n}, %r{100 + n}, 2;", f"@%p{100 + n} bra R{n};",
            f"mov.u64 %rd{150 + n}, %globaltimer;", "nanosleep.u32 100;", f"bra.uni W{n};", f"D{n}:"]


HAND = {
    # Two producers each arrive with count 2 on bar0 (expects 4); the consumer waits, then releases bar1
    # (expects 1) that both producers wait for before their second round.
    "counts-two-producers": ((4, 1), [
        ["mbarrier.arrive.shared::cta.b64 _, [bar0], 2;", *_wait(1, 0, 10), "st.shared.u32 [data], %r0;"],
        ["mbarrier.arrive.shared::cta.b64 _, [bar0], 2;", *_wait(1, 0, 11), "st.shared.u32 [data+4], %r0;"],
        [*_wait(0, 0, 12), "mbarrier.arrive.shared::cta.b64 _, [bar1];"]]),
    # The count in a register (fixed after its mov).
    "count-register": ((3, 1), [
        ["mov.u32 %r9, 3;", "mbarrier.arrive.shared::cta.b64 _, [bar0], %r9;", *_wait(1, 0, 10)],
        [*_wait(0, 0, 11), "st.shared.u32 [data], %r0;", "mbarrier.arrive.shared::cta.b64 _, [bar1];"]]),
    # A loop that arrives three times: the waiter must not be taken as blocked.
    "loop-arrives": ((3, 1), [
        ["mov.u32 %r9, 0;", "L:", "mbarrier.arrive.shared::cta.b64 _, [bar0];", "add.u32 %r9, %r9, 1;",
         "setp.lt.u32 %p20, %r9, 3;", "@%p20 bra L;", *_wait(1, 0, 10), "ld.shared.u32 %r5, [data];"],
        [*_wait(0, 0, 11), "st.shared.u32 [data], %r0;", "mbarrier.arrive.shared::cta.b64 _, [bar1];"]]),
    # The same loop one iteration short: a deadlock.
    "loop-arrives-short": ((3, 1), [
        ["mov.u32 %r9, 0;", "L:", "mbarrier.arrive.shared::cta.b64 _, [bar0];", "add.u32 %r9, %r9, 1;",
         "setp.lt.u32 %p20, %r9, 2;", "@%p20 bra L;"],
        [*_wait(0, 0, 11), "st.shared.u32 [data], %r0;"]]),
    # arrive_drop: thread 1 leaves after one phase; later phases expect one arrival fewer.
    "arrive-drop": ((2, 1), [
        ["mbarrier.arrive.shared::cta.b64 _, [bar0];", *_wait(0, 0, 10),
         "mbarrier.arrive.shared::cta.b64 _, [bar0];", *_wait(0, 1, 11), "ld.shared.u32 %r5, [data];"],
        ["st.shared.u32 [data], %r0;", "mbarrier.arrive_drop.shared::cta.b64 _, [bar0];"]]),
    # Token waits: each thread waits for the phase of its own arrival.
    "token-waits": ((2, 1), [
        ["st.shared.u32 [data], %r0;", "mbarrier.arrive.shared::cta.b64 %rd1, [bar0];", "V1:",
         "mbarrier.test_wait.shared::cta.b64 %p30, [bar0], %rd1;", "@!%p30 bra V1;",
         "ld.shared.u32 %r5, [data+4];"],
        ["st.shared.u32 [data+4], %r0;", "mbarrier.arrive.shared::cta.b64 %rd2, [bar0];", "V2:",
         "mbarrier.test_wait.shared::cta.b64 %p31, [bar0], %rd2;", "@!%p31 bra V2;",
         "ld.shared.u32 %r6, [data];"]]),
    # Token waits of three threads, two rounds: each round's wait is a gate while its phase cannot
    # complete (explore.frozen: the token of an arrive earlier in the thread's future).
    "token-waits-rounds": ((3, 1), [
        [f"st.shared.u32 [data+{4 * i}], %r0;", f"mbarrier.arrive.shared::cta.b64 %rd{i + 1}, [bar0];",
         f"V{i}:", f"mbarrier.test_wait.shared::cta.b64 %p{30 + i}, [bar0], %rd{i + 1};",
         f"@!%p{30 + i} bra V{i};",
         f"ld.shared.u32 %r{5 + i}, [data+{4 * ((i + 1) % 3)}];",
         f"mbarrier.arrive.shared::cta.b64 %rd{i + 1}, [bar0];", f"X{i}:",
         f"mbarrier.test_wait.shared::cta.b64 %p{30 + i}, [bar0], %rd{i + 1};", f"@!%p{30 + i} bra X{i};",
         f"st.shared.u32 [data+{4 * i}], %r0;"] for i in range(3)]),
    # The same with one arrival too many expected: a deadlock.
    "token-waits-count-high": ((4, 1), [
        [f"mbarrier.arrive.shared::cta.b64 %rd{i + 1}, [bar0];", f"V{i}:",
         f"mbarrier.test_wait.shared::cta.b64 %p{30 + i}, [bar0], %rd{i + 1};", f"@!%p{30 + i} bra V{i};"]
        for i in range(3)]),
    # expect_tx / complete_tx: the phase needs the arrival and the bytes.
    "expect-tx": ((1, 1), [
        ["mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16;", *_wait(1, 0, 10)],
        ["mbarrier.complete_tx.shared::cta.b64 [bar0], 8;", "mbarrier.complete_tx.shared::cta.b64 [bar0], 8;",
         "mbarrier.arrive.shared::cta.b64 _, [bar1];"],
        [*_wait(0, 0, 12), "ld.shared.u32 %r5, [data];"]]),
    # The same with 4 bytes missing: a deadlock.
    "expect-tx-short": ((1, 1), [
        ["mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16;"],
        ["mbarrier.complete_tx.shared::cta.b64 [bar0], 12;"],
        [*_wait(0, 0, 12)]]),
    # A bulk copy completes the bytes; a reader that does not wait races with it.
    "bulk-race": ((1, 1), [
        ["ld.param.u64 %rd1, [src];", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16;",
         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [data], [%rd1], 16, [bar0];",
         *_wait(0, 0, 10)],
        ["ld.shared.u32 %r5, [data];"]]),
    # Ping-pong over two barriers for two rounds; the second thread waits with the wrong parity.
    "ping-pong-wrong-parity": ((1, 1), [
        ["mbarrier.arrive.shared::cta.b64 _, [bar0];", *_wait(1, 0, 10),
         "mbarrier.arrive.shared::cta.b64 _, [bar0];", *_wait(1, 1, 11)],
        [*_wait(0, 0, 12), "mbarrier.arrive.shared::cta.b64 _, [bar1];", *_wait(0, 0, 13),
         "mbarrier.arrive.shared::cta.b64 _, [bar1];"]]),
    # The same ping-pong with libcu++-style back-off waits, correct and with the wrong parity.
    "backoff-ping-pong": ((1, 1), [
        ["mbarrier.arrive.shared::cta.b64 _, [bar0];", *_backoff_wait(1, 0, 10), "ld.shared.u32 %r5, [data];",
         "mbarrier.arrive.shared::cta.b64 _, [bar0];", *_backoff_wait(1, 1, 11)],
        [*_backoff_wait(0, 0, 12), "st.shared.u32 [data], %r0;", "mbarrier.arrive.shared::cta.b64 _, [bar1];",
         *_backoff_wait(0, 1, 13), "mbarrier.arrive.shared::cta.b64 _, [bar1];"]]),
    "backoff-wrong-parity": ((1, 1), [
        ["mbarrier.arrive.shared::cta.b64 _, [bar0];", *_backoff_wait(1, 0, 10), "ld.shared.u32 %r5, [data];",
         "mbarrier.arrive.shared::cta.b64 _, [bar0];", *_backoff_wait(1, 1, 11)],
        [*_backoff_wait(0, 0, 12), "st.shared.u32 [data], %r0;", "mbarrier.arrive.shared::cta.b64 _, [bar1];",
         *_backoff_wait(0, 0, 13), "mbarrier.arrive.shared::cta.b64 _, [bar1];"]]),
    # The cuda::barrier TMA style: thread 0 arms bar0 (count 3) with arrive.expect_tx and copies; threads 1
    # and 2 arrive and wait on their tokens, then read. arrive.expect_tx commutes with plain arrivals (XJ),
    # the landing too while the tx-count stays above 0 (TX); with the copy first it cannot (WRITE).
    "token-tma": ((3, 1), [
        ["ld.param.u64 %rd1, [src];", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16;",
         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [data], [%rd1], 16, [bar0];"],
        *[[f"mbarrier.arrive.shared::cta.b64 %rd{i}, [bar0];", f"V{i}:",
           f"mbarrier.test_wait.shared::cta.b64 %p{30 + i}, [bar0], %rd{i};", f"@!%p{30 + i} bra V{i};",
           "ld.shared.u32 %r5, [data];"] for i in (1, 2)]]),
    "token-tma-copy-first": ((3, 1), [
        ["ld.param.u64 %rd1, [src];",
         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [data], [%rd1], 16, [bar0];",
         "mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16;"],
        *[[f"mbarrier.arrive.shared::cta.b64 %rd{i}, [bar0];", f"V{i}:",
           f"mbarrier.test_wait.shared::cta.b64 %p{30 + i}, [bar0], %rd{i};", f"@!%p{30 + i} bra V{i};",
           "ld.shared.u32 %r5, [data];"] for i in (1, 2)]]),
    # Two copies of 16 bytes against an expect_tx of 16: the phase completes when the first lands and the
    # arrivals are in, so a reader may read while the second still writes (a race), or the second's bytes
    # leave the tx-count below 0 first (no completion: a deadlock).
    "token-tma-two-copies": ((3, 1), [
        ["ld.param.u64 %rd1, [src];", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16;",
         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [data], [%rd1], 16, [bar0];",
         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [data], [%rd1], 16, [bar0];"],
        *[[f"mbarrier.arrive.shared::cta.b64 %rd{i}, [bar0];", f"V{i}:",
           f"mbarrier.test_wait.shared::cta.b64 %p{30 + i}, [bar0], %rd{i};", f"@!%p{30 + i} bra V{i};",
           "ld.shared.u32 %r5, [data];"] for i in (1, 2)]]),
    # Two producers arm the same phase with arrive.expect_tx and copy; the readers arrive with tokens.
    "token-tma-two-producers": ((4, 1), [
        ["ld.param.u64 %rd1, [src];", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16;",
         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [data], [%rd1], 16, [bar0];"],
        ["ld.param.u64 %rd1, [src];", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16;",
         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [data+16], [%rd1], 16, [bar0];"],
        *[[f"mbarrier.arrive.shared::cta.b64 %rd{i}, [bar0];", f"V{i}:",
           f"mbarrier.test_wait.shared::cta.b64 %p{30 + i}, [bar0], %rd{i};", f"@!%p{30 + i} bra V{i};",
           "ld.shared.u32 %r5, [data+16];"] for i in (1, 2)]]),
    # A non-spinning test_wait: the thread goes on either way.
    "test-wait-once": ((1, 1), [
        ["mbarrier.test_wait.parity.shared::cta.b64 %p40, [bar0], 0;", "@%p40 bra DONE;",
         "st.shared.u32 [data], %r0;", "DONE:", "mbarrier.arrive.shared::cta.b64 _, [bar1];"],
        ["mbarrier.arrive.shared::cta.b64 _, [bar0];", *_wait(1, 0, 11), "ld.shared.u32 %r5, [data];"]]),
    # A re-initialization unblocks a waiter stuck on phase 1's parity.
    "reinit": ((1, 1), [
        ["mbarrier.arrive.shared::cta.b64 _, [bar0];", *_wait(0, 0, 10), *_wait(1, 0, 11),
         "mbarrier.inval.shared::cta.b64 [bar0];", "mbarrier.init.shared::cta.b64 [bar0], 1;"],
        [*_wait(0, 0, 12), "mbarrier.arrive.shared::cta.b64 _, [bar1];", *_wait(0, 1, 13)]]),
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_written_protocols_same_outcomes_as_without_reductions(tmp_path: Path, name: str) -> None:
    init, threads = HAND[name]
    module = load(tmp_path, _kernel(init, threads))
    differential(module, block=len(threads), args={"src": sim.Buffer(64)}, max_states=200_000, walks=WALKS,
                 merge_races=True)


def test_hand_written_protocols_cover_both_verdicts(tmp_path: Path) -> None:
    verdicts = {name: check(load(tmp_path, _kernel(*HAND[name]), name), grid=1, block=len(HAND[name][1]),
                            args={"src": sim.Buffer(64)}).verdict  # type: ignore[arg-type]
                for name in ("counts-two-producers", "loop-arrives", "loop-arrives-short", "expect-tx-short",
                             "bulk-race", "ping-pong-wrong-parity")}
    assert verdicts == {"counts-two-producers": "verified", "loop-arrives": "verified",
                        "loop-arrives-short": "finding", "expect-tx-short": "finding", "bulk-race": "finding",
                        "ping-pong-wrong-parity": "finding"}


# -- random protocols ------------------------------------------------------------------------------------
def _random_kernel(rng: random.Random) -> tuple[str, int]:
    n = rng.randint(2, 3)
    label = iter(range(50, 200))
    threads = []
    for _ in range(n):
        body: list[str] = []
        for _ in range(rng.randint(2, 3)):
            b, k = rng.randint(0, 1), next(label)
            op = rng.choice(["arrive", "arrive", "arrive2", "wait", "wait", "drop", "token", "loop", "st",
                             "ld", "regcount", "tx"])
            if op == "arrive":
                body.append(f"mbarrier.arrive.shared::cta.b64 _, [bar{b}];")
            elif op == "arrive2":
                body.append(f"mbarrier.arrive.shared::cta.b64 _, [bar{b}], 2;")
            elif op == "wait":
                body += _wait(b, rng.randint(0, 1), k)
            elif op == "drop":
                body.append(f"mbarrier.arrive_drop.shared::cta.b64 _, [bar{b}];")
            elif op == "token":
                body += [f"mbarrier.arrive.shared::cta.b64 %rd{k}, [bar{b}];", f"V{k}:",
                         f"mbarrier.test_wait.shared::cta.b64 %p{k}, [bar{b}], %rd{k};", f"@!%p{k} bra V{k};"]
            elif op == "loop":
                body += [f"mov.u32 %r{k}, 0;", f"L{k}:", f"mbarrier.arrive.shared::cta.b64 _, [bar{b}];",
                         f"add.u32 %r{k}, %r{k}, 1;", f"setp.lt.u32 %p{k}, %r{k}, {rng.randint(1, 2)};",
                         f"@%p{k} bra L{k};"]
            elif op == "st":
                body.append(f"st.shared.u32 [data+{4 * rng.randint(0, 1)}], %r0;")
            elif op == "ld":
                body.append(f"ld.shared.u32 %r{k}, [data+{4 * rng.randint(0, 1)}];")
            elif op == "regcount":
                body += [f"mov.u32 %r{k}, 2;", f"mbarrier.arrive.shared::cta.b64 _, [bar{b}], %r{k};"]
            else:
                body += [f"mbarrier.expect_tx.shared::cta.b64 [bar{b}], 8;",
                         f"mbarrier.complete_tx.shared::cta.b64 [bar{b}], 8;"]
        threads.append(body)
    return _kernel((rng.randint(1, 3), rng.randint(1, 3)), threads), n


def test_random_protocols_same_outcomes_as_without_reductions(tmp_path: Path) -> None:
    rng = random.Random(5)
    seen: set[tuple[str, frozenset[str]]] = set()
    for i in range(25):
        text, n = _random_kernel(rng)
        on, _ = differential(load(tmp_path, text, f"r{i}"), block=n, max_states=200_000, walks=WALKS,
                             merge_races=True)
        seen |= {f.kind for f in on.findings} | {on.verdict}
    # The generator reaches every outcome the comparison is about.
    assert seen == {"verified", "finding", "deadlock", "violation", "race"}


# -- the passability fixpoint on states built by hand ---------------------------------------------------
def _explorer(tmp_path: Path, init: tuple[int, int], threads: list[list[str]]) -> Explorer:
    module = load(tmp_path, _kernel(init, threads))
    m = sim.launch(module, grid=1, block=len(threads), args={"src": sim.Buffer(64)})
    ex = Explorer(m, module, Options(races=False))
    for t in m.threads:
        ex.eager(t, [])
    return ex


def _advance(ex: Explorer, aid: int, steps: int) -> None:
    t = ex.m.threads[aid]
    for _ in range(steps):
        ex.fire([t], [])


def _futures(ex: Explorer, seed: int) -> tuple[list[Thread], list[dict[object, list[object]]]]:
    agents, spinning = ex.enabled()
    everyone = [t for t in ex.m.threads if t.status != 3]
    blocked = {i: spinning[t.aid] for i, t in enumerate(everyone) if t.aid in spinning}
    futures, _, _ = ex.fp.frozen_futures(ex.m, list(everyone), seed, blocked)  # type: ignore[arg-type]
    return everyone, futures  # type: ignore[return-value]


def _to_bar_sync_done(ex: Explorer) -> None:
    """Thread 0 initializes, then every thread passes bar.sync (all arrive, then the eager steps; where
    the arrivals run eagerly, `explore.wholebar`, the second init's transition completes it)."""
    m = ex.m
    _advance(ex, 0, 2)  # the two inits
    for t in m.threads:
        if t.status == 0 and ex.ins(t).op == "bar.sync":
            ex.fire([t], [])


# Every thread arrives on bar0 (count: the block) and waits for the phase its token names.
TOKEN_WAITS = HEAD + """\tmov.u32 %r0, %tid.x;
\tmov.u32 %r1, %ntid.x;
\tsetp.ne.u32 %p0, %r0, 0;
\t@%p0 bra SYNC;
\tmbarrier.init.shared::cta.b64 [bar0], %r1;
SYNC:
\tbar.sync 0;
\tmbarrier.arrive.shared::cta.b64 %rd1, [bar0];
V:
\tmbarrier.test_wait.shared::cta.b64 %p1, [bar0], %rd1;
\t@!%p1 bra V;
\tret;
}
"""


def test_token_waits_cost_states_linear_in_the_threads(tmp_path: Path) -> None:
    # The arrivals commute and each thread's wait cannot pass before the last arrival: one order is
    # explored (it was every subset of the arrived threads: 18, 29, 48, 83 states for 3..6 threads).
    module = load(tmp_path, TOKEN_WAITS)
    states = [check(module, grid=1, block=n, args={"src": sim.Buffer(64)}).stats.states for n in (3, 4, 5, 6)]
    steps = {b - a for a, b in zip(states, states[1:], strict=False)}
    assert len(steps) == 1 and steps.pop() <= 8, states


def test_modes_that_commute() -> None:
    # Plain arrivals (JOIN) commute with arrive.expect_tx (XJ) and with a landing that keeps the
    # tx-count above 0 (TX); XJ with XJ; two such landings with each other (`landing_mode`).
    commuting = {(JOIN, JOIN), (READ, READ), (JOIN, XJ), (XJ, XJ), (JOIN, TX), (TX, TX)}
    for a in (READ, WRITE, JOIN, XJ, TX):
        for b in (READ, WRITE, JOIN, XJ, TX):
            assert conflict(a, b) == ((a, b) not in commuting and (b, a) not in commuting), (a, b)


# Thread 0 arms bar0 (count: the block) with arrive.expect_tx and a bulk copy; every other thread arrives
# and waits on its token (the cuda::barrier TMA style).
TOKEN_TMA = HEAD + """\tmov.u32 %r0, %tid.x;
\tmov.u32 %r1, %ntid.x;
\tsetp.ne.u32 %p0, %r0, 0;
\t@%p0 bra SYNC;
\tmbarrier.init.shared::cta.b64 [bar0], %r1;
SYNC:
\tbar.sync 0;
\t@%p0 bra CONSUME;
\tld.param.u64 %rd1, [src];
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 16;
\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [data], [%rd1], 16, [bar0];
\tret;
CONSUME:
\tmbarrier.arrive.shared::cta.b64 %rd1, [bar0];
V:
\tmbarrier.test_wait.shared::cta.b64 %p1, [bar0], %rd1;
\t@!%p1 bra V;
\tld.shared.u32 %r2, [data];
\tret;
}
"""


def test_token_arrivals_beside_a_tma_copy_cost_states_linear_in_the_threads(tmp_path: Path) -> None:
    # The readers' arrivals commute with the producer's arrive.expect_tx and with the copy's landing: one
    # order is explored (it was every subset of them: 27, 47, 83, 151 states for 3..6 threads).
    module = load(tmp_path, TOKEN_TMA)
    states = [check(module, grid=1, block=n, args={"src": sim.Buffer(64)}).stats.states for n in (3, 4, 5, 6)]
    steps = {b - a for a, b in zip(states, states[1:], strict=False)}
    assert len(steps) == 1 and steps.pop() <= 8, states


BLOCKED_PRODUCER = ((2, 2), [
    [*_wait(1, 0, 10), "mbarrier.arrive.shared::cta.b64 _, [bar0];"],   # waits on bar1 (expects 2)
    ["mbarrier.arrive.shared::cta.b64 _, [bar1];", "st.shared.u32 [data], %r0;"],
    ["mbarrier.arrive.shared::cta.b64 _, [bar1];", "ld.shared.u32 %r5, [data];"]])


def test_waiter_whose_phase_needs_the_seed_has_an_empty_future(tmp_path: Path) -> None:
    ex = _explorer(tmp_path, *BLOCKED_PRODUCER)
    _to_bar_sync_done(ex)
    everyone, futures = _futures(ex, seed=1)  # thread 1's arrival on bar1 is frozen
    # Thread 0 waits on bar1 (pending 2): only thread 2's arrival is left outside: it cannot pass.
    assert futures[0] == {}
    # Thread 2's future is its own arrival and load: no wait stops it.
    assert {obj[0] for obj, _ in futures[2].get("mb", [])} == {"mb"}
    # And the stubborn set of thread 1 is thread 1 alone, though thread 0 reads bar1.
    agents, spinning = ex.enabled()
    enabled = {i: True for i, t in enumerate(everyone) if t in agents}
    blocked = {i: spinning[t.aid] for i, t in enumerate(everyone) if t.aid in spinning}
    assert blocked == {0: (0, shared_symbols(ex.m)["bar1"])}
    assert stubborn(ex.m, ex.fp, list(everyone), enabled, blocked) == [1]


def test_waiter_passes_when_others_can_complete_the_phase(tmp_path: Path) -> None:
    init, threads = BLOCKED_PRODUCER
    ex = _explorer(tmp_path, (2, 1), threads)  # bar1 now expects 1: thread 2 alone completes it
    _to_bar_sync_done(ex)
    _, futures = _futures(ex, seed=1)
    # Thread 0 may pass its wait: its future holds the read of bar1 and its arrival on bar0.
    mb = {(obj, mode) for obj, mode in futures[0]["mb"]}
    assert any(mode == READ for _, mode in mb) and len(mb) == 2


def test_arrive_count_operand_counts(tmp_path: Path) -> None:
    # Thread 2 arrives with count 2 on bar1 (expects 2): thread 0 can pass even with thread 1 frozen.
    ex = _explorer(tmp_path, (2, 2), [BLOCKED_PRODUCER[1][0], BLOCKED_PRODUCER[1][1],
                                      ["mbarrier.arrive.shared::cta.b64 _, [bar1], 2;"]])
    _to_bar_sync_done(ex)
    _, futures = _futures(ex, seed=1)
    assert futures[0] != {}


def test_gate_needs_a_known_parity_and_own_barrier(tmp_path: Path) -> None:
    ex = _explorer(tmp_path, *BLOCKED_PRODUCER)
    _to_bar_sync_done(ex)
    t = ex.m.threads[0]
    fp = ex.fp.fps[t.func.name]
    wait = next(x for x in fp.code.ins if x.mb_op == "try_wait")
    assert ex.fp.frozen.gate(fp, t, wait, t.pc, {}, 7) == Gate(7, wait.pc, 0, shared_symbols(ex.m)["bar1"], 0)


def test_bytes_outstanding_block_a_waiter_unless_others_can_complete_them(tmp_path: Path) -> None:
    # bar0 expects 1 arrival; thread 0 arrives with expect_tx 8, so the phase waits for 8 bytes. Thread 2
    # waits on it. The bytes come from thread 1's complete_tx (one instruction) only.
    threads = [["mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar0], 8;", "st.shared.u32 [data+4], %r0;"],
               ["mbarrier.complete_tx.shared::cta.b64 [bar0], 8;"],
               [*_wait(0, 0, 12), "ld.shared.u32 %r5, [data];"]]
    ex = _explorer(tmp_path, (1, 1), threads)
    _to_bar_sync_done(ex)
    _advance(ex, 0, 1)  # the arrive.expect_tx: pending 0, tx-count 8
    b = ex.m.ctas[0].barriers[shared_symbols(ex.m)["bar0"]]
    assert (b.pending, b.tx) == (0, 8)
    everyone, futures = _futures(ex, seed=1)  # thread 1's complete_tx frozen: nobody else can send bytes
    assert futures[2] == {}
    everyone, futures = _futures(ex, seed=0)  # thread 1 may complete the bytes: thread 2 may pass
    assert futures[2] != {}


def test_registers_computed_later_give_known_addresses(tmp_path: Path) -> None:
    # The barrier's address is computed after the thread's pc (mov of the symbol, add): the future
    # arrival still lands on bar1, not on an unknown barrier, so thread 0's wait on bar1 stays closed.
    threads = [[*_wait(1, 0, 10)],
               ["st.shared.u32 [data], %r0;", "mov.u32 %r7, bar0;", "add.u32 %r8, %r7, 8;",
                "mbarrier.arrive.shared::cta.b64 _, [%r8];"],
               ["st.shared.u32 [data+4], %r0;"]]
    ex = _explorer(tmp_path, (1, 2), threads)
    _to_bar_sync_done(ex)
    assert shared_symbols(ex.m)["bar1"] == shared_symbols(ex.m)["bar0"] + 8
    t = ex.m.threads[1]
    assert ex.fp.fps[t.func.name].code.ins[t.pc].op == "st"  # the address is not computed yet
    _, futures = _futures(ex, seed=2)
    assert futures[0] == {}  # bar1 expects 2 arrivals; thread 1 brings one
    mb = futures[1]["mb"]
    assert mb == [(("mb", 0, shared_symbols(ex.m)["bar1"]), 2)]  # JOIN: a plain arrival, address known


def test_wait_with_a_parity_only_known_at_run_time_is_no_gate(tmp_path: Path) -> None:
    # The parity comes from shared memory (loaded in the thread's future): the wait may pass.
    threads = [["ld.shared.u32 %r9, [data];", "W9:",
                "mbarrier.try_wait.parity.shared::cta.b64 %p9, [bar1], %r9;", "@!%p9 bra W9;"],
               ["mbarrier.arrive.shared::cta.b64 _, [bar1];"]]
    ex = _explorer(tmp_path, (1, 2), threads)
    _to_bar_sync_done(ex)
    t = ex.m.threads[0]
    fp = ex.fp.fps[t.func.name]
    wait = next(x for x in fp.code.ins if x.mb_op == "try_wait")
    assert fp.code.ins[t.pc].op == "ld" and ex.fp.frozen.gate(fp, t, wait, t.pc, {}, 0) is None
    _, futures = _futures(ex, seed=1)
    assert (("mb", 0, shared_symbols(ex.m)["bar1"]), READ) in futures[0]["mb"]  # the wait is in it


def test_a_reset_in_another_future_makes_a_wait_passable(tmp_path: Path) -> None:
    # bar1 expects 2 and only the frozen thread 1 arrives, but thread 2 may invalidate it (the wait then
    # raises, so it runs): thread 0 is not stuck.
    base = [[*_wait(1, 0, 10)], ["mbarrier.arrive.shared::cta.b64 _, [bar1];"]]
    store, inval = "st.shared.u32 [data], %r0;", "mbarrier.inval.shared::cta.b64 [bar1];"
    for third, stuck in ([store], True), ([store, inval], False):
        ex = _explorer(tmp_path, (1, 2), [*base, third])
        _to_bar_sync_done(ex)
        _, futures = _futures(ex, seed=1)
        assert (futures[0] == {}) == stuck


def test_cta_that_cannot_die_before_the_seed_moves(tmp_path: Path) -> None:
    # Seed thread 1 arrives (it does not exit): its CTA cannot die meanwhile. Seed thread 1 at its exit,
    # with thread 0 free to exit too: it may be the CTA's last exit, so liveness conflicts stay.
    ex = _explorer(tmp_path, *BLOCKED_PRODUCER)
    _to_bar_sync_done(ex)
    agents, spinning = ex.enabled()
    everyone = [t for t in ex.m.threads if t.status != 3]
    blocked = {i: spinning[t.aid] for i, t in enumerate(everyone) if t.aid in spinning}
    assert ex.fp.frozen_futures(ex.m, list(everyone), 1, blocked)[1] == frozenset({0})
    ex = _explorer(tmp_path, (1, 1), [["st.shared.u32 [data], %r0;"], []])
    _to_bar_sync_done(ex)
    everyone = [t for t in ex.m.threads if t.status != 3]
    assert ex.fp.fps[everyone[1].func.name].code.ins[everyone[1].pc].op == "exit"
    assert ex.fp.frozen_futures(ex.m, list(everyone), 1, {})[1] == frozenset()
