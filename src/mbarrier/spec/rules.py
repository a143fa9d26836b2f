"""The catalogue of undefined-behaviour rules of the mbarrier object, as data.

Each rule is one sentence of PTX ISA 9.7.13.15 that makes something undefined, or states a range or a
"must" whose breach the manual leaves undefined. `core.violations` gives each rule its exception class;
the docs table is generated from this list (`python -m mbarrier.spec.rulesdoc --markdown`). The other
catalogues use the same `Rule`: the memory model's race rules (`spec.memmodel`) and the checker's own
findings (`spec.checks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    """Stable identifier: used in JSON output, tests and suppressions. Never renamed."""
    section: str
    """The PTX ISA section whose sentence the rule enforces."""
    title: str
    """A short name for tables."""
    sentence: str
    """The normative sentence, quoted from the manual; " ... " joins quoted pieces (table rows too)."""
    checked_by: str
    """Which layer detects it: "core" (the object itself), "sim" (needs addresses, threads or memory),
    "checker" (needs every interleaving: `spec.checks`), "lint" (the front end judging the module's text:
    `spec.forms.FRONT_END_RULES`)."""

    @property
    def class_name(self) -> str:
        """The name of the rule's `mbarrier.Violation` subclass: the id in CamelCase."""
        return "".join(part.capitalize() for part in self.id.split("-"))


RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "uninitialized",
        "9.7.13.15",
        "operation on an object that is not valid",
        "Performing any mbarrier operation except mbarrier.init on an uninitialized mbarrier object "
        "results in undefined behavior.",
        "core",
    ),
    Rule(
        "init-on-valid",
        "9.7.13.15.9",
        "init of a valid object",
        "The behavior of performing an mbarrier.init operation on a memory location containing a valid "
        "mbarrier object is undefined; invalidate the mbarrier object using mbarrier.inval first, before "
        "repurposing the memory location for any other purpose, including another mbarrier object.",
        "core",
    ),
    Rule(
        "init-count-range",
        "9.7.13.15.9",
        "init count out of range",
        "The valid range of values for the operand count is [1, ..., 2^20 - 1].",
        "core",
    ),
    Rule(
        "arrive-count-range",
        "9.7.13.15.13",
        "arrive count out of range",
        "The value of the operand count must be in the range as specified in Contents of the mbarrier "
        "object.",
        "core",
    ),
    Rule(
        "pending-underflow",
        "9.7.13.15.2",
        "arrival count exceeds the pending count",
        "The valid range of each of the counts is as shown below: ... Pending arrival count | 0 | "
        "2^20 - 1",
        "core",
    ),
    Rule(
        "pending-overflow",
        "9.7.13.15.15",
        "cp.async.mbarrier.arrive raises pending past the limit",
        "The pending count of the mbarrier object after the increment should not exceed the limit as "
        "mentioned in Contents of the mbarrier object. Otherwise, the behavior is undefined.",
        "core",
    ),
    Rule(
        "expected-underflow",
        "9.7.13.15.2",
        "arrive_drop lowers the expected count below 1",
        "The valid range of each of the counts is as shown below: ... Expected arrival count | 1 | "
        "2^20 - 1",
        "core",
    ),
    Rule(
        "tx-count-range",
        "9.7.13.15.2",
        "tx-count leaves its range",
        "The valid range of each of the counts is as shown below: ... tx-count | -(2^20 - 1) | 2^20 - 1",
        "core",
    ),
    Rule(
        "no-complete-completes",
        "9.7.13.15.13",
        ".noComplete arrive completes the phase",
        "A mbarrier.arrive operation with .noComplete qualifier must not cause the mbarrier to complete "
        "its current phase, otherwise the behavior is undefined.",
        "core",
    ),
    Rule(
        "phase-not-waited",
        "9.7.13.15.4",
        "arrive-on before the previous phase was waited for",
        "For each phase of the mbarrier object, at least one test_wait or try_wait operation must be "
        "performed which returns True for waitComplete before an arrive-on operation in the subsequent "
        "phase.",
        "core",
    ),
    Rule(
        "wait-stale-token",
        "9.7.13.15.16",
        "wait on a token older than the preceding phase",
        "The test_wait and try_wait operations are valid only for : ... the current incomplete phase, for "
        "which waitComplete returns False. ... the immediately preceding phase, for which waitComplete "
        "returns True.",
        "core",
    ),
    Rule(
        "wait-foreign-token",
        "9.7.13.15.16",
        "wait on a token of another mbarrier object",
        "Specified by the 64-bit unsigned integer operand state, which was returned by an mbarrier.arrive "
        "instruction on the same mbarrier object during the current or the immediately preceding phase.",
        "core",
    ),
    Rule(
        "wait-parity-value",
        "9.7.13.15.16",
        "phaseParity other than 0 or 1",
        "An even phase has integer parity 0 and an odd phase has integer parity of 1. So the valid values "
        "of phaseParity operand are 0 and 1.",
        "core",
    ),
    Rule(
        "pending-count-token",
        "9.7.13.15.17",
        "pending_count of a token not from .noComplete",
        "The state operand is a 64-bit register that must be the result of a prior "
        "mbarrier.arrive.noComplete or mbarrier.arrive_drop.noComplete instruction. Otherwise, the "
        "behavior is undefined.",
        "core",
    ),
    Rule(
        "cluster-operation",
        "9.7.13.15.8",
        "operation not supported on a shared::cluster object",
        "The following table summarizes the support of various mbarrier operations on mbarrier objects "
        "located at different shared memory locations: ... mbarrier operations | .shared::cta | "
        ".shared::cluster ... Other mbarrier operations | Supported | Not supported",
        "sim",
    ),
    Rule(
        "cluster-arrive-result",
        "9.7.13.15.13",
        "arrive on a remote shared::cluster object returns a state",
        "mbarrier.arrive operation on an mbarrier object located in .shared::cluster but not in "
        ".shared::cta cannot return a value. Sink symbol '_' is mandatory for the destination operand "
        "for such cases.",
        "sim",
    ),
    Rule(
        "address-window",
        "9.7.13.15.9",
        "address outside the shared::cta window",
        "If the address specified by addr does not fall within the address window of .shared::cta state "
        "space then the behavior is undefined.",
        "sim",
    ),
    Rule(
        "alignment",
        "9.7.13.15.1",
        "object not 8-byte aligned",
        "An mbarrier object is an opaque object with the following type and alignment requirements : ... "
        "Type | Alignment (bytes) | Memory space ... .b64 | 8 | .shared",
        "sim",
    ),
    Rule(
        "non-mbarrier-access",
        "9.7.13.15",
        "ordinary access to a valid object",
        "Performing any non-mbarrier or mbarrier.init operations on an initialized mbarrier object "
        "results in undefined behavior.",
        "sim",
    ),
)

RULES_BY_ID: Final[dict[str, Rule]] = {r.id: r for r in RULES}


def rule(rule_id: str) -> Rule:
    """The rule with this id; a KeyError names the unknown id."""
    try:
        return RULES_BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"unknown mbarrier rule id {rule_id!r}") from None


def markdown_table() -> str:
    """The catalogue as a Markdown table."""
    lines = [
        "| rule | exception | section | what | the manual's sentence | checked by |",
        "|---|---|---|---|---|---|",
    ]
    for r in RULES:
        sentence = r.sentence.replace("|", "\\|")
        lines.append(f"| `{r.id}` | `mb.{r.class_name}` | {r.section} | {r.title} | {sentence} | "
                     f"{r.checked_by} |")
    return "\n".join(lines) + "\n"


_DOC_HEAD = """\
# Undefined behaviour of the mbarrier object: the rule catalogue

<!-- Generated from src/mbarrier/spec/rules.py by `python -m mbarrier.spec.rulesdoc --markdown`;
     do not edit by hand (a test fails when this file is stale). -->

Each row is one sentence of PTX ISA 9.7.13.15 that makes an operation undefined, or a range or a
"must" whose breach the manual leaves undefined. The model raises the row's exception, a subclass of
`mb.Violation` with `.rule` (the stable id in the first column) and `.section`; its message names the
operation, the barrier and the barrier's state. "checked by: core" rules are caught by `mb.Barrier`
itself; "sim" rules need addresses, threads or memory and are caught by the simulator. Where the manual
is silent about a case, [semantics.md](semantics.md) says what the model decided and why.

"""


def markdown_document() -> str:
    """docs/rules.md: a heading, how to read the table, and the table."""
    return _DOC_HEAD + markdown_table()

