"""tensormap.cp_fenceproxy judged as ptxas 13.0 judges it: the messages below are ptxas's own
(measured; `tests/ptx/test_ptxas_diff.py` holds every generated variant against ptxas itself). These
run without ptxas."""

from __future__ import annotations

from .helpers import Kernel

KERNEL = Kernel("8.3", "sm_90a", ".reg .b64 %rd<4>; .reg .b32 %r<4>;",
                ".global .b8 g[128];\n.shared .b8 s[128];\n")
_errors = KERNEL.errors
C = "tensormap.cp_fenceproxy"
N = f"instruction '{C}'"
TAIL = ".tensormap::generic.release.gpu.sync.aligned"



def test_well_formed_lines_pass() -> None:
    body = "\n".join((f"{C}.global.shared::cta{TAIL} [%rd1], [%rd2], 128;",
                      f"{C}.global.shared::cta.tensormap::generic.release.cta.sync.aligned [g], [s], 128;"))
    assert _errors(body) == set()


def test_required_words_size_and_state_spaces() -> None:
    body = "\n".join((f"{C}.global.shared::cta{TAIL} [%rd1], [%rd2], 64;",
                      f"{C}.global.shared::cta.tensormap::generic.release.gpu [%rd1], [%rd2], 128;",
                      f"{C}.global.shared::cta.release.gpu.sync.aligned [%rd1], [%rd2], 128;",
                      f"{C}.global.shared::cta.tensormap::generic.acquire.gpu.sync.aligned [%rd1], [%rd2], "
                      "128;",
                      f"{C}.global.shared::cta.tensormap::generic.sync.aligned [%rd1], [%rd2], 128;",
                      f"{C}.shared::cta.global{TAIL} [%rd1], [%rd2], 128;",
                      f"{C}.global.shared::cta{TAIL} [%rd1], [%rd2], %r1;",
                      f"{C}.global{TAIL} [%rd1], [%rd2], 128;"))
    wrong = f"State space incorrect for {N}"
    assert _errors(body) == {
        (1, f"Argument 2 of {N}: unexpected value '64', expected to be 128"),
        (2, f".sync modifier required for {N}"), (2, f".aligned modifier required for {N}"),
        (3, f".tensormap::generic modifier required for {N}"),
        (4, f".release modifier required for {N}"),
        (5, f".release modifier required for {N}"), (5, f"scope modifier required for {N}"),
        (6, wrong), (6, f"{wrong}, expected '.global'"), (6, f"{wrong}, expected '.shared::cta'"),
        (7, f"Arguments mismatch for {N}"),
        (8, f"Unexpected number of state spaces specified in {N}")}


def test_gates() -> None:
    line = f"{C}.global.shared::cta{TAIL} [%rd1], [%rd2], 128;"
    assert _errors(line, "8.2", "sm_90") == {(1, f"Feature '{C}' requires PTX ISA .version 8.3 or later")}
    assert _errors(line, "8.3", "sm_80") == {(1, f"Instruction '{C}' not supported on .target 'sm_80'")}
