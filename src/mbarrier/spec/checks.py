"""The findings the checker adds to the object's rules (`spec.rules`) and the memory model's
(`spec.memmodel`), as data: a deadlock, an operation on the shared memory of a CTA that has exited,
shared memory released under copies in flight, and the simulator's own stop. `explore.check` reports
them under these ids (`python -m mbarrier.spec.checks` prints the table of docs/checker.md)."""

from __future__ import annotations

import sys
from typing import Final

from mbarrier.spec.rules import Rule

DEADLOCK: Final = "deadlock"
REMOTE_EXITED: Final = "remote-cta-exited"
EXIT_INFLIGHT: Final = "exit-with-copies-in-flight"
SIM_ERROR: Final = "simulator-error"

CHECKER_RULES: Final[tuple[Rule, ...]] = (
    Rule(DEADLOCK, "9.7.13.15.16", "deadlock",
         "Every live thread waits for something that can no longer happen: a phase no arrival or copy can "
         "complete, a barrier or collective the other threads will not reach, copies that cannot land.",
         "checker"),
    Rule(REMOTE_EXITED, "CUDA Programming Guide, Distributed Shared Memory", "remote CTA has exited",
         "An operation on the shared memory of a CTA of the cluster that has already exited (its shared "
         "memory, and any mbarrier object in it, is gone).",
         "checker"),
    Rule(EXIT_INFLIGHT, "9.7.9.25 (cp.async), 9.7.9.25.4 (cp.async.bulk)", "copies in flight at exit",
         "Shared memory is released while asynchronous copies into it are still in flight: a thread exits "
         "with a cp.async that nothing tracks, or a CTA's last thread exits before its copies land.",
         "checker"),
    Rule(SIM_ERROR, "", "the simulator cannot go on",
         "The run stops where the simulator cannot go on (an instruction or form it does not support, a "
         "memory fault, a bad launch): the tool's limit or the kernel's fault, named with its line; never "
         "a verdict on the protocol.",
         "sim"),
)
CHECKER_RULES_BY_ID: Final[dict[str, Rule]] = {r.id: r for r in CHECKER_RULES}


def checker_rule(rule_id: str) -> Rule:
    """The checker's rule with this id; a KeyError names the unknown id."""
    try:
        return CHECKER_RULES_BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"unknown checker rule id {rule_id!r}") from None


def markdown_table() -> str:
    rows = ["| id | section | what |", "|---|---|---|"]
    rows += [f"| `{r.id}` | {r.section or '-'} | {r.sentence} |" for r in CHECKER_RULES]
    return "\n".join(rows)


if __name__ == "__main__":
    sys.stdout.write(markdown_table() + "\n")
