"""Livelocks (`explore.livelock`): a kernel that can only hang with a thread still moving (a loop through
different states) is a `livelock` finding, never VERIFIED, with reductions on and off; the same kernel
whose flag does get set is VERIFIED. In warp mode the toggle's loop is met at a dead end (a state whose
one move slept), which the dead-end runs settle. The closed regions of a graph, on hand-made graphs."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.explore.helpers import differential, load

from mbarrier import api
from mbarrier.explore import snapshot
from mbarrier.explore.check import Explorer, Options, check
from mbarrier.explore.livelock import Graph
from mbarrier.explore.walks import scheduler, walk
from mbarrier.sim import launch
from mbarrier.sim.races import track
from mbarrier.spec.checks import LIVELOCK

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.shared .align 4 .u32 flag;
	mov.u32 %r5, %tid.x;
	setp.ne.u32 %p2, %r5, 0;
	@%p2 bra OTHER;
"""

# Thread 0 polls `flag`, toggling a register on every try (so the poll is no spin that comes back to the
# same state); thread 1 `{store}`s and exits.
TOGGLE = HEAD + """	mov.u32 %r1, 0;
POLL:
	xor.b32 %r1, %r1, 1;
	ld.relaxed.cta.shared.u32 %r2, [flag];
	setp.eq.u32 %p1, %r2, 0;
	@%p1 bra POLL;
	ret;
OTHER:
	{store}
	ret;
}}
"""

# Two threads hand `flag` back and forth: thread 0 waits for 0 and writes 1, thread 1 waits for 1 and
# writes 0; each `{stop}`s (after 3 hand-offs, or never).
HANDOFF = HEAD + """	mov.u32 %r3, 0;
T0:
	ld.relaxed.cta.shared.u32 %r2, [flag];
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra T0;
	st.relaxed.cta.shared.u32 [flag], 1;
	{stop}
	bra T0;
OTHER:
	mov.u32 %r3, 0;
T1:
	ld.relaxed.cta.shared.u32 %r2, [flag];
	setp.ne.u32 %p1, %r2, 1;
	@%p1 bra T1;
	st.relaxed.cta.shared.u32 [flag], 0;
	{stop}
	bra T1;
}}
"""
BOUNDED = """add.u32 %r3, %r3, 1;
	setp.eq.u32 %p3, %r3, 3;
	@%p3 ret;"""

# Both threads arrive once on `bar` (expected count `{count}`), then poll it with test_wait, storing a
# toggled word to their own slot of `mine` between tries: with count 2 the phase completes, with 3 never.
# The store between tries keeps the poll from parking (`Machine.mb_wait`); the state key counts the
# effects since the last failed try, not their running total (`explore.snapshot`), so the poll repeats
# states (before: a new state on every try, incomplete at 84,609 states in 20 s).
POLL_STORE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b64 bar;
	.shared .align 4 .b32 mine[2];
	mov.u32 %r5, %tid.x;
	setp.ne.u32 %p2, %r5, 0;
	@%p2 bra MET;
	mbarrier.init.shared::cta.b64 [bar], {count};
MET:
	bar.sync 0;
	mbarrier.arrive.shared::cta.b64 %rd1, [bar];
	mul.wide.u32 %rd2, %r5, 4;
	mov.u64 %rd3, mine;
	add.u64 %rd3, %rd3, %rd2;
	mov.u32 %r1, 0;
POLL:
	xor.b32 %r2, %r2, 1;
	st.shared.u32 [%rd3], %r2;
	mbarrier.test_wait.parity.shared::cta.b64 %p1, [bar], %r1;
	@!%p1 bra POLL;
	ret;
}}
"""

SET = "st.relaxed.cta.shared.u32 [flag], 1;"
MODES = [Options(walks=0), Options(walks=0, reductions=False), Options(walks=0, sleep=False),
         Options(walks=0, symmetry=True), Options(walks=0, warp=True), Options()]


def _kinds(text: str, tmp_path: Path, opts: Options) -> tuple[str, list[str]]:
    r = check(load(tmp_path, text), grid=1, block=2, options=opts)
    return r.verdict, [f.rule for f in r.findings]


@pytest.mark.parametrize("opts", MODES, ids=lambda o: repr(o)[8:60])
@pytest.mark.parametrize(("text", "expected"), [
    (TOGGLE.format(store=""), ("finding", [LIVELOCK])),
    (TOGGLE.format(store="st.relaxed.cta.shared.u32 [flag], 0;"), ("finding", [LIVELOCK])),
    (TOGGLE.format(store=SET), ("verified", [])),
    (HANDOFF.format(stop=""), ("finding", [LIVELOCK])),
    (HANDOFF.format(stop=BOUNDED), ("verified", [])),
    (POLL_STORE.format(count=3), ("finding", [LIVELOCK])),
    (POLL_STORE.format(count=2), ("verified", [])),
], ids=["toggle-unset", "toggle-set-to-0", "toggle-set", "handoff-forever", "handoff-3", "poll-store-never",
        "poll-store"])
def test_a_hang_that_keeps_moving_is_a_livelock(text: str, expected: tuple[str, list[str]], opts: Options,
                                                tmp_path: Path) -> None:
    assert _kinds(text, tmp_path, opts) == expected


@pytest.mark.parametrize("text", [TOGGLE.format(store=""), TOGGLE.format(store=SET), HANDOFF.format(stop=""),
                                  HANDOFF.format(stop=BOUNDED), POLL_STORE.format(count=3),
                                  POLL_STORE.format(count=2)])
def test_differential(text: str, tmp_path: Path) -> None:
    """Reductions on and off agree (verdict and kinds), every finding kept."""
    differential(load(tmp_path, text), block=2)


def test_the_finding_names_the_looping_thread_and_replays(tmp_path: Path) -> None:
    """The message names thread 0 at its poll; the schedule reaches a state the kernel never leaves: the
    replay runs on to its step bound with thread 0 alive."""
    text = TOGGLE.format(store="")
    r = check(load(tmp_path, text), grid=1, block=2, options=Options(walks=0))
    f = r.findings[0]
    assert f.kind == "livelock" and f.line == 15 and "ld.relaxed.cta.shared.u32 %r2, [flag]" in f.message
    assert "thread 0 at line 15" in f.message and "keeps going round the same 2 states" in f.message
    replayed = api.run(text, api.Launch(grid=1, block=2), schedule=f.schedule, max_steps=10_000)
    assert replayed.outcome == "limit" and replayed.exited == 1


def test_json_kind(tmp_path: Path) -> None:
    report = api.check(TOGGLE.format(store=""), api.Launch(grid=1, block=2))
    assert [f.kind for f in report.findings] == ["livelock"] and report.verdict == "finding"


def _graph(edges: list[tuple[int, int]], escapes: tuple[int, ...] = ()) -> Graph:
    g = Graph()
    for u, v in edges:
        g.edge(u, v, v <= u)
    for u in escapes:
        g.escape(u)
    return g


@pytest.mark.parametrize(("edges", "escapes", "regions"), [
    ([(0, 1), (1, 2)], (), []),                                   # no cycle
    ([(0, 1), (1, 1)], (), [[1]]),                                # a self-loop, nothing leaves
    ([(0, 1), (1, 2), (2, 1)], (), [[1, 2]]),                     # a closed two-cycle
    ([(0, 1), (1, 2), (2, 1), (2, 3)], (), []),                   # the cycle has a way out
    ([(0, 1), (1, 2), (2, 1)], (2,), []),                         # a finding leaves it
    ([(0, 1), (0, 3), (1, 2), (2, 1), (3, 4), (4, 3)], (), [[1, 2], [3, 4]]),
    ([(0, 1), (1, 0), (1, 2), (2, 3), (3, 2)], (), [[2, 3]]),      # only the downstream cycle is closed
])
def test_closed_regions(edges: list[tuple[int, int]], escapes: tuple[int, ...],
                        regions: list[list[int]]) -> None:
    found = _graph(edges, escapes).closed_regions(5, lambda: None)
    assert sorted(sorted(r) for r in found) == regions


def test_a_poll_that_stores_between_tries_repeats_its_states(tmp_path: Path) -> None:
    """The correct poll-and-store kernel ends in a few dozen states: its tries do not count effects."""
    r = check(load(tmp_path, POLL_STORE.format(count=2)), grid=1, block=2, options=Options(walks=0))
    assert r.verdict == "verified" and r.stats.states < 100, r.stats.states


@pytest.mark.parametrize(("text", "livelock"), [(TOGGLE.format(store=""), True),
                                                (HANDOFF.format(stop=""), True),
                                                (HANDOFF.format(stop=BOUNDED), False)])
def test_a_walk_cut_at_its_length_asks_for_a_livelock(text: str, livelock: bool, tmp_path: Path) -> None:
    """Bugs first: a random walk cut at its length bound settles where it stands (`walk_livelock`), so a
    livelock is found where the search cannot finish; its schedule is the walk's. A walk that ends is
    not asked."""
    module = load(tmp_path, text)
    m = launch(module, "k", grid=1, block=2)
    track(m)
    ex = Explorer(m, module, Options())
    init: list[int] = []
    ex.settle(init, {t.aid for t in m.threads}, first=True)
    root = snapshot.save(m, ex.tokens)
    found, n, _ = walk(ex, root, init, scheduler(0, 1000), time.monotonic() + 60, limit=500, ask=True)
    if livelock:
        assert n == 500 and found is not None and found.kind == "livelock", (n, found)
        replayed = api.run(text, api.Launch(grid=1, block=2), schedule=found.schedule, max_steps=100_000)
        assert replayed.outcome == "limit"
    else:
        assert n < 500 and found is None


def test_a_bound_inside_the_analysis_leaves_the_check_incomplete(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound (here Ctrl-C) hit while a region is settled: never VERIFIED, and the report says where."""
    from mbarrier.explore import livelock
    from mbarrier.explore.budget import INTERRUPT, BoundHit

    def interrupted(*_: object, **__: object) -> None:
        raise BoundHit(INTERRUPT)
    monkeypatch.setattr(livelock, "settle", interrupted)
    r = check(load(tmp_path, TOGGLE.format(store="")), grid=1, block=2, options=Options(walks=0))
    assert r.verdict == "incomplete" and r.stopped_by == INTERRUPT and not r.findings
    assert "stopped while settling whether a cycle of them ends" in r.covered


def test_the_replay_line_of_a_livelock_bounds_its_run(tmp_path: Path) -> None:
    """The text report's replay command stops a livelock's run 100,000 steps past its schedule (its
    threads never end), and that run stops there with the looping thread alive (exit 3)."""
    p = tmp_path / "toggle.ptx"
    p.write_text(TOGGLE.format(store=""))
    out = subprocess.run([sys.executable, "-m", "mbarrier", "check", str(p), "--grid", "1", "--block", "2",
                          "--walks", "0"], capture_output=True, text=True, check=False)
    line = next(x for x in out.stdout.splitlines() if x.strip().startswith("replay:"))
    assert out.returncode == 1 and " --max-steps " in line
    argv = shlex.split(line.split("replay: ", 1)[1])
    assert argv[:2] == ["mbarrier", "run"]
    again = subprocess.run([sys.executable, "-m", "mbarrier", *argv[1:]], capture_output=True, text=True,
                           check=False, cwd=tmp_path)
    assert again.returncode == 3 and "stopped at the step limit" in again.stdout, again.stdout
