"""Benchmark: `mbarrier check` on the shape corpus (`mbarrier.examples.shapes`: ring buffers with runtime
trip counts, warpgroups, pingpong, persistent tiles, a 2-CTA cluster, cp.async, named barriers, a
data-dependent branch; each correct and with a planted bug).

    python bench/shapes.py [--timeout S] [--only NAME ...] [--trips K ...] [--warps N ...] [--jobs N]
                           [--markdown] [-- CHECK OPTIONS ...]

Each check runs as its own process (`python -m mbarrier check FILE LAUNCH --json --timeout S`, plus the
options after `--`) and prints one row: the shape, the launch's trip counts and threads, the expected
answer (verified, or the kind of finding the planted bug must produce), what the check answered, states,
seconds of wall time (the process's whole life: start, parsing, search), CPU seconds and peak resident
memory. `ok` says whether the answer is the expected one; `WRONG` marks a false alarm (a finding on a
correct kernel) or a missed bug (verified with a bug planted, or at a size where the kernel hangs): a
verdict the checker must never give; `-` marks an answer that is not wrong but not the goal
(incomplete, or a finding of another kind).
`--trips K` runs each shape with every trip-count parameter set to K (a tile count too), repeated for a
curve; the pingpong kernels need an even tile count, so at an odd K the expected answer is the hang that
count causes (deadlock; for `pingpong_bug_order` its race or that deadlock, whichever comes first),
and a planted bug that needs more trips than K expects verified (`Shape.bug_from`: `named_bug_skip`
below 4, the `empty` count and release bugs below 3, `persistent_bug_reset` at 1 tile;
`Shape.answers`); `persistent_bug_reset`'s first finding may be its race or the phase violation the same
reset causes (`Shape.also`). `--warps N` runs each shape that takes its consumer warps from the block
(`Shape.warps`: `blockDim.x / 32 - 1`) with N consumer warps (a block of N + 1 warps), repeated for a
curve, with each `--trips` count if both are given; the other shapes are left out. `--jobs N` runs N
checks at once (on a host with idle cores; timings are then per process).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from mbarrier.examples.shapes import SHAPES, Shape  # noqa: E402


@dataclass
class Row:
    shape: Shape
    verdict: str
    kinds: list[str]
    states: int | None
    wall: float
    cpu: float
    rss_mb: float
    stopped_by: str = ""
    error: str = ""
    first_seconds: float | None = None   # when the first finding was reported, if the report says

    @property
    def expected(self) -> str:
        return " or ".join(self.shape.answers())

    @property
    def got(self) -> str:
        if self.error:
            return f"error: {self.error}"
        if self.verdict == "finding":
            return "finding: " + ",".join(dict.fromkeys(self.kinds))
        return self.verdict + (f" ({self.stopped_by})" if self.stopped_by else "")

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        answers = self.shape.answers()
        if answers == ("verified",):
            if self.verdict == "verified":
                return "ok"
            return "WRONG" if self.verdict == "finding" else "-"
        if self.verdict == "verified":
            return "WRONG"
        if self.verdict == "finding" and set(self.kinds[:1]) & set(answers):
            return "ok"
        return "-"


def trips_of(s: Shape) -> str:
    values = dict(s.args)
    return "x".join(str(values[p]) for p in s.trips)


def warps_of(s: Shape) -> str:
    """Consumer warps per CTA, where the kernel takes them from the block."""
    n = s.consumers()
    return "-" if n is None else str(n)


def run_all(shapes: list[Shape], timeout: float, extra: list[str], jobs: int) -> list[Row]:
    # Each row is printed as its check ends (a run cut short still shows every check that ended), and
    # the rows come back in the order of the shapes.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(check, s, timeout, extra) for s in shapes]
        for f in as_completed(futures):
            print(format_row(f.result()), flush=True)
        rows = [f.result() for f in futures]
    return rows


def check(s: Shape, timeout: float, extra: list[str]) -> Row:
    """One check in its own process (Popen + wait4: the child's own CPU time and peak memory)."""
    cmd = [sys.executable, "-m", "mbarrier", "check", str(s.path), *s.words(), "--json", "--quiet",
           "--timeout", str(timeout), *extra]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    assert p.stdout is not None and p.stderr is not None
    out = p.stdout.read()
    err = p.stderr.read()
    _, _, usage = os.wait4(p.pid, 0)
    p.returncode = 0
    wall = time.perf_counter() - t0
    cpu, rss = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    try:
        r = json.loads(out)
    except json.JSONDecodeError:
        last = (err.strip().splitlines() or ["no output"])[-1]
        return Row(s, "error", [], None, wall, cpu, rss, error=last)
    st = r.get("stats", {})
    return Row(s, r["verdict"], [f["kind"] for f in r.get("findings", [])], st.get("states"), wall, cpu,
               rss, r.get("stopped_by") or "", first_seconds=st.get("first_finding_seconds"))


HEAD = (f"{'shape':<22} {'trips':>5} {'warps':>5} {'threads':>7} | {'expected':<16} {'got':<32} {'':<5} | "
        f"{'states':>9} {'wall s':>7} {'CPU s':>7} {'MB':>6}")


def format_row(r: Row) -> str:
    s = r.shape
    threads = s.grid * s.block
    states = f"{r.states:,}" if r.states is not None else "-"
    return (f"{s.name:<22} {trips_of(s):>5} {warps_of(s):>5} {threads:>7} | {r.expected:<16} {r.got:<32} "
            f"{r.status:<5} | "
            f"{states:>9} {r.wall:>7.1f} {r.cpu:>7.1f} {r.rss_mb:>6.0f}")


def markdown(rows: list[Row]) -> str:
    out = ["| shape | trips | consumer warps | threads | expected | got | | states | wall s | CPU s | MB |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s = r.shape
        states = f"{r.states:,}" if r.states is not None else "-"
        out.append(f"| {s.name} | {trips_of(s)} | {warps_of(s)} | {s.grid * s.block} | {r.expected} | "
                   f"{r.got} | {r.status} | "
                   f"{states} | {r.wall:.1f} | {r.cpu:.1f} | {r.rss_mb:.0f} |")
    return "\n".join(out)


def main() -> int:
    argv = sys.argv[1:]
    extra: list[str] = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=60.0, help="per check, seconds (default 60)")
    ap.add_argument("--only", nargs="*", default=None, metavar="NAME", help="these shapes (default: all)")
    ap.add_argument("--trips", nargs="*", type=int, default=None, metavar="K",
                    help="set every trip-count parameter to K (one run per K)")
    ap.add_argument("--warps", nargs="*", type=int, default=None, metavar="N",
                    help="N consumer warps, for the shapes that take them from the block (one run per N)")
    ap.add_argument("--jobs", type=int, default=1, help="checks at once (default 1)")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    args = ap.parse_args(argv)
    names = args.only if args.only else list(SHAPES)
    unknown = [n for n in names if n not in SHAPES]
    if unknown:
        sys.exit(f"unknown shapes: {', '.join(unknown)} (known: {', '.join(SHAPES)})")
    shapes = [SHAPES[n] for n in names]
    if args.trips:
        shapes = [s.sized(*([k] * len(s.trips))) for k in args.trips for s in shapes]
    if args.warps:
        left = [s.name for s in shapes if not s.warps]
        if left:
            print(f"left out (consumers not from the block): {', '.join(dict.fromkeys(left))}")
        shapes = [s.with_consumers(n) for s in shapes if s.warps for n in args.warps]
    print(f"mbarrier check, --timeout {args.timeout:g}{' ' + ' '.join(extra) if extra else ''}; "
          f"{os.cpu_count()} CPUs, {args.jobs} at once")
    print(HEAD)
    rows = run_all(shapes, args.timeout, extra, args.jobs)
    ok = sum(r.status == "ok" for r in rows)
    wrong = sum(r.status == "WRONG" for r in rows)
    print(f"\n{ok} of {len(rows)} as expected; {wrong} wrong (false alarm or missed bug)")
    if args.markdown:
        print()
        print(markdown(rows))
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
