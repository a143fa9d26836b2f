"""Simulator speed: simulated thread-steps per second in random-schedule mode on the bundled nvcc kernels.

    python bench/sim.py                 # print the table
    python bench/sim.py --write-doc     # and write it into docs/performance.md (section "Simulator")

A step is one instruction of one thread, or one landing of an asynchronous copy. Only `explore.run` is
timed (parsing, compiling and launching are not); one process, one core.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

import benchdoc

from mbarrier import examples, explore, sim
from mbarrier.examples.cases import CASES

HEADLINE = "ring_buffer"  # the TMA-style warp-specialized kernel: the figure the target is about


def measure(name: str, burst: int, seeds: int, repeats: int) -> tuple[int, int, float]:
    """Threads, total steps over the seeds, and the best (least) total run time of `repeats` rounds."""
    case = CASES[name]
    module = sim.load(examples.path(case.example))
    best = float("inf")
    for _ in range(repeats):
        steps, seconds = 0, 0.0
        for seed in range(seeds):
            m = case.launch(module)
            t0 = time.perf_counter()
            r = explore.run(m, explore.RandomScheduler(seed, burst=burst))
            seconds += time.perf_counter() - t0
            if not r.ok:
                raise SystemExit(f"{name} seed {seed}: {r.outcome} {r.message}")
            steps += r.steps
        best = min(best, seconds)
    return len(m.threads), steps, best




def table(seeds: int, repeats: int) -> tuple[list[str], float]:
    rows = ["| kernel | threads | burst | seeds | steps | seconds | steps/s |",
            "|---|---|---|---|---|---|---|"]
    headline = 0.0
    for name in ("ring_buffer", "pipeline", "cluster_handshake", "arrive_drop"):
        for burst in (8, 1):
            threads, steps, seconds = measure(name, burst, seeds, repeats)
            rate = steps / seconds
            if name == HEADLINE and burst == 8:
                headline = rate
            rows.append(f"| {name} | {threads} | {burst} | {seeds} | {steps:,} | {seconds:.2f} | "
                        f"{rate:,.0f} |")
    return rows, headline


def write_doc(rows: list[str], headline: float, seeds: int, repeats: int, load: float) -> None:
    commit = benchdoc.commit()
    today = datetime.date.today().isoformat()
    benchdoc.write_section("sim.py", [
        "## Simulator",
        "",
        f"`python bench/sim.py --write-doc`, {today}, commit {commit}, {benchdoc.cpu_name()}, Python "
        f"{platform.python_version()}, one core. Random-schedule mode (`mbarrier run --seed N`): each "
        "pick runs one uniformly chosen runnable agent for 1..burst steps; burst 1 draws at every step. "
        f"{seeds} seeds per row; only the run is timed; seconds: the best of {repeats} rounds over all "
        f"seeds. The machine (2 cores) was shared with other work: load average {load:.1f} at the start.",
        "",
        f"Headline (ring_buffer, burst 8): **{headline:,.0f} simulated thread-steps/s**.",
        "",
        *rows,
        "",
        "How: each instruction is compiled once per launch into a small Python function (registers in a "
        "list at fixed slots, operands as constants or list indexing); the run loop picks an agent and "
        "calls its next function. What remains per step is that call and the scheduler's random draw; "
        "mbarrier instructions also pay for the core model's checks.",
        "",
        "Noise: this shared 2-core machine runs the same code at two speeds about 2x apart from one "
        "minute to the next (ring_buffer, burst 8, commits 8e473d2 and 27054c2 measured alternately on "
        "2026-11-22: 0.51M to 1.09M steps/s for each), so one table is one draw; compare rows of the same "
        "run, not runs.",
    ])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--write-doc", action="store_true")
    args = p.parse_args()
    load = os.getloadavg()[0]
    rows, headline = table(args.seeds, args.repeats)
    print("\n".join(rows))
    print(f"\nring_buffer, burst 8: {headline:,.0f} steps/s")
    if args.write_doc:
        write_doc(rows, headline, args.seeds, args.repeats, load)


if __name__ == "__main__":
    main()
