"""wgmma.* (PTX ISA 9.7.15) judged as ptxas 13.0 judges it: the messages below are ptxas's own
(measured; `tests/ptx/test_ptxas_diff.py` holds every generated variant against ptxas itself). These
run without ptxas."""

from __future__ import annotations

import pytest

from mbarrier.ptx.validate import coverage, validate

from .helpers import Kernel

KERNEL = Kernel("8.0", "sm_90a", ".reg .b64 %rd<4>; .reg .b32 %r<8>; .reg .f32 %f<8>; .reg .pred %p<2>;")
_errors = KERNEL.errors
D = "{%f0, %f1, %f2, %f3}"



def test_well_formed_lines_pass_on_sm_90a() -> None:
    body = "\n".join((
        "wgmma.fence.sync.aligned;",
        f"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {D}, %rd1, %rd2, 1, 1, 1, 0, 0;",
        f"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D}, {{%r0, %r1, %r2, %r3}}, %rd2, %p1, -1, 1, "
        "1;",
        "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8.satfinite {%r0, %r1, %r2, %r3}, %rd1, %rd2, 0;",
        "wgmma.commit_group.sync.aligned;",
        "wgmma.wait_group.sync.aligned 0;",
    ))
    assert _errors(body) == set()


@pytest.mark.parametrize("target", ["sm_90", "sm_80", "sm_120a"])
def test_every_wgmma_is_refused_off_sm_90a(target: str) -> None:
    body = "\n".join((
        "wgmma.fence.sync.aligned;",
        f"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {D}, %rd1, %rd2, 1, 1, 1, 0, 0;",
        "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r0, %r1, %r2, %r3}, %rd1, %rd2, 1;",
        "wgmma.wait_group.sync.aligned 1;",
    ))
    got = _errors(body, "8.7", target)
    fp = "wgmma.mma_async with floating point types"
    want = {(1, f"Instruction 'wgmma.fence' not supported on .target '{target}'"),
            (2, f"Instruction '{fp}' not supported on .target '{target}'"),
            (3, f"Instruction 'wgmma.mma_async with integer types' not supported on .target '{target}'"),
            (4, f"Instruction 'wgmma.wait_group' not supported on .target '{target}'")}
    if target == "sm_120a":  # above sm_90 ptxas also says it cannot compile them there
        want |= {(n, m.replace("not supported on .target", "cannot be compiled for architecture"))
                 for n, m in want}
    assert got == want


def test_gates_by_version_and_kind() -> None:
    body = "\n".join((
        "wgmma.commit_group.sync.aligned;",
        "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8 {%r0, %r1, %r2, %r3}, %rd1, %rd2, 1;",
    ))
    assert _errors(body, "7.8", "sm_90a") >= {
        (1, "Feature 'WGMMA' requires PTX ISA .version 8.0 or later"),
        (2, "Feature 'WGMMA with mixed integer types' requires PTX ISA .version 8.4 or later")}
    assert _errors(body, "8.4", "sm_90a") == set()


def test_shapes_types_and_operands() -> None:
    body = "\n".join((
        f"wgmma.mma_async.sync.aligned.m64n8k8.f32.f16.f16 {D}, %rd1, %rd2, 1, 1, 1, 0, 0;",
        f"wgmma.mma_async.sync.aligned.m16n8k16.f32.f16.f16 {D}, %rd1, %rd2, 1, 1, 1, 0, 0;",
        f"wgmma.mma_async.sync.aligned.f32.f16.f16 {D}, %rd1, %rd2, 1, 1, 1, 0, 0;",
        f"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.f16 {D}, %rd1, %rd2, 1, 1, 1, 0, 0;",
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2}, %rd1, %rd2, 1, 1, 1, 0, 0;",
        f"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D}, %rd1, %rd2, 1, 2, 1, 0, 3;",
        f"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D}, %r1, %rd2, 1, 1, 1, 0, 0;",
        f"wgmma.mma_async.aligned.m64n8k16.f32.f16.f16 {D}, %rd1, %rd2, 1, 1, 1, 0, 0;",
    ))
    fp = "'wgmma.mma_async with floating point types'"
    assert _errors(body) == {
        (1, f"Illegal instruction types specified for {fp} with shape '.m64n8k8'"),
        (2, f"Illegal matrix shape '.m16n8k16' for instruction {fp}"),
        (3, "Shape modifier required for instruction 'wgmma.mma_async'"),
        (4, "Unexpected instruction types specified for 'wgmma.mma_async'"),
        (5, f"Argument vector size mismatch for instruction {fp}"),
        (6, f"Argument 4 of instruction {fp}: unexpected value '2', expected to be -1 or 1"),
        (6, f"Argument 7 of instruction {fp}: unexpected value '3', expected to be 0 or 1"),
        (7, "Arguments mismatch for instruction 'wgmma.mma_async'"),
        (8, ".sync modifier required for instruction 'wgmma.mma_async'"),
    }


def test_the_sparse_form_is_judged() -> None:
    """wgmma.mma_async.sp (PTX ISA 9.7.15.6): sp-meta and sp-sel after B; K twice the dense one;
    PTX ISA 8.2 (measured: ptxas's words)."""
    sp = "wgmma.mma_async.sp.sync.aligned"
    body = "\n".join((
        f"{sp}.m64n8k32.f32.f16.f16 {D}, %rd1, %rd2, %r1, 1, 1, 1, 1, 0, 0;",
        f"{sp}.m64n8k32.f32.f16.f16 {D}, %rd1, %rd2, %r1, 2, 1, 1, 1, 0, 0;",
        "wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.s8 {%r0, %r1, %r2, %r3}, %rd1, %rd2, %r1, 1, 1;",
        f"{sp}.m64n8k16.f32.f16.f16 {D}, %rd1, %rd2, 1, 1, 1, 0, 0;",
        f"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D}, %rd1, %rd2, %r1, 0, 1, 1, 1, 0, 0;",
        f"{sp}.m64n8k32.f32.f16.f16 {D}, %rd1, %rd2, %rd3, 0, 1, 1, 1, 0, 0;",
        f"wgmma.mma_async.sp.sp.sync.aligned.m64n8k32.f32.f16.f16 {D}, %rd1, %rd2, %r1, 0, 1, 1, 1, 0, 0;",
    ))
    fp = "'Sparse wgmma.mma_async with floating point types'"
    assert _errors(body, "8.1") == {
        *((n, "Feature 'Sparse WGMMA with floating point types' requires PTX ISA .version 8.2 or later")
          for n in (1, 2, 4, 7)),
        (2, f"Argument 4 of instruction {fp}: unexpected value '2', expected to be 0 or 1"),
        (3, "Argument 4 of instruction 'Sparse wgmma.mma_async with integer types': unexpected value '1', "
            "expected to be 0"),
        (3, "Feature 'Sparse WGMMA with integer types' requires PTX ISA .version 8.2 or later"),
        (4, f"Illegal instruction types specified for {fp} with shape '.m64n8k16'"),
        (4, "Illegal modifier '.sp' for instruction 'wgmma.mma_async'"),
        (5, "Arguments mismatch for instruction 'wgmma.mma_async with floating point types'"),
        (6, "Arguments mismatch for instruction 'wgmma.mma_async'"),
        (7, "Multiple sparsity modifiers specified"),
    }


def test_the_sparse_form_is_counted_as_judged() -> None:
    body = f"wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {D}, %rd1, %rd2, %r1, 0, 1, 1, 1, 0, 0;"
    module = KERNEL.module(body, "8.2", "sm_90a")
    assert [d for d in validate(module) if d.severity != "warning"] == []
    assert coverage(module).not_judged.get("wgmma") is None
