"""Snapshots of threads inside calls: a register slot that holds a token means something only in the
function that wrote it (issue 13: nvcc's -G build indexed the kernel's token slots into a callee's
shorter register list)."""

from __future__ import annotations

from mbarrier import examples, sim
from mbarrier.explore.check import Options, check_machine


def test_the_debug_build_of_the_ring_is_checked_through_its_calls() -> None:
    module = sim.load(examples.path("ring_buffer.G"))
    m = sim.launch(module, grid=1, block=160)
    r = check_machine(m, module, Options(max_states=400))
    assert r.verdict == "incomplete", [f.message for f in r.findings]
    assert r.stats.states == 400
