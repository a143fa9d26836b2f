"""barrier.cluster.wait in the stubborn sets: it commutes with every other step (it blocks until the
phase its thread arrived in completes, or passes because it has: the same state either way), so its
footprint is empty. Same verdicts and finding kinds as without reductions on two-CTA kernels with and
without bugs, and states linear in the threads (before: about 3 to the power of the threads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.shared .align 4 .b8 word[16];
	mov.u32 %r0, %tid.x;
	shl.b32 %r1, %r0, 2;
	mov.u32 %r2, word;
	add.u32 %r3, %r2, %r1;
	mov.u32 %r4, %cluster_ctarank;
	xor.b32 %r5, %r4, 1;
	mapa.shared::cluster.u32 %r6, %r3, %r5;
"""
SYNC = "\tbarrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;\n"

# Each thread stores its word, the cluster meets, each reads the other CTA's word, the cluster meets
# again (so no CTA exits while the other reads its shared memory). Bugs: `early` (the read comes before
# the first meeting: a race), `leave` (no second meeting: a CTA may exit while the other reads from it),
# `twice` (thread 0 arrives twice: a fault), `unarrived` (thread 0 waits without arriving: a fault).
BODY = {
    None: "\tst.shared.u32 [%r3], 1;\n" + SYNC + "\tld.shared::cluster.u32 %r7, [%r6];\n" + SYNC,
    "early": "\tst.shared.u32 [%r3], 1;\n\tld.shared::cluster.u32 %r7, [%r6];\n" + SYNC + SYNC,
    "leave": "\tst.shared.u32 [%r3], 1;\n" + SYNC + "\tld.shared::cluster.u32 %r7, [%r6];\n",
    "twice": "\tsetp.eq.u32 %p0, %r0, 0;\n\t@%p0 barrier.cluster.arrive.release;\n" + SYNC,
    "unarrived": "\tsetp.ne.u32 %p0, %r0, 0;\n\t@%p0 barrier.cluster.arrive.release;\n"
                 "\tbarrier.cluster.wait.acquire;\n",
}
EXPECTED = {None: None, "early": "race", "leave": "violation", "twice": "violation", "unarrived": "violation"}






@pytest.mark.parametrize(("bug", "threads"), [(b, n) for b in BODY for n in (1, 2)])
def test_cluster_kernels_same_outcomes_as_without_reductions(tmp_path: Path, bug: str | None,
                                                             threads: int) -> None:
    _, off = differential(load(tmp_path, HEAD + BODY[bug] + "\texit;\n}\n"), grid=2, block=threads, cluster=2)
    expected = EXPECTED[bug]
    assert (off.verdict == "verified") == (expected is None)
    assert expected is None or expected in outcome(off)[1]


def test_a_cluster_barrier_is_linear_in_the_threads(tmp_path: Path) -> None:
    """Two CTAs of n threads meeting at the cluster barrier: 2n + 2 states, the last arrival and the exits
    (6n + 1 while each arrival and wait took a state, `check.joins_only`; before that: 11, 88, 791,
    7,204 for n = 1..4)."""
    p = tmp_path / "meet.ptx"
    head = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
    p.write_text(head + SYNC + "\texit;\n}\n")
    module = sim.load(p)
    states = [check(module, grid=2, block=n, cluster=2, options=Options(runs=False, walks=0)).stats.states
              for n in (1, 2, 4, 8)]
    assert states == [2 * n + 2 for n in (1, 2, 4, 8)], states
