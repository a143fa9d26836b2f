#!/usr/bin/env python3
"""Mutation fuzzing of the command line: mutants of every bundled PTX module (src/mbarrier/examples/**)
through `lint`, `run`, `check` and `export --promela` with small bounds. Counts what must never happen:

* an internal error: an exception out of the command, "internal error" or a traceback on stderr, an
  exit code outside 0-3;
* an overrun: a command that took more than twice its `--timeout`.

    tools/fuzz_cli.py --mutants 2000 --seed 1            # a campaign; prints the counts
    tools/fuzz_cli.py --mutants 200 --keep /tmp/fails     # also writes each failing mutant there
    venv/bin/python tools/fuzz_cli.py --installed ...     # the mbarrier installed there (a wheel)

Deterministic: mutant i of seed S is the same on every machine (its source, its mutations, its run's
seed), so a failure is reproduced with `--only I` or by the files `--keep` writes. The commands run in
this process (a fresh one per mutant would cost more than the mutant); a watchdog interrupts a command
that overruns by far. tests/cli/test_fuzz.py runs a small campaign of this in CI.
"""

from __future__ import annotations

import _thread
import argparse
import contextlib
import io
import json
import random
import re
import shlex
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The checkout's package unless --installed asks for the one the interpreter imports (a wheel's): the
# flag is read before argparse runs because the imports below decide which package is tested.
if "--installed" not in sys.argv[1:]:
    sys.path.insert(0, str(ROOT / "src"))

from mbarrier import examples  # noqa: E402
from mbarrier.cli import main  # noqa: E402
from mbarrier.examples import cases  # noqa: E402
from mbarrier.examples.races import CASES as RACE_CASES  # noqa: E402
from mbarrier.examples.shapes import SHAPES  # noqa: E402

COMMANDS = ("lint", "run", "check", "export")
MAX_MEMORY = "2G"


@dataclass(frozen=True)
class Bounds:
    """The bounds each mutant's run and check get."""

    timeout: float = 10.0     # --timeout of run, check and export (seconds)
    max_steps: int = 20_000   # run
    max_states: int = 200     # check
    walks: int = 1            # check's random walks: one runs their code; more cost time, not coverage


@dataclass(frozen=True)
class Source:
    """A bundled module and the launch options its kernel wants."""

    path: Path
    launch: tuple[str, ...]

    @property
    def name(self) -> str:
        return str(self.path.relative_to(examples.HERE))


def _case_launch(c: cases.Case) -> tuple[str, ...]:
    argv = ["--grid", str(c.grid), "--block", str(c.block)]
    for i, values in c.inputs:
        argv += ["--arg", f"{i}=buf:{4 * len(values)}"]
    argv += ["--arg", f"{c.out_param}=buf:{4 * c.out_words}"]
    for i, v in c.scalars:
        argv += ["--arg", f"{i}={v}"]
    return tuple(argv)


def sources() -> list[Source]:
    """Every bundled PTX module with its launch: the nvcc examples (their launch file, else cases.py,
    their -G and bug variants launched as the original), the checker's corpus (its `// check:` line),
    the shape corpus, the race corpus (its cases, and the modules its launch files launch)."""
    out: list[Source] = []
    known = {**cases.CASES, "calls": cases.CALLS}
    for p in sorted(examples.HERE.glob("*.ptx")):
        launch_file = p.with_suffix(".launch.json")
        if launch_file.is_file():
            out.append(Source(p, ("--launch", str(launch_file))))
            continue
        base = next(k for k in sorted(known, key=len, reverse=True) if p.stem.startswith(k))
        out.append(Source(p, _case_launch(known[base])))
    for p in sorted((examples.HERE / "corpus").glob("*.ptx")):
        m = re.search(r"^// check: (.*?) =>", p.read_text(), flags=re.M)
        assert m is not None, p
        out.append(Source(p, tuple(shlex.split(m[1]))))
    for shape in SHAPES.values():
        out.append(Source(shape.path, tuple(shape.words())))
    for c in RACE_CASES.values():
        argv = ["--grid", str(c.grid), "--block", str(c.block)]
        if c.cluster:
            argv += ["--cluster", str(c.cluster)]
        argv += [f"--arg={i}=buf:{4 * len(v)}" for i, v in c.inputs.items()]
        argv += [f"--arg={i}=buf:{n}" for i, n in c.outputs.items()]
        out.append(Source(c.path, tuple(argv)))
    # The race corpus's modules launched by a launch file (a GEMM tile and its bug variants share one).
    cased = {c.path for c in RACE_CASES.values()}
    launch_files = sorted((examples.HERE / "races").glob("*.launch.json"), key=lambda f: -len(f.name))
    for p in sorted((examples.HERE / "races").glob("*.ptx")):
        if p not in cased:
            lf = next(f for f in launch_files if p.stem.startswith(f.name.removesuffix(".launch.json")))
            out.append(Source(p, ("--launch", str(lf))))
    return out


# -- mutations -------------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w%.$])-?(?:0[xX][0-9a-fA-F]+|\d+)(?![\w.])")
_REGISTER = re.compile(r"%[a-z]+\d+")
_QUALIFIER = re.compile(r"\.[A-Za-z_][\w:]*")
_INTERESTING = ("0", "1", "-1", "2", "3", "7", "8", "15", "16", "31", "32", "33", "64", "127", "128", "255",
                "256", "1023", "1024", "4096", "65535", "1048575", "1048576", "2147483647", "-2147483648",
                "0xffffffff", "4294967296", "0x7fffffffffffffff", "0xffffffffffffffff", "-384", "384")
_PUNCT = "[](){},;%.+-:@!_<>|"


def _body_lines(lines: list[str]) -> list[int]:
    """Indices of the lines inside function bodies (instructions, declarations, labels)."""
    out = []
    depth = 0
    for i, line in enumerate(lines):
        code = line.split("//", 1)[0]
        if depth > 0 and code.strip() not in ("", "{", "}"):
            out.append(i)
        depth += code.count("{") - code.count("}")
    return out


def _split_operands(text: str) -> tuple[str, list[str], str] | None:
    """`head`, its top-level comma-separated operands and the tail `;` of an instruction line."""
    code = text.rstrip()
    if not code.endswith(";"):
        return None
    m = re.match(r"(\s*(?:@!?%\w+\s+)?[\w.:]+\s+)(.*);$", code)
    if m is None:
        return None
    parts, depth, cur = [], 0, ""
    for ch in m[2]:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return m[1], parts, ";"


def _sub(pattern: re.Pattern[str], line: str, rng: random.Random, choose: Callable[[str], str]) -> str:
    found = list(pattern.finditer(line.split("//", 1)[0]))
    if not found:
        return line
    m = rng.choice(found)
    return line[:m.start()] + choose(m[0]) + line[m.end():]


def mutate(text: str, rng: random.Random, donors: list[str]) -> tuple[str, list[str]]:
    """1 to 3 mutations of the module's body lines; returns the text and what was done."""
    lines = text.split("\n")
    body = _body_lines(lines)
    if not body:
        return text, []
    registers = sorted(set(_REGISTER.findall(text))) or ["%r1"]
    qualifiers = sorted(set(_QUALIFIER.findall(text)))
    opcodes = sorted({ln.split()[0] for i in body if (ln := lines[i].strip())
                      and not ln.startswith((".", "@", "$")) and not ln.endswith(":")})
    labels = sorted(set(re.findall(r"^\s*([$\w]+):", text, flags=re.M)))
    done: list[str] = []
    want = rng.choice((1, 1, 2, 3))
    for _ in range(20 * want):  # an operator that finds nothing to change on its line tries again
        if len(done) == want:
            break
        i = rng.choice(body)
        line = lines[i]
        op = rng.randrange(12)
        if op == 0:
            lines[i] = ""
            done.append(f"line {i + 1}: deleted")
        elif op == 1:
            lines.insert(i, line)
            done.append(f"line {i + 1}: duplicated")
        elif op == 2:
            j = rng.choice(body)
            lines[i], lines[j] = lines[j], lines[i]
            done.append(f"lines {i + 1} and {j + 1}: swapped")
        elif op in (3, 4):
            split = _split_operands(line)
            if split is None:
                continue
            head, parts, tail = split
            k = rng.randrange(len(parts))
            if op == 3:
                del parts[k]
                done.append(f"line {i + 1}: operand {k + 1} dropped")
            else:
                parts.insert(k, parts[k])
                done.append(f"line {i + 1}: operand {k + 1} repeated")
            lines[i] = head + ",".join(parts) + tail
        elif op == 5:
            lines[i] = _sub(_NUMBER, line, rng, lambda _: rng.choice(_INTERESTING))
            done.append(f"line {i + 1}: a number changed")
        elif op == 6:
            lines[i] = _sub(_REGISTER, line, rng, lambda _: rng.choice(registers))
            done.append(f"line {i + 1}: a register changed")
        elif op == 7:
            how = rng.randrange(3)
            new = rng.choice(qualifiers) if qualifiers else ""
            lines[i] = _sub(_QUALIFIER, line, rng, ("", "{0}{0}", new).__getitem__(how).format)
            done.append(f"line {i + 1}: a qualifier {('dropped', 'doubled', 'changed')[how]}")
        elif op == 8 and opcodes:
            split = _split_operands(line)
            if split is None:
                continue
            head, parts, tail = split
            words = head.split()
            words[-1] = rng.choice(opcodes) + "".join(_QUALIFIER.findall(words[-1]))
            lines[i] = "\t" + " ".join(words) + " " + ",".join(parts) + tail
            done.append(f"line {i + 1}: opcode changed")
        elif op == 9:
            donor = rng.choice(donors)
            lines.insert(i, donor)
            done.append(f"line {i + 1}: inserted {donor.strip()!r}")
        elif op == 10 and labels:
            lines[i] = re.sub(r"\b(" + "|".join(map(re.escape, labels)) + r")\b",
                              lambda _: rng.choice(labels), line, count=1)
            done.append(f"line {i + 1}: a label changed")
        elif op == 11 and line:
            k = rng.randrange(len(line))
            if rng.random() < 0.5:
                lines[i] = line[:k] + line[k + 1:]
                done.append(f"line {i + 1}: character {k + 1} deleted")
            else:
                lines[i] = line[:k] + rng.choice(_PUNCT) + line[k:]
                done.append(f"line {i + 1}: a character inserted at {k + 1}")
    return "\n".join(lines), done


def donor_lines(srcs: list[Source]) -> list[str]:
    """Instruction lines of every source: mutants borrow them (an instruction from another kernel)."""
    out: set[str] = set()
    for s in srcs:
        lines = s.path.read_text().split("\n")
        out.update(lines[i] for i in _body_lines(lines) if lines[i].rstrip().endswith(";"))
    return sorted(out)


# -- running ---------------------------------------------------------------------------------------

@dataclass
class Outcome:
    command: str
    code: int
    seconds: float
    limit: float | None
    internal: str | None = None   # what shows an internal error, if one


class _Overrun(BaseException):
    """Raised in the main thread by the watchdog (a BaseException: nothing in the command may catch it)."""


def run_command(argv: list[str], limit: float | None, default_limit: float = Bounds.timeout) -> Outcome:
    """One command in this process, stdout and stderr captured; a watchdog interrupts it at 3x its limit
    (the failure is then the overrun, which 2x already counts)."""
    out, err = io.StringIO(), io.StringIO()
    fired = threading.Event()

    def bark() -> None:
        fired.set()
        _thread.interrupt_main()

    dog = threading.Timer(3 * (limit or default_limit) + 5, bark)
    dog.daemon = True
    start = time.monotonic()
    internal = None
    code = -1
    dog.start()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as e:  # argparse
        code = e.code if isinstance(e.code, int) else 2
    except KeyboardInterrupt:
        if not fired.is_set():
            raise
        internal = "the watchdog had to interrupt it"
    except BaseException as e:  # noqa: BLE001 - anything out of main is an internal error
        internal = f"{type(e).__name__} escaped main: {e}"
    finally:
        dog.cancel()
    seconds = time.monotonic() - start
    if fired.is_set() and internal is None:
        internal = "the watchdog had to interrupt it"
    text = err.getvalue()
    if internal is None and ("internal error" in text or "Traceback" in text):
        internal = next(line for line in text.splitlines() if "internal error" in line or "Traceback" in line)
    if internal is None and code not in (0, 1, 2, 3):
        internal = f"exit code {code}"
    return Outcome(argv[0], code, seconds, limit, internal)


def commands(path: Path, launch: tuple[str, ...], seed: int,
             b: Bounds) -> Iterator[tuple[list[str], float | None]]:
    f = str(path)
    bounds = ["--timeout", f"{b.timeout:g}", "--max-memory", MAX_MEMORY, "--quiet"]
    yield ["lint", f], None
    yield ["run", f, *launch, "--seed", str(seed), "--max-steps", str(b.max_steps), *bounds], b.timeout
    yield ["check", f, *launch, "--max-states", str(b.max_states), "--walks", str(b.walks), *bounds], \
        b.timeout
    yield ["export", "--promela", f, *launch, "-o", str(path.with_suffix(".pml")), "--timeout",
           f"{b.timeout:g}"], b.timeout


@dataclass
class Report:
    mutants: int = 0
    seconds: float = 0.0
    codes: dict[str, Counter[int]] = field(default_factory=lambda: {c: Counter() for c in COMMANDS})
    internal: list[str] = field(default_factory=list)
    overruns: list[str] = field(default_factory=list)
    slowest: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COMMANDS, 0.0))
    total: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COMMANDS, 0.0))

    def summary(self) -> str:
        lines = [f"{self.mutants} mutants, {self.seconds:.1f} s; internal errors: {len(self.internal)}; "
                 f"runs past twice their limit: {len(self.overruns)}"]
        for c in COMMANDS:
            codes = ", ".join(f"exit {k}: {v}" for k, v in sorted(self.codes[c].items()))
            lines.append(f"  {c:<6} {codes}  ({self.total[c]:.1f} s in all, slowest {self.slowest[c]:.2f} s)")
        lines += [f"  INTERNAL {x}" for x in self.internal] + [f"  OVERRUN {x}" for x in self.overruns]
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        return {"mutants": self.mutants, "seconds": round(self.seconds, 1), "internal": self.internal,
                "overruns": self.overruns, "slowest": self.slowest, "total": self.total,
                "codes": {c: dict(sorted(v.items())) for c, v in self.codes.items()}}


def campaign(n: int, seed: int, workdir: Path, only: int | None = None, keep: Path | None = None,
             log: Callable[[str], None] | None = None, bounds: Bounds = Bounds()) -> Report:
    """Mutants 0..n-1 of `seed` (only mutant `only` when given), each through every command."""
    srcs = sources()
    donors = donor_lines(srcs)
    report = Report()
    start = time.monotonic()
    for i in range(n) if only is None else [only]:
        src = srcs[i % len(srcs)]
        rng = random.Random(f"{seed}:{i}")
        text, done = mutate(src.path.read_text(), rng, donors)
        path = workdir / f"m{i}.ptx"
        path.write_text(text)
        what = f"mutant {i} of {src.name} ({'; '.join(done) or 'unchanged'})"
        failed = False
        for argv, limit in commands(path, src.launch, i, bounds):
            o = run_command(argv, limit, bounds.timeout)
            report.codes[o.command][o.code] += 1
            report.slowest[o.command] = max(report.slowest[o.command], o.seconds)
            report.total[o.command] += o.seconds
            if o.internal is not None:
                report.internal.append(f"{what}: {shlex.join(argv)}: {o.internal}")
                failed = True
            if o.limit is not None and o.seconds > 2 * o.limit:
                report.overruns.append(f"{what}: {shlex.join(argv)}: {o.seconds:.1f} s (limit {o.limit:g} s)")
                failed = True
        if failed and keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"seed{seed}_m{i}_{src.path.stem}.ptx").write_text(text)
        report.mutants += 1
        if log is not None and report.mutants % 50 == 0:
            log(f"{report.mutants} mutants, {time.monotonic() - start:.0f} s, {len(report.internal)} "
                f"internal errors, {len(report.overruns)} overruns")
    report.seconds = time.monotonic() - start
    return report


def _main() -> int:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutants", type=int, default=500, help="how many mutants (default 500)")
    ap.add_argument("--seed", type=int, default=0, help="the campaign's seed (default 0)")
    ap.add_argument("--only", type=int, metavar="I", help="run mutant I of the seed only (to reproduce it)")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="write each failing mutant to DIR")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    ap.add_argument("--installed", action="store_true",
                    help="test the mbarrier package this interpreter imports (e.g. a wheel in a venv), not "
                         "the checkout's src/")
    args = ap.parse_args()
    print(f"testing mbarrier from {Path(examples.__file__).parents[1]}", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="mbarrier-fuzz-") as tmp:
        report = campaign(args.mutants, args.seed, Path(tmp), args.only, args.keep,
                          log=lambda s: print(s, file=sys.stderr, flush=True))
    print(json.dumps(report.to_json(), indent=1) if args.json else report.summary())
    return 1 if report.internal or report.overruns else 0


if __name__ == "__main__":
    sys.exit(_main())
