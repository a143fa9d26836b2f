"""The shape corpus (`mbarrier.examples.shapes`): every correct kernel runs to its end under random
schedules with race tracking, computing what its source says; every planted bug shows, as the kind of
finding its Shape names, under one of a few random schedules; the committed PTX is what nvcc makes of the
sources (`cuda/build.sh`)."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.examples.shapes import HERE, SHAPES, Shape
from mbarrier.explore.check import Options, check_machine
from mbarrier.explore.run import Outcome, run
from mbarrier.explore.schedulers import RandomScheduler
from mbarrier.sim.races import track

KIND = {Outcome.STUCK: "deadlock", Outcome.RACE: "race", Outcome.VIOLATION: "violation"}
CORRECT = [s for s in SHAPES.values() if s.bug is None]
BUGGY = [s for s in SHAPES.values() if s.bug is not None]


def _run(s: Shape, seed: int) -> tuple[Outcome, list[int]]:
    m = s.launch()
    track(m)
    r = run(m, RandomScheduler(seed))
    base, _ = list(m.buffers.values())[1]  # out: the second parameter
    return r.outcome, [m.gmem.load(base + 4 * i, 4) for i in range(4)]


def test_every_file_has_a_shape_and_every_source_a_build_line() -> None:
    assert sorted(p.stem for p in HERE.glob("*.ptx")) == sorted(SHAPES)
    build = (HERE / "cuda" / "build.sh").read_text(encoding="utf-8")
    for name in SHAPES:
        assert f"\ngen {name} " in build


@pytest.mark.parametrize("shape", CORRECT, ids=lambda s: s.name)
def test_a_correct_shape_runs_to_its_end(shape: Shape) -> None:
    for seed in (1, 2):
        outcome, _ = _run(shape, seed)
        assert outcome == Outcome.EXITED, (shape.name, seed, outcome)


def test_the_ring_computes_what_its_source_says() -> None:
    # out[(k * consumers + warp) * 32 + lane] = in[k * 32 + lane] * 3 + k, the input zero: out[0..3] = 0
    # (k = 0); out[64 + lane] = 1 (k = 1, warp 0).
    m = SHAPES["ring"].launch()
    assert run(m, RandomScheduler(3)).outcome == Outcome.EXITED
    base, _ = list(m.buffers.values())[1]
    assert [m.gmem.load(base + 4 * i, 4) for i in (0, 63, 64, 127, 128)] == [0, 0, 1, 1, 2]


@pytest.mark.parametrize("shape", BUGGY, ids=lambda s: s.name)
def test_a_planted_bug_shows_under_some_random_schedule(shape: Shape) -> None:
    seen = []
    for seed in range(1, 9):
        outcome, _ = _run(shape, seed)
        seen.append(outcome)
        if KIND.get(outcome) == shape.bug:
            return
    pytest.fail(f"{shape.name}: no {shape.bug} in 8 random schedules: {seen}")


def test_a_planted_bug_needs_its_trip_count() -> None:
    # Two stages: the ring's `empty` barrier is first waited for at the third iteration, so with two the
    # count bug cannot show: the kernel is then correct.
    for seed in (1, 2, 3):
        outcome, _ = _run(SHAPES["ring_bug_count"].sized(2), seed)
        assert outcome == Outcome.EXITED


SMALL = [("ring", "verified"), ("ring_rolled", "verified"), ("branch", "verified"),
         ("ring_bug_count", "deadlock"), ("ring_bug_bytes", "deadlock"), ("branch_bug_skip", "deadlock")]


@pytest.mark.parametrize(("name", "expect"), SMALL)
def test_the_search_alone_decides_a_small_ring(name: str, expect: str) -> None:
    # One consumer warp and three iterations (two stages: `empty` is waited for at the third): the
    # exhaustive search, without random walks, verifies the correct kernels and finds each bug's kind.
    s = replace(SHAPES[name].sized(3), block=64)
    r = check_machine(s.launch(), sim.load(s.path), Options(walks=0))
    got = r.verdict if r.verdict != "finding" else r.findings[0].kind
    assert got == expect, (r.verdict, [(f.kind, f.rule) for f in r.findings], r.covered)


@pytest.mark.tool("nvcc")
@pytest.mark.parametrize("name,flags", [("ring", ""), ("pingpong_bug_order", "-DBUG_ORDER"),
                                        ("cluster", "")])
def test_the_committed_ptx_is_what_nvcc_makes(tmp_path: Path, name: str, flags: str) -> None:
    src = name.split("_bug")[0]
    rel = Path("src/mbarrier/examples/shapes/cuda")
    (tmp_path / rel).mkdir(parents=True)
    for f in (HERE / "cuda").iterdir():
        if f.suffix in (".cu", ".cuh"):
            (tmp_path / rel / f.name).write_bytes(f.read_bytes())
    out = tmp_path / "out.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90a", "-O3", *flags.split(), str(rel / f"{src}.cu"), "-o",
                    str(out)], cwd=tmp_path, check=True)
    assert out.read_text(encoding="utf-8") == (HERE / f"{name}.ptx").read_text(encoding="utf-8")
