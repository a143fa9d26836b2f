"""A launch is checked before anything is allocated: shapes against the PTX ISA's limits, shared and
local memory against what a CTA and a thread can have, the whole machine against a memory bound; and
a declared register range costs nothing until its registers are used (issue 13: `.reg .pred
%p<0xffffffff>;` made `run` grow to 23 GB)."""

from __future__ import annotations

import re
import tracemalloc

import pytest

from mbarrier import examples, explore, sim
from mbarrier.explore.check import check
from mbarrier.explore.code import analyse
from mbarrier.ptx import ast
from mbarrier.ptx.parser import parse
from mbarrier.sim import LaunchError
from mbarrier.spec.limits import MAX_NCTAID, MAX_NTID

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _module(body: str) -> ast.Module:
    return parse(HEAD + ".visible .entry k()\n{\n" + body + "\tret;\n}\n")


def test_a_huge_register_range_costs_only_the_registers_used() -> None:
    m = _module("\t.reg .pred %p<0xffffffff>;\n\t.reg .b32 %r<4294967295>;\n"
                "\tmov.u32 %r7, %tid.x;\n\tsetp.eq.u32 %p3, %r7, 0;\n"
                "\t@%p3 add.u32 %r4000000000, %r7, 1;\n")
    tracemalloc.start()
    machine = sim.launch(m, grid=1, block=4)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20
    assert len(machine.threads[0].regs) < 100  # the special registers and the three used
    assert explore.run(machine).outcome == "exited"


def test_the_checker_and_the_compiler_agree_on_the_slots_of_a_range() -> None:
    m = _module("\t.reg .b32 %r<100000>;\n\t.reg .pred %p<9>;\n\tmov.u32 %r99999, %tid.x;\n"
                "\tsetp.eq.u32 %p8, %r99999, 1;\n\t@%p8 bra DONE;\n\tmov.u32 %r3, 5;\nDONE:\n")
    machine = sim.launch(m, grid=1, block=2)
    assert explore.run(machine).outcome == "exited"
    code = analyse(m.entries[0], machine.functions["k"], {})
    guarded = next(x for x in code.ins if x.guard is not None)
    assert guarded.guard is not None
    # The checker's slot of %p8 holds what the compiled code wrote there: tid == 1.
    assert [t.regs[guarded.guard[0]] for t in machine.threads] == [False, True]
    assert check(m, grid=1, block=2).verdict == "verified"


def test_a_name_past_the_range_or_with_a_leading_zero_is_not_a_register() -> None:
    from mbarrier.sim.compile import declared_names
    d = parse(HEAD + ".visible .entry k()\n{\n\t.reg .b32 %r<10>;\n\tret;\n}\n").entries[0].body[0].names[0]
    assert declared_names(d, frozenset({"%r9", "%r10", "%r01", "%r0", "%r", "%rd1"})) == ["%r0", "%r9"]


@pytest.mark.parametrize(("grid", "block", "message"), [
    (1, (MAX_NTID[0] + 1,), "a CTA of 1025 threads is more than 1024"),
    (1, (1, 1, MAX_NTID[2] + 1), "a block of 65 along z is more than the 64 a launch can have (%ntid.z"),
    ((1, MAX_NCTAID[1] + 1), 1, "a grid of 65536 along y is more than the 65,535 a launch can have"),
    ((MAX_NCTAID[0] + 1,), 1, "a grid of 2147483648 along x is more than the 2,147,483,647"),
])
def test_shapes_past_the_isa_limits_are_refused(grid: object, block: object, message: str) -> None:
    with pytest.raises(LaunchError, match=re.escape(message)):
        sim.launch(_module(""), grid=grid, block=block)  # type: ignore[arg-type]


def test_shared_memory_past_a_ctas_is_refused_before_it_is_allocated() -> None:
    with pytest.raises(LaunchError, match="declares 2,147,483,647 bytes of shared memory: more than the "
                                          "232,448 bytes a CTA can have"):
        sim.launch(_module("\t.shared .b8 s[0x7fffffff];\n"), grid=1, block=1)


def test_dynamic_shared_memory_counts_too() -> None:
    with pytest.raises(LaunchError, match=r"\(300,000 of them dynamic\)"):
        sim.launch(parse(HEAD + ".extern .shared .align 16 .b8 s[];\n.visible .entry k()\n{\n\tret;\n}\n"),
                   grid=1, block=1, dynamic_shared=300_000)


def test_local_memory_past_a_threads_is_refused_before_it_is_allocated() -> None:
    with pytest.raises(LaunchError, match="needs 2,147,483,648 bytes of local memory per thread"):
        sim.launch(_module("\t.local .b8 l[0x7fffffff];\n"), grid=1, block=1)


def test_a_launch_larger_than_the_memory_bound_is_refused_before_its_threads_exist() -> None:
    ring = sim.load(examples.path("ring_buffer"))
    with pytest.raises(LaunchError, match=r"the launch needs about [\d,]+ bytes before its first step "
                                          r"\(100,000 CTAs of 1,024 threads"):
        sim.launch(ring, grid=100_000, block=1024, max_memory=8 << 30)
    assert len(sim.launch(ring, grid=1, block=160, max_memory=8 << 30).threads) == 160
