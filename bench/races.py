"""The cost of race tracking: simulated steps per second with happens-before tracking on and off.

    python bench/races.py                 # print the table
    python bench/races.py --write-doc     # and write it into docs/performance.md (section "Race tracking")

Random-schedule mode (`mbarrier run --seed N` with and without `--no-races`) on the bundled nvcc kernels
and the race corpus's correct kernels. Only `explore.run` is timed; one process, one core. Both modes
run the same schedules (the same seeds give the same choices), so the step counts agree.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from collections.abc import Callable

import benchdoc

from mbarrier import examples, explore, sim
from mbarrier.examples import cases
from mbarrier.examples.races import CASES as RACE_CASES
from mbarrier.explore.check import Options, check_machine
from mbarrier.sim.races import track

KERNELS: dict[str, Callable[[], sim.Machine]] = {
    **{name: c.launch for name, c in cases.CASES.items()},
    **{name: c.launch for name, c in RACE_CASES.items() if c.rule is None},
}


def measure(launch: Callable[[], sim.Machine], races: bool, seeds: int,
            repeats: int) -> tuple[int, int, float]:
    """Threads, total steps over the seeds, and the best total CPU time of the runs over `repeats` rounds
    (CPU time: the machine is shared, so wall time would measure the neighbours)."""
    best = float("inf")
    steps = threads = 0
    for _ in range(repeats):
        steps, seconds = 0, 0.0
        for seed in range(seeds):
            m = launch()
            if races:
                track(m)
            t0 = time.process_time()
            r = explore.run(m, explore.RandomScheduler(seed))
            seconds += time.process_time() - t0
            if not r.ok:
                raise SystemExit(f"seed {seed}: {r.outcome} {r.message}")
            steps += r.steps
            threads = len(m.threads)
        best = min(best, seconds)
    return threads, steps, best


def table(seeds: int, repeats: int) -> list[str]:
    rows = ["| kernel | threads | seeds | steps | off: steps/s | on: steps/s | cost (on/off time) |",
            "|---|---|---|---|---|---|---|"]
    for name, launch in KERNELS.items():
        n = seeds if name in cases.CASES else 50
        threads, steps, off = measure(launch, False, n, repeats)
        _, steps_on, on = measure(launch, True, n, repeats)
        assert steps == steps_on, "the same seeds must run the same schedules"
        rows.append(f"| {name} | {threads} | {n} | {steps:,} | {steps / off:,.0f} | {steps / on:,.0f} | "
                    f"{on / off:.1f}x |")
    return rows


CHECKED = ("tma_pipeline", "cluster_exchange", "bulk_store", "tma_pipeline_bug_refill_before_release")


def check_table() -> list[str]:
    """`mbarrier check` (exhaustive, reductions on) with race tracking off and on: states and CPU time."""
    rows = ["| kernel | verdict off | verdict on | states off | states on | seconds off | seconds on |",
            "|---|---|---|---|---|---|---|"]
    for name in CHECKED + ("ring_buffer",):
        # ring_buffer (the nvcc example, 160 threads): 30 s each way, to compare states per second.
        launch = RACE_CASES[name].launch if name in RACE_CASES else cases.CASES[name].launch
        path = RACE_CASES[name].path if name in RACE_CASES else examples.path(cases.CASES[name].example)
        module = sim.load(path)
        out = []
        for races in (False, True):
            t0 = time.process_time()
            r = check_machine(launch(), module, Options(races=races, max_findings=1,
                                                         timeout=None if name in RACE_CASES else 30.0))
            out.append((r.verdict, r.stats.states, time.process_time() - t0))
        (v0, s0, t0_), (v1, s1, t1) = out
        rows.append(f"| {name} | {v0} | {v1} | {s0:,} | {s1:,} | {t0_:.2f} | {t1:.2f} |")
    return rows




def write_doc(rows: list[str], checked: list[str], seeds: int, repeats: int, load: float) -> None:
    commit = benchdoc.commit()
    benchdoc.write_section("races.py", [
        "## Race tracking",
        "",
        f"`python bench/races.py --write-doc`, {datetime.date.today().isoformat()}, commit {commit}, "
        f"{benchdoc.cpu_name()}, Python {platform.python_version()}, one core. Random-schedule mode, "
        "bursts of 1..8 "
        f"steps, {seeds} seeds per row for the nvcc examples (50 for the race corpus), the same schedules "
        f"with tracking off (`mbarrier run --no-races`) and on (the default); only the run is timed, in CPU "
        f"seconds; the best of {repeats} rounds. The machine (2 cores) was shared with other work: load "
        f"average {load:.1f} at the start.",
        "",
        *rows,
        "",
        "Exhaustive checking (`mbarrier check`, reductions on) of the race corpus with tracking off "
        "(`--no-races`) and on; the happens-before state joins the state key, so states merge only when "
        "their histories order the same accesses. Off, the planted bug is invisible (memory is sequentially "
        "consistent), so the checker explores every state and verifies it; on, it stops at the race. "
        "ring_buffer (the nvcc example, 160 threads) runs with a 30-second limit each way; where it says "
        "incomplete, compare states.",
        "",
        *checked,
        "",
        "Where the time goes with tracking on: every load and store checks and updates the shadow of each "
        "byte it touches (a dictionary entry per byte with the last write's epoch and the reads since), and "
        "every synchronizing event copies or joins vector clocks (a dictionary per thread; joins at a "
        "successful acquire wait, bar.sync and cluster barriers). Off, the plain Machine runs: race "
        "tracking lives in a subclass, so the fast paths are the same code as before.",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--write-doc", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    rows = table(args.seeds, args.repeats)
    print("\n".join(rows))
    checked = check_table()
    print("\n".join(checked))
    if args.write_doc:
        write_doc(rows, checked, args.seeds, args.repeats, load)


if __name__ == "__main__":
    main()
