"""stmatrix and ldmatrix judged as ptxas 13.0 judges them: the messages below are ptxas's own (measured;
`tests/ptx/test_ptxas_diff.py` holds every generated variant against ptxas itself). These run without
ptxas."""

from __future__ import annotations

from .helpers import Kernel

KERNEL = Kernel("8.6", "sm_100a", ".reg .b64 %rd<4>; .reg .b32 %r<8>; .reg .f32 %f<4>; .reg .b16 %h<4>;")
_errors = KERNEL.errors
S = "stmatrix.sync.aligned"



def test_well_formed_lines_pass() -> None:
    body = "\n".join((f"{S}.m8n8.x1.shared.b16 [%rd1], {{%r1}};",
                      f"{S}.m8n8.x4.trans.shared::cta.b16 [%rd1], {{%r0, %r1, %r2, %r3}};",
                      f"{S}.m16n8.x2.trans.shared.b8 [%rd1], {{%f0, %f1}};"))
    assert _errors(body) == set()


def test_the_vector_by_num() -> None:
    body = "\n".join((f"{S}.m8n8.x1.shared.b16 [%rd1], {{%r0, %r1, %r2, %r3}};",
                      f"{S}.m8n8.x4.shared.b16 [%rd1], {{%r0, %r1, %r2}};",
                      f"{S}.m8n8.x2.shared.b16 [%rd1], %r1;",
                      f"{S}.m8n8.shared.b16 [%rd1], {{%r0, %r1, %r2}};",
                      f"{S}.m8n8.x2.shared.b16 [%rd1], {{%r0, %h1}};"))
    v = "instruction 'stmatrix'"
    assert _errors(body) == {
        (1, f"Vector of size 1 is expected for argument 1 of {v}"),
        (2, "Illegal vector size: 3"), (2, f"Vector of size 4 is expected for argument 1 of {v}"),
        (2, f"Argument vector size mismatch for {v}"),
        (3, f"Vector of size 2 is expected for argument 1 of {v}"),
        (4, "Illegal vector size: 3"), (4, f".num modifier required for {v}"),
        (5, "Incompatible elements of vector expression"),
    }


def test_shapes_types_and_gates() -> None:
    body = "\n".join((f"{S}.x4.shared.b16 [%rd1], {{%r0, %r1, %r2, %r3}};",
                      f"{S}.m8n8.x2.shared.b8 [%rd1], {{%r0, %r1}};",
                      f"{S}.m16n8.x2.shared.b8 [%rd1], {{%r0, %r1}};",
                      f"{S}.m8n8.x4.x2.shared.b16 [%rd1], {{%r0, %r1}};"))
    assert _errors(body) == {
        (1, "Shape modifier required for instruction 'stmatrix'"),
        (2, "Incorrect instruction type specified for stmatrix with shape '.m8n8'"),
        (3, "Modifier '.trans' require for instruction stmatrix with shape '.m16n8'"),
        (4, "Multiple .num modifiers specified"),
    }
    assert _errors(f"{S}.m8n8.x1.shared.b16 [%rd1], {{%r1}};", "7.7", "sm_80") == {
        (1, "Feature 'stmatrix' requires PTX ISA .version 7.8 or later"),
        (1, "Feature 'stmatrix' requires .target sm_90 or higher")}
    assert _errors(f"{S}.m16n8.x1.trans.shared.b8 [%rd1], {{%r1}};", "8.6", "sm_90a") == {
        (1, "Feature '.m16n8' not supported on .target 'sm_90a'"),
        (1, "Feature 'stmatrix.b8' not supported on .target 'sm_90a'")}


L = "ldmatrix.sync.aligned"


def test_ldmatrix() -> None:
    body = "\n".join((f"{L}.m8n8.x4.trans.shared::cta.b16 {{%r0, %r1, %r2, %r3}}, [%rd1];",
                      f"{L}.m16n16.x1.trans.shared.b8 {{%r0, %r1}}, [%rd1];",
                      f"{L}.m16n16.x1.shared.b8 {{%r0, %r1}}, [%rd1];",
                      f"{L}.m8n8.x2.shared.b16 {{%r0, %r1, %r2, %r3}}, [%rd1];",
                      f"{L}.m8n8.x1.shared.b8 {{%r1}}, [%rd1];"))
    v = "instruction 'ldmatrix'"
    assert _errors(body) == {
        (3, "Modifier '.trans' require for instruction ldmatrix with shape '.m16n16'"),
        (4, f"Vector of size 2 is expected for argument 0 of {v}"),
        (4, f"Argument vector size mismatch for {v}"),
        (5, "Incorrect instruction type specified for ldmatrix with shape '.m8n8'"),
    }
    assert _errors(f"{L}.m16n16.x1.trans.shared.b8 {{%r0, %r1}}, [%rd1];", "7.8", "sm_80") == {
        (1, "Feature '.m16n16' not supported on .target 'sm_80'"),
        (1, "Modifier '.m16n16' requires PTX ISA .version 8.6 or later"),
        (1, "Feature 'ldmatrix.b8' not supported on .target 'sm_80'"),
        (1, "Feature 'ldmatrix.b8' requires PTX ISA .version 8.6 or later")}
    assert _errors(f"{L}.m8n8.x1.shared {{%r1}}, [%rd1];") == {
        (1, "Unexpected number of instruction types specified for ldmatrix with shape '.m8n8'"),
        (1, "Incorrect instruction type specified for ldmatrix with shape '.m8n8'")}


def test_ldmatrix_format_conversion() -> None:
    """`.m8n16` and `.m16n16` with `.b8x16.b6x16_p32`/`.b8x16.b4x16_p64` (PTX ISA 8.6, the sm_100-on
    architecture-specific targets): one word to ptxas."""
    body = "\n".join((f"{L}.m8n16.x2.b8x16.b6x16_p32 {{%r0, %r1}}, [%rd1];",
                      f"{L}.m16n16.x1.trans.b8x16.b4x16_p64 {{%r0, %r1}}, [%rd1];",
                      f"{L}.m8n16.x1.b8x16 {{%r1}}, [%rd1];",
                      f"{L}.m8n16.x1.b6x16_p32.b8x16 {{%r1}}, [%rd1];",
                      f"{L}.m8n16.x1 {{%r1}}, [%rd1];",
                      f"{L}.m8n16.x1.trans.b8x16.b6x16_p32 {{%r1}}, [%rd1];",
                      f"{L}.m8n8.x1.b8x16.b6x16_p32 {{%r1}}, [%rd1];"))
    v = "instruction 'ldmatrix'"
    assert _errors(body) == {
        (3, "Unexpected number of 'format conversion' modifiers specified"),
        (4, f"Illegal modifier '.b6x16_p32.b8x16' for {v}"),
        (5, "Modifier 'format conversion' require for instruction ldmatrix with shape '.m8n16'"),
        (6, "Modifier .trans not allowed for shape '.m8n16'"),
        (7, "Incorrect instruction type specified for ldmatrix with shape '.m8n8'"),
        (7, "Modifier format conversion not allowed for shape '.m8n8'"),
        (7, "Unexpected number of instruction types specified for ldmatrix with shape '.m8n8'"),
    }
    assert _errors(body.split("\n")[0], "8.5", "sm_90a") == {
        (1, "Modifier '.m8n16' on 'ldmatrix' requires PTX ISA .version 8.6 or later"),
        (1, "Modifier 'format conversion' on 'ldmatrix' requires PTX ISA .version 8.6 or later"),
        (1, "Feature '.m8n16' not supported on .target 'sm_90a'"),
        (1, "Feature 'ldmatrix with format conversion' not supported on .target 'sm_90a'")}
    assert _errors(body.split("\n")[0], "8.8", "sm_120a") == set()
