"""Words ptxas knows from other instructions, judged as ptxas 13.0 judges them wherever they stand:
their own gates (`spec.modifiers.WORD_GATES`: some as ptxas reads the word, some once the operands
match), a word written twice (`WORD_REPEATS`), `.mbarrier` as one of the completion mechanisms. The
messages are ptxas's own (measured by tools/probe_modifiers.py; `tests/ptx/test_ptxas_diff.py` holds
the generated variants against ptxas itself). These run without ptxas."""

from __future__ import annotations

from .helpers import Kernel

KERNEL = Kernel("8.6", "sm_100a", ".reg .b64 %rd<4>; .reg .b32 %r<4>; .shared .b64 bar;")
_errors = KERNEL.errors


def test_a_word_of_the_opcode_twice_has_its_own_gates() -> None:
    """`.wait` (PTX ISA 7.8, sm_90) and `.async` (8.0, sm_90) as modifiers: ptxas checks their
    gates as it reads them, beside the instruction's own."""
    body = "barrier.cluster.wait.wait;\ncp.async.async.mbarrier.arrive.b64 [%rd1];"
    assert _errors(body, "7.0", "sm_80") == {
        (1, "Feature 'barrier.cluster.wait' requires PTX ISA .version 7.8 or later"),
        (1, "Feature 'barrier.cluster.wait' requires .target sm_90 or higher"),
        (1, "Illegal modifier '.wait' for instruction 'barrier.cluster.wait'"),
        (1, "Modifier '.wait' requires PTX ISA .version 7.8 or later"),
        (1, "Modifier '.wait' requires .target sm_90 or higher"),
        (2, "Modifier '.async' requires PTX ISA .version 8.0 or later"),
        (2, "Modifier '.async' requires .target sm_90 or higher"),
        (2, "Unexpected instruction types specified for 'cp.async'"),
        (2, "Unknown modifier '.arrive'"),
    }
    assert _errors(body, "8.0", "sm_90a") == {
        (1, "Illegal modifier '.wait' for instruction 'barrier.cluster.wait'"),
        (2, "Unexpected instruction types specified for 'cp.async'"),
        (2, "Unknown modifier '.arrive'"),
    }


def test_a_gate_checked_once_the_operands_match() -> None:
    """`.xorsign`'s gates (PTX ISA 7.2, sm_86) go unreported where the operands do not match."""
    body = "mbarrier.arrive.xorsign.shared.b64 %rd1, [bar];\nmbarrier.arrive.xorsign.shared.b64 %rd1;"
    assert _errors(body, "7.0", "sm_80") == {
        (1, "Illegal modifier '.xorsign' for instruction 'mbarrier.arrive'"),
        (1, "Feature '.xorsign' requires PTX ISA .version 7.2 or later"),
        (1, "Modifier '.xorsign' requires .target sm_86 or higher"),
        (1, "Modifier '.xorsign' requires modifier '.abs'"),
        (2, "Arguments mismatch for instruction 'mbarrier.arrive'"),
    }


def test_a_word_twice() -> None:
    body = "\n".join(("cp.async.mbarrier.mbarrier.arrive.b64 [%rd1];",
                      "mbarrier.arrive.ftz.ftz.shared.b64 %rd1, [bar];",
                      "mbarrier.arrive.L2::64B.L2::64B.shared.b64 %rd1, [bar];"))
    assert _errors(body) == {
        (1, "Multiple .mbarrier modifiers specified"),
        (1, "Unexpected instruction types specified for 'cp.async'"),
        (1, "Unknown modifier '.arrive'"),
        (2, "Duplicate .ftz modifier"),
        (2, "Illegal modifier '.ftz' for instruction 'mbarrier.arrive'"),
        (3, "Multiple cache prefetching modifiers specified"),
        (3, "Illegal modifier '.L2::64B' for instruction 'mbarrier.arrive'"),
    }


def test_mbarrier_is_a_completion_mechanism() -> None:
    """`.mbarrier` and `.mbarrier::complete_tx::bytes`: one at most, the later named and judged."""
    ops = " [%rd2], [%rd2], 16, [%rd2];"
    body = "\n".join((
        "cp.async.bulk.mbarrier::complete_tx::bytes.mbarrier.shared::cluster.global" + ops,
        "cp.async.bulk.mbarrier.mbarrier::complete_tx::bytes.shared::cluster.global" + ops,
        "cp.async.bulk.mbarrier.shared::cluster.global" + ops,
        "st.async.mbarrier::complete_tx::bytes.mbarrier.shared::cluster.u32 [%rd2], 1, [%rd2];"))
    assert _errors(body, "8.6", "sm_80") == {
        (1, "Multiple .mbarrier modifiers specified"),
        (1, "Illegal modifier '.mbarrier' for instruction 'cp.async.bulk'"),
        (1, "Unknown modifier '.mbarrier'"),
        (1, "Feature '.mbarrier' requires .target sm_90 or higher"),
        (1, "Feature 'cp.async.bulk' requires .target sm_90 or higher"),
        (2, "Multiple .mbarrier::complete_tx::bytes modifiers specified"),
        (2, "Feature '.mbarrier::complete_tx::bytes' requires .target sm_90 or higher"),
        (2, "Feature 'cp.async.bulk' requires .target sm_90 or higher"),
        (3, "Illegal modifier '.mbarrier' for instruction 'cp.async.bulk'"),
        (3, "Unknown modifier '.mbarrier'"),
        (3, "Feature '.mbarrier' requires .target sm_90 or higher"),
        (3, "Feature 'cp.async.bulk' requires .target sm_90 or higher"),
        (4, "Multiple .mbarrier modifiers specified"),
        (4, "Illegal modifier '.mbarrier' for instruction 'st.async'"),
        (4, "Illegal modifier '.mbarrier' for instruction 'st.async' with '.shared::cluster'"),
        (4, "Unknown modifier '.mbarrier'"),
        (4, "Feature '.mbarrier' requires .target sm_90 or higher"),
        (4, "Feature '::cluster' requires .target sm_90 or higher"),
        (4, "Feature 'st.async' requires .target sm_90 or higher"),
    }
