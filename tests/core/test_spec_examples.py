"""Every example sequence of PTX ISA 9.7.13.15.9-17, replayed through the Python API.

The examples are PTX fragments; here each `mbarrier.*` line becomes the matching `mb.Barrier` call.
Where an example has several threads, each thread is a generator and `threads.run` interleaves them
under many seeds: the example must finish without undefined behaviour and with the effect the manual
describes under every interleaving tried. Address spaces, `.sem`/`.scope` and `bar.sync` have no
effect on the object's state, so they are left out (the simulator deals with them).
"""

from __future__ import annotations

import pytest

import mbarrier as mb

from .threads import Program, run, spin

SEEDS = range(25)
N = 4  # threads taking part, where the example leaves N open


def test_init_examples() -> None:
    """9.7.13.15.9 Examples: `mbarrier.init.b64 [addr], %r1;` and
    `mbarrier.init.shared::cta.b64 [shMem], 12;`, each followed by other operations on the object."""
    for r1 in (1, 7, (1 << 20) - 1):
        sh_mem2 = mb.Barrier("shMem2")
        sh_mem2.init(r1)
        assert (sh_mem2.phase, sh_mem2.pending, sh_mem2.expected, sh_mem2.tx) == (0, r1, r1, 0)
    sh_mem = mb.Barrier("shMem")
    sh_mem.init(12)
    assert (sh_mem.phase, sh_mem.pending, sh_mem.expected, sh_mem.tx) == (0, 12, 12, 0)
    # "... other mbarrier operations on shMem": one full phase.
    tok = sh_mem.arrive(count=11)
    assert not sh_mem.test_wait(tok)
    sh_mem.arrive()
    assert sh_mem.test_wait(tok) and sh_mem.phase == 1


def test_inval_example_1() -> None:
    """9.7.13.15.10 Example 1: `@t0 mbarrier.init.b64 [addr], %r1; ... @t0 mbarrier.inval.b64 [addr];`"""
    addr = mb.Barrier("addr")
    addr.init(3)
    addr.arrive(count=3)
    assert addr.try_wait(parity=0)
    addr.inval()
    assert not addr.valid


def test_inval_example_2_reuses_the_memory_and_reinitializes() -> None:
    """9.7.13.15.10 Example 2: init 12, use, inval; "shmem can be reused here for unrelated use";
    "shmem can be re-initialized as mbarrier object": init 24, use, inval."""
    shmem = mb.Barrier("shmem")
    shmem.init(12)
    old = shmem.arrive(count=12)
    assert shmem.test_wait(old)
    last = shmem.word
    shmem.inval()
    # After inval the 8 bytes are ordinary memory: they hold the object's last state (docs/semantics.md, 8).
    assert not shmem.valid and shmem.word == last
    shmem.init(24)
    assert (shmem.phase, shmem.pending, shmem.expected) == (0, 24, 24)
    with pytest.raises(mb.WaitForeignToken):     # a token of the first object means nothing now
        shmem.test_wait(old)
    shmem.arrive(count=24)
    assert shmem.test_wait(parity=0)
    shmem.inval()
    assert not shmem.valid


def test_expect_tx_examples() -> None:
    """9.7.13.15.11 Examples: `mbarrier.expect_tx.b64 [addr], 32;` and
    `mbarrier.expect_tx.relaxed.cta.shared.b64 [mbarObj1], 512;` (and the same on mbarObj2)."""
    addr, obj1, obj2 = mb.Barrier("addr"), mb.Barrier("mbarObj1"), mb.Barrier("mbarObj2")
    for b in (addr, obj1, obj2):
        b.init(1)
    addr.expect_tx(32)
    obj1.expect_tx(512)
    obj2.expect_tx(512)
    assert (addr.tx, obj1.tx, obj2.tx) == (32, 512, 512)
    assert all(b.phase == 0 and b.pending == 1 for b in (addr, obj1, obj2))


def test_complete_tx_examples() -> None:
    """9.7.13.15.12 Examples: `mbarrier.complete_tx.b64 [addr], 32;`,
    `mbarrier.complete_tx.shared.b64 [mbarObj1], 512;`, `mbarrier.complete_tx.relaxed.cta.b64 [addr2], 32;`"""
    addr, obj1, addr2 = mb.Barrier("addr"), mb.Barrier("mbarObj1"), mb.Barrier("addr2")
    for b, tx in ((addr, 32), (obj1, 512)):
        b.init(1)
        b.arrive(expect_tx=tx)
        b.complete_tx(tx)
        assert b.phase == 1 and b.tx == 0
    # On addr2 the completion comes before the expectation: the tx-count goes negative (9.7.13.15.2).
    addr2.init(1)
    addr2.complete_tx(32)
    assert addr2.tx == -32 and addr2.phase == 0
    addr2.arrive(expect_tx=32)
    assert addr2.phase == 1


def test_arrive_examples() -> None:
    """9.7.13.15.13 Examples, in order on one object: arrive; arrive; arrive (remote, sink);
    arrive cnt (remote); arrive.expect_tx tx_count (remote); arrive.noComplete 2; arrive.relaxed 4;
    arrive cnt. The last arrival leaves only the expected bytes; complete-tx finishes the phase."""
    cnt, tx_count = 3, 256
    sh_mem = mb.Barrier("shMem")
    sh_mem.init(1 + 1 + 1 + cnt + 1 + 2 + 4 + cnt)
    r0 = sh_mem.arrive()
    sh_mem.arrive()
    sh_mem.arrive()                       # `_`: the token is discarded
    sh_mem.arrive(count=cnt)
    sh_mem.arrive(expect_tx=tx_count)
    r1 = sh_mem.arrive(count=2, no_complete=True)
    assert mb.pending_count(r1) == 2 + 4 + cnt
    sh_mem.arrive(count=4)
    r2 = sh_mem.arrive(count=cnt)
    assert (sh_mem.pending, sh_mem.tx, sh_mem.phase) == (0, tx_count, 0)
    assert not sh_mem.test_wait(r2)
    sh_mem.complete_tx(tx_count)
    assert sh_mem.phase == 1 and all(sh_mem.test_wait(t) for t in (r0, r1, r2))


def test_arrive_drop_example_1() -> None:
    """9.7.13.15.14 Example 1: threads with p drop out (`arrive_drop`) and exit, threads with p2 drop
    out with `.noComplete` and count %a, the remaining (!p) threads arrive and test_wait. The drop
    lasts: the next phase waits only for the threads that stayed."""
    b = mb.Barrier("shMem")
    b.init(6)
    b.arrive_drop()                                    # @p thread 0, then exit
    b.arrive_drop()                                    # @p thread 1, then exit
    b.arrive_drop(count=2, no_complete=True)           # @p2 thread, %a = 2, then exit
    assert (b.pending, b.expected) == (2, 2)
    r1 = b.arrive()                                    # @!p thread 0
    assert b.test_wait(r1) is False                    # q: thread 1 has not arrived
    r1b = b.arrive()                                   # @!p thread 1: the phase completes
    assert b.test_wait(r1) and b.test_wait(r1b)
    assert (b.phase, b.pending, b.expected) == (1, 2, 2)
    b.arrive()
    b.arrive()                                         # the next phase needs only the two !p threads
    assert b.phase == 2


def _arrive_drop_example_threads(b: mb.Barrier, answers: list[bool]) -> dict[str, Program]:
    def dropper() -> Program:                  # @p: arrive_drop, exit
        b.arrive_drop()
        yield

    def no_complete_dropper() -> Program:      # @p2: arrive_drop.noComplete %a (= 1), exit
        b.arrive_drop(count=1, no_complete=True)
        yield

    def stayer() -> Program:                   # @!p: arrive, test_wait
        r1 = b.arrive()
        yield
        answers.append(b.test_wait(r1))

    return {"p0": dropper(), "p1": dropper(), "p2": no_complete_dropper(), "q0": stayer(), "q1": stayer()}


def test_arrive_drop_example_1_interleaved() -> None:
    """9.7.13.15.14 Example 1 with its threads interleaved: when the `.noComplete` drop happens to be
    the last arrival of the phase, it would complete the phase, which "must not" happen: the model
    raises NoCompleteCompletes exactly then, and the example works under every other interleaving."""
    outcomes = set()
    for seed in range(40):
        b = mb.Barrier("shMem")
        b.init(5)
        answers: list[bool] = []
        threads = _arrive_drop_example_threads(b, answers)
        try:
            run(threads, seed)
        except mb.NoCompleteCompletes:
            assert (b.pending, b.phase) == (1, 0)     # p2 came last: its arrival would complete
            outcomes.add("p2 last")
            continue
        assert (b.phase, b.expected) == (1, 2) and len(answers) == 2
        outcomes.add("fine")
    assert outcomes == {"p2 last", "fine"}


def test_arrive_drop_examples_2_and_3() -> None:
    """9.7.13.15.14 Example 2: `arrive_drop _, [addr];` and `arrive_drop _, [addr], cnt;`.
    Example 3: `mbarrier.arrive_drop.expect_tx... state, [addr], tx_count;`."""
    cnt = 2
    b = mb.Barrier("addr")
    b.init(1 + cnt + 2)
    b.arrive_drop()
    b.arrive_drop(count=cnt)
    assert (b.pending, b.expected) == (2, 2)
    state = b.arrive_drop(expect_tx=64)
    assert (b.pending, b.expected, b.tx) == (1, 1, 64) and state.parity == 0
    b.arrive()
    b.complete_tx(64)
    assert b.phase == 1 and b.pending == 1 and b.expected == 1


def _cp_async_threads(b: mb.Barrier, noinc: bool, done: dict[str, bool]) -> dict[str, Program]:
    """Each thread issues cp.async copies, `cp.async.mbarrier.arrive` (three times with .noinc, as in
    Example 2), then `mbarrier.arrive` and a test_wait loop. A per-thread copy engine performs the
    asynchronous arrive-on once that thread's copies complete."""
    instances = 3 if noinc else 1
    issued = {t: 0 for t in range(N)}
    threads: dict[str, Program] = {}

    def worker(t: int) -> Program:
        for _ in range(instances):
            b.cp_async_arrive(noinc=noinc)
            issued[t] += 1
            yield
        state = b.arrive()
        yield
        yield from spin(lambda: b.test_wait(state))
        # 9.7.13.15.16 rule 2: every cp.async before cp.async.mbarrier.arrive has completed.
        assert all(done.values()), "a wait returned True before every copy completed"

    def engine(t: int) -> Program:
        for k in range(instances):
            yield from spin(lambda k=k: issued[t] > k)   # the copies are in flight
            yield
            b.async_arrive()
            done[f"{t}.{k}"] = True

    for t in range(N):
        for k in range(instances):
            done[f"{t}.{k}"] = False
        threads[f"thread{t}"] = worker(t)
        threads[f"copies{t}"] = engine(t)
    return threads


@pytest.mark.parametrize("seed", SEEDS)
def test_cp_async_mbarrier_arrive_example_1(seed: int) -> None:
    """9.7.13.15.15 Example 1 (no .noinc): init(threadCount); "Absence of .noinc accounts for arrive-on
    from completion of prior cp.async operations. So mbarrier.init must only account for arrive-on
    from mbarrier.arrive." """
    b = mb.Barrier("shMem")
    b.init(N)
    done: dict[str, bool] = {}
    run(_cp_async_threads(b, noinc=False, done=done), seed)
    assert all(done.values()) and b.phase == 1 and b.pending == N


@pytest.mark.parametrize("seed", SEEDS)
def test_cp_async_mbarrier_arrive_example_2(seed: int) -> None:
    """9.7.13.15.15 Example 2 (.noinc): "3 arrive-on operations will be triggered per-thread";
    totalCount = threadCount + 3 * threadCount; "Presence of .noinc requires mbarrier initialization
    to have accounted for arrive-on from cp.async"."""
    b = mb.Barrier("shMem")
    b.init(N + 3 * N)
    done: dict[str, bool] = {}
    run(_cp_async_threads(b, noinc=True, done=done), seed)
    assert all(done.values()) and b.phase == 1 and b.pending == 4 * N


@pytest.mark.parametrize("seed", SEEDS)
def test_wait_example_3_async_copy_completion(seed: int) -> None:
    """9.7.13.15.16 Example 3, "Asynchronous copy completion waiting": init(threadCount); cp.async;
    cp.async.mbarrier.arrive ("Absence of .noinc accounts for arrive-on from prior cp.async
    operation"); mbarrier.arrive; test_wait loop. No thread leaves the loop before every copy is done."""
    b = mb.Barrier("shMem2")
    b.init(N)
    done: dict[str, bool] = {}
    run(_cp_async_threads(b, noinc=False, done=done), seed)
    assert all(done.values()) and b.phase == 1


def _token_wait_threads(b: mb.Barrier, wait: str, arrived: list[int]) -> dict[str, Program]:
    def thread(t: int) -> Program:
        r1 = b.arrive()
        arrived.append(t)
        yield
        # ... computation not requiring mbarrier synchronization ...
        yield from spin(lambda: getattr(b, wait)(r1))    # (nanosleep between tries: no state)
        assert len(arrived) == N, "a thread passed the barrier before all N arrived"
    return {f"t{t}": thread(t) for t in range(N)}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("wait", ["test_wait", "try_wait"])
def test_wait_examples_1a_1b(wait: str, seed: int) -> None:
    """9.7.13.15.16 Example 1a (test_wait + nanosleep loop) and 1b (try_wait loop): N threads arrive
    with a token and loop until the phase completes."""
    b = mb.Barrier("shMem")
    b.init(N)
    arrived: list[int] = []
    run(_token_wait_threads(b, wait, arrived), seed)
    assert b.phase == 1


@pytest.mark.parametrize("seed", SEEDS)
def test_wait_example_2_phase_parity(seed: int) -> None:
    """9.7.13.15.16 Example 2: "One phase per loop iteration": N threads arrive, then wait with
    `test_wait.parity` on parArg = i & 1, for IterMax iterations."""
    iter_max = 5
    b = mb.Barrier("shMem")
    b.init(N)
    reached = [0] * N

    def thread(t: int) -> Program:
        for i in range(iter_max):
            b.arrive()
            reached[t] = i + 1
            yield
            par_arg = i & 1
            yield from spin(lambda p=par_arg: b.test_wait(parity=p))
            assert min(reached) >= i + 1, "a thread left iteration i before all arrived in it"

    run({f"t{t}": thread(t) for t in range(N)}, seed)
    assert b.phase == iter_max


@pytest.mark.parametrize("seed", SEEDS)
def test_wait_example_4_cluster_threads(seed: int) -> None:
    """9.7.13.15.16 Example 4: one CTA0 thread inits with N = number of cluster threads; the whole
    cluster arrives (sink `_`); only CTA0 threads wait with `try_wait.parity` 0."""
    b = mb.Barrier("shMem@CTA0")
    b.init(N)
    arrived = []

    def thread(t: int, in_cta0: bool) -> Program:
        b.arrive()
        arrived.append(t)
        yield
        if in_cta0:
            yield from spin(lambda: b.try_wait(parity=0))
            assert len(arrived) == N

    run({f"t{t}": thread(t, t < N // 2) for t in range(N)}, seed)
    assert b.phase == 1


def test_pending_count_example() -> None:
    """9.7.13.15.17 Example: `mbarrier.arrive.noComplete.b64 state, [shMem], 1;` then the pending count
    "prior to the arrive-on operation from which the state register was obtained"."""
    sh_mem = mb.Barrier("shMem")
    sh_mem.init(N)
    state = sh_mem.arrive(count=1, no_complete=True)
    assert mb.pending_count(state) == N
    assert sh_mem.pending == N - 1
