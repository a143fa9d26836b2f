"""Differential testing against ptxas: run generated cases through ptxas and through our validator
and compare, per case, the set of (severity, message) of errors and fatals.

Batching: the cases of one (version, target) go into one kernel, one instruction per line, and
ptxas's per-line errors are mapped back. ptxas checks line by line in one pass, so the lines before
a fatal error are complete; the fatal line keeps what ptxas said for it, and the cases after it are
run again in a new batch. A sentinel error on the last line keeps ptxas from generating code (which
costs ~1 ms per instruction and checks nothing of ours).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from mbarrier.ptx import ast
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import check_instruction, unknown_symbols
from mbarrier.ptx.validate_line import Context, Line
from mbarrier.ptx.validate_scope import Scope
from mbarrier.ptx.variant_pools import UNDECLARED_NAMES, Case, declarations, render_declaration
from mbarrier.spec.targets import Version, format_version, parse_target

Verdict = frozenset[tuple[str, str]]

_LINE = re.compile(r"ptxas \S+, line (\d+); (error|fatal|warning)\s*: (.*)")
SENTINEL = "mbarrier.inval.shared.b32 [bar];"
BATCH = 400


@dataclass(frozen=True, slots=True)
class Outcome:
    case: Case
    version: Version
    target: str
    ptxas: Verdict
    ours: Verdict

    @property
    def crashed(self) -> bool:
        """ptxas died on the case: there is no verdict to compare with."""
        return self.ptxas == CRASHED

    @property
    def agree(self) -> bool:
        return self.ptxas == self.ours

    @property
    def disagree(self) -> bool:
        """A verdict of ptxas that ours differs from (a crash is neither agreement nor this)."""
        return not self.agree and not self.crashed


def ptxas_path() -> str:
    path = shutil.which("ptxas")
    if path is None:
        raise RuntimeError("ptxas is not on PATH: the differential tests need it (CUDA 13.0)")
    return path


def kernel(texts: Sequence[str], version: Version, target: str) -> tuple[str, int]:
    """A module with `texts` as consecutive lines of one kernel, and the line number of the first.
    (ptxas lowers a line only while no line before it has an error: the first case of a batch can
    get a lowering error the others do not, `validate.lowered_by_mov`, which the per-line verdicts
    here leave out.)"""
    head = [f".version {format_version(version)}", f".target {target}", ".address_size 64",
            ".visible .entry k()", "{", *(render_declaration(d) for d in declarations())]
    body = [*texts, SENTINEL, "ret;", "}"]
    return "\n".join(head + body) + "\n", len(head) + 1


def run_ptxas(source: str, target: str) -> tuple[dict[int, set[tuple[str, str]]], str]:
    """ptxas's errors and fatals by line, and its raw output."""
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "cases.ptx")
        with open(f, "w") as fh:
            fh.write(source)
        r = subprocess.run([ptxas_path(), f"-arch={target}", f, "-o", os.devnull],
                           capture_output=True, text=True, timeout=120)
    by_line: dict[int, set[tuple[str, str]]] = {}
    if r.returncode < 0:  # killed by a signal (ptxas 13.0 segfaults on some lines): no verdict at all
        return by_line, ""
    for raw in (r.stdout + r.stderr).splitlines():
        m = _LINE.match(raw)
        if m and m.group(2) != "warning":
            by_line.setdefault(int(m.group(1)), set()).add((m.group(2), m.group(3)))
    return by_line, r.stdout + r.stderr


_UNDECLARED = re.compile("|".join(rf"(?<![\w%$]){re.escape(n)}(?![\w$])" for n in UNDECLARED_NAMES))


def ptxas_verdicts(cases: Sequence[Case], version: Version, target: str) -> list[Verdict]:
    """ptxas's verdict on each case, splitting batches at fatal errors. ptxas reports unknown symbols
    only for a file without a fatal error, so the cases that name an undeclared symbol and that ran
    before a fatal one are run again, in batches of their own."""
    result: list[Verdict | None] = [None] * len(cases)
    before_fatal: list[int] = []
    _run_batches(cases, list(range(len(cases))), version, target, result, before_fatal)
    again = [i for i in before_fatal if _UNDECLARED.search(cases[i].text)]
    _run_batches(cases, again, version, target, result, [])
    return [r for r in result if r is not None]


#: The verdict of a case that crashes ptxas (ptxas 13.0 dies of a segfault on a few lines, e.g.
#: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%rd2], [%rd2], 16,
#: 1, 1;` on sm_120): there is no verdict to compare with: `Outcome.crashed`, neither agreeing nor
#: disagreeing.
CRASHED: Verdict = frozenset({("crash", "ptxas crashed")})


def _run_batches(cases: Sequence[Case], pending: list[int], version: Version, target: str,
                 result: list[Verdict | None], before_fatal: list[int]) -> None:
    size = BATCH
    while pending:
        chunk = pending[:size]
        source, first = kernel([cases[i].text for i in chunk], version, target)
        by_line, raw = run_ptxas(source, target)
        if not raw.strip():  # ptxas crashed (else it reports the sentinel): find the case, halving
            if len(chunk) == 1:
                result[chunk[0]] = CRASHED
                pending, size = pending[1:], BATCH
            else:
                size = (len(chunk) + 1) // 2
            continue
        size = BATCH
        sentinel_line = first + len(chunk)
        fatal_at = min((ln for ln, msgs in by_line.items() if any(s == "fatal" for s, _ in msgs)),
                       default=None)
        if fatal_at is not None and not first <= fatal_at < sentinel_line:
            raise RuntimeError(f"ptxas stopped outside the cases (line {fatal_at}):\n{raw}")
        if sentinel_line not in by_line and fatal_at is None:
            raise RuntimeError(f"ptxas did not reach the sentinel line {sentinel_line}:\n{raw}")
        done = len(chunk) if fatal_at is None else fatal_at - first + 1
        for k in range(done):
            result[chunk[k]] = frozenset(by_line.get(first + k, ()))
        if fatal_at is not None:
            before_fatal.extend(chunk[:done - 1])
        pending = chunk[done:] + pending[len(chunk):]


def our_verdicts(cases: Sequence[Case], version: Version, target: str) -> list[Verdict]:
    """Our verdict on each case, end to end: the same kernel text ptxas reads, through our parser
    and validator (each instruction on its own, as ptxas judges each line)."""
    source, first = kernel([c.text for c in cases], version, target)
    module = parse(source, "<cases>")
    fn = module.functions[0]
    scope = Scope(module, fn)
    ctx = Context(version, parse_target(target))
    by_line: dict[int, Verdict] = {}
    for s in fn.body or ():
        if isinstance(s, ast.Instruction):
            line = Line(s, "<cases>")
            check_instruction(s, scope, ctx, line)
            diags = line.out if line.fatal else [*line.out, *unknown_symbols(s, scope, "<cases>")]
            by_line[s.pos.line] = frozenset((d.severity, d.message) for d in diags
                                            if d.severity != "warning")
    return [by_line[first + k] for k in range(len(cases))]


def compare(cases: Sequence[Case], pairs: Sequence[tuple[Version, str]],
            workers: int = 2) -> list[Outcome]:
    """Every case under every (version, target), ptxas against us; ptxas runs `workers` at a time."""
    def one(pair: tuple[Version, str]) -> list[Outcome]:
        version, target = pair
        theirs = ptxas_verdicts(cases, version, target)
        ours = our_verdicts(cases, version, target)
        return [Outcome(c, version, target, t, o) for c, t, o in zip(cases, theirs, ours, strict=True)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [o for chunk in pool.map(one, pairs) for o in chunk]


#: Every PTX ISA version ptxas 13.0 knows from 6.0 on, in order.
KNOWN_VERSIONS: tuple[Version, ...] = (
    (6, 0), (6, 1), (6, 2), (6, 3), (6, 4), (6, 5), *((7, m) for m in range(9)), *((8, m) for m in range(9)),
    (9, 0),
)


def accepts(version: Version, target: str) -> bool:
    """Whether ptxas compiles an empty kernel with this .version and .target."""
    source = (f".version {format_version(version)}\n.target {target}\n.address_size 64\n"
              ".visible .entry k()\n{\nret;\n}\n")
    by_line, raw = run_ptxas(source, target)
    return not by_line and "fatal" not in raw


def min_version(target: str) -> Version | None:
    """The lowest version ptxas takes for `target` (bisection: support is monotone in the version)."""
    lo, hi = 0, len(KNOWN_VERSIONS) - 1
    if not accepts(KNOWN_VERSIONS[hi], target):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if accepts(KNOWN_VERSIONS[mid], target):
            hi = mid
        else:
            lo = mid + 1
    return KNOWN_VERSIONS[lo]
