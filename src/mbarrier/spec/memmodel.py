"""Memory-ordering facts of the mbarrier instructions, and the race rules built on them, as data.

The simulator's happens-before tracking (`mbarrier.sim.hb`, `mbarrier.sim.races`) reads its defaults and
its finding catalogue from here, so the manual's sentences stay in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mbarrier.spec.rules import Rule

#: 9.7.13.15.13/.14: "If the .sem qualifier is absent, .release is assumed by default" (arrive,
#: arrive_drop); 9.7.13.15.16: ".acquire is assumed by default" (test_wait, try_wait). Scope: "If the
#: .scope qualifier is not specified then it defaults to .cta" (all three).
DEFAULT_SEM: Final[dict[str, str]] = {"arrive": ".release", "arrive_drop": ".release",
                                      "test_wait": ".acquire", "try_wait": ".acquire"}
DEFAULT_SCOPE: Final = ".cta"
#: "The .relaxed qualifier does not provide any memory ordering semantics and visibility guarantees."
NO_ORDER_SEM: Final = ".relaxed"

#: barrier.cluster.arrive defaults to .release, barrier.cluster.wait to .acquire (PTX ISA 9.7.13.2).
CLUSTER_ARRIVE_DEFAULT_SEM: Final = ".release"


@dataclass(frozen=True, slots=True)
class OrderingRule:
    """One of the five orderings 9.7.13.15.16 lists for a successful acquire wait."""

    number: int
    sentence: str
    modelled_by: str


ORDERING_RULES: Final[tuple[OrderingRule, ...]] = (
    OrderingRule(1, "All memory accesses (except async operations) requested prior, in program order, to "
                 "mbarrier.arrive having release semantics during the completed phase by the participating "
                 "threads of the CTA are performed and are visible to the executing thread.",
                 "the arriver's vector clock joins the phase; the acquiring wait joins the phase"),
    OrderingRule(2, "All cp.async operations requested prior, in program order, to cp.async.mbarrier.arrive "
                 "during the completed phase by the participating threads of the CTA are performed and "
                 "made visible to the executing thread.",
                 "the clocks of the thread's earlier cp.async copies join the phase when the arrive-on "
                 "happens"),
    OrderingRule(3, "All cp.async.bulk asynchronous operations using the same mbarrier object requested "
                 "prior, in program order, to mbarrier.arrive having release semantics during the completed "
                 "phase by the participating threads of the CTA are performed and made visible to the "
                 "executing thread.",
                 "a bulk copy's clock joins the phase at its complete-tx"),
    OrderingRule(4, "All memory accesses requested after the mbarrier.test_wait or mbarrier.try_wait, in "
                 "program order, are not performed and not visible to memory accesses performed prior to "
                 "mbarrier.arrive having release semantics, in program order, by other threads "
                 "participating in the mbarrier.",
                 "the waiter's later accesses carry its joined clock, so they are ordered after the "
                 "arrivers' earlier ones"),
    OrderingRule(5, "There is no ordering and visibility guarantee for memory accesses requested by the "
                 "thread after mbarrier.arrive having release semantics and prior to mbarrier.test_wait, in "
                 "program order.",
                 "an arrive snapshots the clock and then advances it: accesses after it are not released"),
)

MEMORY_MODEL = "PTX ISA 8 (Memory Consistency Model)"
FENCE = "PTX ISA 9.7.13.4 (membar/fence)"

#: Findings of kind "race": two accesses, or an access and an mbarrier object's lifetime, unordered.
RACE_RULES: Final[tuple[Rule, ...]] = (
    Rule("data-race", "9.7.13.15.16; " + MEMORY_MODEL,
         "data race",
         "Two accesses to the same bytes of memory, at least one a write, from different threads or copy "
         "engines, with no happens-before order between them (a successful .acquire wait on a phase that "
         "a .release arrive, a copy's complete-tx or a cp.async.mbarrier.arrive joined, bar.sync, "
         "barrier.cluster, cp.async.wait_group, or release/acquire fences and accesses).",
         "sim"),
    Rule("proxy-fence", FENCE + ", fence.proxy.async; " + MEMORY_MODEL + ", proxies",
         "generic write seen by the async proxy without fence.proxy.async",
         "A write through the generic proxy and an access by the async proxy (cp.async.bulk) to the same "
         "bytes need a fence.proxy.async after the write that happens before the asynchronous access.",
         "sim"),
    Rule("mbarrier-init-visibility", "9.7.13.15.9; " + FENCE + ", fence.mbarrier_init",
         "mbarrier.init not visible to the operation",
         "An mbarrier operation must happen after the mbarrier.init of its object: in the same CTA through "
         "a barrier or a release/acquire pair, from another CTA of the cluster through a .cluster-scope "
         "release (fence.mbarrier_init.release.cluster or barrier.cluster.arrive) and acquire.",
         "sim"),
    Rule("wgmma-operand-inflight", "9.7.15.7.3 (wgmma.wait_group); 9.7.15.4 (Async Proxy); " + MEMORY_MODEL,
         "shared-memory operand of wgmma.mma_async overwritten in flight",
         "wgmma.commit_group and wgmma.wait_group operations must be used to wait for the completion of the "
         "asynchronous matrix multiply and accumulate operations before the results are accessed. (A "
         "wgmma.mma_async reads its shared-memory matrices until a wgmma.wait_group retires its group: a "
         "write to them ordered after a release its warp made after the issue, such as the arrive on a "
         "stage's empty barrier, but not after that wait_group, races with the read.)",
         "sim"),
    Rule("inval-inflight", "9.7.13.15.10",
         "mbarrier.inval while copies that complete on it are in flight",
         "mbarrier.inval invalidates the object while a cp.async.bulk or a pending cp.async.mbarrier.arrive "
         "will still perform complete-tx or arrive-on on it.",
         "sim"),
)
RACE_RULES_BY_ID: Final[dict[str, Rule]] = {r.id: r for r in RACE_RULES}


def race_rule(rule_id: str) -> Rule:
    """The race rule with this id; a KeyError names the unknown id."""
    try:
        return RACE_RULES_BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"unknown race rule id {rule_id!r}") from None


def markdown_table() -> str:
    rows = ["| id | section | what |", "|---|---|---|"]
    rows += [f"| `{r.id}` | {r.section} | {r.sentence} |" for r in RACE_RULES]
    return "\n".join(rows)


if __name__ == "__main__":
    from mbarrier.spec.textout import emit

    emit(markdown_table() + "\n")
