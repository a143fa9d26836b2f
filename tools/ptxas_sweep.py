"""The larger differential sweep against ptxas: every generated case under every supported
(.version, .target) pair of the project's targets. Prints a table (cases, agree, disagree, ptxas
crashed) per pair and the first disagreements.

    python tools/ptxas_sweep.py [--versions 7.0,8.0] [--targets sm_80,sm_90] [--show N] [--workers 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from mbarrier.ptx.validate_oracle import compare
from mbarrier.ptx.validate_variants import cases, random_cases
from mbarrier.spec.targets import TARGET_MIN_VERSION, format_version, parse_version

TARGETS = ("sm_80", "sm_90", "sm_90a", "sm_100a", "sm_120")
VERSIONS = tuple((7, m) for m in range(9)) + tuple((8, m) for m in range(9)) + ((9, 0),)


def pairs(versions: list[tuple[int, int]], targets: list[str]) -> list[tuple[tuple[int, int], str]]:
    return [(v, t) for t in targets for v in versions if v >= TARGET_MIN_VERSION[t]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--versions", default=",".join(format_version(v) for v in VERSIONS))
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--show", type=int, default=20, help="disagreements to print")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--filter", default="", help="only cases whose label contains this")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="instead of the systematic variants, N with several mutations at once")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    versions = [v for v in (parse_version(x) for x in a.versions.split(",")) if v]
    ps = pairs(versions, a.targets.split(","))
    pool = random_cases(a.random, a.seed) if a.random else cases()
    cs = [c for c in pool if a.filter in c.label]
    t0 = time.perf_counter()
    outcomes = compare(cs, ps, workers=a.workers)
    dt = time.perf_counter() - t0
    per: Counter[tuple[str, str]] = Counter()
    bad: Counter[tuple[str, str]] = Counter()
    died: Counter[tuple[str, str]] = Counter()
    for o in outcomes:
        key = (format_version(o.version), o.target)
        per[key] += 1
        bad[key] += o.disagree
        died[key] += o.crashed
    print(f"{'version':8} {'target':8} {'cases':>7} {'agree':>7} {'disagree':>8} {'ptxas crashed':>13}")
    for key in sorted(per):
        print(f"{key[0]:8} {key[1]:8} {per[key]:7} {per[key] - bad[key] - died[key]:7} {bad[key]:8} "
              f"{died[key]:13}")
    total, wrong, crashed = sum(per.values()), sum(bad.values()), sum(died.values())
    print(f"{'all':8} {'':8} {total:7} {total - wrong - crashed:7} {wrong:8} {crashed:13}   ({dt:.1f} s, "
          f"{len(cs)} cases x {len(ps)} pairs)")
    first_crash = next((o for o in outcomes if o.crashed), None)
    if first_crash is not None:  # no verdict to compare with: neither agree nor disagree
        print(f"ptxas crashed on {crashed} of them, e.g. [{format_version(first_crash.version)} "
              f"{first_crash.target}] {first_crash.case.text}")
    kinds: Counter[str] = Counter()
    for o in outcomes:
        if o.disagree:
            diff = sorted({f"-{m}" for _, m in o.ptxas - o.ours} | {f"+{m}" for _, m in o.ours - o.ptxas})
            kinds[" | ".join(diff)] += 1
    for k, n in kinds.most_common(a.show):
        print(f"{n:6}  {k}")
    shown = 0
    for o in outcomes:
        if not o.disagree or shown >= a.show:
            continue
        shown += 1
        print(f"\n[{format_version(o.version)} {o.target}] {o.case.label}\n  {o.case.text}")
        for s, m in sorted(o.ptxas - o.ours):
            print(f"  ptxas only: {s}: {m}")
        for s, m in sorted(o.ours - o.ptxas):
            print(f"  ours only:  {s}: {m}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
