"""Two trees' searches side by side: the same search (a reduction change that must not change it), and
CPU time per state, before and after alternating.

    python bench/search_ab.py same BEFORE AFTER [--only NAME ...]
    python bench/search_ab.py time BEFORE AFTER [--rounds 3] [--walks 0] [--shape ring --warps 4 --trips 4]

BEFORE and AFTER are checkouts (each tree's `src` is imported, in a fresh interpreter per run).
`same` checks every shape of `mbarrier.examples.shapes` (1 consumer warp, every trip count 2, random walks
off, at most 20,000 states) in each tree and prints, per shape, the verdict, states, transitions, enabled
and pruned moves, full expansions, sleep-pruned moves, symmetric merges, findings (kind, rule, line,
schedule) and a digest of the sequence of stubborn sets the search took (every set `explore.closure.stubborn`
returned, in order); it says whether all of it is the same in both trees (exit 1 if not).
`time` checks one launch (`--shape` with `--warps` consumer warps, 0 for the shape's own block, and
every trip count `--trips`; `--walks` as `Options.walks`, default: the option's default) in each tree,
alternating, `--rounds` times, and prints the search's CPU seconds (`time.process_time`) per state and
the ratio after/before per round: on a shared machine only figures taken back to back compare.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD_SAME = """
import hashlib, json, sys, time
from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
import mbarrier.explore.check as C
from mbarrier.explore.check import Options, check_machine
digest = [hashlib.sha1()]
original = C.stubborn
def stubborn(*a, **k):
    out = original(*a, **k)
    digest[0].update(repr(out).encode())
    return out
C.stubborn = stubborn
for name in sys.argv[1:] or list(SHAPES):
    s = SHAPES[name]
    if s.warps:
        s = s.with_consumers(1)
    s = s.sized(*([2] * len(s.trips)))
    module, m = sim.load(s.path), s.launch()
    digest[0] = hashlib.sha1()
    t0 = time.process_time()
    r = check_machine(m, module, Options(max_states=20_000, walks=0))
    st = r.stats
    print(json.dumps(dict(shape=name, verdict=r.verdict, states=st.states, transitions=st.transitions,
                          enabled=st.enabled, pruned=st.pruned, full=st.full_expansions,
                          sleep_pruned=st.sleep_pruned, merges=st.symmetric_merges,
                          findings=[(f.kind, f.rule, f.line, f.aids) for f in r.findings],
                          sets=digest[0].hexdigest()[:12], cpu=round(time.process_time() - t0, 2))),
          flush=True)
"""

CHILD_TIME = """
import json, sys, time
from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore.check import Options, check_machine
name, warps, trips, walks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = SHAPES[name] if warps == 0 else SHAPES[name].with_consumers(warps)
s = s.sized(*([trips] * len(s.trips)))
module, m = sim.load(s.path), s.launch()
t0 = time.process_time()
r = check_machine(m, module, Options() if walks == "" else Options(walks=int(walks)))
print(json.dumps(dict(verdict=r.verdict, states=r.stats.states, seconds=time.process_time() - t0)))
"""


def _run(tree: str, child: str, args: list[str]) -> list[dict[str, object]]:
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(tree), "src"))
    done = subprocess.run([sys.executable, "-c", child, *args], env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{tree}: the check failed (exit {done.returncode}):\n{done.stderr.strip()}")
    out = done.stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def same(before: str, after: str, only: list[str]) -> int:
    rows = {tree: _run(tree, CHILD_SAME, only) for tree in (before, after)}
    differ = 0
    for a, b in zip(rows[before], rows[after], strict=True):
        ka = {k: v for k, v in a.items() if k != "cpu"}
        kb = {k: v for k, v in b.items() if k != "cpu"}
        differ += ka != kb
        verdict = "same" if ka == kb else "DIFFERENT"
        print(f"{a['shape']:22} {verdict}  {a['verdict']:10} states {a['states']:>6}  "
              f"transitions {a['transitions']:>6}  pruned {a['pruned']:>8}  sets {a['sets']}  "
              f"CPU s {a['cpu']} -> {b['cpu']}")
        if ka != kb:
            print(f"    before: {ka}\n    after:  {kb}")
    print(f"{len(rows[before]) - differ} of {len(rows[before])} shapes the same")
    return 1 if differ else 0


def timed(before: str, after: str, rounds: int, shape: str, warps: int, trips: int, walks: str) -> None:
    for _ in range(rounds):
        ms = []
        for tree in (before, after):
            r = _run(tree, CHILD_TIME, [shape, str(warps), str(trips), walks])[0]
            ms.append(1000 * float(str(r["seconds"])) / int(str(r["states"])))
            print(f"{tree}: {r['verdict']}, {r['states']} states, {ms[-1]:.3f} ms/state", flush=True)
        print(f"  after/before {ms[1] / ms[0]:.2f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("same", "time"))
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--only", nargs="*", default=[], metavar="NAME", help="these shapes only (same)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shape", default="ring")
    ap.add_argument("--warps", type=int, default=4,
                    help="consumer warps (0: the shape's own block, for shapes whose consumers do not "
                         "follow the block)")
    ap.add_argument("--trips", type=int, default=4)
    ap.add_argument("--walks", default="", help="Options.walks (default: the option's default)")
    args = ap.parse_args()
    if args.what == "same":
        sys.exit(same(args.before, args.after, args.only))
    timed(args.before, args.after, args.rounds, args.shape, args.warps, args.trips, args.walks)


if __name__ == "__main__":
    main()
