"""A spin-wait's failed tries are not run by the checker: a thread whose wait would fail is blocked until
it would succeed (`explore.spin`). That is exact only when what a failed try writes is not read after a
success; a retry count read afterwards makes the loop an ordinary one, whose every try is explored."""

from __future__ import annotations

from pathlib import Path

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

# Thread 0 waits for thread 1's arrival, counting its tries; if it tried more than once it stores x,
# which thread 1 reads after its arrival: a race only when thread 0 waited before the arrival came.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<4>;
	.reg .b32 %r<10>;
	.shared .align 8 .b64 bar;
	.shared .align 4 .b32 x;
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar], 1;
SYNC:
	bar.sync 0;
	@%p1 bra ARRIVER;
	mov.u32 %r2, 0;
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@%p2 bra DONE;
	add.u32 %r2, %r2, 1;
	bra.uni WAIT;
DONE:
	setp.eq.u32 %p3, {tries}, 0;
	@%p3 bra END;
	st.shared.u32 [x], 1;
END:
	ret;
ARRIVER:
	mbarrier.arrive.shared::cta.b64 _, [bar];
	ld.shared.u32 %r3, [x];
	ret;
}}
"""


def test_a_retry_count_read_after_success_is_explored(tmp_path: Path) -> None:
    on, _ = differential(load(tmp_path, KERNEL.format(tries="%r2")), block=2)
    assert outcome(on) == ("finding", frozenset({"race"}))


def test_a_retry_count_nobody_reads_keeps_the_wait_a_spin(tmp_path: Path) -> None:
    # The same loop whose count is dead after the wait: blocked until the arrival, no store, verified.
    r = check(load(tmp_path, KERNEL.format(tries="%r1")), grid=1, block=2, options=Options(walks=0))
    assert outcome(r) == ("verified", frozenset())
    assert r.stats.states < 12
