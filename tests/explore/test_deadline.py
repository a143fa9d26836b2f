"""Every long loop of the checker honours the bounds and Ctrl-C (`explore.budget.pulse`): analysing the
code, settling the first state, unrolling a thread's future alone or a warp's lanes together, the frozen
futures between two plans, a random walk, a state's transitions. A stop asked for inside any of them
ends the check at that very poll, incomplete (never verified), with the findings already made.

No clock: the stop is `Options.stop` (what Ctrl-C sets), answering True once it is polled from inside
the loop under test; a bound of a nanosecond stands for a timeout that passes at once."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore.check import Options, check_machine
from mbarrier.explore.results import CheckResult, FindingKind, Stats
from mbarrier.sim.launch import launch

from .helpers import load

# 384 threads in warpgroups: the first state needs a future per thread, its warps' lanes walked together.
BIG = SHAPES["warpgroup"].sized(2)


class StopInside:
    """`Options.stop` that asks for a stop the first time it is polled from inside function `name`, and
    counts the polls after that one (none: the loop ended at the poll)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.hit = False
        self.after = 0

    def __call__(self) -> bool:
        if self.hit:
            self.after += 1
            return True
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_name == self.name:
                self.hit = True
                return True
            f = f.f_back  # type: ignore[assignment]
        return False


def _check(stop: Callable[[], bool] | None = None, timeout: float | None = None, walks: int = 0,
           shape: str = "") -> CheckResult:
    s = BIG if not shape else SHAPES[shape].with_consumers(2).sized(2)
    return check_machine(s.launch(), sim.load(s.path), Options(stop=stop, timeout=timeout, walks=walks,
                                                                max_states=2_000))


@pytest.mark.parametrize("loop", [
    "backward_union",   # analysing the code (explore.code)
    "settle",           # the first state's eager steps
    "_walk_lanes",      # a warp's lanes' futures in one walk (explore.values)
    "unroll",           # one thread's future (explore.values)
    "futures",          # the frozen futures, between two threads' plans (explore.frozen)
    "_walk",            # a random walk (explore.walks)
    "expand",           # between two transitions of a state
])
def test_a_stop_inside_each_long_loop_ends_the_check_there(loop: str) -> None:
    stop = StopInside(loop)
    r = _check(stop, walks=3 if loop == "_walk" else 0)
    assert stop.hit, f"{loop} was never polled"
    assert stop.after == 0, f"{stop.after} polls after the stop inside {loop}"
    assert r.verdict == "incomplete" and r.stopped_by == "interrupt", (r.verdict, r.covered)
    assert "stopped" in r.covered


# Every thread stores to shared memory first (a visible step each: the first state's stubborn set asks
# every thread's future), then all meet at an mbarrier three times.
FIRST = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<4>;
	.shared .align 4 .b8 data[1024];
	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	shl.b32 %r2, %r1, 2;
	mov.u32 %r3, data;
	add.u32 %r4, %r3, %r2;
	st.shared.u32 [%r4], %r1;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mov.u32 %r5, bar;
	mbarrier.init.shared.b64 [%r5], 128;
SYNC:
	bar.sync 0;
	mov.u32 %r5, bar;
	mov.u32 %r6, 0;
	mov.u32 %r7, 0;
LOOP:
	mbarrier.arrive.shared.b64 %rd1, [%r5];
WAIT:
	mbarrier.try_wait.parity.shared.b64 %p2, [%r5], %r6;
	@!%p2 bra WAIT;
	xor.b32 %r6, %r6, 1;
	add.u32 %r7, %r7, 1;
	setp.lt.u32 %p3, %r7, 3;
	@%p3 bra LOOP;
	ret;
}
"""


def test_a_stop_during_the_first_state_says_where_it_stopped(tmp_path: Path) -> None:
    m = load(tmp_path, FIRST)
    r = check_machine(launch(m, block=128), m, Options(stop=StopInside("futures"), walks=0))
    assert r.verdict == "incomplete" and r.stopped_by == "interrupt"
    assert r.covered.startswith("stopped before the first state was explored (futures of thread "), r.covered
    assert r.covered.split("(")[1].split(")")[0].endswith("/128"), r.covered
    assert r.stats.transitions == 0


def test_a_timeout_that_passes_at_once_is_incomplete_with_its_name() -> None:
    r = _check(timeout=1e-9)
    assert r.verdict == "incomplete" and r.stopped_by == "timeout"
    assert r.covered.startswith("stopped while analysing the kernel's code"), r.covered


def test_a_stop_after_a_walk_found_the_bug_keeps_the_finding(tmp_path: Path) -> None:
    # An expected count one above the threads: every schedule deadlocks, so the first random walk finds
    # it before the search starts; the stop comes at the search's first state.
    m = load(tmp_path, FIRST.replace("], 128;", "], 129;"))
    r = check_machine(launch(m, block=128), m, Options(stop=StopInside("expand"), walks=1))
    assert r.verdict == "finding" and r.stopped_by == "interrupt"
    assert [f.kind for f in r.findings] == [FindingKind.DEADLOCK]
    assert r.findings[0].found_by.startswith("random walk 0")


def test_progress_shows_the_first_states_long_work(tmp_path: Path) -> None:
    seen: list[str] = []

    def show(s: Stats) -> None:
        if s.transitions == 0:
            seen.append(s.doing)

    m = load(tmp_path, FIRST)
    r = check_machine(launch(m, block=128), m,
                      Options(progress=show, progress_every=0.0, walks=0, max_states=3))
    assert r.verdict == "incomplete" and r.stopped_by == "max-states"
    assert "analysing the code" in seen
    assert "eager steps of thread 128/128" in seen
    assert "futures of thread 128/128" in seen
