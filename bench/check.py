"""Benchmark: `mbarrier check` (reductions on) against SPIN (its partial-order reduction on) on the same
TMA-style producer/consumer kernels (`mbarrier.examples.family`: P producers, C consumers standing for
consumer warps, S stages, K iterations), exported with `mbarrier export --promela`.

    python bench/check.py [--sizes P,C,S,K ...] [--timeout S] [--ring]
    python bench/check.py --shapes [--only NAME ...] [--trips K ...] [--warps N ...] [--timeout S]
                          [--spin-timeout S] [--cc-opt=-O2] [--threads-per-process N] [--markdown]

Prints one row per size: our states and seconds, SPIN's states and seconds (translation + compilation +
search, and search alone), and the ratio of wall times; then, per size, what our reductions did: transitions,
enabled moves the stubborn sets pruned, moves left asleep by sleep sets, and states merged by symmetry
(where the checker has it). `--ring` also checks the nvcc-compiled ring buffer
(src/mbarrier/examples/ring_buffer.ptx: 5 warps, 3 stages, 6 iterations).
Both sides check deadlocks and assertions (mbarrier undefined behaviour); race tracking is off on our side
(SPIN's model has no happens-before state), and reported separately for the ring buffer.
`--shapes` runs both sides on the nvcc-compiled shape corpus instead (`bench/spin_shapes.py`).
The growth curves of the nvcc-compiled shape corpus (`mbarrier.examples.shapes`) with the trip count and
the consumer warps are `bench/shapes.py --trips K ... --warps N ...` (docs/performance.md).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mbarrier import examples, sim
from mbarrier.examples import family
from mbarrier.explore.check import CheckResult, Options, Stats, check
from mbarrier.explore.promela import export_promela

sys.path.insert(0, str(Path(__file__).parent))
import spin_shapes  # noqa: E402

DEFAULT_SIZES = ["1,2,2,4", "1,3,2,4", "2,2,2,4", "1,3,3,6", "2,3,2,4", "1,4,2,4", "2,4,2,4"]


def ours(path: Path, block: int, timeout: float, **kw: object) -> tuple[CheckResult, float]:
    module = sim.load(path)
    t = time.perf_counter()
    kw.setdefault("races", False)
    r = check(module, grid=1, block=block, options=Options(timeout=timeout, **kw))  # type: ignore[arg-type]
    return r, time.perf_counter() - t


def reductions(s: Stats) -> str:
    """What the reductions did, in one line."""
    merged = getattr(s, "symmetric_merges", None)  # symmetry reduction, where the checker has it
    return (f"{s.transitions:,} transitions; stubborn sets pruned {s.pruned:,} of {s.enabled:,} enabled "
            "moves, "
            f"sleep sets left {s.sleep_pruned:,} asleep ({s.sleep_woken:,} woken again), "
            f"{s.full_expansions:,} full expansions"
            + (f", {merged:,} states merged by symmetry" if merged is not None else ""))


def spin(path: Path, block: int, timeout: float) -> tuple[str, int | None, float, float]:
    """(verdict, states, total seconds, search seconds) of SPIN with its default POR."""
    module = sim.load(path)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        w = Path(d)
        (w / "m.pml").write_text(export_promela(module, sim.launch(module, grid=1, block=block)))
        subprocess.run(["spin", "-a", "m.pml"], cwd=w, check=True, capture_output=True)
        subprocess.run(["cc", "-O2", "-DSAFETY", "-DVECTORSZ=65536", "-o", "pan", "pan.c"], cwd=w, check=True,
                       capture_output=True)
        t1 = time.perf_counter()
        try:
            out = subprocess.run(["./pan", "-m1000000"], cwd=w, capture_output=True, text=True,
                                 timeout=timeout).stdout
        except subprocess.TimeoutExpired:
            return "timeout", None, time.perf_counter() - t0, time.perf_counter() - t1
        t2 = time.perf_counter()
    m = re.search(r"(\d+) states, stored", out)
    errors = re.search(r"errors: (\d+)", out)
    verdict = "finding" if errors and int(errors.group(1)) else "verified"
    return verdict, int(m.group(1)) if m else None, t2 - t0, t2 - t1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="*", default=DEFAULT_SIZES, metavar="P,C,S,K")
    ap.add_argument("--timeout", type=float, default=None, help="per run, seconds (300; --shapes: 120)")
    ap.add_argument("--ring", action="store_true", help="also check the nvcc-compiled ring buffer")
    ap.add_argument("--shapes", action="store_true", help="the shape corpus instead (bench/spin_shapes.py)")
    ap.add_argument("--only", nargs="*", default=None, metavar="NAME", help="--shapes: these shapes")
    ap.add_argument("--trips", nargs="*", type=int, default=[1, 2, 4], metavar="K",
                    help="--shapes: trip counts (1 2 4)")
    ap.add_argument("--warps", nargs="*", type=int, default=[1, 2], metavar="N",
                    help="--shapes: consumer warps (1 2)")
    ap.add_argument("--markdown", action="store_true", help="--shapes: also print the table as Markdown")
    ap.add_argument("--spin-timeout", type=float, default=None, help="--shapes: SPIN's bound (--timeout)")
    ap.add_argument("--cc-opt", default="-O0",
                    help="--shapes: the C compiler's optimisation of pan.c (--cc-opt=-O2)")
    ap.add_argument("--threads-per-process", type=int, default=None, metavar="N",
                    help="--shapes: N threads per process in SPIN's model (default: 1, a warp past 255)")
    args = ap.parse_args()
    if not shutil.which("spin"):
        sys.exit("SPIN is not installed (apt-get install spin)")
    if args.shapes:
        timeout = args.timeout or 120.0
        return spin_shapes.main(args.only, args.trips, args.warps, timeout, args.spin_timeout or timeout,
                                args.cc_opt, args.markdown, args.threads_per_process)
    args.timeout = args.timeout or 300.0
    print(f"{'P,C,S,K':>9} {'threads':>7} | {'ours states':>11} {'ours s':>8} | {'SPIN states':>11} "
          f"{'SPIN s':>8} {'(search)':>8} | {'SPIN/ours':>9}  verdicts")
    effects: list[str] = []
    with tempfile.TemporaryDirectory() as d:
        for size in args.sizes:
            p, c, s, k = (int(x) for x in size.split(","))
            path = Path(d) / f"ring_{p}_{c}_{s}_{k}.ptx"
            path.write_text(family.ring_ptx(p, c, s, k))
            r, t1 = ours(path, p + c, args.timeout)
            v2, n2, t2, t2s = spin(path, p + c, args.timeout)
            ratio = f"{t2 / t1:9.2f}" if v2 != "timeout" else "      n/a"
            spin_states = n2 if n2 is not None else "-"
            print(f"{size:>9} {p + c:>7} | {r.stats.states:>11,} {t1:>8.2f} | {spin_states:>11} "
                  f"{t2:>8.2f} {t2s:>8.2f} | {ratio}  {r.verdict}/{v2}", flush=True)
            effects.append(f"{size:>9}: {reductions(r.stats)}")
    print("\nour reductions:")
    for line in effects:
        print(line)
    if args.ring:
        path = examples.path("ring_buffer")
        for label, kw in (("thread-granular", {}), ("thread-granular, races tracked (check's default)",
                                                     {"races": True}),
                          ("warp-granular", {"warp": True})):
            r, t = ours(path, 160, args.timeout, **kw)
            print(f"ring_buffer.ptx (160 threads, 3 stages, 6 iterations), {label}: {r.verdict}, "
                  f"{r.stats.states:,} states, {t:.1f} s; {reductions(r.stats)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
