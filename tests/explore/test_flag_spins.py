"""Spins on a flag in memory (`explore.spin.Spins.flag`): a thread whose load reads a value that brings it
back to the load through local code, and whose read changes nothing, is blocked until the flag's bytes
are written. A flag no one writes any more is a hang (a deadlock finding, `waits_on` "flag"), never a
VERIFIED; the reductions keep the spinner out of the stubborn sets while its flag cannot be written
(CUTLASS's split-K: `ld.global.acquire.gpu` on a workspace flag, written by `red.relaxed.gpu` after a
`fence.acq_rel.gpu`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.explore.helpers import differential, load

from mbarrier import api
from mbarrier.explore.check import Options, check
from mbarrier.explore.run import Outcome, run
from mbarrier.explore.schedulers import RandomScheduler
from mbarrier.ptx import ast
from mbarrier.sim import launch
from mbarrier.sim import load as sim_load

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 ws, .param .u64 flag, .param .u64 out)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [ws];
	ld.param.u64 %rd2, [flag];
	ld.param.u64 %rd3, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mul.wide.u32 %rd4, %r1, 4;
	add.s64 %rd5, %rd1, %rd4;
"""

# Split-K as CUTLASS's `cutlass/barrier.h` does it: CTA 0's threads store their partials to the workspace,
# meet, and thread 0 raises the flag (fence.acq_rel.gpu, then `{raise_flag}`); CTA 1's thread 0 spins on
# the flag until it reads `{want}`, its CTA meets, and every thread reads its partial.
SPLIT_K = HEAD + """	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra CONSUMER;
	st.global.u32 [%rd5], %r1;
	bar.sync 0;
	setp.ne.u32 %p2, %r1, 0;
	@%p2 bra DONE;
	fence.acq_rel.gpu;
	{raise_flag}
	bra DONE;
CONSUMER:
	setp.ne.u32 %p2, %r1, 0;
	@%p2 bra WAITED;
SPIN:
	ld.global.acquire.gpu.b32 %r3, [%rd2];
	setp.ne.s32 %p3, %r3, {want};
	@%p3 bra SPIN;
WAITED:
	bar.sync 0;
	ld.global.u32 %r4, [%rd5];
	add.s64 %rd6, %rd3, %rd4;
	st.global.u32 [%rd6], %r4;
DONE:
	ret;
}}
"""
RAISE = "red.relaxed.gpu.global.add.s32 [%rd2], 1;"


def split_k(tmp_path: Path, want: int = 1, raise_flag: str = RAISE, name: str = "k") -> ast.Module:
    return load(tmp_path, SPLIT_K.format(want=want, raise_flag=raise_flag), name)


# Thread 0 spins on a flag no one writes; thread 1 stores and exits: thread 0 hangs.
NEVER = HEAD + """	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra WRITER;
SPIN:
	ld.global.acquire.gpu.b32 %r3, [%rd2];
	setp.ne.s32 %p3, %r3, 1;
	@%p3 bra SPIN;
	ld.global.u32 %r4, [%rd3];
	ret;
WRITER:
	st.global.u32 [%rd3], %r1;
	{raise_flag}
	ret;
}}
"""


@pytest.mark.parametrize("races", [True, False])
def test_a_flag_no_one_writes_is_a_hang_not_verified(tmp_path: Path, races: bool) -> None:
    on, _ = differential(load(tmp_path, NEVER.format(raise_flag="")), block=2, races=races)
    assert on.verdict == "finding"
    f = on.findings[0]
    assert str(f.kind) == "deadlock" and f.line == 19
    assert [(w.thread, w.what, w.address) for w in f.waiters] == [(0, "flag", "0x1100000000")]
    assert "the flag at global 0x1100000000" in f.message
    assert "it reads 0x0, which keeps it looping" in f.waiters[0].detail


@pytest.mark.parametrize("races", [True, False])
def test_a_flag_raised_lets_the_spinner_out(tmp_path: Path, races: bool) -> None:
    module = load(tmp_path, NEVER.format(raise_flag="red.release.gpu.global.add.s32 [%rd2], 1;"))
    on, _ = differential(module, block=2, races=races)
    assert on.verdict == "verified"


@pytest.mark.parametrize("races", [True, False])
def test_split_k_through_a_workspace_flag(tmp_path: Path, races: bool) -> None:
    on, _ = differential(split_k(tmp_path), grid=2, block=2, races=races)
    assert on.verdict == "verified"


def test_split_k_waiting_for_a_value_never_written_hangs(tmp_path: Path) -> None:
    on, _ = differential(split_k(tmp_path, want=2), grid=2, block=2)
    assert on.verdict == "finding"
    f = on.findings[0]
    assert str(f.kind) == "deadlock"
    # The spinner spins on the flag; its CTA's other thread waits at bar.sync 0 for it. The flag comes
    # first in the headline: the barrier lacks the spinner.
    assert {w.what for w in f.waiters} == {"flag", "bar"}
    assert "thread 2 spins on the flag at global 0x1100000000, which no thread can write any more; " \
        "bar.sync 0 (CTA 1)" in f.message, f.message


def test_a_weak_flag_store_races_with_the_spin(tmp_path: Path) -> None:
    """The spinner reads before it is blocked: a weak store of the flag later is a race with that read
    (PTX ISA 8.3: a strong read and a weak write that conflict are no morally strong pair)."""
    on, _ = differential(split_k(tmp_path, raise_flag="st.global.u32 [%rd2], 1;"), grid=2, block=2,
                         merge_races=True)
    assert "race" in {str(f.kind) for f in on.findings}


def test_a_bounded_spin_is_no_spin(tmp_path: Path) -> None:
    """A spin with a retry counter changes a live register on every try: it is no step to itself, so
    the thread stays enabled, gives up after its tries (here 3) and reads `out`, which thread 1 writes
    unordered: the race shows it got out."""
    text = NEVER.format(raise_flag="").replace(
        "SPIN:\n\tld.global.acquire.gpu.b32 %r3, [%rd2];\n\tsetp.ne.s32 %p3, %r3, 1;\n\t@%p3 bra SPIN;",
        "mov.u32 %r5, 0;\nSPIN:\n\tld.global.acquire.gpu.b32 %r3, [%rd2];\n\tadd.u32 %r5, %r5, 1;\n"
        "\tsetp.ge.u32 %p4, %r5, 3;\n\t@%p4 bra GAVE_UP;\n\tsetp.ne.s32 %p3, %r3, 1;\n\t@%p3 bra SPIN;\n"
        "GAVE_UP:")
    on, _ = differential(load(tmp_path, text), block=2)
    assert {str(f.kind) for f in on.findings} == {"race"}
    assert any("ld.global.u32 %r4, [%rd3];" in str(a) for f in on.findings for a in f.accesses)


SHARED_FLAG = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 4 .b32 flag;
	.shared .align 4 .b32 data;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra CONSUMER;
	st.shared.u32 [data], 7;
	{raise_flag}
	ret;
CONSUMER:
	ld.acquire.cta.shared.u32 %r2, [flag];
	setp.eq.u32 %p2, %r2, 0;
	@%p2 bra CONSUMER;
	ld.shared.u32 %r3, [data];
	st.global.u32 [%rd1], %r3;
	ret;
}}
"""


def test_a_shared_memory_flag(tmp_path: Path) -> None:
    """A spin on a flag in shared memory; raised with a release store, it orders the data (verified);
    raised with none, the consumer hangs (`waits_on` flag, in its CTA's shared memory)."""
    ok, _ = differential(load(tmp_path, SHARED_FLAG.format(
        raise_flag="st.release.cta.shared.u32 [flag], 1;"), "ok"), block=2)
    assert ok.verdict == "verified"
    bad, _ = differential(load(tmp_path, SHARED_FLAG.format(raise_flag=""), "bad"), block=2)
    w = bad.findings[0].waiters[0]
    assert (str(bad.findings[0].kind), w.what, w.cta, w.address) == ("deadlock", "flag", 0, "0x0")


def test_the_spinner_stays_out_of_the_stubborn_sets_while_no_one_can_write_its_flag(tmp_path: Path) -> None:
    """CTA 0's stores to the workspace do not bring in CTA 1's spinner (whose future reads them): its flag
    is raised only after CTA 0's bar.sync, which the store's thread (the seed) must reach first. So the
    states grow with the partials' threads as their stores' orders do, not with the spinner's."""
    module = split_k(tmp_path)
    states = [check(module, grid=2, block=n, options=Options(walks=0)).stats.states for n in (2, 4, 8, 16)]
    full = check(module, grid=2, block=2, options=Options(walks=0, reductions=False)).stats.states
    assert states[0] < full
    # Linear in the threads: doubling them at most doubles the increment (14, 18, 26, 42 when written;
    # 15, 24, 54, 162 before, with the spinner enabled).
    assert all(b - a <= 2 * (a - z) for z, a, b in zip(states, states[1:], states[2:], strict=False)), \
        states
    assert states[-1] < 100, states


def test_run_and_replay_end_stuck_on_the_flag(tmp_path: Path) -> None:
    """`mbarrier run` ends a run whose only runnable threads spin on flags as stuck (not at the step
    limit), and the checker's deadlock schedule replays to that end."""
    text = NEVER.format(raise_flag="")
    module = load(tmp_path, text)
    r = run(launch(module, "k", grid=1, block=2), RandomScheduler(0), module=module)
    assert r.outcome == Outcome.STUCK and r.steps < 100_000
    assert "spins on the 4-byte flag at global 0x1100000000" in r.stuck[0].reason
    found = api.check(text, api.Launch(grid=1, block=2)).findings[0]
    replayed = api.run(text, api.Launch(grid=1, block=2), schedule=found.schedule)
    assert replayed.outcome == "stuck"


# A spin lock: each thread takes it with `atom.cas` (0 -> 1), adds 1 to `out` inside and {unlock}.
LOCK = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 lock, .param .u64 out)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [lock];
	ld.param.u64 %rd2, [out];
LOCK:
	atom.global.acquire.gpu.cas.b32 %r2, [%rd1], 0, 1;
	setp.ne.s32 %p2, %r2, 0;
	@%p2 bra LOCK;
	ld.global.u32 %r3, [%rd2];
	add.u32 %r3, %r3, 1;
	st.global.u32 [%rd2], %r3;
	{unlock}
	{peek}
	ret;
}}
"""
UNLOCK = "atom.global.release.gpu.exch.b32 %r4, [%rd1], 0;"


@pytest.mark.parametrize("races", [True, False])
def test_a_spin_lock_never_released_hangs(tmp_path: Path, races: bool) -> None:
    """A failed `atom.cas` writes back what it found: with nothing else touching the lock it is a step
    to the same state, so the second thread waits forever on the lock the first kept."""
    on, _ = differential(load(tmp_path, LOCK.format(unlock="", peek="")), block=2, races=races)
    f = on.findings[0]
    assert (str(f.kind), f.line) == ("deadlock", 12)
    assert [w.what for w in f.waiters] == ["flag"] and "it reads 0x1" in f.waiters[0].detail


def test_two_threads_spinning_on_a_lock_never_released_hang(tmp_path: Path) -> None:
    """Each one's failed `atom.cas` writes the lock, and neither is ordered with the other's: the history
    keeps both (hb: unordered atomic writes are kept), so after each has tried once a try again is a
    step to the same state. Both are blocked: a deadlock the exhaustive search finds (VERIFIED at 85bbcc6
    with the random walks off), and `run` ends stuck."""
    text = LOCK.format(unlock="", peek="")
    on, _ = differential(load(tmp_path, text), block=3)
    f = on.findings[0]
    assert str(f.kind) == "deadlock" and "spin on the flag at global 0x1000000000" in f.message, f.message
    assert [w.what for w in f.waiters] == ["flag", "flag"]
    module = load(tmp_path, text, "again")
    r = run(launch(module, "k", grid=1, block=3), RandomScheduler(0), module=module)
    assert r.outcome == Outcome.STUCK and r.steps < 100_000


MIXED = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 lock)
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [lock];
	mov.u32 %r1, %tid.x;
	setp.eq.s32 %p1, %r1, 2;
	@%p1 bra PEEK;
LOCK:
	atom.global.acquire.gpu.cas.b32 %r2, [%rd1], 0, 1;
	setp.ne.s32 %p2, %r2, 0;
	@%p2 bra LOCK;
	ret;
PEEK:
	ld.global.acquire.gpu.u32 %r3, [%rd1];
	setp.ne.s32 %p3, %r3, 2;
	@%p3 bra PEEK;
	ret;
}
"""


@pytest.mark.parametrize("races", [True, False])
def test_a_cas_spinner_and_a_load_spinner_on_one_lock_hang(tmp_path: Path, races: bool) -> None:
    """One thread takes the lock; another spins on `atom.cas`, a third on an acquire load for a value no
    one writes. The failed CAS no longer drops the load's read from the history (unordered atomic reads
    are kept), so each try again changes nothing: a deadlock, where the search said VERIFIED at
    85bbcc6 with races tracked and the random walks off (the two took turns through two states)."""
    on, _ = differential(load(tmp_path, MIXED), block=3, races=races)
    f = on.findings[0]
    assert str(f.kind) == "deadlock"
    assert sorted(w.what for w in f.waiters) == ["flag", "flag"], f.message


@pytest.mark.parametrize("races", [True, False])
def test_a_spin_lock_released_orders_its_critical_sections(tmp_path: Path, races: bool) -> None:
    on, _ = differential(load(tmp_path, LOCK.format(unlock=UNLOCK, peek="")), block=3, races=races)
    assert on.verdict == "verified"


def test_a_read_of_the_lock_releases_a_blocked_cas(tmp_path: Path) -> None:
    """A weak read of the lock after the critical section: it changes the bytes' history, so a thread
    blocked at its `atom.cas` steps again, and that atom races with the read (a weak read and an
    atomic write unordered)."""
    text = LOCK.format(unlock="", peek="ld.global.u32 %r5, [%rd1];")
    on, _ = differential(load(tmp_path, text), block=2, merge_races=True)
    assert "race" in {str(f.kind) for f in on.findings}


LOOKBACK = Path(__file__).parent / "cuda" / "lookback.cu"


@pytest.mark.tool("nvcc")
@pytest.mark.parametrize("nap", [0, 100])
def test_nvccs_lookback_spin(tmp_path: Path, nap: int) -> None:
    """nvcc 13.0's own loop on a `cuda::atomic_ref` acquire load (cuda/lookback.cu, 2 CTAs of 32, with
    and without `__nanosleep` between tries): verified when CTA 0 raises the flag; a deadlock naming the
    flag when it does not (VERIFIED in 4 states before flag spins blocked)."""
    verdicts = []
    for raise_flag in (1, 0):
        out = tmp_path / f"lookback{raise_flag}.ptx"
        subprocess.run(["nvcc", "-ptx", "-arch=sm_90a", "-O3", f"-DRAISE={raise_flag}", str(LOOKBACK), "-o",
                        str(out)], check=True, capture_output=True)
        r = check(sim_load(out), grid=2, block=32, args={3: nap})
        verdicts.append((str(r.verdict), [w.what for f in r.findings for w in f.waiters][:1]))
    assert verdicts == [("verified", []), ("finding", ["flag"])]
