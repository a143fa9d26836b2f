"""The thread processes of the Promela model `explore.promela` writes: one process per thread, or, where
the launch needs more processes than SPIN runs (255), several threads per process.

A thread's code is a list of locations (`L<pc>`: instruction pc; `R<pc>`: instruction pc again for a
thread that comes from a blocking one), each one `Step`: a guard that blocks the thread until it holds and
an effect that ends every path in `goto L<pc>`, `goto R<pc>` or `goto done` (the thread exited).

One thread per process (`per_thread`): the locations are labels of the process, a step is one `atomic`
statement, the thread's registers are the process's locals (`_pid` is the thread index).

Several threads per process (`grouped`): each thread keeps its own location (`pc[i]`, 0 once it exited)
and registers (`v3[i]`); a step of the process is one `atomic` statement in which the process picks,
nondeterministically, one of its threads whose guard holds and takes that thread's step, so every
interleaving of the threads is still a path of the model (SPIN's partial-order reduction then works
between processes only, never between threads of one process). The thread's index `THR` is a
preprocessor name: `thr_` (the chosen thread) in the step, the literal `i` while the choice tests thread
i's guard, so one guard text serves every thread. `ME` is the thread's index in the launch. A process
whose threads have all exited waits at an `end` label; one with a thread still blocked does not, so
SPIN's "invalid end state" stays the checker's deadlock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One location of a thread's code: `cond` blocks the thread until it holds (None: never blocks)."""

    cond: str | None
    body: str


@dataclass(frozen=True)
class Location:
    label: str           # L<pc> or R<pc>
    comment: str | None  # the instruction's line and text, where it starts (L<pc>)
    step: Step


def me(per: int) -> str:
    """The preprocessor lines that name the running thread's index in the launch (`ME`)."""
    if per == 1:
        return "#define ME _pid"
    return f"#define TPP {per}  /* threads per process */\n#define THR thr_\n#define ME (_pid * TPP + THR)"


def per_thread(locations: list[Location], local: list[tuple[str, str]]) -> str:
    """`active [NP] proctype thread()` with one thread per process: labels and `atomic` statements."""
    lines = ["active [NP] proctype thread() {"]
    lines += [f"\t{t} {n};" for t, n in local]
    for loc in locations:
        lines.append(f"{loc.label}:" + (f" /* {loc.comment} */" if loc.comment else ""))
        s = loc.step
        lines.append(f"\tatomic {{ {s.cond + ' -> ' if s.cond else ''}{s.body} }}")
    lines += ["done:", "end_exit:", "\tfalse", "}"]
    return "\n".join(lines) + "\n"


def grouped(locations: list[Location], local: list[tuple[str, str]], per: int, nthreads: int) -> str:
    """`active [NP] proctype thread()` with `per` threads per process (see the module docstring)."""
    free = [loc for loc in locations if loc.step.cond is None]
    code = {loc.label: k for k, loc in enumerate(free + [x for x in locations if x.step.cond is not None], 1)}
    pc_type = "byte" if len(code) < 256 else "short"
    partial = nthreads % per != 0  # the last process has fewer threads: the others' slots never run
    en = [f"(pc[THR] >= 1 && pc[THR] <= {len(free)})"] if free else []
    en += [f"(pc[THR] == {code[x.label]} && {x.step.cond})" for x in locations if x.step.cond is not None]
    enabled = f"({' || '.join(en)})" + (" && ME < NT" if partial else "")
    lines = [f"#define EN ({enabled})  /* thread THR can step */",
             "active [NP] proctype thread() {"]
    lines += [f"\t{t} {n}[TPP];" for t, n in local]
    lines += [f"\t{pc_type} pc[TPP] = {code[locations[0].label]};  /* 0: exited */",
              f"\t{'byte' if per <= 256 else 'short'} thr_;",
              "\tdo", "\t:: atomic {", "\t\tif"]
    for i in range(per):
        lines += ["#undef THR", f"#define THR {i}", f"\t\t:: EN -> thr_ = {i}"]
    lines += ["#undef THR", "#define THR thr_", "\t\tfi;", "\t\tif"]
    for loc in locations:
        body = re.sub(r"goto ([LR]\d+)", lambda m: f"pc[THR] = {code[m.group(1)]}", loc.step.body)
        body = body.replace("goto done", "pc[THR] = 0")
        what = loc.label + (f", {loc.comment}" if loc.comment else "")
        lines += [f"\t\t:: pc[THR] == {code[loc.label]} ->  /* {what} */", f"\t\t\t{body}"]
    every = " && ".join(f"(pc[{i}] == 0 || _pid * TPP + {i} >= NT)" if partial else f"pc[{i}] == 0"
                        for i in range(per))
    lines += ["\t\tfi;", "\t\tthr_ = 0;", f"\t\tif :: {every} -> goto done :: else fi", "\t}", "\tod;",
              "done:", "end_exit:", "\tfalse", "}"]
    return "\n".join(lines) + "\n"
