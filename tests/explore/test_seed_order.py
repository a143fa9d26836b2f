"""The order in which the stubborn closure tries its seeds (`explore.seeds.order`): a seed whose closure grew
past the first pass (`closure.FIRST_PASS`) at an earlier state is tried after the others until its closure
closes again. CUTLASS's cooperative kernel: at each of the 256 states where a consumer thread arrives on
an mbarrier, the producer thread at its `mbarrier.arrive.expect_tx` (the cheapest seed by its footprint)
took the consumers into its closure and failed, before the consumer closed alone: two fixpoints over 384
threads a state instead of one."""

from __future__ import annotations

from pathlib import Path

from mbarrier import sim
from mbarrier.explore.seeds import order
from mbarrier.sim.machine import Thread

from .helpers import load

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .b64 %rd<2>;
	.shared .align 8 .b64 bar;
	mbarrier.arrive.shared::cta.b64 %rd1, [bar];
	ret;
}
"""


def _threads(tmp_path: Path) -> list[Thread]:
    m = sim.launch(load(tmp_path, KERNEL), grid=1, block=6)
    return list(m.threads)


def test_failed_seeds_come_after_the_others(tmp_path: Path) -> None:
    agents: list[Thread] = _threads(tmp_path)
    seeds = list(range(len(agents)))
    sizes = dict.fromkeys(seeds, 1)
    plain = order(list(agents), seeds, 4, sizes, None, lambda a: None)  # type: ignore[arg-type]
    assert plain[:2] == [0, 1]  # alike seeds in their order
    failed = frozenset({agents[0].aid, agents[1].aid})
    demoted = order(list(agents), seeds, 4, sizes, None, lambda a: None, failed)  # type: ignore[arg-type]
    assert sorted(demoted) == sorted(plain)  # the same seeds, every one still tried
    assert demoted[-2:] == [0, 1] and demoted[0] == plain[2]
