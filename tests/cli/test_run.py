"""End-to-end `mbarrier run`: outcomes, exit codes, traces, replay, and input errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import examples
from mbarrier.cli import main

RING = str(examples.path("ring_buffer"))
PTX_HEAD = ".version 8.6\n.target sm_90\n.address_size 64\n"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_correct_kernel_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, RING, "--grid", "1", "--block", "160", "--seed", "3")
    assert code == 0
    assert "outcome: all 160 threads exited" in out
    assert "_ZZ11ring_bufferE4full: phase=2 pending=1/1" in out


def test_a_planted_bug_is_stuck_exit_1_with_the_waiters(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(examples.path("ring_buffer_bug_bytes")), "--grid", "1", "--block", "160")
    assert code == 1
    assert "STUCK" in out
    assert "threads 32-159 (warps 1-4) at line" in out
    assert "_ZZ11ring_bufferE4full: phase 0 (parity 0), 0 of 1 arrival still pending, 4 transaction bytes " \
        "still outstanding" in out
    # The headline: which barrier and which count are wrong.
    assert ("  mbarrier _ZZ11ring_bufferE4full (shared 0x180, CTA 0) got its one expected arrival of phase 0 "
            "but 4 transaction bytes are still outstanding") in out


def test_trace_shows_every_step_and_barrier_changes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(examples.path("arrive_drop")), "--grid", "1", "--block", "64", "--trace")
    assert code == 0
    assert "mbarrier.init.shared.b64" in out
    assert "_ZZ11arrive_dropE3bar: invalid -> phase=0 pending=64/64" in out
    assert "mbarrier.arrive_drop.shared::cta.b64" in out


def test_a_saved_schedule_replays_the_same_trace(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sched = tmp_path / "s.txt"
    args = [str(examples.path("cluster_handshake")), "--grid", "4", "--block", "64", "--trace"]
    code, first, _ = _run(capsys, *args, "--seed", "5", "--save-schedule", str(sched))
    assert code == 0
    code, again, _ = _run(capsys, *args, "--schedule", f"@{sched}")
    assert code == 0
    assert first.split("\n", 1)[1] == again.split("\n", 1)[1]  # all but the header line (how it ran)


def test_dump_prints_a_buffer(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(capsys, str(examples.path("cluster_handshake")), "--grid", "2", "--block", "4",
                        "--arg", "0=buf:64", "--dump", "cluster_handshake_param_0:4")
    assert code == 0
    assert "cluster_handshake_param_0: 7 8 9 10" in out


def test_a_violation_exits_1_with_rule_thread_and_line(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    f = tmp_path / "v.ptx"
    f.write_text(PTX_HEAD + ".visible .entry k()\n{\n.shared .align 8 .b64 bar;\n"
                 "mbarrier.init.shared.b64 [bar], 1;\nmbarrier.arrive.shared.b64 _, [bar], 2;\nret;\n}\n")
    code, out, _ = _run(capsys, str(f), "--grid", "1", "--block", "1")
    assert code == 1
    assert "VIOLATION" in out and "rule pending-underflow (PTX ISA 9.7.13.15.2)" in out
    assert "thread 0 (cta 0, tid 0), line 8: mbarrier.arrive.shared.b64 _, [bar], 2;" in out


def test_unsupported_instruction_exits_2_with_its_line(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    f = tmp_path / "u.ptx"
    f.write_text(PTX_HEAD + ".visible .entry k()\n{\n.reg .b16 %h<2>;\nex2.approx.f16 %h1, %h0;\nret;\n}\n")
    code, out, _ = _run(capsys, str(f), "--grid", "1", "--block", "1")
    assert code == 2
    assert "line 7: ex2.approx.f16 %h1, %h0;" in out and "not supported" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--grid", "0", "--block", "1"], "--grid '0'"),
    (["--grid", "1", "--block", "1", "--arg", "x"], "P=VALUE"),
    (["--grid", "1", "--block", "1", "--kernel", "nope"], "no kernel named 'nope'"),
    (["--grid", "1", "--block", "1", "--arg", "2=1", "--schedule", "zz"], "schedule item 1"),
    (["--grid", "1", "--block", "1", "--arg", "2=buf:16"], "'pipeline_param_2' (.u32) is not a pointer"),
    (["--grid", "1", "--block", "1", "--arg", "2=1", "--arg", "extra=1"], "no parameter extra"),
])
def test_input_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, _, err = _run(capsys, str(examples.path("pipeline")), *argv)
    assert code == 2
    assert message in err


def test_an_error_listing_kernels_shows_the_first_few_and_a_count(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    f = tmp_path / "many.ptx"
    f.write_text(PTX_HEAD + "".join(f".visible .entry k{i}()\n{{\nret;\n}}\n" for i in range(40)))
    code, _, err = _run(capsys, str(f), "--grid", "1", "--block", "1")
    assert code == 2
    assert "the module has 40 kernels (k0, k1, k2, k3, k4 and 35 more); choose one with --kernel" in err
    code, _, err = _run(capsys, str(f), "--grid", "1", "--block", "1", "--kernel", "k40")
    assert code == 2
    assert "no kernel named 'k40' in the module (40 kernels: k0, k1, k2, k3, k4 and 35 more)" in err


def test_a_missing_scalar_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, str(examples.path("pipeline")), "--grid", "1", "--block", "32")
    assert code == 2 and "missing argument for parameter 'pipeline_param_2'" in err


def test_a_file_that_does_not_parse_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "bad.ptx"
    f.write_text(PTX_HEAD + ".visible .entry k( {\n")
    code, _, err = _run(capsys, str(f), "--grid", "1", "--block", "1")
    assert code == 2 and "does not parse" in err


def test_trace_and_stuck_threads_name_source_lines_from_loc(capsys: pytest.CaptureFixture[str]) -> None:
    modules = Path(__file__).resolve().parents[1] / "ptx" / "modules"
    code, out, _ = _run(capsys, str(modules / "cluster.sm_90.lineinfo.ptx"), "--grid", "2", "--block", "2",
                        "--trace")
    assert code == 0
    assert "ld.param.u64 \t%rd2, [_Z4pingPi_param_0];  (cluster.cu:15)" in out
    code, out, _ = _run(capsys, str(modules / "inline_asm_sm80.sm_80.ptx"), "--grid", "1", "--block", "4")
    assert code == 1 and "threads 0-3 at line" in out


def test_dynamic_shared_memory_size(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "dyn.ptx"
    f.write_text(PTX_HEAD + ".extern .shared .align 16 .b8 smem[];\n.visible .entry k()\n{\n"
                 ".reg .b32 %r<2>;\nmov.u32 %r1, smem;\nst.shared.u32 [%r1+60000], 1;\nret;\n}\n")
    code, out, _ = _run(capsys, str(f), "--grid", "1", "--block", "1")
    assert code == 1 and "outside the" in out and "rule memory-fault" in out  # the default 48 KiB
    code, out, _ = _run(capsys, str(f), "--grid", "1", "--block", "1", "--dynamic-shared", "65536")
    assert code == 0


def test_a_kernel_ptxas_would_not_assemble_runs_with_a_warning(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    """`.release` without a scope: ptxas refuses the line, the manual defines what it does. run and check
    say so on stderr (lint's first error and how many), then run it; a clean kernel gets no warning."""
    f = tmp_path / "k.ptx"
    f.write_text(PTX_HEAD + ".visible .entry k()\n{\n.reg .b64 %rd<3>;\n.shared .align 8 .b64 bar;\n"
                 "mbarrier.init.shared.b64 [bar], 2;\nmbarrier.arrive.release.shared.b64 %rd1, [bar];\n"
                 "mbarrier.arrive.release.shared.b64 %rd2, [bar];\nret;\n}\n")
    code, out, err = _run(capsys, str(f), "--grid", "1", "--block", "1")
    assert code == 0 and "outcome: all 1 threads exited" in out
    assert err.startswith("warning: ptxas would not assemble this module: ")
    assert f"{f}:9:16: error: Modifier '.release' requires scope" in err and "(and 1 more)" in err
    assert main(["check", str(f), "--grid", "1", "--block", "1"]) == 0
    assert "warning: ptxas would not assemble" in capsys.readouterr().err
    assert main(["check", str(f), "--grid", "1", "--block", "1", "--quiet"]) == 0
    assert main(["run", str(f), "--grid", "1", "--block", "1", "-q"]) == 0
    assert capsys.readouterr().err == ""  # --quiet: errors only
    _, _, err = _run(capsys, RING, "--grid", "1", "--block", "160", "--seed", "3")
    assert "warning" not in err
