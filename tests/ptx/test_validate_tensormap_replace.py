"""tensormap.replace judged as ptxas 13.0 judges it: the messages below are ptxas's own (measured;
`tests/ptx/test_ptxas_diff.py` holds every generated variant against ptxas itself). These run
without ptxas."""

from __future__ import annotations

from .helpers import Kernel

KERNEL = Kernel("8.7", "sm_100a", ".reg .b64 %rd<4>; .reg .b32 %r<4>;")
_errors = KERNEL.errors
R = "tensormap.replace.tile"
N = "instruction 'tensormap.replace'"



def test_every_field_passes_on_sm_100a() -> None:
    body = "\n".join((f"{R}.global_address.global.b1024.b64 [%rd1], %rd2;",
                      f"{R}.rank.shared::cta.b1024.b32 [%rd1], %r2;",
                      f"{R}.box_dim.b1024.b32 [%rd1], 4, %r2;",
                      f"{R}.global_stride.global.b1024.b64 [%rd1], 0, %rd2;",
                      f"{R}.elemtype.global.b1024.b32 [%rd1], 15;",
                      f"{R}.swizzle_atomicity.global.b1024.b32 [%rd1], 3;",
                      "tensormap.replace.b1024.b64.global.tile.global_address [%rd1], %rd2;"))
    assert _errors(body) == set()


def test_words_types_and_values() -> None:
    body = "\n".join((f"{R}.rank.global.b1024.b64 [%rd1], %rd2;",
                      "tensormap.replace.global_address.global.b1024.b64 [%rd1], %rd2;",
                      f"{R}.global_address.global.b64 [%rd1], %rd2;",
                      f"{R}.global.b1024.b32 [%rd1], 1, 1;",
                      f"{R}.box_dim.global.b1024.b32 [%rd1], 5, %r2;",
                      f"{R}.fill_mode.global.b1024.b32 [%rd1], 2;",
                      f"{R}.box_dim.b32 [%rd1], 1;",
                      f"{R}.box_dim.global.b1024.b32 [%rd1], %r1, %r2;"))
    assert _errors(body) == {
        (1, f"Illegal modifier '.rank' for {N} with type '.b64'"),
        (2, f".tile modifier required for {N}"),
        (3, f"Tensormap size modifier required for {N}"),
        (4, f"Tensormap field modifier required for {N}"),
        (5, f"Argument 1 of {N}: value '5' expected to be in range [0..4] when .box_dim modifier is used."),
        (6, f"Argument 1 of {N}: value '2' expected to be in range [0..1] when .fill_mode modifier is used."),
        (7, f"Arguments mismatch for {N}"), (7, f"Tensormap size modifier required for {N}"),
        (8, f"Arguments mismatch for {N}"),
    }


def test_gates_by_target_and_value() -> None:
    body = "\n".join((f"{R}.global_address.global.b1024.b64 [%rd1], %rd2;",
                      f"{R}.elemtype.global.b1024.b32 [%rd1], 13;",
                      f"{R}.swizzle_mode.global.b1024.b32 [%rd1], 4;",
                      f"{R}.swizzle_atomicity.global.b1024.b32 [%rd1], 1;"))
    range_ = f"Argument 1 of {N}: value '{{}}' expected to be in range [0..{{}}] when {{}} modifier is used."
    assert _errors(body, "8.3", "sm_90a") == {
        (2, range_.format(13, 12, ".elemtype")),
        (2, "Instruction 'tensormap.replace.elemtype with input value >= 13' requires PTX ISA .version 8.7 "
            "or later"),
        (3, range_.format(4, 3, ".swizzle_mode")),
        (3, "Instruction 'tensormap.replace.swizzle_mode with input value == 4' requires PTX ISA .version "
            "8.8 or later"),
        (4, "Feature 'tensormap.replace.swizzle_atomicity' requires PTX ISA .version 8.6 or later"),
        (4, "Instruction 'tensormap.replace.swizzle_atomicity' not supported on .target 'sm_90a'"),
    }
    assert _errors(body, "8.8", "sm_103a") == set()  # (the 96B swizzle, 4: sm_103a alone)
    off = (1, "Instruction 'tensormap.replace' not supported on .target 'sm_90'")
    assert off in _errors(body, "8.8", "sm_90")
