"""The validator, one test per sentence of PTX ISA 9.7.13.15 it enforces (section in each name's
docstring), on whole modules through the parser. The wording is ptxas's (CUDA 13.0); the
differential test checks it against ptxas itself."""

from __future__ import annotations

from mbarrier.ptx.diagnostics import Diagnostic
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import validate

HEADER = """.version {version}
.target {target}
.address_size 64
.visible .entry k()
{{
.reg .b64 %rd<8>;
.reg .b32 %r<8>;
.reg .pred %p<4>;
.shared .align 8 .b64 bar;
.shared .align 8 .b64 bars[4];
.shared .align 4 .b32 small;
.shared .align 4 .b8 bytes[64];
"""


def lint(*lines: str, version: str = "9.0", target: str = "sm_90") -> list[Diagnostic]:
    text = HEADER.format(version=version, target=target) + "\n".join(lines) + "\nret;\n}\n"
    return validate(parse(text, "k.ptx"))


def messages(*lines: str, **kw: str) -> set[str]:
    return {d.message for d in lint(*lines, **kw) if d.severity != "warning"}


def rules(*lines: str, **kw: str) -> set[str]:
    return {d.rule for d in lint(*lines, **kw)}


def test_every_syntax_form_of_the_manual_is_accepted() -> None:
    """9.7.13.15.9-17: the Syntax blocks and examples, each form once."""
    assert lint(
        "mbarrier.init.shared::cta.b64 [bar], 12;",
        "mbarrier.init.b64 [%rd1], %r1;",
        "mbarrier.expect_tx.relaxed.cta.shared.b64 [bar], 512;",
        "mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [bar], 32;",
        "mbarrier.arrive.shared.b64 %rd1, [bar];",
        "mbarrier.arrive.release.cta.shared::cluster.b64 _, [%r2];",
        "mbarrier.arrive.release.cluster.b64 _, [%rd2], %r3;",
        "mbarrier.arrive.expect_tx.release.cluster.b64 _, [%rd2], %r3;",
        "mbarrier.arrive.noComplete.b64 %rd1, [%rd2], 2;",
        "mbarrier.arrive.relaxed.cta.b64 %rd1, [%rd2], 4;",
        "mbarrier.arrive_drop.shared::cta.release.cluster.b64 _, [bar], %r1;",
        "mbarrier.arrive_drop.expect_tx.shared::cta.relaxed.cluster.b64 %rd1, [bar], %r1;",
        "mbarrier.arrive_drop.noComplete.shared.b64 _, [bar], %r1;",
        "mbarrier.test_wait.shared::cta.b64 %p1, [bar], %rd1;",
        "mbarrier.test_wait.parity.shared.b64 %p1, [bar], %r1;",
        "mbarrier.try_wait.relaxed.cluster.shared.b64 %p1, [bar], %rd1;",
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p1, [bar], 0, 1000;",
        "mbarrier.pending_count.b64 %r1, %rd1;",
        "mbarrier.inval.shared.b64 [bar];",
        "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar];",
        "cp.async.mbarrier.arrive.shared.b64 [bar];",
        "fence.mbarrier_init.release.cluster;",
    ) == []


def test_sem_and_scope_must_be_specified_together() -> None:
    """9.7.13.15.13: "Qualifiers .sem and .scope must be specified together"."""
    assert messages("mbarrier.arrive.release.shared.b64 %rd1, [bar];") == {
        "Modifier '.release' requires scope with 'mbarrier.arrive' instruction"}
    assert messages("mbarrier.try_wait.cta.shared.b64 %p1, [bar], %rd1;") == {
        "Modifier '.cta' requires order with 'mbarrier.try_wait' instruction"}


def test_sem_sets_differ_between_instructions() -> None:
    """9.7.13.15.11/13/16: .sem = {.relaxed} for expect_tx, {.release, .relaxed} for arrive,
    {.acquire, .relaxed} for the waits."""
    assert messages("mbarrier.expect_tx.release.cta.shared.b64 [bar], 1;") == {
        "Illegal modifier '.release' for instruction 'mbarrier.expect_tx'"}
    assert messages("mbarrier.arrive.acquire.cta.shared.b64 %rd1, [bar];") == {
        "Illegal modifier '.acquire' for instruction 'mbarrier.arrive'"}
    assert messages("mbarrier.test_wait.release.cta.shared.b64 %p1, [bar], %rd1;") == {
        "Illegal modifier '.release' for instruction 'mbarrier.test_wait'"}


def test_count_without_nocomplete_needs_sm_90() -> None:
    """9.7.13.15.13: "for sm_8x, when the argument count is specified, the modifier .noComplete is
    required"; count without .noComplete needs PTX ISA 7.8 and sm_90."""
    assert messages("mbarrier.arrive.shared.b64 %rd1, [bar], 2;", version="7.8", target="sm_80") == {
        ".noComplete modifier required for instruction 'mbarrier.arrive with count argument'",
        "Feature 'mbarrier.arrive with count argument and without '.noComplete' modifier' requires "
        ".target sm_90 or higher"}
    assert messages("mbarrier.arrive.noComplete.shared.b64 %rd1, [bar], 2;", version="7.0",
                    target="sm_80") == set()
    assert messages("mbarrier.arrive_drop.shared.b64 %rd1, [bar], 2;", version="7.8") == set()


def test_count_without_nocomplete_needs_ptx_isa_7_8_on_every_target() -> None:
    """9.7.13.15.13/14 PTX ISA notes: "Support for count argument without the modifier .noComplete
    introduced in PTX ISA version 7.8": under an older .version ptxas requires .noComplete on sm_90
    too (measured, beside its error on the .version/.target pair)."""
    for op in ("arrive", "arrive_drop"):
        assert messages(f"mbarrier.{op}.shared.b64 %rd1, [bar], %r2;", version="7.7") == {
            "PTX .version 7.7 does not support .target sm_90",
            f".noComplete modifier required for instruction 'mbarrier.{op} with count argument'",
            f"Feature 'mbarrier.{op} with count argument and without '.noComplete' modifier' requires "
            "PTX ISA .version 7.8 or later"}
    assert messages("mbarrier.arrive.noComplete.shared.b64 %rd1, [bar], 1;", version="7.0") == {
        "PTX .version 7.0 does not support .target sm_90"}


def test_nocomplete_needs_a_count_and_the_default_sem_and_scope() -> None:
    """9.7.13.15.13: mbarrier.arrive.noComplete{.release.cta}{.shared{::cta}}.b64 state, [addr], count."""
    assert messages("mbarrier.arrive.noComplete.shared.b64 %rd1, [bar];") == {
        "Illegal modifier '.noComplete' for instruction 'mbarrier.arrive without count argument'"}
    assert messages("mbarrier.arrive.noComplete.relaxed.cta.shared.b64 %rd1, [bar], 1;") == {
        "Modifier '.relaxed' cannot be combined with modifier '.noComplete'"}
    assert messages("mbarrier.arrive.noComplete.release.cluster.shared.b64 %rd1, [bar], 1;") == {
        "Modifier '.cluster' cannot be combined with modifier '.noComplete'"}


def test_shared_cluster_arrive_needs_the_sink() -> None:
    """9.7.13.15.13: "Sink symbol '_' is mandatory for the destination operand" on .shared::cluster."""
    assert messages("mbarrier.arrive.shared::cluster.b64 %rd1, [bar];") == {
        "Sink '_' is expected as a destination operand for instruction 'mbarrier.arrive' with "
        "'.shared::cluster'"}
    assert messages("mbarrier.arrive.expect_tx.shared::cluster.b64 _, [bar], 16;") == set()


def test_sink_needs_ptx_7_1_on_arrive_and_is_fatal_before() -> None:
    """9.7.13.15.13: "Support for sink symbol '_' as the destination operand is introduced in PTX ISA
    version 7.1"; ptxas stops there."""
    diags = lint("mbarrier.arrive.shared.b64 _, [bar];", "mbarrier.init.shared.b64 [bar], %rd1;",
                 version="7.0", target="sm_80")
    assert [(d.severity, d.message) for d in diags] == [
        ("fatal", "Result discard mode is not allowed for instruction 'mbarrier.arrive'")]
    assert messages("mbarrier.arrive.shared.b64 _, [bar];", version="7.1", target="sm_80") == set()


def test_wait_result_cannot_be_discarded() -> None:
    """9.7.13.15.16: waitComplete is a predicate the instruction writes."""
    assert messages("mbarrier.test_wait.shared.b64 _, [bar], %rd1;") == {
        "Result discard mode is not allowed for instruction 'mbarrier.test_wait'"}


def test_operand_kinds_and_widths() -> None:
    """9.7.13.15.13/16/17: state is 64-bit, count/txCount/phaseParity/suspendTimeHint 32-bit."""
    assert messages("mbarrier.arrive.shared.b64 %r1, [bar];") == {
        "Arguments mismatch for instruction 'mbarrier.arrive'"}
    assert messages("mbarrier.test_wait.parity.shared.b64 %p1, [bar], %rd1;") == {
        "Arguments mismatch for instruction 'mbarrier.test_wait.parity'"}
    assert messages("mbarrier.pending_count.b64 %rd1, %rd2;") == {
        "Arguments mismatch for instruction 'mbarrier.pending_count'"}
    assert messages("mbarrier.init.shared.b64 [bar];") == {
        "Arguments mismatch for instruction 'mbarrier.init'"}
    assert messages("mbarrier.test_wait.shared.b64 %p1, [bar], %rd1, 5;") == {
        "Arguments mismatch for instruction 'mbarrier.test_wait'"}
    assert messages("mbarrier.try_wait.shared.b64 %p1, [bar], %rd1, %r1;") == set()


def test_parity_immediate_is_0_or_1() -> None:
    """9.7.13.15.16: "the valid values of phaseParity operand are 0 and 1"."""
    assert messages("mbarrier.try_wait.parity.shared.b64 %p1, [bar], 2;") == {
        "Argument 2 of instruction 'mbarrier.try_wait.parity': unexpected value '2', expected to be 0 "
        "or 1"}


def test_arrive_count_immediate_must_be_positive() -> None:
    """9.7.13.15.13: count in the range of 9.7.13.15.2; ptxas refuses 0 and negatives."""
    assert messages("mbarrier.arrive.shared.b64 %rd1, [bar], 0;") == {
        "Argument 2 of instruction 'mbarrier.arrive' : value '0' expected to be a non-zero positive"}


def test_state_spaces() -> None:
    """9.7.13.15.8: only arrive, expect_tx and complete_tx take .shared::cluster; pending_count takes
    no state space (9.7.13.15.17); the object is in .shared (9.7.13.15.1)."""
    assert messages("mbarrier.try_wait.shared::cluster.b64 %p1, [bar], %rd1;") == {
        "Illegal modifier '::cluster' for instruction 'mbarrier.try_wait'"}
    assert messages("mbarrier.pending_count.shared.b64 %r1, %rd1;") == {
        "No state space qualifier expected for instruction 'mbarrier.pending_count'"}
    assert messages("mbarrier.init.global.b64 [%rd1], 1;") == {
        "State space incorrect for instruction 'mbarrier.init'"}


def test_modifier_words_of_other_instructions() -> None:
    """A word the family does not take is judged as ptxas judges it (spec.modifiers, measured with
    ptxas 13.0 by tools/probe_modifiers.py): unknown only when ptxas knows it from no instruction;
    otherwise illegal, or in the words of the word's class."""
    arrive = "mbarrier.arrive{}.shared.b64 %rd1, [bar];"
    name = "for instruction 'mbarrier.arrive'"
    assert messages(arrive.format(".uni")) == {f"Illegal modifier '.uni' {name}"}
    assert messages(arrive.format(".L2::64B")) == {f"Illegal modifier '.L2::64B' {name}"}
    assert messages(arrive.format(".op_restrict")) == {"Unknown modifier '.op_restrict'"}
    assert messages(arrive.format(".zzz")) == {"Unknown modifier '.zzz'"}
    assert messages(arrive.format(".v2")) == {f"Vector qualifier is not allowed {name}"}
    assert messages(arrive.format(".v4")) == {f"Vector qualifier is not allowed {name}",
                                              "Vector type too large, exceeds 128 bit limit"}
    assert messages(arrive.format(".rn")) == {f"Illegal rounding modifier {name}"}
    assert messages(arrive.format(".bf16")) == {
        "Unexpected instruction types specified for 'mbarrier.arrive'"}
    assert messages(arrive.format(".lo")) == {f"Comparison qualifier is not allowed {name}",
                                              "Mismatch between instruction type and comparison qualifier"}
    assert messages(arrive.format(".eq")) == {f"Comparison qualifier is not allowed {name}"}
    assert messages(arrive.format(".inc")) == {
        "Illegal reduction operation for instruction 'mbarrier.arrive.b64'"}
    assert messages(arrive.format(".f4e")) == {f"Illegal modifier 'Permute' {name}"}
    assert messages(arrive.format(".L1::evict_last")) == {
        f"Illegal modifier '.evict_last' {name}", f"Illegal modifier '.level::eviction_priority' {name}"}
    assert messages(arrive.format(".rank")) == set()  # ptxas takes it silently
    assert messages("fence.mbarrier_init.eq.release.cluster;") == {
        "Comparison qualifier is not allowed for instruction 'fence'",
        "Mismatch between instruction type and comparison qualifier"}
    tensor = ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes{} [%rd1], "
              "[%rd2, {{%r1, %r2}}], [bar];")
    assert messages(tensor.format(".v2")) == {
        "Vector qualifier is not allowed for instruction 'cp.async.bulk.tensor'"}
    assert "Argument vector size mismatch for instruction 'cp.async.bulk.tensor'" in messages(
        tensor.format(".v4"))


def test_modifier_words_with_the_line_s_other_errors() -> None:
    """Measured: a second word of a class is reported at once ("Multiple rounding modifiers
    specified") and ptxas judges the last one; the class's own message waits for the operands like
    any illegal modifier (a wrong type or operand count hides it, a wrong state space does not);
    some words end the line's checks (`.L2::64B`, like `.sync`); a word ptxas cannot parse is fatal."""
    assert messages("mbarrier.arrive.rn.rz.shared.b32 %rd1, [bar];") == {
        "Multiple rounding modifiers specified",
        "Unexpected instruction types specified for 'mbarrier.arrive'"}
    assert messages("mbarrier.arrive.lt.eq.shared.b64 %rd1, [bar];") == {
        "Multiple comparisons set", "Comparison qualifier is not allowed for instruction 'mbarrier.arrive'"}
    assert messages("mbarrier.arrive.rn.shared.b64 %rd1, [bar], 1, 2;") == {
        "Arguments mismatch for instruction 'mbarrier.arrive'"}
    assert messages("mbarrier.arrive.rn.global.b64 %rd1, [bar];") == {
        "State space incorrect for instruction 'mbarrier.arrive'",
        "State space mismatch between instruction and address in instruction 'mbarrier.arrive'",
        "Illegal rounding modifier for instruction 'mbarrier.arrive'"}
    assert messages("mbarrier.arrive.L2::64B.release.shared.b64 %rd1, [bar];") == {
        "Illegal modifier '.L2::64B' for instruction 'mbarrier.arrive'"}
    assert messages("mbarrier.arrive.bf16.release.shared.b64 %rd1, [bar];") == {
        "Unexpected instruction types specified for 'mbarrier.arrive'",
        "Modifier '.release' requires scope with 'mbarrier.arrive' instruction"}
    assert {(d.severity, d.message) for d in lint("mbarrier.arrive.foo.reg.shared.b64 %rd1, [bar];")} == {
        ("error", "Unknown modifier '.foo'"), ("fatal", "Parsing error near '.reg': syntax error")}


def test_feature_gates_by_version_and_target() -> None:
    """PTX ISA and target ISA notes of 9.7.13.15.11-16."""
    assert messages("mbarrier.try_wait.shared.b64 %p1, [bar], %rd1;", version="7.8", target="sm_80") == {
        "Feature 'mbarrier.try_wait' requires .target sm_90 or higher"}
    assert messages("mbarrier.expect_tx.shared.b64 [bar], 1;", version="7.8", target="sm_90") == {
        "Feature 'mbarrier.expect_tx' requires PTX ISA .version 8.0 or later"}
    assert messages("mbarrier.arrive.relaxed.cta.shared.b64 %rd1, [bar];", version="8.5") == {
        "Modifier '.relaxed' on 'mbarrier.arrive' requires PTX ISA .version 8.6 or later"}
    assert messages("mbarrier.init.shared::cta.b64 [bar], 1;", version="7.7", target="sm_80") == {
        "Feature '::cta' requires PTX ISA .version 7.8 or later"}
    assert messages("mbarrier.test_wait.parity.shared.b64 %p1, [bar], 0;", version="7.0",
                    target="sm_80") == {"Feature 'mbarrier.test_wait.parity' requires PTX ISA .version "
                                        "7.1 or later"}


def test_newer_targets_count_as_sm_90_or_higher() -> None:
    """Target ISA notes: "requires sm_90 or higher" holds for sm_90a, sm_100a and sm_120."""
    for version, target in (("8.0", "sm_90a"), ("8.6", "sm_100a"), ("8.7", "sm_120")):
        assert messages("mbarrier.try_wait.parity.shared.b64 %p1, [bar], 0;", version=version,
                        target=target) == set()


def test_target_override_and_unsupported_pairs() -> None:
    text = HEADER.format(version="7.8", target="sm_90") + "mbarrier.expect_tx.shared.b64 [bar], 1;\n}\n"
    module = parse(text, "k.ptx")
    assert {d.message for d in validate(module, "sm_80")} >= {
        "Feature 'mbarrier.expect_tx' requires .target sm_90 or higher"}
    old = parse(HEADER.format(version="7.0", target="sm_90") + "}\n", "k.ptx")
    (d,) = validate(old)
    assert (d.line, d.message) == (2, "PTX .version 7.0 does not support .target sm_90")


def test_fence_mbarrier_init_takes_only_release_cluster() -> None:
    """fence.mbarrier_init.release.cluster (9.7.13.4, membar/fence), the fence that orders mbarrier.init."""
    assert messages("fence.mbarrier_init.release.cta;") == {
        "Modifier '.mbarrier_init' cannot be combined with modifier '.cta'"}
    assert messages("fence.mbarrier_init.release.cluster;", version="7.8") == {
        "Feature '.op_restrict' requires PTX ISA .version 8.0 or later",
        "Modifier '.mbarrier_init' requires PTX ISA .version 8.0 or later"}
    assert messages("fence.acq_rel.cluster;") == set()  # not ours: other fences are left alone


TMA = "cp.async.bulk.tensor"
BYTES = ".mbarrier::complete_tx::bytes"


def test_tensor_loads_complete_on_an_mbarrier() -> None:
    """PTX ISA 9.7.9.25.5.2: the tensor load's forms, modifiers in any order, as CUTLASS and Triton
    write them."""
    assert lint(
        f"{TMA}.2d.shared::cluster.global.tile{BYTES} [bytes], [%rd1, {{%r1, %r2}}], [bar];",
        f"{TMA}.1d.shared::cluster.global{BYTES}.multicast::cluster.L2::cache_hint [bytes], [%rd1, {{%r1}}], "
        "[bar], 3, %rd2;",
        f"{TMA}.shared::cta.global{BYTES}.tile.2d [%r3], [%rd1, {{%r1, %r2}}], [%r4];",
        f"{TMA}.4d.shared::cluster.global.im2col{BYTES} [bytes], [%rd1, {{%r1, %r2, %r3, %r4}}], [bar], "
        "{1, 2};",
    ) == []
    assert lint(f"{TMA}.2d.shared::cta.global.tile::gather4{BYTES}.cta_group::2 [bytes], "
                "[%rd1, {%r1, %r2, %r3, %r4, %r5}], [bar];", target="sm_100a") == []


def test_tensor_load_dimension_load_mode_and_vectors() -> None:
    """9.7.9.25.5.2: the coordinate vector has .dim elements (5 for .tile::gather4), im2col modes
    need 3d or more and dim - 2 offsets; ptxas's words for each."""
    load = f"{TMA}.{{}}.shared::cluster.global{{}}{BYTES} [bytes], [%rd1, {{}}], [bar]{{}};"
    assert messages(load.format("3d", ".tile", "{%r1, %r2}", "")) == {
        f"Argument 2 of instruction '{TMA}': Argument vector size mismatch"}
    assert messages(load.format("2d", ".im2col", "{%r1, %r2}", ", {1}")) == {
        "Modifier '.2d' cannot be combined with modifier '.im2col'",
        f"Argument 4 of instruction '{TMA}': Argument vector size mismatch"}
    assert messages(load.format("3d", ".im2col", "{%r1, %r2, %r3}", "")) == {
        f"Arguments mismatch for instruction '{TMA}'"}
    assert messages(load.format("2d.3d", "", "{%r1, %r2, %r3}", "")) == {
        "Multiple dimension modifiers specified"}
    assert messages(f"{TMA}.shared::cluster.global{BYTES} [bytes], [%rd1, {{%r1}}], [bar];") == {
        f".dim modifier required for instruction '{TMA}'",
        f"Argument 2 of instruction '{TMA}': Argument vector size mismatch"}
    assert messages(load.format("2d", "", "{%rd1, %rd2}", "")) == {
        f"Arguments mismatch for instruction '{TMA}'"}
    # the words are ptxas's everywhere: a dimension elsewhere is "Illegal modifier 'dimension'"
    assert messages("mbarrier.init.shared.b64.1d [bar], 1;") == {
        "Illegal modifier 'dimension' for instruction 'mbarrier.init'"}
    assert messages("mbarrier.init.shared.b64.tile.im2col [bar], 1;") == {
        "Multiple .load_mode modifiers specified",
        "Illegal modifier '.im2col' for instruction 'mbarrier.init'"}


def test_tensor_load_gates() -> None:
    """PTX ISA notes of 9.7.9.25.5.2: 8.0 and sm_90; .shared::cta from 8.6; .cta_group only on the
    sm_100 family."""
    line = f"{TMA}.2d.shared::cta.global{BYTES}.cta_group::1 [bytes], [%rd1, {{%r1, %r2}}], [bar];"
    assert messages(line, version="8.0", target="sm_90a") == {
        f"Feature '{TMA} with destination state space as .shared::cta' requires PTX ISA .version 8.6 or "
        "later",
        f"Modifier '.cta_group::1' on '{TMA}' requires PTX ISA .version 8.6 or later",
        "Feature '.cta_group::1' requires PTX ISA .version 8.6 or later",
        "Feature '.cta_group::1' not supported on .target 'sm_90a'"}
    assert messages(line, version="8.6", target="sm_100a") == set()


def test_tensor_operand_that_is_no_tensor_address() -> None:
    """A tensorMap operand without its `{coords}` (measured with ptxas 13.0): a 32-bit scalar or
    vector there matches lists where ptxas wants addresses elsewhere and says "Illegal Addressing
    Mode"; `[tmap], {coords}` written apart is read as the usual list."""
    head = f"{TMA}.2d.shared::cluster.global.tile{BYTES}"
    mode = f"Illegal Addressing Mode in instruction '{TMA}'"
    assert messages(f"{head} [%rd2], %r3, [bar];") == {
        "Vector expected for argument 2", mode,
        f"State space mismatch between instruction and address in instruction '{TMA}'"}
    assert messages(f"{head} [%rd2], {{%r3, %r4}}, %rd1;") == {
        "Vector expected for argument 2", mode, f"Address expected for argument 2 of instruction '{TMA}'"}
    assert messages(f"{head}.multicast::cluster [%rd2], %r3, [bar], %r2;") == {
        f"Arguments mismatch for instruction '{TMA}'"}
    assert messages(f"{head} [%rd2], %rd3, {{%r1, %r2}}, [bar];") == {
        mode, f"Address expected for argument 1 of instruction '{TMA}'"}
    assert messages(f"{head}.L2::cache_hint [%rd2], [%rd3], {{%r1, %r2}}, [bar];") == {
        f"Arguments mismatch for instruction '{TMA}'"}


def test_a_copy_without_its_completion_mechanism() -> None:
    """cp.async.bulk (9.7.9.25.4.1) and cp.async.bulk.tensor (9.7.9.25.5.2) need a completion
    mechanism; a load written without one (the `.mbarrier::complete_tx::bytes` forgotten) is judged
    as the mbarrier form by ptxas, which says the mechanism is required (measured with ptxas 13.0).
    The store's state spaces make it a copy that is not ours (left alone, docs/lint.md)."""
    required = ".completion_mechanism modifier required for instruction '{}'"
    assert messages("cp.async.bulk.shared::cluster.global [bytes], [%rd1], 16, [bar];") == {
        required.format("cp.async.bulk")}
    assert messages("cp.async.bulk.shared::cluster.global [bytes], [bar], 17, [bar];") == {
        required.format("cp.async.bulk"),
        "Argument 2 of instruction 'cp.async.bulk': unexpected value '17', expected to be multiple of 16",
        "State space mismatch between instruction and address in instruction 'cp.async.bulk'"}
    # the operands of a .bulk_group copy fit without a mismatch; a list of no form hides the rest
    assert messages("cp.async.bulk.shared::cluster.global [bytes], [%rd1], 16;") == {
        required.format("cp.async.bulk")}
    assert messages("cp.async.bulk.shared::cluster.global [bytes], [%rd1], 16, [bar], %r1;") == {
        "Arguments mismatch for instruction 'cp.async.bulk'"}
    # state spaces that are no pair: no word about the mechanism (and none of its gate)
    assert messages("cp.async.bulk.global [%rd1], [%rd1], 16, [bar];", version="7.8", target="sm_80") == {
        "State space incorrect for instruction 'cp.async.bulk'",
        "Unexpected number of state spaces specified in instruction 'cp.async.bulk'",
        "State space mismatch between instruction and address in instruction 'cp.async.bulk'",
        "Feature 'cp.async.bulk' requires PTX ISA .version 8.0 or later",
        "Feature 'cp.async.bulk' requires .target sm_90 or higher"}
    assert messages(f"{TMA}.2d.shared::cluster.global.tile [bytes], [%rd1, {{%r1, %r2}}], [bar];") == {
        required.format(TMA)}
    assert messages(f"{TMA}.2d.shared::cluster.global.cta_group::1 [bytes], [%rd1, {{%r1, %r2}}], [bar];",
                    version="8.6", target="sm_100a") == {
        required.format(TMA), "Modifier '' cannot be combined with modifier '.cta_group::1'"}
    # the store's state spaces: the .bulk_group copy, left alone; the tensor store (PTX ISA
    # 9.7.9.25.5.2), judged (spec.tensorcopies)
    assert lint("cp.async.bulk.global.shared::cta [%rd1], [bytes], 16;") == []
    assert messages(f"{TMA}.2d.global.shared::cta.tile [%rd1, {{%r1, %r2}}], [bytes];") == {
        required.format(TMA)}


def test_bulk_copy_operands_with_the_cache_hint() -> None:
    """cp.async.bulk (9.7.9.25.4.1) with .L2::cache_hint: `[mbar], cache-policy`; an mbar that is a
    64-bit register or an integer (no address) goes with a 16-bit fifth operand only, never a 64-bit
    cache-policy register (measured with ptxas 13.0). .multicast::cluster is illegal with the
    store's state spaces too."""
    head = f"cp.async.bulk.shared::cluster.global{BYTES}.L2::cache_hint [bytes], [%rd1], 16,"
    mismatch = "Arguments mismatch for instruction 'cp.async.bulk'"
    assert messages(f"{head} [bar], %rd2;") == set()
    assert messages(f"{head} %rd3, %rd2;") == {mismatch}
    assert messages(f"{head} 8, %rd2;") == {mismatch}
    assert messages(f"{head} [bar], %r2;") == {mismatch}
    assert lint(f"{head} %rd3, 5;") == []
    store = f"cp.async.bulk.global.shared::cta{BYTES}.multicast::cluster"
    assert messages(f"{store} [%rd1], [bytes], 16, [bar], 3;") == {
        f"Illegal modifier '{BYTES}' for instruction 'cp.async.bulk'",
        "Illegal modifier '.multicast::cluster' for instruction 'cp.async.bulk' with '.global.shared::cta'",
        "State space mismatch between instruction and address in instruction 'cp.async.bulk'"}


def test_tensor_stores_and_prefetches_are_left_alone() -> None:
    """They take no mbarrier: the .bulk_group store, cp.reduce.async.bulk.tensor, the prefetch."""
    assert lint(f"{TMA}.2d.global.shared::cta.tile.bulk_group [%rd1, {{%r1, %r2}}], [bytes];",
                "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd1, {%r1}], "
                "[bytes];",
                "cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%rd1, {%r1}];") == []


def test_other_instructions_are_left_alone() -> None:
    assert lint("add.s32 %r1, %r2, %r3;", "bar.sync 0;") == []


def test_diagnostics_point_at_the_modifier() -> None:
    (d,) = lint("mbarrier.arrive.foo.shared.b64 %rd1, [bar];")
    assert (d.line, d.column, d.rule) == (13, 16, "ptxas-unknown-modifier")


# -- warnings beyond ptxas ---------------------------------------------------------------------------

def test_init_count_out_of_range_is_a_warning() -> None:
    """9.7.13.15.9: "The valid range of values for the operand count is [1, ..., 2^20 - 1]"."""
    assert rules("mbarrier.init.shared.b64 [bar], 0;") == {"init-count-range"}
    assert rules("mbarrier.init.shared.b64 [bar], 1048576;") == {"init-count-range"}
    assert rules("mbarrier.init.shared.b64 [bar], 1048575;") == set()


def test_counts_out_of_range_are_warnings() -> None:
    """9.7.13.15.2: pending and tx-count are bounded by 2^20 - 1."""
    assert rules("mbarrier.arrive.shared.b64 %rd1, [bar], 1048576;") == {"arrive-count-range"}
    assert rules("mbarrier.expect_tx.shared.b64 [bar], 1048576;") == {"tx-count-range"}
    assert rules("mbarrier.arrive.expect_tx.shared.b64 _, [bar], 1048575;") == set()


def test_misaligned_or_small_objects_are_warnings() -> None:
    """9.7.13.15.1: "type .b64, alignment 8 bytes"."""
    assert rules("mbarrier.init.shared.b64 [small], 1;") == {"alignment"}
    assert rules("mbarrier.init.shared.b64 [bars+4], 1;") == {"alignment"}
    assert rules("mbarrier.init.shared.b64 [bytes+8], 1;") == {"alignment"}  # .align 4 only
    assert rules("mbarrier.init.shared.b64 [bars+24], 1;") == set()
    assert rules("mbarrier.init.shared.b64 [bars+32], 1;") == {"alignment"}  # past the end
    # the copies' mbar operand, not their destination
    tma = f"{TMA}.1d.shared::cluster.global{BYTES} [bytes+4], [%rd1, {{%r1}}]"
    assert rules(f"{tma}, [small];") == {"alignment"}
    assert rules(f"{tma}, [bar];") == set()
    assert rules(f"cp.async.bulk.shared::cluster.global{BYTES} [bytes], [%rd1], 16, [bars+4];") == {
        "alignment"}


def test_waits_on_a_mapa_address_are_warnings() -> None:
    """9.7.13.15.8: waits are not supported on .shared::cluster objects; arrive on one cannot return
    a state."""
    mapped = ("mov.u64 %rd1, bar;", "mapa.u64 %rd2, %rd1, 1;", "add.u64 %rd3, %rd2, 0;")
    assert rules(*mapped, "mbarrier.try_wait.parity.b64 %p1, [%rd3], 0;") == {"cluster-operation"}
    assert rules(*mapped, "mbarrier.arrive.b64 %rd4, [%rd2];") == {"cluster-arrive-result"}
    assert rules(*mapped, "mbarrier.arrive.release.cluster.b64 _, [%rd2];") == set()
    assert rules(*mapped, "mbarrier.try_wait.parity.b64 %p1, [%rd1], 0;") == set()


def test_the_docs_table_is_the_data() -> None:
    """docs/lint.md lists every ptxas check with its rule id, generated from spec/forms.py."""
    from pathlib import Path

    from mbarrier.spec.forms import markdown_table

    doc = (Path(__file__).resolve().parents[2] / "docs" / "lint.md").read_text()
    assert markdown_table() in doc


def test_no_complete_with_shared_cluster_only_where_an_mbarrier_instruction_takes_a_state_space() -> None:
    """9.7.13.15.13: `.noComplete` goes with `.shared{::cta}` only; ptxas says so on every
    `mbarrier.*` instruction with a state space (even `init`, which takes no `.noComplete`), but not
    on `mbarrier.pending_count` (no state space) nor on `cp.async.mbarrier.arrive` (measured)."""
    combine = "Modifier '.shared::cluster' cannot be combined with modifier '.noComplete'"
    assert combine in messages("mbarrier.init.noComplete.shared::cluster.b64 [%rd2], 1;")
    assert combine in messages("mbarrier.try_wait.noComplete.shared::cluster.b64 %p1, [%rd2], %rd2;")
    assert messages("mbarrier.pending_count.noComplete.shared::cluster.b64 %r1, %rd2;") == {
        "Illegal modifier '.noComplete' for instruction 'mbarrier.pending_count'",
        "No state space qualifier expected for instruction 'mbarrier.pending_count'"}
    assert messages("cp.async.mbarrier.arrive.noComplete.shared::cluster.b64 [%rd2];") == {
        "Illegal modifier '.noComplete' for instruction 'cp.async.mbarrier.arrive'",
        "Illegal modifier '::cluster' for instruction 'cp.async.mbarrier.arrive'"}


def test_a_refused_sink_leaves_the_state_space_of_the_address_variable() -> None:
    """A sink where the wait (or, before PTX ISA 7.1, the arrive) takes none is fatal; ptxas still
    says that the address's variable is in a state space the instruction does not take, and nothing
    else of the addresses (measured)."""
    fatal = "Result discard mode is not allowed for instruction '{}'"
    illegal = "Illegal state space for address operand 'lb' with instruction '{}'"
    for text, name, version in (("mbarrier.try_wait.shared::cta.b64 _, [lb], 1;", "mbarrier.try_wait", "9.0"),
                                ("mbarrier.test_wait.b64 _, [lb+8], %rd1;", "mbarrier.test_wait", "9.0"),
                                ("mbarrier.arrive.shared.b64 _, [lb];", "mbarrier.arrive", "7.0")):
        target = "sm_90" if version == "9.0" else "sm_80"
        got = messages(".local .align 8 .b64 lb;", text, version=version, target=target)
        assert got == {fatal.format(name), illegal.format(name)}, text
    # no mismatch, no immediate address: the sink hides them
    assert messages("mbarrier.test_wait.b64 _, [8], %rd1;") == {fatal.format("mbarrier.test_wait")}


def test_the_second_of_several_state_spaces_governs_an_arrive_or_wait_address() -> None:
    """ptxas compares the address of an arrive or a wait with the second state space written (the
    last of two), and that of `init` with the first (measured)."""
    mismatch = "State space mismatch between instruction and address in instruction 'mbarrier.{}'"
    assert mismatch.format("try_wait") not in messages(
        "mbarrier.try_wait.shared.shared::cta.global.b64 %p1, [bar], %rd2;")
    assert mismatch.format("try_wait") in messages(
        "mbarrier.try_wait.shared.global.shared.b64 %p1, [bar], %rd2;")
    assert mismatch.format("arrive") in messages("mbarrier.arrive.shared.global.b64 %rd1, [bar];")
    assert mismatch.format("init") in messages("mbarrier.init.global.shared.shared.b64 [bar], 1;")
