"""The tensor copies that take no mbarrier (PTX ISA 9.7.9.25.5.2 the store, 9.7.9.25.5.3 the
reduction, 9.7.9.25.5.4 the prefetch) judged as ptxas 13.0 judges them: the messages below are
ptxas's own (measured; `tests/ptx/test_ptxas_diff.py` holds every generated variant against ptxas
itself). These run without ptxas."""

from __future__ import annotations

from mbarrier.ptx.validate import coverage

from .helpers import Kernel

KERNEL = Kernel("8.6", "sm_100a", ".reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .b16 %h<4>;",
                ".global .b8 g[64];\n.shared .align 8 .b8 s[64];\n")
_errors = KERNEL.errors
STORE = "cp.async.bulk.tensor"
REDUCE = "cp.reduce.async.bulk.tensor"
PREFETCH = "cp.async.bulk.prefetch.tensor"
C2, C5 = "{%r0, %r1}", "{%r0, %r1, %r2, %r3, %r4}"



def _n(name: str) -> str:
    return f"instruction '{name}'"


def test_well_formed_lines_pass_and_are_judged() -> None:
    body = "\n".join((
        f"{STORE}.2d.global.shared::cta.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{STORE}.5d.global.shared::cta.bulk_group.L2::cache_hint [g, {C5}], [s], %rd4;",
        f"{STORE}.3d.global.shared::cta.im2col_no_offs.bulk_group [%rd3, {{%r0, %r1, %r2}}], [%rd2];",
        f"{STORE}.2d.global.shared::cta.tile::scatter4.bulk_group [%rd3, {C5}], [%rd2];",
        f"{REDUCE}.2d.global.shared::cta.add.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{REDUCE}.1d.global.shared::cta.xor.bulk_group.L2::cache_hint [%rd3, {{%r0}}], [%rd2], %rd4;",
        f"{PREFETCH}.2d.L2.global [%rd3, {{%r0, %r1}}];",
        f"{PREFETCH}.3d.L2.global.im2col.L2::cache_hint [%rd3, {{%r0, %r1, %r2}}], {{%h1}}, %rd4;",
        f"{PREFETCH}.3d.L2.global.im2col::w::128 [%rd3, {{%r0, %r1, %r2}}], {{%h1, %h2}};"))
    module = KERNEL.module(body, "8.6", "sm_100a")
    assert _errors(body) == set()
    assert coverage(module).judged == 9


def test_operands_of_the_store() -> None:
    body = "\n".join((
        f"{STORE}.2d.global.shared::cta.tile.bulk_group [%rd3, {{%r0, %r1, %r2}}], [%rd2];",
        f"{STORE}.2d.global.shared::cta.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2], %rd4;",
        f"{STORE}.2d.global.shared::cta.tile.bulk_group %rd3, [%rd2];",
        f"{STORE}.2d.global.shared::cta.tile.bulk_group [%rd3, %r1], [%rd2];",
        f"{STORE}.2d.global.shared::cta.tile.bulk_group [s, {{%r0, %r1}}], [g];",
        f"{STORE}.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [%rd3, {{%r0, %r1}}], [%rd2];"))
    n = _n(STORE)
    assert _errors(body) == {
        (1, f"Argument 1 of {n}: Argument vector size mismatch"),
        (2, f"Arguments mismatch for {n}"),
        (3, f"Arguments mismatch for {n}"),
        (4, "Vector expected for argument 1"),
        (5, f"State space mismatch between instruction and address in {n}"),
        (6, f"Arguments mismatch for {n}"),
    }


def test_modifiers_of_the_store() -> None:
    body = "\n".join((
        f"{STORE}.2d.global.shared::cta.tile [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{STORE}.global.shared::cta.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{STORE}.2d.global.shared::cta.im2col_no_offs.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{STORE}.2d.global.shared::cta.tile.bulk_group.cta_group::1 [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{STORE}.2d.global.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{STORE}.2d.global.shared::cta.tile.mbarrier::complete_tx::bytes.bulk_group [%rd3, {C2}], [%rd2];"))
    n = _n(STORE)
    assert _errors(body) == {
        (1, f".completion_mechanism modifier required for {n}"),
        (2, f".dim modifier required for {n}"), (2, f"Argument 1 of {n}: Argument vector size mismatch"),
        (3, "Modifier '.2d' cannot be combined with modifier '.im2col_no_offs'"),
        (4, f"Arguments mismatch for {n}"),
        (5, f"State space incorrect for {n}"), (5, f"Unexpected number of state spaces specified in {n}"),
        (6, "Multiple .bulk_group modifiers specified"),
    }


def test_gates_of_the_store() -> None:
    body = "\n".join((
        f"{STORE}.2d.global.shared::cta.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{STORE}.2d.global.shared::cta.tile::scatter4.bulk_group [%rd3, {C5}], [%rd2];"))
    assert _errors(body, "7.8", "sm_90") == {
        *((k, f"Feature '{w}' requires PTX ISA .version 8.0 or later") for k in (1, 2)
          for w in (STORE, ".bulk_group")),
        (1, "Feature '.tile' requires PTX ISA .version 8.0 or later"),
        (2, "Feature '.tile::scatter4' requires PTX ISA .version 8.6 or later"),
        (2, "Feature '.tile::scatter4' not supported on .target 'sm_90'"),
    }


def test_the_reduction() -> None:
    body = "\n".join((
        f"{REDUCE}.2d.global.shared::cta.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{REDUCE}.2d.global.shared::cta.add.min.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{REDUCE}.2d.global.shared::cta.exch.add.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{REDUCE}.2d.global.shared::cta.add.u32.tile.bulk_group [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{REDUCE}.2d.global.shared::cta.add.tile.mbarrier::complete_tx::bytes [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{REDUCE}.2d.shared::cluster.shared::cta.add.tile.mbarrier::complete_tx::bytes "
        f"[%rd3, {C2}], [%rd2];",
        f"{REDUCE}.2d.global.shared::cta.add.tile.bulk_group.cta_group::1 [%rd3, {{%r0, %r1}}], [%rd2];",
        f"{REDUCE}.3d.global.shared::cta.add.im2col.bulk_group [%rd3, {{%r0, %r1, %r2}}], [%rd2];"))
    n = _n(REDUCE)
    assert _errors(body) == {
        (1, f"Reduction operation is required for {n}"),
        (2, "Multiple instruction post-operation flags set"),
        (3, "Multiple instruction post-operation flags set"), (3, f"Illegal reduction operation for {n}"),
        (4, f"Unexpected instruction types specified for '{REDUCE}'"),
        (5, f"Illegal modifier '.mbarrier::complete_tx::bytes' for {n}"),
        (6, f"State space incorrect for {n}"),
        (7, f"Illegal modifier '.cta_group::1' for {n}"),
        (8, f"Illegal modifier '.im2col' for {n}"),
    }


def test_the_prefetch() -> None:
    body = "\n".join((
        f"{PREFETCH}.2d.global.tile [%rd3, {{%r0, %r1}}];",
        f"{PREFETCH}.2d.L1.global.tile [%rd3, {{%r0, %r1}}];",
        f"{PREFETCH}.2d.L2.L2.global.tile [%rd3, {{%r0, %r1}}];",
        f"{PREFETCH}.2d.L2.tile [%rd3, {{%r0, %r1}}];",
        f"{PREFETCH}.3d.L2.global.im2col [%rd3, {{%r0, %r1, %r2}}], {{%h1, %h2}};",
        f"{PREFETCH}.2d.L2.global.tile::scatter4 [%rd3, {{%r0, %r1, %r2, %r3, %r4}}];",
        f"{PREFETCH}.2d.L2.global.tile [%rd3, {{%r0, %r1}}], %rd4;"))
    n = _n(PREFETCH)
    assert _errors(body) == {
        (1, f".level modifier required for {n}"),
        (2, f"Illegal modifier '.L1' for {n}"),
        (3, "Multiple cache operation modifiers specified"),
        (4, f"State space modifier required for {n}"), (4, f"State space incorrect for {n}"),
        (5, f"Argument 2 of {n}: Argument vector size mismatch"),
        (6, f"Illegal modifier '.tile::scatter4' for {n}"),
        (6, f"Argument 1 of {n}: Argument vector size mismatch"),
        (7, f"Arguments mismatch for {n}"),
    }


def test_gates_of_the_prefetch() -> None:
    body = "\n".join((
        f"{PREFETCH}.2d.L2.global [%rd3, {{%r0, %r1}}];",
        f"{PREFETCH}.2d.L2.global.tile::gather4 [%rd3, {{%r0, %r1, %r2, %r3, %r4}}];"))
    assert _errors(body, "7.8", "sm_90") == {
        *((k, f"Feature '{PREFETCH}' requires PTX ISA .version 8.0 or later") for k in (1, 2)),
        # (.tile, ptxas's default load mode, gated though not written)
        (1, "Feature '.tile' requires PTX ISA .version 8.0 or later"),
        (2, "Feature '.tile::gather4' requires PTX ISA .version 8.6 or later"),
        (2, f"Feature '.tile::gather4 with {PREFETCH}' not supported on .target 'sm_90'"),
    }


def test_the_tensor_map_written_apart_from_its_coordinates() -> None:
    """`[tmap], {x, y}`: ptxas reads the usual list and says "Illegal Addressing Mode", and of an
    operand that is no address where one goes "Address expected" (numbered as written)."""
    body = "\n".join((
        f"{PREFETCH}.2d.L2.global.tile [g], {C2};",
        f"{PREFETCH}.2d.L2.global.tile %rd3, {C2};",
        f"{PREFETCH}.2d.L2.global.tile [g], 1;",
        f"{STORE}.2d.global.shared::cta.tile.bulk_group 16, {C2}, [%rd2];",
        f"{REDUCE}.2d.global.shared::cta.add.tile.bulk_group [s], {{%r0, %r1, %r2}}, [%rd2];"))
    mode = "Illegal Addressing Mode in instruction '{}'"
    assert _errors(body) == {
        (1, mode.format(PREFETCH)),
        (2, mode.format(PREFETCH)), (2, f"Address expected for argument 0 of {_n(PREFETCH)}"),
        (3, mode.format(PREFETCH)), (3, "Vector expected for argument 1"),
        (4, mode.format(STORE)), (4, f"Address expected for argument 0 of {_n(STORE)}"),
        (4, "Immediate addresses allowed only for .local state space"),
        (5, mode.format(REDUCE)), (5, f"Argument 1 of {_n(REDUCE)}: Argument vector size mismatch"),
        (5, f"State space mismatch between instruction and address in {_n(REDUCE)}"),
    }


def test_the_source_is_judged_only_with_its_state_space() -> None:
    """With fewer than two state spaces ptxas says nothing of `srcMem` as an address (an integer,
    an undeclared name), still of a vector or a special register there."""
    body = "\n".join((
        f"{STORE}.2d.global.tile.bulk_group [%rd3, {C2}], 16;",
        f"{STORE}.2d.global.tile.bulk_group [%rd3, {C2}], {{%r3}};"))
    n = _n(STORE)
    space = {f"State space incorrect for {n}", f"Unexpected number of state spaces specified in {n}"}
    assert _errors(body) == {*((1, m) for m in space), *((2, m) for m in space),
                             (2, f"Vector operand is not allowed for {n}")}
