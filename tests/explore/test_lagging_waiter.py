"""A deadlock's headline names the barrier that is the cause, not one that starves because of it; and a
waiter that fell a whole phase behind shows as such (PTX ISA 9.7.13.15.16: a parity names the current
phase or the one before).

The kernel is the shape found in a real warp-specialized GEMM's producer warpgroup: every producer lane
waits on `empty` for parity 1 (which passes at once on a fresh object), then lane 0 alone arrives on
`full`, and the producers meet at a counted bar.sync. Nothing orders another lane's wait before lane 0's
arrival, so under independent thread scheduling that lane may wait only after the consumer released
`empty`: parity 1 then names the phase in progress, which no thread will complete. A `bar.warp.sync`
between the wait and the arrival orders every lane's wait first, and the kernel is correct."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore import Outcome, Replay, run
from mbarrier.explore.check import Options, check
from mbarrier.explore.deadlock import ModuleAhead
from mbarrier.explore.results import FindingKind, Verdict
from mbarrier.sim import launch

from .helpers import differential, load

# Producer lanes 0..{n}-1 of warp 0, the consumer is thread {n}: {sync} goes between the producers' wait
# and lane 0's arrival.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<8>;
	.reg .b32 %r<8>;
	.shared .align 8 .b64 full;
	.shared .align 8 .b64 empty;
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared::cta.b64 [full], 1;
	mbarrier.init.shared::cta.b64 [empty], 1;
SYNC:
	bar.sync 0;
	setp.ge.u32 %p2, %r1, {n};
	@%p2 bra CONSUMER;
	mov.u32 %r3, 1;
WAITE:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [empty], %r3;
	@!%p3 bra.uni WAITE;
	{sync}
	setp.ne.u32 %p4, %r1, 0;
	@%p4 bra PDONE;
	mbarrier.arrive.shared::cta.b64 _, [full];
PDONE:
	bar.sync 1, {n};
	ret;
CONSUMER:
	mov.u32 %r4, 0;
WAITF:
	mbarrier.try_wait.parity.shared::cta.b64 %p6, [full], %r4;
	@!%p6 bra.uni WAITF;
	mbarrier.arrive.shared::cta.b64 _, [empty];
	ret;
}}
"""
WAIT_LINE = 21  # the producers' wait on `empty`


def _kernel(tmp_path: Path, n: int, synced: bool) -> Path:
    p = tmp_path / f"lag{n}{'s' if synced else ''}.ptx"
    p.write_text(KERNEL.format(n=n, sync=f"bar.warp.sync {(1 << n) - 1};" if synced else ""))
    assert p.read_text().splitlines()[WAIT_LINE - 1].strip().startswith("mbarrier.try_wait")
    return p


def test_the_lagging_lane_is_the_headline_and_the_bar_sync_its_consequence(tmp_path: Path) -> None:
    module = load(tmp_path, _kernel(tmp_path, 4, False).read_text())
    r = check(module, grid=1, block=5, options=Options(max_findings=1))
    assert r.verdict == Verdict.FINDING
    (f,) = r.findings
    assert f.kind == FindingKind.DEADLOCK and f.line == WAIT_LINE
    top, rest = f.starved[0], f.starved[1:]
    assert (top.waits_on, top.barrier, top.phase, top.short) == ("mbarrier", "empty", 1, "no arrival")
    assert "the phase in progress, 1; the same wait issued before phase 0 completed would have passed" \
        in f.message
    (bar,) = [s for s in rest if s.waits_on == "bar"]
    # the bar.sync lacks exactly the lanes that wait on `empty`, and says so
    assert bar.lacking == top.waiters and bar.lacking_on == ("empty",)
    assert bar.words(f.layout).endswith(
        f"{f.layout.threads(top.waiters)}, which it still needs, "
        f"{'waits' if len(top.waiters) == 1 else 'wait'} on mbarrier empty")
    # `mbarrier run` replaying the finding says the same
    m = launch(module, grid=1, block=5)
    replay = run(m, Replay(f.schedule), ahead=ModuleAhead(module, m))
    assert replay.outcome == Outcome.STUCK and replay.message == f.message.split(": ", 1)[1]


@pytest.mark.parametrize("synced", [False, True])
def test_reductions_keep_the_lag_and_its_fix(tmp_path: Path, synced: bool) -> None:
    module = load(tmp_path, _kernel(tmp_path, 2, synced).read_text())
    on, _ = differential(module, block=3)
    assert on.verdict == (Verdict.VERIFIED if synced else Verdict.FINDING)


def test_a_warp_sync_after_the_wait_verifies_a_full_warp(tmp_path: Path) -> None:
    module = load(tmp_path, _kernel(tmp_path, 32, True).read_text())
    r = check(module, grid=1, block=33, options=Options())
    assert r.verdict == Verdict.VERIFIED
