"""The search loop. With reductions off the state graph is pinned: its state and transition counts were
computed with the checker of commit 050ef34, before the per-state work became incremental (dirty threads
only, shared snapshot entries, cached thread hashes), and must not move. Sleep sets (explore.sleep) keep
every verdict and finding kind and never add states or transitions."""

from __future__ import annotations

import random
import re
import shlex
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.cli.run import parse_dims
from mbarrier.examples import family
from mbarrier.explore.check import CheckResult, Options, check

CORPUS = Path(sim.__file__).parent.parent / "examples" / "corpus"
HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
\t.reg .pred %p<200>;
\t.reg .b32 %r<200>;
\t.shared .align 8 .b64 bar0;
\t.shared .align 8 .b64 bar1;
\t.shared .align 4 .b32 data[2];
"""

# (kernel, launch, races, warp) -> (verdict, states, transitions), measured at 050ef34 (reductions off).
PINNED = [
    ("handoff", (1, 2, None), False, False, ("verified", 45, 70)),
    ("handoff", (1, 2, None), True, True, ("verified", 24, 31)),
    ("exit_drop", (1, 3, None), False, False, ("verified", 289, 675)),
    ("exit_drop", (1, 3, None), True, False, ("verified", 302, 688)),
    ("exit_drop", (1, 3, None), False, True, ("verified", 27, 35)),
    ("nocomplete", (1, 3, None), True, False, ("finding", 250, 566)),
    ("stale_token", (1, 2, None), False, False, ("finding", 78, 134)),
    ("remote_wait", (2, 1, 2), True, False, ("finding", 67, 120)),
    ("family 1,1,2,2", (1, 2, None), False, False, ("verified", 674, 1435)),
    ("family 1,1,2,2", (1, 2, None), False, True, ("verified", 534, 1130)),
    ("family 2,1,1,2", (1, 3, None), False, True, ("verified", 227, 396)),
    # 238 states since two unordered copies of identical bytes are no race (docs/memory-model.md): the
    # early refill copies the same bytes over the stage, and the race found is the consumer's read
    ("family 1,2,1,2 refill-early", (1, 3, None), True, True, ("finding", 238, 454)),
]


def _module(tmp_path: Path, name: str) -> object:
    if not name.startswith("family"):
        return sim.load(CORPUS / f"{name}.ptx")
    _, size, *bug = name.split()
    p = tmp_path / "family.ptx"
    p.write_text(family.ring_ptx(*(int(x) for x in size.split(",")), bug=bug[0] if bug else None))
    return sim.load(p)


@pytest.mark.parametrize(("name", "launch", "races", "warp", "expected"), PINNED,
                         ids=[f"{p[0]}-{'races' if p[2] else 'norace'}-{'warp' if p[3] else 'thread'}"
                              for p in PINNED])
def test_state_graph_without_reductions_is_unchanged(tmp_path: Path, name: str,
                                                      launch: tuple[int, int, int | None], races: bool,
                                                      warp: bool, expected: tuple[str, int, int]) -> None:
    grid, block, cluster = launch
    r = check(_module(tmp_path, name), grid=grid, block=block, cluster=cluster,  # type: ignore[arg-type]
              options=Options(reductions=False, races=races, warp=warp, sleep=False))
    assert (r.verdict, r.stats.states, r.stats.transitions) == expected


def _outcome(r: CheckResult) -> tuple[str, frozenset[str]]:
    return r.verdict, frozenset(f.kind for f in r.findings)


def _with_and_without_sleep(module: object, grid: int | tuple[int, ...], block: int | tuple[int, ...],
                            cluster: int | tuple[int, ...] | None = None, races: bool = False,
                            warp: bool = False) -> tuple[CheckResult, CheckResult]:
    # Symmetry reduction switches sleep sets off (they name threads by id): off here. No random walks:
    # a walk's finding ends the search a time later (Options.followup), which a loaded machine moves.
    off, on = (check(module, grid=grid, block=block, cluster=cluster,  # type: ignore[arg-type]
                     options=Options(races=races, warp=warp, sleep=sleep, max_findings=1000,
                                     max_states=100_000, symmetry=False, walks=0))
               for sleep in (False, True))
    assert off.verdict != "incomplete"
    assert _outcome(on) == _outcome(off), ([(f.kind, f.rule) for f in on.findings],
                                           [(f.kind, f.rule) for f in off.findings])
    assert on.stats.states <= off.stats.states
    assert on.stats.transitions <= off.stats.transitions
    assert off.stats.sleep_pruned == off.stats.sleep_woken == 0
    return off, on


CORPUS_FILES = sorted(CORPUS.glob("*.ptx"))
_EXPECT = re.compile(r"^// check: (?P<args>.*?) => (?P<verdict>\w+)(?: (?P<kind>\w+) (?P<rule>[\w-]+))?$",
                     re.M)


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_sleep_sets_keep_the_corpus_outcomes(path: Path) -> None:
    m = _EXPECT.search(path.read_text())
    assert m is not None
    argv = shlex.split(m["args"])
    opts = dict(zip(argv[::2], argv[1::2], strict=True))
    verdict, kind = m["verdict"], m["kind"]
    _, on = _with_and_without_sleep(sim.load(path), parse_dims(opts["--grid"], "grid"),
                                    parse_dims(opts["--block"], "block"),
                                    parse_dims(opts.get("--cluster"), "cluster"))
    assert on.verdict == verdict
    assert kind is None or kind in {f.kind for f in on.findings}


@pytest.mark.parametrize("bug", [None, *family.BUGS])
def test_sleep_sets_keep_the_family_outcomes_with_races_and_in_warp_mode(tmp_path: Path,
                                                                         bug: str | None) -> None:
    p = tmp_path / "r.ptx"
    p.write_text(family.ring_ptx(1, 2, 1, 2, bug=bug))
    module = sim.load(p)
    _with_and_without_sleep(module, 1, 3, races=True)
    _with_and_without_sleep(module, 1, 3, warp=True)


def test_sleep_sets_prune_transitions_of_a_ring_with_a_bug() -> None:
    off, on = _with_and_without_sleep(sim.load(CORPUS / "ring_count_low.ptx"), 1, 3)
    assert on.stats.sleep_pruned > 0
    assert on.stats.transitions < off.stats.transitions


def _random_kernel(rng: random.Random) -> tuple[str, int]:
    """2-3 threads of stores, loads whose value decides whether a store happens (so one state is reached
    by paths of different lengths: a state can be reached again after it was expanded), arrivals and
    waits on two barriers."""
    n = rng.randint(2, 3)
    lines = [HEAD, "\tmov.u32 %r0, %tid.x;", "\tsetp.ne.u32 %p0, %r0, 0;", "\t@%p0 bra SYNC;",
             f"\tmbarrier.init.shared::cta.b64 [bar0], {rng.randint(1, 3)};",
             f"\tmbarrier.init.shared::cta.b64 [bar1], {rng.randint(1, 3)};", "SYNC:", "\tbar.sync 0;"]
    lines += [f"\tsetp.eq.u32 %p{i}, %r0, {i};\n\t@%p{i} bra T{i};" for i in range(1, n)]
    k = 10
    for i in range(n):
        lines.append(f"T{i}:")
        for _ in range(rng.randint(2, 4)):
            k += 1
            j, j2 = rng.randint(0, 1), rng.randint(0, 1)
            op = rng.choice(["st", "cond", "cond", "arrive", "wait"])
            if op == "st":
                lines.append(f"\tst.shared.u32 [data+{4 * j}], {rng.randint(0, 1)};")
            elif op == "cond":
                lines += [f"\tld.shared.u32 %r{k}, [data+{4 * j}];", f"\tsetp.eq.u32 %p{k}, %r{k}, 0;",
                          f"\t@%p{k} st.shared.u32 [data+{4 * j2}], 1;", f"\tmov.u32 %r{k}, 0;",
                          f"\tsetp.ne.u32 %p{k}, %r{k}, %r{k};"]
            elif op == "arrive":
                lines.append(f"\tmbarrier.arrive.shared::cta.b64 _, [bar{j}];")
            else:
                lines += [f"W{k}:", f"\tmbarrier.try_wait.parity.shared::cta.b64 %p{k}, [bar{j}], 0;",
                          f"\t@!%p{k} bra W{k};"]
        lines.append("\texit;")
    return "\n".join(lines) + "\n}\n", n


def test_sleep_sets_on_random_kernels_agree_with_no_reduction_and_wake_states_reached_again(
        tmp_path: Path) -> None:
    rng = random.Random(1)
    woken = 0
    for i in range(40):
        text, n = _random_kernel(rng)
        p = tmp_path / f"r{i}.ptx"
        p.write_text(text)
        module = sim.load(p)
        _, on = _with_and_without_sleep(module, 1, n)
        woken += on.stats.sleep_woken > 0
        if on.stats.sleep_woken or i % 4 == 0:  # the full graph costs up to a second: a sample of them
            plain = check(module, grid=1, block=n, options=Options(  # type: ignore[arg-type]
                reductions=False, races=False, max_findings=1000))
            assert _outcome(on) == _outcome(plain)
    # Some states are reached again with a smaller sleep set after their expansion (Godefroid's rule).
    assert woken > 0


def _timeout_after(monkeypatch: pytest.MonkeyPatch, calls: int) -> None:
    """The time bound is hit at the `calls`+1-th reading of the bounds at the search's own safe points
    (the readings inside long work, through `budget.pulse`, are not counted: see
    tests/explore/test_deadline.py)."""
    import sys

    from mbarrier.explore import budget
    seen: list[int] = []

    def exceeded(self: budget.Budget) -> str:
        f = sys._getframe(1)
        while f is not None:
            if f.f_code is budget.pulse.__code__:
                return ""
            f = f.f_back  # type: ignore[assignment]
        seen.append(1)
        return budget.TIMEOUT if len(seen) > calls else ""

    monkeypatch.setattr(budget.Budget, "exceeded", exceeded)


def test_the_bounds_are_checked_between_the_transitions_of_one_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 5's mutant 47 of shapes/named.ptx: the first state of 96 threads took 18 s under `--timeout 10`
    on a loaded machine, because the bounds were read only between two states. Without reductions the
    root of ring.ptx has 3 transitions: the bound read before the third stops the search there."""
    from mbarrier.ptx.parser import parse_file
    _timeout_after(monkeypatch, 2)  # the root's pop, the second transition: fine; the third: hit
    r = check(parse_file(CORPUS / "ring.ptx"), grid=1, block=3,
              options=Options(walks=0, timeout=60.0, reductions=False))
    assert r.stopped_by == "timeout" and r.stats.transitions == 2 and r.verdict == "incomplete"
    assert "3 states were left unexplored" in r.covered  # the root's two children and the root itself


def test_the_bounds_are_checked_inside_a_states_stubborn_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same mutant spent its time in the stubborn set of its first state (a plan per thread, 3 seeds
    of 96 threads): the bounds are read between two plans, and a state whose set was cut short is left
    unexplored with none of its transitions taken. (Two CTAs: in one, only thread 0 stands at a visible
    step at first, the others' arrivals at bar.sync having run eagerly; two give the root a set.)"""
    from mbarrier.ptx.parser import parse_file
    _timeout_after(monkeypatch, 1)  # the root's pop; then the first plan's check
    r = check(parse_file(CORPUS / "ring.ptx"), grid=2, block=3, options=Options(walks=0, timeout=60.0))
    assert r.stopped_by == "timeout" and r.stats.transitions == 0 and r.stats.enabled == 0
    assert r.covered.startswith("stopped before the first state was explored (futures of thread "), r.covered
