"""`bench/check.py --shapes`: `mbarrier check` against SPIN on the nvcc-compiled shape corpus
(`mbarrier.examples.shapes`) at small trip counts and consumer warps.

    python bench/check.py --shapes [--only NAME ...] [--trips K ...] [--warps N ...] [--timeout S]
                          [--spin-timeout S] [--cc-opt=-O2] [--threads-per-process N] [--markdown]

Each launch runs twice: `check` in this process (reductions on, race tracking off: SPIN's model has no
happens-before state) and SPIN 6.5.2 on the `mbarrier export --promela` model with its partial-order
reduction on (`spin -a`; `cc -O0 -DSAFETY -DCOLLAPSE -DMEMLIM=2048 -DVECTORSZ=...`, the vector size
raised to the next power of two where pan asks for more; `./pan -m1000000`),
the model keeping 4,096 bytes of each global buffer; ours stopped after S seconds, SPIN after
`--spin-timeout` seconds (by SIGINT, so that it prints what it covered). A row gives both sides'
answer, states and states per second (SPIN: its search alone; its compilation apart), and whether the
answers agree: a deadlock is SPIN's "invalid end state", a violation an assertion (one naming
MODEL_LIMIT, or SPIN's "invalid array index", is the model's bound: "model limit"); an answer that is not
final on either side (incomplete, SPIN's memory or time bound) agrees with nothing and contradicts
nothing (`-`). A shape the export refuses gets one row with the reason. `--trips K` sets every trip-count
parameter (the tile count too) to K; `--warps N` gives the shapes that take their consumer warps from the
block N of them (the others keep their launch); shapes with a compile-time trip count (`_ct`, `_rolled`)
run at their own count only. `--threads-per-process N` writes SPIN's model with N threads per process
(default: one, or a warp where the launch would need more than SPIN's 255 processes).
"""

from __future__ import annotations

import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES, Shape
from mbarrier.explore.check import Options, check
from mbarrier.explore.promela import ExportError, export_promela

DEFAULT = ["ring", "ring_ct", "ring_rolled", "ring_elect", "persistent", "named", "branch", "warpgroup",
           "pingpong", "cluster", "cpasync", "ring_bug_bytes", "ring_bug_parity", "persistent_bug_reset",
           "named_bug_skip", "branch_bug_skip", "cpasync_bug_inc", "cluster_bug_mask"]
GLOBAL_BYTES = 4096  # of each buffer: 16 copies of 128 bytes (persistent at 4 x 4) stay inside
# -O0: pan.c of a shape compiles in seconds, against a minute with -O2 on this 2-core machine, and
# searches about half as fast (ring_bug_count, 1 trip, 1 warp: 1,670 against 3,317 states/s; compare
# with `--cc-opt=-O2`)
CC = ["cc", "-O0", "-DSAFETY", "-DCOLLAPSE", "-DMEMLIM=2048", "-DVECTORSZ=262144"]


@dataclass
class Side:
    answer: str
    states: int | None
    seconds: float

    @property
    def rate(self) -> str:
        return f"{self.states / self.seconds:,.0f}" if self.states and self.seconds > 0 else "-"


def ours(s: Shape, timeout: float) -> Side:
    module = sim.load(s.path)
    t = time.perf_counter()
    r = check(module, grid=s.grid, block=s.block, cluster=s.cluster, args=dict(s.args),
              options=Options(races=False, timeout=timeout))
    seconds = time.perf_counter() - t
    answer = r.verdict.value
    if r.findings:
        answer = f"finding: {r.findings[0].kind.value}"
    elif r.stopped_by:
        answer += f" ({r.stopped_by})"
    return Side(answer, r.stats.states, seconds)


def spin(s: Shape, timeout: float, cc: list[str], per: int | None = None) -> tuple[Side, float] | str:
    """SPIN's side and its compilation seconds, or the export's refusal; `per`: threads per process."""
    module = sim.load(s.path)
    try:
        model = export_promela(module, s.launch(), global_bytes=GLOBAL_BYTES, threads_per_process=per)
    except ExportError as e:
        return str(e)
    with tempfile.TemporaryDirectory() as d:
        w = Path(d)
        (w / "m.pml").write_text(model)
        t0 = time.perf_counter()
        subprocess.run(["spin", "-a", "m.pml"], cwd=w, check=True, capture_output=True)
        subprocess.run([*cc, "-o", "pan", "pan.c"], cwd=w, check=True, capture_output=True)
        compile_s = time.perf_counter() - t0
        while True:
            t1 = time.perf_counter()
            out, stopped = _pan(w, timeout)
            seconds = time.perf_counter() - t1
            need = _int(r"VECTORSZ too small, recompile pan.c with -DVECTORSZ=N with N>(\d+)", out)
            if need is None:
                break
            # a state vector over the default (pingpong's registers at 384 threads): the next power of two
            t0 = time.perf_counter()
            cc = [*(f for f in cc if not f.startswith("-DVECTORSZ=")), f"-DVECTORSZ={1 << need.bit_length()}"]
            subprocess.run([*cc, "-o", "pan", "pan.c"], cwd=w, check=True, capture_output=True)
            compile_s += time.perf_counter() - t0
    return Side(_answer(out, stopped), _int(r"(\d+) states, stored", out), seconds), compile_s


def _pan(w: Path, timeout: float) -> tuple[str, bool]:
    """pan's output, and whether it was stopped at `timeout` seconds."""
    p = subprocess.Popen(["./pan", "-m1000000"], cwd=w, stdout=subprocess.PIPE, text=True)
    try:
        return p.communicate(timeout=timeout)[0], False
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)  # pan prints its statistics on SIGINT
        return p.communicate()[0], True


def _int(pattern: str, text: str) -> int | None:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else None


def _answer(out: str, stopped: bool) -> str:
    first = next((line[7:].split(" (at depth")[0] for line in out.splitlines() if line.startswith("pan:1: ")),
                 "")
    error = next((line[len("pan: error, "):] for line in out.splitlines() if line.startswith("pan: error, ")),
                 None)
    if error is not None:  # pan's own bound (its vector size, its depth): no answer about the kernel
        return "error: " + error
    if "MODEL_LIMIT" in first or "invalid array index" in first:  # the model's bounds, not the kernel's
        return "model limit: " + first
    if first.startswith("invalid end state"):
        return "finding: deadlock"
    if first.startswith("assertion violated"):
        return "finding: violation"
    if "reached -DMEMLIM bound" in out:
        return "incomplete (memory)"
    if stopped or "Search not completed" in out:
        return "incomplete (time)"
    if first:
        return "error: " + first
    return "verified" if _int(r"errors: (\d+)", out) == 0 else "error"


def agree(a: str, b: str) -> str:
    final = ("verified", "finding: deadlock", "finding: violation")
    if a not in final or b not in final:
        return "-"
    return "yes" if a == b else "NO"


def launches(names: list[str], trips: list[int], warps: list[int]) -> list[Shape]:
    out: list[Shape] = []
    for name in names:
        base = SHAPES[name]
        fixed = name.endswith(("_ct", "_rolled"))
        for k in ([0] if fixed else trips):
            s = base if fixed else base.sized(*([k] * len(base.trips)))
            out.extend([s.with_consumers(n) for n in warps] if base.warps else [s])
    return out


HEAD = (f"{'shape':<22} {'trips':>5} {'warps':>5} {'thr':>4} | {'ours':<20} {'states':>8} {'s':>6} "
        f"{'st/s':>6} | {'SPIN':<20} {'states':>9} {'s':>6} {'st/s':>7} {'cc s':>5} | agree")


def row(s: Shape, timeout: float, spin_timeout: float, cc: list[str],
        per: int | None = None) -> tuple[str, str, bool]:
    """One launch as a text line and a Markdown row, and whether the export refused it (then only
    SPIN's side is given: the refusal)."""
    values = dict(s.args)
    trips = "x".join(str(values[p]) for p in s.trips)
    warps = str(s.consumers()) if s.warps else "-"
    threads = s.grid * s.block
    theirs = spin(s, spin_timeout, cc, per)
    if isinstance(theirs, str):
        return (f"{s.name:<22} {trips:>5} {warps:>5} {threads:>4} | export refused: {theirs}",
                f"| {s.name} | {trips} | {warps} | {threads} | export refused: {theirs} | | | | | | | | | |",
                True)
    a = ours(s, timeout)
    b, cc = theirs
    states = f"{b.states:,}" if b.states is not None else "-"
    ok = agree(a.answer, b.answer)
    return (f"{s.name:<22} {trips:>5} {warps:>5} {threads:>4} | {a.answer:<20} {a.states or 0:>8,} "
            f"{a.seconds:>6.1f} {a.rate:>6} | {b.answer:<20} {states:>9} {b.seconds:>6.1f} {b.rate:>7} "
            f"{cc:>5.1f} | {ok}",
            f"| {s.name} | {trips} | {warps} | {threads} | {a.answer} | {a.states or 0:,} | "
            f"{a.seconds:.1f} | {a.rate} | {b.answer} | {states} | {b.seconds:.1f} | {b.rate} | {cc:.1f} | "
            f"{ok} |", False)


def main(names: list[str] | None, trips: list[int], warps: list[int], timeout: float, spin_timeout: float,
         cc_opt: str, markdown: bool, per: int | None = None) -> int:
    cc = [CC[0], cc_opt, *CC[2:]]
    print(f"ours: mbarrier check --no-races, stopped at {timeout:g} s; SPIN: POR on, {' '.join(cc[1:])}, "
          f"stopped at {spin_timeout:g} s")
    print(HEAD, flush=True)
    rows = []
    refused: set[str] = set()
    for s in launches(names or DEFAULT, trips, warps):
        if s.name in refused:  # refused for what the launch is, not for its size: one row says why
            continue
        text, md, no = row(s, timeout, spin_timeout, cc, per)
        print(text, flush=True)
        rows.append(md)
        if no:
            refused.add(s.name)
    if markdown:
        print("\n| shape | trips | consumer warps | threads | ours | states | s | states/s | SPIN | states | "
              "search s | states/s | cc s | agree |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(rows))
    return 1 if any(r.endswith("| NO |") for r in rows) else 0
