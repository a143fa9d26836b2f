"""Every rule id a lint diagnostic or a finding can carry, with its help, for the formats that describe
rules (SARIF's `tool.driver.rules`, GitHub annotation titles). The facts come from spec's catalogues:
the object's undefined behaviour (`spec.rules`), the memory model's races (`spec.memmodel`), the
checker's findings (`spec.checks`), ptxas's messages and the front end's own ids (`spec.forms`). Nothing
is described here: a rule's words live once, in its catalogue."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from mbarrier.spec.checks import CHECKER_RULES
from mbarrier.spec.forms import FRONT_END_RULES, MESSAGES, RULE_IDS
from mbarrier.spec.memmodel import RACE_RULES
from mbarrier.spec.rules import RULES, Rule


@dataclass(frozen=True)
class RuleHelp:
    id: str
    title: str               # a short name
    text: str                # what the rule says, in full
    section: str             # the manual's section ("" where there is none)
    source: str              # "ptxas" (an error ptxas raises), "lint", "object" (the object's rules),
                             # "memory-model", "checker"

    @property
    def name(self) -> str:
        """The id in CamelCase (SARIF's `reportingDescriptor.name`)."""
        return "".join(p.capitalize() for p in self.id.replace(".", "-").split("-"))


def _of(rule: Rule, source: str) -> RuleHelp:
    return RuleHelp(rule.id, rule.title, rule.sentence, rule.section, source)


@cache
def catalogue() -> dict[str, RuleHelp]:
    """Every known rule id, with its help."""
    out: dict[str, RuleHelp] = {}
    for key, template in MESSAGES.items():
        out[RULE_IDS[key]] = RuleHelp(RULE_IDS[key], key.replace("-", " "),
                                      f"ptxas refuses the module: {template}", "", "ptxas")
    for r in FRONT_END_RULES:  # a ptxas- id is a rule ptxas applies too
        out[r.id] = _of(r, "ptxas" if r.id.startswith("ptxas-") else "lint")
    for r in RULES:
        out[r.id] = _of(r, "object")
    for r in RACE_RULES:
        out[r.id] = _of(r, "memory-model")
    for r in CHECKER_RULES:
        out[r.id] = _of(r, "checker")
    return out


def help_of(rule_id: str) -> RuleHelp:
    """The help of a rule id; an id no catalogue knows (a newer front end's) gets a plain entry."""
    return catalogue().get(rule_id) or RuleHelp(rule_id, rule_id, f"mbarrier rule {rule_id}", "", "lint")
