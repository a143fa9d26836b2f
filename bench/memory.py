"""Memory per state of `mbarrier check`: what the search keeps for each state it has seen.

    python bench/memory.py                 # print the table
    python bench/memory.py --write-doc     # and write it into docs/performance.md ("Memory per state")
    python bench/memory.py --shape ring --warps 4 --trips 4   # one shape of the corpus instead (a row)
    python bench/memory.py --shape ring --warps 4 --trips 4 --walks 0   # the search alone, no walks
    python bench/memory.py --shape ring --warps 4 --trips 4,8,16        # and the cost per extra state

Each row is the bundled nvcc ring buffer (src/mbarrier/examples/ring_buffer.ptx, 160 threads per CTA)
checked with race tracking on (check's default), measured twice in fresh interpreters:
  * tracemalloc: the peak of the bytes Python allocated during the search (tracing starts after the
    launch) divided by the states seen; exact, but tracing slows the search about 2x;
  * RSS: the process's peak resident memory (ru_maxrss) less its resident memory just before the search,
    divided by the states seen; what the operating system sees (allocator slack included).
`--shape NAME` measures one launch of `mbarrier.examples.shapes` instead (with `--warps N` consumer warps
and every trip count `--trips K`, as bench/shapes.py sets them), checked to the end.
Per move (a transition: one agent's step; a run of sets of one takes many moves into one stored state,
docs/checker.md "Runs of sets of one") the same CPU time and RSS peak divided by the moves taken.
Time per state is the search's CPU time (random walks included: they take a share of it, `--walks 0`
leaves them out) divided by the states seen, from the untraced run.
The peak is what a bound on memory must allow for: the search's frontier (the states queued, each a
snapshot) is largest in the middle of the search, not at its end.

Under the table, for each traced run, where the bytes lie near the peak: tracemalloc's statistics by
file, taken at a check of the bounds whenever the traced bytes grew by 10% since the last such picture (the
last one is shown; `near` its bytes). With several trip counts (`--trips 4,8,16`: the states grow about
linearly with them) also the least-squares line of the peak against the states: its slope is the
*marginal* cost of a state (what one more state adds), its intercept the *fixed* part (what the search
holds whatever its size: chiefly the reduction's bounded caches).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc

import benchdoc

# (label, grid, max states, walks): one CTA is checked to the end; two CTAs have far more states than a
# benchmark can wait for, so their search stops at the bound (the figure is per state seen either way).
# Two CTAs of this one-CTA kernel race (both write out[tid]): random walks find that at once and end
# the search, so that row measures the search alone (walks 0).
CASES: list[tuple[str, int, int, int | None]] = [("ring_buffer, 1 CTA of 160", 1, 100_000, None),
                                                 ("ring_buffer, 2 CTAs of 160 (walks 0)", 2, 3_000, 0)]


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# The files whose bytes the breakdown names: the package's modules by dotted name, the rest by file name.
_SRC = os.sep + "mbarrier" + os.sep
GROWTH = 1.1  # a new picture of the traced bytes by file when they grew by this factor since the last


def _module(filename: str) -> str:
    i = filename.rfind(_SRC)
    if i < 0:
        return os.path.basename(filename)
    return filename[i + 1:].removesuffix(".py").replace(os.sep, ".").removeprefix("mbarrier.")


class _Pictures:
    """Polled at each check of the bounds (Options.stop: between moves and inside long work, so more often
    than once a state): a picture of the traced bytes by module whenever they grew by GROWTH since the last
    one."""

    def __init__(self) -> None:
        self.polls = 0
        self.peak = 0  # the traced peak before the latest picture (a picture's own bytes are left out)
        self.bytes = 0
        self.at = 0
        self.modules: list[tuple[str, int]] = []

    def __call__(self) -> bool:
        self.polls += 1
        now = tracemalloc.get_traced_memory()[0]
        if now > self.bytes * GROWTH:
            self.peak = max(self.peak, tracemalloc.get_traced_memory()[1])
            by: dict[str, int] = {}
            for st in tracemalloc.take_snapshot().statistics("filename"):
                name = _module(st.traceback[0].filename)
                by[name] = by.get(name, 0) + st.size
            self.bytes, self.at = now, self.polls
            self.modules = sorted(by.items(), key=lambda kv: -kv[1])
            tracemalloc.reset_peak()
        return False


def child(grid: int, max_states: int, how: str, shape: str = "", walks: int | None = None
          ) -> dict[str, object]:
    """One measurement in this (fresh) process; `shape`: NAME:WARPS:TRIPS of the shape corpus, else the
    ring buffer; `walks`: Options.walks (None: its default)."""
    from mbarrier import examples, sim
    from mbarrier.examples.shapes import SHAPES
    from mbarrier.explore.check import Options, check_machine

    if shape:
        name, warps, trips = shape.split(":")
        s = SHAPES[name].with_consumers(int(warps))
        s = s.sized(*([int(trips)] * len(s.trips)))
        module, m = sim.load(s.path), s.launch()
    else:
        module = sim.load(examples.path("ring_buffer"))
        m = sim.launch(module, grid=grid, block=160)
    pictures = _Pictures() if how == "tracemalloc" else None
    if pictures is not None:
        tracemalloc.start()
    before = _rss()
    t0 = time.process_time()
    opts = Options(max_states=max_states, stop=pictures)
    if walks is not None:
        opts.walks = walks
    r = check_machine(m, module, opts)
    seconds = time.process_time() - t0
    out: dict[str, object] = {"verdict": r.verdict, "states": r.stats.states, "seconds": seconds,
                              "moves": r.stats.transitions}
    if pictures is not None:
        out["peak"] = max(pictures.peak, tracemalloc.get_traced_memory()[1])
        out["near"] = {"bytes": pictures.bytes, "polls": pictures.at, "modules": pictures.modules}
    else:
        out["peak"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    return out


def measure(grid: int, max_states: int, how: str, shape: str = "", walks: int | None = None
            ) -> dict[str, object]:
    out = subprocess.run([sys.executable, __file__, "--child", str(grid), str(max_states), how, shape,
                          "" if walks is None else str(walks)], capture_output=True, text=True,
                         check=True).stdout
    result: dict[str, object] = json.loads(out)
    return result


def fit(points: list[tuple[int, int]]) -> tuple[float, float]:
    """The least-squares line through (states, peak bytes): (slope, intercept)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return slope, my - slope * mx


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f}"


def breakdown(label: str, near: dict[str, object], shown: int = 10) -> str:
    """One line: the traced bytes by module in the last picture near the peak."""
    modules: list[tuple[str, int]] = near["modules"]  # type: ignore[assignment]
    rest = sum(b for _, b in modules[shown:])
    parts = [f"{name} {_mb(b)}" for name, b in modules[:shown]] + [f"the rest {_mb(rest)}"]
    return (f"{label}: {_mb(near['bytes'])} MB traced after {near['polls']:,} polls of the bounds (MB): "  # type: ignore[arg-type]
            + ", ".join(parts))


def table(cases: list[tuple[str, int, int, int | None]], shape: str = "", walks: int | None = None,
          runs: list[tuple[dict[str, object], dict[str, object]]] | None = None) -> list[str]:
    """The table's rows; each case's (traced, rss) results are appended to `runs` when given."""
    rows = ["| launch | verdict | states | CPU s (untraced) | CPU ms/state | tracemalloc peak: bytes/state | "
            "RSS peak: bytes/state | moves | CPU ms/move | RSS peak: bytes/move |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for label, grid, max_states, own_walks in cases:
        w = walks if own_walks is None else own_walks
        traced = measure(grid, max_states, "tracemalloc", shape, w)
        rss = measure(grid, max_states, "rss", shape, w)
        if runs is not None:
            runs.append((traced, rss))
        # A search stopped at its bound with random walks beside it need not stop at the same state
        # count both ways (the walks' share is timed, and tracing slows them): each figure is per
        # state of its own run, and both counts are shown when they differ.
        n, nt = int(rss["states"]), int(traced["states"])  # type: ignore[call-overload]
        states = f"{n:,}" if n == nt else f"{n:,} (traced: {nt:,})"
        seconds = float(rss["seconds"])  # type: ignore[arg-type]
        # A run of sets of one (docs/checker.md) is one stored state for many moves: per move is what
        # the search pays for each step of a schedule it covers.
        moves = int(rss["moves"])  # type: ignore[call-overload]
        rows.append(f"| {label} | {rss['verdict']} | {states} | {seconds:.1f} | {1000 * seconds / n:.2f} | "
                    f"{int(traced['peak']) // nt:,} | {int(rss['peak']) // n:,} | {moves:,} | "  # type: ignore[call-overload]
                    f"{1000 * seconds / moves:.3f} | {int(rss['peak']) // moves:,} |")  # type: ignore[call-overload]
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-doc", action="store_true")
    ap.add_argument("--shape", default="", metavar="NAME", help="a shape of mbarrier.examples.shapes")
    ap.add_argument("--warps", type=int, default=None, metavar="N", help="its consumer warps (--shape)")
    ap.add_argument("--trips", default=None, metavar="K[,K...]",
                    help="its trip counts (--shape); several: also the cost per extra state")
    ap.add_argument("--walks", type=int, default=None, metavar="N",
                    help="random walks beside the search (Options.walks; 0: none), else the default")
    ap.add_argument("--child", nargs=5, metavar=("GRID", "MAX_STATES", "HOW", "SHAPE", "WALKS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        grid, max_states, how, shape, walks = args.child
        print(json.dumps(child(int(grid), int(max_states), how, shape, int(walks) if walks else None)))
        return
    if args.shape:
        if args.write_doc or args.warps is None or args.trips is None:
            sys.exit("--shape needs --warps and --trips, and is not written into the docs")
        trips = [int(k) for k in args.trips.split(",")]
        cases = [(f"{args.shape}, {args.warps} consumer warps, trips {k}"
                  + ("" if args.walks is None else f", walks {args.walks}"), k) for k in trips]
        runs: list[tuple[dict[str, object], dict[str, object]]] = []
        rows = []
        for label, k in cases:
            spec = f"{args.shape}:{args.warps}:{k}"
            rows += table([(label, 1, 10_000_000, None)], spec, args.walks, runs)[2:]
        print("\n".join(table([], "", None)[:2] + rows))
        for (label, _), (traced, _rss) in zip(cases, runs, strict=True):
            print(breakdown(label, traced["near"]))  # type: ignore[arg-type]
        if len(runs) > 1:
            for i, how in enumerate(("tracemalloc", "RSS")):
                slope, icpt = fit([(int(r[i]["states"]), int(r[i]["peak"])) for r in runs])  # type: ignore[call-overload]
                print(f"{how}: marginal {slope:,.0f} bytes per state (the slope of the peak against the "
                      f"states), fixed {_mb(icpt)} MB (its intercept)")
        return
    if args.write_doc and args.walks is not None:
        sys.exit("--write-doc measures the defaults: leave --walks out")
    load = os.getloadavg()[0]
    runs: list[tuple[dict[str, object], dict[str, object]]] = []
    rows = table(CASES, "", args.walks, runs)
    near = [breakdown(label, traced["near"]) for (label, *_), (traced, _rss) in zip(CASES, runs, strict=True)]  # type: ignore[arg-type]
    print("\n".join(rows + near))
    if args.write_doc:
        benchdoc.write_section("memory.py", [
            "## Memory per state (bench/memory.py)",
            "",
            f"`python bench/memory.py --write-doc`, {datetime.date.today().isoformat()}, commit "
            f"{benchdoc.commit()}, {benchdoc.cpu_name()}, Python {platform.python_version()}, load average "
            f"{load:.1f} at the start. `mbarrier check` of the bundled nvcc ring buffer with race tracking "
            "on (the default), each figure from a fresh interpreter: the peak of the bytes Python "
            "allocated during the search (tracemalloc) and the peak resident memory less the resident "
            "memory before the search (RSS), each divided by the states seen.",
            "",
            *rows,
            "",
            "Traced bytes by module near the peak (the last picture taken when they had grown by 10%):",
            "",
            *[f"* {line}" for line in near],
            "",
            "Before the snapshots shared what a step leaves unchanged (commit 888e844, the same machine, "
            "2026-11-26): 14,215 (tracemalloc) and 17,356 (RSS) bytes per state for one CTA, 114,824 and "
            "118,135 for two: every snapshot copied the race tracker's shadow of every byte accessed, "
            "every barrier's clocks and every agent's entry. Now a snapshot shares with its parent the "
            "threads (in chunks of 32), shared-memory bytes, global pages, shadow pages (64 bytes each), "
            "barrier clocks and agents (in chunks of 32) that its step left unchanged, shadow cells are "
            "one object for all the bytes one access touched, equal sleep sets are one object, and the "
            "reduction's caches keep their latest entries only. What is left per state for two CTAs is "
            "mostly the vector clocks of the agents a step changes (a dictionary of up to one entry per "
            "thread, copied before the change), the entries of the threads it changed (their registers) "
            "and the shadow pages it wrote.",
        ])


if __name__ == "__main__":
    main()
