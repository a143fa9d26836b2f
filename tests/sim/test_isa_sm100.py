"""The mbarrier side of two sm_100 instructions: tcgen05.commit's arrive-on (PTX ISA 9.7.16.12.5) and
clusterlaunchcontrol.try_cancel's response and complete-tx (9.7.12.21.1), with query_cancel decoding the
response (9.7.12.21). Every other tcgen05 instruction stops a run by name."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.ptx.parser import parse

from .helpers import run, words
from .sm100_kernels import ALL, CANCEL, CANCEL_ALL, COMMIT_ALL, COMMIT_ONCE, HEAD


@pytest.mark.tool("ptxas")
@pytest.mark.parametrize("name", sorted(ALL))
def test_ptxas_assembles_every_kernel_here(name: str, tmp_path: Path) -> None:
    src = tmp_path / f"{name}.ptx"
    src.write_text(ALL[name])
    r = subprocess.run(["ptxas", "-arch=sm_100a", str(src), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_try_cancel_answers_not_canceled_and_a_scheduler_loop_ends() -> None:
    """9.7.12.21.1: the response lands asynchronously with a complete-tx of 16 bytes; every cluster of
    the simulator's grid runs from the start, so none can be canceled: the loop asks once and stops.
    get_first_ctaid after a failed request is undefined (9.7.12.21): the simulator's all ones."""
    mod = parse(CANCEL.format(tx=16), "cancel.ptx")
    for seed in range(3):
        r = run(mod, seed=seed, grid=1, block=1, args={"out": sim.Buffer(16)})
        assert r.ok, r.message
        assert words(r.machine, "out", 4) == [0, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF]
        bar = r.machine.ctas[0].barriers[16]
        assert (bar.phase, bar.tx) == (1, 0)  # one phase: the expect_tx's 16 bytes, completed once


def test_try_cancel_multicast_reaches_every_cta_of_the_cluster() -> None:
    """.multicast::cluster::all: the response and the complete-tx at the same offsets of each CTA."""
    mod = parse(CANCEL_ALL, "cancel_all.ptx")
    for seed in range(4):
        r = run(mod, seed=seed, grid=2, cluster=2, block=1, args={"out": sim.Buffer(8)})
        assert r.ok, r.message
        assert words(r.machine, "out", 2) == [0xFFFFFFFF, 0xFFFFFFFF]


def test_try_cancel_is_asynchronous() -> None:
    """The issue returns before the response lands: right after it the mbarrier still waits for its 16
    bytes and the response's memory is untouched; the engine's one step lands both."""
    m = sim.launch(parse(CANCEL.format(tx=16), "cancel.ptx"), grid=1, block=1, args={"out": sim.Buffer(16)})
    t = m.threads[0]
    while "try_cancel" not in t.site.text:
        m.step(t)
    m.step(t)
    (c,) = m.inflight
    bar = m.ctas[0].barriers[16]
    assert (bar.phase, bar.tx) == (0, 16) and bytes(m.ctas[0].smem[:16]) == bytes(16)
    m.step(c)
    assert (bar.phase, bar.tx) == (1, 0) and m.ctas[0].smem[4:16] == b"\xff" * 12


def test_a_misaligned_response_faults() -> None:
    bad = CANCEL.format(tx=16).replace("bytes.b128 [resp]", "bytes.b128 [resp+8]")
    r = run(parse(bad, "cancel.ptx"), grid=1, block=1, args={"out": sim.Buffer(16)})
    assert not r.ok and "16-byte aligned" in r.message


def test_tcgen05_commit_arrives_later_once_on_each_cta_of_its_mask() -> None:
    """9.7.16.12.5 with .multicast::cluster: an arrive-on (count 1) on the mbarrier at the same offset of
    each CTA of ctaMask (3: both); each CTA's phase completes and its thread goes on."""
    mod = parse(COMMIT_ALL, "commit_all.ptx")
    for seed in range(4):
        r = run(mod, seed=seed, grid=2, cluster=2, block=1, args={"out": sim.Buffer(8)})
        assert r.ok, r.message
        assert words(r.machine, "out", 2) == [7, 7]
        assert [c.barriers[0].phase for c in r.machine.ctas] == [1, 1]


def test_tcgen05_commit_arrive_on_is_asynchronous() -> None:
    """The thread goes on past the commit; its one test_wait sees the phase complete in some schedules and
    not in others (the arrive-on is an agent of its own)."""
    mod = parse(COMMIT_ONCE.format(branch=""), "commit_once.ptx")
    seen = set()
    for seed in range(12):
        r = run(mod, seed=seed, grid=1, block=1, args={"out": sim.Buffer(4)})
        assert r.ok, r.message
        seen.add(words(r.machine, "out", 1)[0])
    assert seen == {0, 1}


def test_tcgen05_commit_mask_beyond_the_cluster_faults() -> None:
    bad = COMMIT_ALL.replace("mov.u16 %rs1, 3;", "mov.u16 %rs1, 5;")
    r = run(parse(bad, "commit_all.ptx"), grid=2, cluster=2, block=1, args={"out": sim.Buffer(8)})
    assert not r.ok and "ctaMask 0x5" in r.message


def test_other_tcgen05_instructions_stop_the_run_by_name() -> None:
    mod = parse(HEAD + ".visible .entry k()\n{\n.reg .b32 %r<2>;\nmov.u32 %r1, %tid.x;\n"
                "tcgen05.fence::after_thread_sync;\nret;\n}\n", "t.ptx")
    r = explore.run(sim.launch(mod), explore.RoundRobin())
    assert r.outcome == "unsupported" and r.site is not None and r.site.line == 8
    assert "tcgen05" in r.message


def test_tcgen05_commit_arrives_only_in_the_ctas_of_its_mask() -> None:
    """ctaMask 2 names CTA 1 only: its phase completes; CTA 0's mbarrier gets no arrive-on and its thread
    waits forever."""
    only_one = COMMIT_ALL.replace("mov.u16 %rs1, 3;", "mov.u16 %rs1, 2;")
    r = run(parse(only_one, "commit_all.ptx"), grid=2, cluster=2, block=1, args={"out": sim.Buffer(8)})
    assert r.outcome == "stuck", (r.outcome, r.message)
    assert [c.barriers[0].phase for c in r.machine.ctas] == [0, 1]
    assert words(r.machine, "out", 2) == [0, 7]
