"""The Ampere-style cp.async ring (libcu++/raw-asm kernels: every producer lane copies its word with
cp.async and signals with cp.async.mbarrier.arrive.noinc, spins on `empty` with test_wait, and drains its
copies with cp.async.wait_all before it exits) in the stubborn sets: while the seed is one of a thread's
cp.async copies, that thread cannot pass its wait_all (nor a wait_group 0 behind the seed's committed
group), so its future stops there (`Frozen.copy_gate`, `frozen.held_by`); a pending arrive-on is in no
copy group, so no copy wait observes it (`footprints.copy_items`); alike seeds close alike, so one of each
kind is tried too (`por._seeds`); and without .noinc, the issue's rise of the pending count commutes
with what cannot complete the phase anyway (`explore.quiet`), and the issue with its arrive-on counts as
no arrival towards a phase (`Frozen.arrival`). Same verdicts and finding kinds as without reductions, on
never more states, at 1 and 2 lanes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome
from .test_cpasync_arrive import HEAD

# Two rounds through one stage (after HEAD: lanes 0..n-1 produce, lane n consumes; `full` expects n
# arrivals, `empty` one): each lane copies its word and signals, waits for the consumer's release on
# `empty` (test_wait, as the raw-asm kernels spin), copies and signals again, then drains its copies.
BODY = """	cp.async.ca.shared.global [%r4], [%rd0], 4;
	{signal}
EMPTY:
	mbarrier.test_wait.parity.shared::cta.b64 %p4, [empty], 0;
	@!%p4 bra EMPTY;
	cp.async.ca.shared.global [%r4], [%rd0], 4;
	{signal}
	{drain}
	exit;
CONSUME:
WAIT0:
	mbarrier.test_wait.parity.shared::cta.b64 %p2, [full], 0;
	@!%p2 bra WAIT0;
	ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [tile];
	mbarrier.arrive.shared::cta.b64 _, [empty];
WAIT1:
	mbarrier.test_wait.parity.shared::cta.b64 %p2, [full], 1;
	@!%p2 bra WAIT1;
	ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [tile];
	exit;
}}
"""
NOINC = "cp.async.mbarrier.arrive.noinc.shared.b64 [full];"
WAIT_ALL = "cp.async.wait_all;"
INC = "cp.async.mbarrier.arrive.shared.b64 [full];"
ARRIVE = "mbarrier.arrive.shared::cta.b64 _, [full];"
# variant -> (signal, drain, expected). `inc`: without .noinc each issue raises the pending count its
# arrive-on lowers again, so the lanes' arrivals never complete a phase (libcu++'s cuda::pipeline pairs
# the issue with an mbarrier.arrive: `incarrive`, correct; `arrivefirst`: the arrive before the issue
# may complete the phase, and the arrive-on then lands in the next one, which nobody waited for yet: a
# violation, 9.7.13.15.4). `group`: commit_group + wait_group 0 drain the copies. `peek`: a lane reads
# its word after its wait_all (ordered); `early`: before it (a race with its copy).
VARIANTS: dict[str | None, tuple[str, str, str | None]] = {
    None: (NOINC, WAIT_ALL, None),
    "inc": (INC, WAIT_ALL, "deadlock"),
    "incarrive": (INC + "\n\t" + ARRIVE, WAIT_ALL, None),
    "arrivefirst": (ARRIVE + "\n\t" + INC, WAIT_ALL, "violation"),
    "group": (NOINC, "cp.async.commit_group;\n\tcp.async.wait_group 0;", None),
    "peek": (NOINC, WAIT_ALL + "\n\tld.shared.u32 %r30, [%r4];", None),
    "early": (NOINC, "ld.shared.u32 %r30, [%r4];\n\t" + WAIT_ALL, "race"),
}


def _kernel(variant: str | None, lanes: int) -> str:
    signal, drain, _ = VARIANTS[variant]
    return (HEAD.format(count=lanes, lanes=lanes, size=max(16, 4 * lanes))
            + BODY.format(signal=signal, drain=drain))


# (variant, lanes, races): without reductions every instruction of every thread interleaves, and the race
# tracker's clocks keep orders apart, so the larger size runs without race tracking.
CASES = [(v, 1, True) for v in VARIANTS] + [(v, 2, False) for v in VARIANTS]


@pytest.mark.parametrize(("variant", "lanes", "races"), CASES,
                         ids=[f"{v}-{n}-{'races' if x else 'noraces'}" for v, n, x in CASES])
def test_cpasync_ring_same_outcomes_as_without_reductions(tmp_path: Path, variant: str | None, lanes: int,
                                                          races: bool) -> None:
    _, off = differential(load(tmp_path, _kernel(variant, lanes)), block=lanes + 1, races=races,
                          max_states=300_000)
    expected = VARIANTS[variant][2] if races or variant != "early" else None  # a race needs the tracker
    assert (off.verdict == "verified") == (expected is None)
    assert expected is None or expected in outcome(off)[1]


@pytest.mark.parametrize("variant", [None, "inc", "incarrive"])
def test_cpasync_ring_lanes_are_linear(tmp_path: Path, variant: str | None) -> None:
    """States grow by the same number per lane: 20, 31, 42, 53 with .noinc (22, 34, 46, 58 before a
    thread seed kept its CTA alive for the copies of its set, `closure.stubborn`; 26, 40, 54, 68 before these
    reductions); without it, its deadlock in 9, 14, 19, 24 (before: 9, 18, 43, 150, and incomplete at 8
    lanes after 30 s, 44 states now); without it plus an arrive, 24, 38, 52, 66 (before: 28, 222, and
    incomplete at 3 lanes after 30 s)."""
    states = [check(load(tmp_path, _kernel(variant, n)), grid=1, block=n + 1,
                    options=Options(walks=0)).stats.states for n in (1, 2, 3, 4)]
    steps = {b - a for a, b in zip(states, states[1:], strict=False)}
    assert len(steps) == 1, states
