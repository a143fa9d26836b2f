"""Benchmark: what the livelock analysis (`explore.livelock`, docs/checker.md "Livelocks") costs after a
complete search.

    python bench/livelock.py [--timeout S] [--only NAME ...] [--graph N]

For each shape of `mbarrier.examples.shapes` (1 consumer warp, every trip count 2, random walks off) it
prints the search's states and transitions, the dead ends (states whose every move slept), the edges that
reach a state no deeper than their source (without one, no cycle and no Tarjan pass), and the CPU seconds
of the analysis against the whole check's. Then the Tarjan pass alone (`Graph.closed_regions`) on a
synthetic graph of N states with 3 edges each (default 300,000) and one cycle at its end.
"""

from __future__ import annotations

import argparse
import random
import time

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore import check as checker
from mbarrier.explore.check import Options, check_machine
from mbarrier.explore.livelock import Graph


def _shapes(names: list[str], timeout: float) -> None:
    print(f"{'shape':<22} {'verdict':<10} {'states':>7} {'transitions':>11} {'dead ends':>9} "
          f"{'back edges':>10} {'analysis s':>10} {'check s':>8}")
    seen: dict[str, float] = {}
    original = checker.Explorer._livelocks

    def timed(self: checker.Explorer, *args: object) -> None:
        t = time.process_time()
        try:
            original(self, *args)  # type: ignore[arg-type]
        finally:
            seen["analysis"] = time.process_time() - t
            seen["dead"], seen["back"] = len(self.dead_ends), self.graph.back

    checker.Explorer._livelocks = timed  # type: ignore[method-assign]
    for name in names:
        s = SHAPES[name]
        if s.warps:
            s = s.with_consumers(1)
        s = s.sized(*([2] * len(s.trips)))
        seen.clear()
        t = time.process_time()
        r = check_machine(s.launch(), sim.load(s.path), Options(walks=0, timeout=timeout))
        total = time.process_time() - t
        analysis = f"{seen['analysis']:.3f}" if "analysis" in seen else "-"
        print(f"{name:<22} {r.verdict:<10} {r.stats.states:>7} {r.stats.transitions:>11} "
              f"{int(seen.get('dead', 0)):>9} {int(seen.get('back', 0)):>10} {analysis:>10} {total:>8.2f}")


def _graph(n: int) -> None:
    rng = random.Random(1)
    g = Graph()
    for u in range(n - 1):
        for _ in range(3):
            g.edge(u, min(n - 1, u + rng.randint(1, 50)), False)
    g.edge(n - 1, n - 10, True)
    t = time.process_time()
    regions = g.closed_regions(n, lambda: None)
    print(f"\nTarjan alone: {n:,} states, {len(g.src):,} edges: {time.process_time() - t:.2f} CPU s, "
          f"{len(regions)} closed region(s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--graph", type=int, default=300_000)
    a = ap.parse_args()
    _shapes(a.only or list(SHAPES), a.timeout)
    _graph(a.graph)


if __name__ == "__main__":
    main()
