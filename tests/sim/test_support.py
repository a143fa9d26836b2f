"""What of a kernel the simulator cannot execute, found before it runs: exactly where a run stops (the
registry decides), in the kernel and in every function it can reach, and nowhere else."""

from __future__ import annotations

from mbarrier import examples, explore, sim
from mbarrier.ptx.parser import parse
from mbarrier.sim.registry import REGISTRY
from mbarrier.sim.support import operation, support

from .helpers import HEADER

TEXT = HEADER + """
.global .u64 table[1] = {g};
.func f()
{
    tcgen05.fence::before_thread_sync;
    ret;
}
.func g()
{
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r0], 32;
    ret;
}
.func unused()
{
    stmatrix.sync.aligned.x4.m8n8.shared.b16 [%r0], {%r0, %r0, %r0, %r0};
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .f64 %fd<2>;
    mov.u32 %r1, %tid.x;
    call f, ();
    rcp.approx.ftz.f64 %fd1, %fd1;
    ret;
}
"""


def test_every_gap_of_the_kernel_and_what_it_reaches() -> None:
    s = support(parse(TEXT, "t.ptx"))
    assert s.kernel == "k" and s.functions == ("f", "g", "k")   # g: in a table of function pointers
    assert [(g.function, g.line, g.operation) for g in s.gaps] == [
        ("f", 8, "tcgen05"), ("g", 13, "tcgen05.alloc"), ("k", 28, "rcp")]
    by_reason = {g.operation: g.reason for g in s.gaps}
    # tcgen05's executor runs tcgen05.commit's arrive-on only and refuses the rest in its own words
    assert by_reason["tcgen05"].startswith("of tcgen05 only the arrive-on of tcgen05.commit is modelled")
    assert by_reason["tcgen05.alloc"] == by_reason["tcgen05"]
    assert "tcgen05" in REGISTRY and "rcp" in REGISTRY
    assert by_reason["rcp"] != ""  # the executor's own words for the form it refuses
    assert s.by_operation() == {"rcp": 1, "tcgen05": 1, "tcgen05.alloc": 1}
    assert s.instructions == 2 + 2 + 4


def test_a_gap_is_where_a_run_stops() -> None:
    mod = parse(HEADER + ".visible .entry k()\n{\n.reg .b32 %r<2>;\nmov.u32 %r1, %tid.x;\n"
                "tcgen05.fence::after_thread_sync;\nret;\n}\n", "t.ptx")
    (gap,) = support(mod).gaps
    r = explore.run(sim.launch(mod), explore.RoundRobin())
    assert r.outcome == "unsupported" and r.site is not None and r.site.line == gap.line
    assert gap.operation == "tcgen05"


def test_the_bundled_kernels_are_all_in_reach() -> None:
    for name in ("ring_buffer", "calls", "struct_ring", "cluster_handshake", "ring_buffer.G", "tma_tile"):
        s = support(sim.load(examples.path(name)))
        assert not s.gaps, (name, s.gaps)


def test_operation_names_the_operation_not_its_shapes_and_types() -> None:
    mod = parse(HEADER + ".visible .entry k()\n{\n"
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f0}, %rd0, %rd1, 1, 1, 1, 1, 1;\n"
                "ld.global.nc.v4.f32 {%f0, %f1, %f2, %f3}, [%rd0];\n}\n", "t.ptx")
    ins = [s for s in mod.entries[0].body or () if hasattr(s, "opcode")]
    assert [operation(i) for i in ins] == ["wgmma.mma_async", "ld"]  # type: ignore[arg-type]
