"""Copies in flight to one mbarrier, as a 2-CTA multicast's halves land on each CTA's `full`.

Two things made the cluster shape's states grow faster than its trip count (docs/performance.md, the
cluster bullet): the race tracker named copy engines by the machine's issue order, so the two producers'
issues in either order left different vector clocks (two states for one); and two copies' complete-tx on
one barrier never commuted, so the copies still in flight after a branching were landed at different
points of the long chains that followed (`footprints.landing_mode`: two TX landings commute). Same
verdicts and finding kinds as without reductions, correct and with bugs."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore import snapshot
from mbarrier.explore.run import run
from mbarrier.explore.schedulers import Replay
from mbarrier.sim.races import track

from .helpers import TILE_BAR_HEAD, differential, load

# Thread 0 initializes `bar` (count {count}), arms it for {bytes} bytes and issues the 16-byte bulk copies
# {copies} into `tile` on it, then exits; every other thread (with {arrive}: after a plain arrival) waits
# for the phase and reads a word of `tile`.
KERNEL = TILE_BAR_HEAD + """	@%p1 bra CONSUME;
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], {bytes};
	ld.param.u64 %rd1, [src];
	cvta.to.global.u64 %rd1, %rd1;
{copies}
	exit;
CONSUME:
{arrive}
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra WAIT;
	and.b32 %r6, %r1, 15;
	shl.b32 %r7, %r6, 2;
	mov.u32 %r8, tile;
	add.u32 %r9, %r8, %r7;
	ld.shared.u32 %r10, [%r9];
	ld.param.u64 %rd6, [out];
	mul.wide.u32 %rd7, %r1, 4;
	add.u64 %rd8, %rd6, %rd7;
	st.global.u32 [%rd8], %r10;
	ret;
}}
"""
COPY = ("\tadd.u64 %rd{r}, %rd1, {o};\n\tmov.u32 %r{s}, tile;\n\tadd.u32 %r{s}, %r{s}, {o};\n"
        "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r{s}], [%rd{r}], 16, [bar];")
THREADS = 3


def _kernel(copies: int, armed: int, arrive: bool) -> str:
    return KERNEL.format(count=THREADS if arrive else 1, bytes=armed,
                         copies="\n".join(COPY.format(r=2 + i, s=11 + i, o=16 * i) for i in range(copies)),
                         arrive="\tmbarrier.arrive.shared::cta.b64 _, [bar];" if arrive else "")


# Armed for every copy (verified), for one copy fewer (the phase completes while the last lands: a race,
# and the last one's bytes fall into the next phase), for 4 bytes more (it never completes: a deadlock).
CASES = [(n, armed, arrive, expected) for n in (2, 3) for arrive in (False, True)
         for armed, expected in ((16 * n, None), (16 * (n - 1), "race"), (16 * n + 4, "deadlock"))]


@pytest.mark.parametrize(("copies", "armed", "arrive", "expected"), CASES,
                         ids=[f"{n}-{a}-{'arrive' if p else 'tx'}" for n, a, p, _ in CASES])
def test_landings_on_one_barrier_same_outcomes_as_without_reductions(
        tmp_path: Path, copies: int, armed: int, arrive: bool, expected: str | None) -> None:
    on, off = differential(load(tmp_path, _kernel(copies, armed, arrive)), block=THREADS)
    assert (off.verdict == "verified") == (expected is None)
    assert expected is None or expected in {str(f.kind) for f in off.findings}


def test_copies_that_cannot_complete_the_phase_land_in_one_order(tmp_path: Path) -> None:
    """Each copy more costs the same few states (two: its issue and its landing), not one more order of
    the landings (before: 16, 22, 31 states for 2, 3, 4 copies)."""
    states = [differential(load(tmp_path, _kernel(n, 16 * n, False), f"k{n}"), block=THREADS,
                           runs=False)[0].stats.states
              for n in (2, 3, 4)]
    assert states[2] - states[1] == states[1] - states[0] == 2


# Threads 0 and 1 each arm their own barrier and copy 16 bytes into their own half of `tile`.
TWO_ISSUERS = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src)
{
	.reg .pred %p<4>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b8 bar[16];
	.shared .align 16 .b8 tile[64];
	mov.u32 %r0, %tid.x;
	mov.u32 %r1, bar;
	shl.b32 %r2, %r0, 3;
	add.u32 %r1, %r1, %r2;
	mov.u32 %r3, tile;
	shl.b32 %r4, %r0, 4;
	add.u32 %r3, %r3, %r4;
	ld.param.u64 %rd0, [src];
	cvta.to.global.u64 %rd0, %rd0;
	mul.wide.u32 %rd1, %r0, 16;
	add.u64 %rd1, %rd0, %rd1;
	mbarrier.init.shared::cta.b64 [%r1], 1;
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16;
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 16, [%r1];
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;
	@!%p1 bra WAIT;
	ld.shared.u32 %r5, [%r3];
	exit;
}
"""


@pytest.mark.parametrize("land", [False, True], ids=["in-flight", "landed"])
def test_the_order_two_threads_issued_their_copies_in_leaves_one_state(tmp_path: Path, land: bool) -> None:
    """The machine numbers copies in issue order across threads; the race tracker names each by its issue
    (`RaceState.copy_agent`), so either order of the two issues (and of the landings) is one state key."""
    module = load(tmp_path, TWO_ISSUERS)
    m = sim.launch(module, grid=1, block=2)
    track(m)
    start = snapshot.save(m, {})

    def key(schedule: str, steps: int) -> object:
        snapshot.restore(m, start)
        run(m, Replay(schedule), max_steps=steps)
        return snapshot.key(snapshot.save(m, {}))

    # 14 steps take a thread through its copy's issue; the copies are c0 and c1 in issue order.
    first, second = ("0*14,1*14,c0,c1", "1*14,0*14,c1,c0") if land else ("0*14,1*14", "1*14,0*14")
    steps = 30 if land else 28
    assert key(first, steps) == key(second, steps)
