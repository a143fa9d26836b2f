"""cp.async.bulk.prefetch.L2 (PTX ISA 9.7.9.25.4.4) and prefetch.tensormap (9.7.9.15) judged as
ptxas 13.0 judges them: the messages below
are ptxas's own (measured; `tests/ptx/test_ptxas_diff.py` holds every generated variant against
ptxas itself). These run without ptxas."""

from __future__ import annotations

from .helpers import Kernel

KERNEL = Kernel("8.0", "sm_90", ".reg .b64 %rd<4>; .reg .b32 %r<8>;",
                ".global .b8 g[64];\n.shared .b8 s[64];\n.const .b8 c[128];\n")
_errors = KERNEL.errors
P = "cp.async.bulk.prefetch"
N = f"instruction '{P}'"



def test_well_formed_lines_pass() -> None:
    body = "\n".join((f"{P}.L2.global [%rd2], 16;",
                      f"{P}.L2.global.L2::cache_hint [g], 1048560, %rd1;",
                      f"{P}.global.L2 [g], %r1;"))
    assert _errors(body) == set()


def test_level_space_and_size() -> None:
    body = "\n".join((f"{P}.global [g], 16;",
                      f"{P}.L2 [g], 16;",
                      f"{P}.L2.shared::cta [g], 16;",
                      f"{P}.L2.global [s], 16;",
                      f"{P}.L2.global [g], -1;",
                      f"{P}.L2.global [g], 4294967312;",
                      f"{P}.L2.L2::cache_hint [g], 16, %rd1;"))
    arg = f"Argument 1 of {N}"
    assert _errors(body) == {
        (1, f".level modifier required for {N}"),
        (2, f"State space modifier required for {N}"), (2, f"State space incorrect for {N}"),
        (3, f"Illegal modifier '::cta' for {N}"), (3, f"State space incorrect for {N}"),
        (3, f"State space mismatch between instruction and address in {N}"),
        (4, f"State space mismatch between instruction and address in {N}"),
        (5, f"{arg}: unexpected value '-1', expected to be multiple of 16"),
        (5, f"{arg}: value '-1' out of range, expected to be in range [0..1048560]"),
        # (judged as written, printed cut to 32 bits)
        (6, f"{arg}: value '16' out of range, expected to be in range [0..1048560]"),
        (7, f"State space modifier required for {N}"), (7, f"State space incorrect for {N}"),
        (7, f"Modifier '.L2::cache_hint' cannot be applied to '' space for {N}"),
    }


def test_gates() -> None:
    assert _errors(f"{P}.L2.global [g], 16;", "7.8", "sm_80") == {
        (1, "Feature 'cp.async.bulk.prefetch' requires PTX ISA .version 8.0 or later"),
        (1, "Feature 'cp.async.bulk.prefetch' requires .target sm_90 or higher")}


def test_the_tensor_prefetch_is_left_alone() -> None:
    assert _errors(f"{P}.tensor.1d.L2.global.tile [%rd1, {{%r1}}];") == set()


T = "prefetch"
TN = "instruction 'prefetch'"


def test_tensormap_well_formed_lines_pass() -> None:
    body = "\n".join((f"{T}.tensormap [%rd1];", f"{T}.const.tensormap [c];", f"{T}.tensormap.param [%rd1];"))
    assert _errors(body) == set()


def test_tensormap_state_spaces() -> None:
    body = "\n".join((f"{T}.global.tensormap [g];",
                      f"{T}.tensormap.local [%rd1];",
                      f"{T}.shared::cta.tensormap [%rd1];",
                      f"{T}.tex.tensormap [%rd1];"))
    can = "Modifier '.tensormap' cannot be applied to '{}' space for " + TN
    assert _errors(body) == {
        (1, can.format(".global")), (2, can.format(".local")),
        (3, can.format(".shared::cta")), (3, f"Illegal modifier '::cta' for {TN}"),
        (3, f"State space incorrect for {TN}"),
        (4, can.format(".tex")), (4, f"State space incorrect for {TN}")}


def test_tensormap_gate_and_other_prefetches() -> None:
    assert _errors(f"{T}.tensormap [%rd1];", "7.8", "sm_80") == {
        (1, "Modifier '.tensormap' requires PTX ISA .version 8.0 or later"),
        (1, "Modifier '.tensormap' requires .target sm_90 or higher")}
    # prefetch without .tensormap, or with a cache level after it (the plain prefetch), is left alone
    assert _errors(f"{T}.global.L2 [g];\n{T}.tensormap.L2 [%rd1];") == set()


def test_tensormap_with_cache_levels_and_eviction_priorities() -> None:
    body = "\n".join((f"{T}.L2.tensormap [%rd1];",
                      f"{T}.tensormap.L2::evict_last [%rd1];",
                      f"{T}.const.L1::evict_first.tensormap [%rd1];",
                      f"{T}.L2::evict_last.L2::evict_normal.tensormap [%rd1];",
                      f"{T}.L2::evict_last.tensormap [%rd1], 1;"))
    with_ = f"Illegal modifier '.tensormap' for {TN} with '.level::eviction_priority'"
    assert _errors(body, "7.0", "sm_80") - {(n, "Modifier '.tensormap' requires .target sm_90 or higher")
                                            for n in range(1, 6)} == {
        (1, "Multiple cache operation modifiers specified"),
        *((n, "Modifier '.tensormap' requires PTX ISA .version 8.0 or later") for n in (1, 2, 3, 4)),
        (2, with_), (3, with_),
        *((n, "Modifier 'cache eviction priority' on 'prefetch' requires PTX ISA .version 7.4 or later")
          for n in (2, 3)),
        (3, f"Illegal modifier '.evict_first' for {TN}"),
        (3, "Modifier '.evict_first' requires cache level L2 with 'prefetch' instruction"),
        (3, "State space incorrect for feature 'cache eviction priority'"),
        (4, "Multiple cache eviction priority modifiers specified"),
        (5, f"Arguments mismatch for {TN}")}
