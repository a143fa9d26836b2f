"""`cp.async.bulk.prefetch.tensor` moves nothing a thread can observe; it reads its tensor map and faults
where a copy of its box would (PTX ISA 9.7.9.25.5.4). The checker takes it for a load of the map's 128
bytes, so it commutes with what touches other memory. Taken for an instruction that touches anything, it
put every enabled thread into one stubborn set (FlashAttention-3's forward kernel: sets of 480 agents,
384 consumers at `bar.arrive` and 95 idle producer threads at `ret`, beside the producer's prefetch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.explore.check import Options, check_machine
from mbarrier.explore.code import LOAD, analyse_module

from .helpers import load, outcome

# Thread 0 prefetches a box of the 1D map `tmap` (in kernel parameter memory) at coordinate {coord} and
# exits; every other thread stores its word of `out` and exits.
KERNEL = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 128 .b8 tmap[128], .param .u64 out)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra STORE;
	mov.b64 %rd2, tmap;
	cvta.param.u64 %rd3, %rd2;
	mov.u32 %r1, {coord};
	cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%rd3, {{%r1}}];
	exit;
STORE:
	ld.param.u64 %rd0, [out];
	cvta.to.global.u64 %rd0, %rd0;
	mul.wide.u32 %rd1, %r0, 4;
	add.s64 %rd0, %rd0, %rd1;
	st.global.u32 [%rd0], %r0;
	exit;
}}
"""
PREFETCH_LINE = 15
# A 1D map of 64 ints whose box is 4 of them.
LAUNCH = {
    "kernel": "k", "grid": 1,
    "buffers": {"src": {"size": 256}, "out": {"size": 256}},
    "tensor_maps": {"t": {"encode": "tiled", "tensorDataType": "INT32", "tensorRank": 1,
                          "globalAddress": "src", "globalDim": [64], "globalStrides": [], "boxDim": [4],
                          "elementStrides": [1]}},
    "params": {"0": {"tensor_map": "t"}, "1": {"pointer": "out"}},
}


def _machine(tmp_path: Path, coord: int, threads: int) -> tuple[sim.Machine, object]:
    module = load(tmp_path, KERNEL.format(coord=coord))
    launch = tmp_path / "k.launch.json"
    launch.write_text(json.dumps(LAUNCH | {"block": threads}))
    return sim.launch(module, spec=sim.read_launch(launch)), module


def test_the_prefetch_is_a_load_of_its_tensor_map(tmp_path: Path) -> None:
    m, module = _machine(tmp_path, 0, 2)
    code = analyse_module(module, m)["k"]  # type: ignore[arg-type]
    (x,) = [x for x in code.ins if x.line == PREFETCH_LINE]
    assert x.kind == LOAD and x.size == 128 and x.addr is not None and x.addr.base is not None


@pytest.mark.parametrize("coord", [0, 3])  # 3: a box starting off 16 bytes faults (the H100's records)
def test_reductions_keep_the_prefetch_and_its_fault(tmp_path: Path, coord: int) -> None:
    results = []
    for reduce in (True, False):
        m, module = _machine(tmp_path, coord, 4)
        results.append(check_machine(m, module, Options(reductions=reduce, max_findings=1000, walks=0)))
    on, off = results
    assert off.verdict != "incomplete" and outcome(on) == outcome(off)
    assert on.verdict == ("verified" if coord == 0 else "finding")


def test_the_prefetch_commutes_with_the_other_threads(tmp_path: Path) -> None:
    """One chain: the prefetch and each store are sets of one (before: every enabled thread at once)."""
    for threads in (4, 8):
        m, module = _machine(tmp_path, 0, threads)
        r = check_machine(m, module, Options(walks=0))
        assert r.verdict == "verified" and r.stats.states == r.stats.depth + 1
