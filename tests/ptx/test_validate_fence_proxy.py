"""fence.proxy (PTX ISA 9.7.13.4) judged as ptxas 13.0 judges it: the messages below are ptxas's own
(measured; `tests/ptx/test_ptxas_diff.py` holds every generated variant against ptxas itself). These
run without ptxas."""

from __future__ import annotations

from mbarrier.ptx.validate import coverage

from .helpers import Kernel

KERNEL = Kernel("8.6", "sm_90a", ".reg .b64 %rd<4>; .reg .b32 %r<4>;")
_errors = KERNEL.errors



def test_well_formed_fences_pass() -> None:
    body = "\n".join(("fence.proxy.async;", "fence.proxy.async.shared::cta;", "fence.proxy.alias;",
                      "fence.proxy.tensormap::generic.release.gpu;",
                      "fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;"))
    assert _errors(body) == set()


def test_the_proxy_kinds_and_their_state_spaces() -> None:
    body = "\n".join(("fence.proxy;", "fence.proxy.async.alias;", "fence.proxy.alias.global;",
                      "fence.proxy.async.shared;", "fence.proxy.async.global.shared::cta;",
                      "fence.proxy.async.release;"))
    p = "'fence.proxy'"
    assert _errors(body) == {
        (1, f".proxykind modifier required for instruction {p}"),
        (2, "Multiple .async modifiers specified"),
        (3, f"State space incorrect for instruction {p}"),
        (4, f"State space incorrect for instruction {p}"),
        (5, f"Unexpected number of state spaces specified in instruction {p}"),
        (6, f"Illegal modifier '.release' for instruction {p}"),
        (6, f"Modifier '.release' requires scope with {p} instruction"),
    }


def test_the_tensormap_fence_by_its_sem() -> None:
    body = "\n".join(("fence.proxy.tensormap::generic.acquire.gpu;",
                      "fence.proxy.tensormap::generic.release.gpu [%rd1], 128;",
                      "fence.proxy.tensormap::generic.gpu;",
                      "fence.proxy.tensormap::generic.acquire.gpu [%rd1], 64;",
                      "fence.proxy.async.tensormap::generic.release.cta;"))
    p = "'fence.proxy'"
    assert _errors(body) == {
        (1, f".acquire modifier required for instruction {p} with 2 arguments"),
        (2, f".release modifier required for instruction {p} with 0 arguments"),
        (3, f".acquire/.release modifier required for instruction {p}"),
        (4, f"Argument 1 of instruction {p}: unexpected value '64', expected to be 128"),
        (5, f"Illegal modifier '.async' for instruction {p} with 'proxy direction'"),
    }


def test_gates() -> None:
    body = "fence.proxy.async;\nfence.proxy.tensormap::generic.release.cta;"
    assert _errors(body, "8.0", "sm_80") == {
        (1, "Modifier '.async' requires .target sm_90 or higher"),
        (2, "Instruction 'fence.proxy with unidirection proxy fence' not supported on .target 'sm_80'"),
        (2, "Feature 'fence.proxy with unidirection proxy fence' requires PTX ISA .version 8.3 or later"),
    }


def test_the_async_generic_fence() -> None:
    """fence.proxy.async::generic (PTX ISA 9.7.13.4, 8.6): the .sem decides the .sync_restrict."""
    g = "fence.proxy.async::generic"
    body = "\n".join((f"{g}.acquire.sync_restrict::shared::cluster.cluster;",
                      f"{g}.release.sync_restrict::shared::cta.cluster;",
                      f"{g}.release.sync_restrict::shared::cluster.cluster;",
                      f"{g}.acquire.sync_restrict::shared::cluster.gpu;",
                      f"{g};",
                      f"{g}.acq_rel.sync_restrict::shared::cluster.cluster;",
                      f"{g}.release.sync_restrict::shared::cta.cluster.local;"))
    f = "instruction 'fence.proxy'"
    assert _errors(body) == {
        (3, f".sync_restrict::shared::cta modifier required for {f}"),
        (4, f".cluster modifier required for {f}"),
        (5, f".acquire/.release modifier required for {f}"),
        (6, f"Illegal modifier '.acq_rel' for {f}"),
        (7, f"State space incorrect for {f}"),
    }
    assert _errors(body.split("\n")[0], "8.5", "sm_80") == {
        (1, "Feature '.sync_restrict' requires PTX ISA .version 8.6 or later"),
        (1, "Feature '.sync_restrict' requires .target sm_90 or higher"),
        (1, "Feature '.cluster scope' requires .target sm_90 or higher"),
        (1, "Instruction 'fence.proxy with unidirection proxy fence' not supported on .target 'sm_80'"),
    }
    module = KERNEL.module(body, "8.6", "sm_90a")
    assert coverage(module).not_judged.get("fence") is None


def test_the_tensormap_operands_without_the_marker() -> None:
    """`[addr], imm` without `.tensormap::generic`: ptxas matches the tensor map's operands on the
    bidirectional fence, and judges its words as there (no size, no sub-qualifier, no count of
    state spaces); a proxy kind and a .sync_restrict are illegal (measured, PTX ISA 9.7.13.4)."""
    body = "\n".join(("fence.proxy.acquire.cta [%rd1], 128;",
                      "fence.proxy.alias [%rd1], 64;",
                      "fence.proxy.async.global.shared::cta [%rd1], 128;",
                      "fence.proxy.sync_restrict::shared::cta [%rd1], 128;",
                      "fence.proxy [%rd1], %r1;",
                      "fence.proxy.async _, 128;"))
    p = "'fence.proxy'"
    assert _errors(body) == {
        (1, f".proxykind modifier required for instruction {p}"),
        (1, f"Illegal modifier '.acquire' for instruction {p}"),
        (1, f"Illegal modifier '.cta' for instruction {p}"),
        (2, f"Illegal modifier '.alias' for instruction {p}"),
        (3, f"Illegal modifier '.async' for instruction {p}"),
        (3, f"No state space qualifier expected for instruction {p}"),
        (4, f".proxykind modifier required for instruction {p}"),
        (4, f"Illegal modifier '.sync_restrict::shared::cta' for instruction {p}"),
        (5, f"Arguments mismatch for instruction {p}"),
        (6, f"Result discard mode is not allowed for instruction {p}"),
    }
    assert _errors("fence.proxy.shared::cta.acquire [%rd1], 128;", "7.0", "sm_80") == {
        (1, f".proxykind modifier required for instruction {p}"),
        (1, "Feature 'fence.proxy' requires PTX ISA .version 7.5 or later"),
        (1, f"Illegal modifier '.acquire' for instruction {p}"),
        (1, f"Modifier '.acquire' requires scope with {p} instruction"),
        (1, f"No state space qualifier expected for instruction {p}"),
        (1, f"State space incorrect for instruction {p}"),
    }


def test_a_sem_with_a_sync_restrict_and_the_last_proxy_kind() -> None:
    """The bidirectional fence takes .acquire/.release with a .sync_restrict (not .acq_rel); of two
    proxy kinds ptxas judges the last and names the first (measured)."""
    body = "\n".join(("fence.proxy.async.acquire.sync_restrict::shared::cta.gpu;",
                      "fence.proxy.async.acq_rel.sync_restrict::shared::cta;",
                      "fence.proxy.async.alias [%rd1], 128;"))
    p = "'fence.proxy'"
    assert _errors(body) == {
        (1, f"Illegal modifier '.gpu' for instruction {p}"),
        (2, f"Illegal modifier '.acq_rel' for instruction {p}"),
        (2, f"Modifier '.acq_rel' requires scope with {p} instruction"),
        (3, "Multiple .async modifiers specified"),
        (3, f"Illegal modifier '.alias' for instruction {p}"),
    }
