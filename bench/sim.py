"""Simulator speed: simulated thread-steps per second in random-schedule mode on the bundled nvcc kernels.

    python bench/sim.py                 # print the table
    python bench/sim.py --write-doc     # and write it into docs/performance.md (section "Simulator")

A step is one instruction of one thread, or one landing of an asynchronous copy. Only `explore.run` is
timed, in CPU seconds (parsing, compiling and launching are not); one process, one core. The GEMM-tile
rows time the whole of `mbarrier run` on one CTA of a CUTLASS-style GEMM (examples/races/cuda/
tile_gemm.cu: 128 x 128 tile, K = 256, 384 threads, TMA and wgmma) from its launch file: loading the
PTX, launching, running.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

import benchdoc

from mbarrier import examples, explore, sim
from mbarrier.examples import races
from mbarrier.examples.cases import CASES
from mbarrier.sim.races import track

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
            t0 = time.process_time()  # CPU time: the machine is shared, wall time is not this process's
            r = explore.run(m, explore.RandomScheduler(seed, burst=burst))
            seconds += time.process_time() - t0
            if not r.ok:
                raise SystemExit(f"{name} seed {seed}: {r.outcome} {r.message}")
            steps += r.steps
        best = min(best, seconds)
    return len(m.threads), steps, best




def gemm_tile(seed: int, races_on: bool) -> tuple[int, float, float]:
    """Steps, wall and CPU seconds of one whole `mbarrier run` of the GEMM tile (load, launch, run)."""
    w0, c0 = time.perf_counter(), time.process_time()
    m = sim.launch(sim.load(races.HERE / "nvcc_tile_gemm.ptx"),
                   spec=sim.read_launch(races.HERE / "nvcc_tile_gemm.launch.json"))
    if races_on:
        track(m)
    r = explore.run(m, explore.RandomScheduler(seed, burst=8))
    if not r.ok:
        raise SystemExit(f"tile_gemm seed {seed}: {r.outcome} {r.message}")
    return r.steps, time.perf_counter() - w0, time.process_time() - c0


def gemm_table(seeds: int, repeats: int) -> list[str]:
    rows = ["| kernel | threads | races tracked | seed | steps | wall seconds | CPU seconds |",
            "|---|---|---|---|---|---|---|"]
    for races_on in (True, False):
        for seed in range(seeds):
            runs = [gemm_tile(seed, races_on) for _ in range(repeats)]
            steps, wall, cpu = min(runs, key=lambda x: x[2])
            tracked = "yes" if races_on else "no"
            rows.append(f"| tile_gemm 128x128, K=256 | 384 | {tracked} | {seed} | {steps:,} | {wall:.1f} | "
                        f"{cpu:.1f} |")
    return rows


def table(seeds: int, repeats: int) -> tuple[list[str], float]:
    rows = ["| kernel | threads | burst | seeds | steps | CPU seconds | steps/s |",
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


def write_doc(rows: list[str], gemm: list[str], headline: float, seeds: int, repeats: int,
              load: float) -> None:
    commit = benchdoc.commit()
    today = datetime.date.today().isoformat()
    benchdoc.write_section("sim.py", [
        "## Simulator",
        "",
        f"`python bench/sim.py --write-doc`, {today}, commit {commit}, {benchdoc.cpu_name()}, Python "
        f"{platform.python_version()}, one core. Random-schedule mode (`mbarrier run --seed N`): each "
        "pick runs one uniformly chosen runnable agent for 1..burst steps; burst 1 draws at every step. "
        f"{seeds} seeds per row; only the run is timed, in CPU seconds of this process (the machine is "
        f"shared: wall time counts other work); seconds: the best of {repeats} rounds over all seeds. "
        f"The machine (2 cores) was shared with other work: load average {load:.1f} at the start.",
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
        "",
        "### One CTA of a GEMM",
        "",
        "The whole of `mbarrier run nvcc_tile_gemm.ptx --launch nvcc_tile_gemm.launch.json --seed N` (a "
        "CUTLASS-style warp-specialized GEMM: 128 x 128 tile, K = 256, a TMA producer warp and two wgmma "
        "consumer warpgroups, 384 threads; loading, launching and running, bursts of 8), with race tracking "
        "(the default of `mbarrier run`) and without (`--no-races`); the best CPU time of "
        f"{repeats} rounds. CPU seconds are the figure to read on this shared machine. Where the time "
        "goes (cProfile, races tracked): the race shadow (its per-byte accesses and vector-clock joins) "
        "and the wgmma register rules; the accumulator fragments move between registers and matrices as "
        "numpy arrays (sim.mma).",
        "",
        *gemm,
    ])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--gemm-seeds", type=int, default=2)
    p.add_argument("--write-doc", action="store_true")
    args = p.parse_args()
    load = os.getloadavg()[0]
    rows, headline = table(args.seeds, args.repeats)
    gemm = gemm_table(args.gemm_seeds, args.repeats)
    print("\n".join(rows + [""] + gemm))
    print(f"\nring_buffer, burst 8: {headline:,.0f} steps/s")
    if args.write_doc:
        write_doc(rows, gemm, headline, args.seeds, args.repeats, load)


if __name__ == "__main__":
    main()
