"""The Promela export with several threads per process (`explore.promela_procs.grouped`), as it writes a
launch over SPIN's 255 processes: forced here onto small launches (`threads_per_process`), it keeps the
thread-granular semantics. With reductions off its state graph is the checker's (states and transitions,
as one process per thread is: tests/check/test_promela.py), groups that do not divide the launch
included; with SPIN's partial-order reduction on, its verdict is `check --no-races`'s on correct kernels
and on deadlock and undefined-behaviour bugs. The 384-thread shapes export, a warp per process."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore.check import Options, check
from mbarrier.explore.promela import ExportError, export_promela

CORPUS = Path(sim.__file__).parent.parent / "examples" / "corpus"
KERNELS = Path(__file__).parent.parent / "check" / "promela"


def spin(model: str, workdir: Path, *, reduce: bool) -> tuple[int, int, str]:
    """(states stored, transitions, SPIN's first error or "") of SPIN's search of `model`; without its
    reduction (`reduce` False) the whole graph, invalid end states not reported (-E)."""
    (workdir / "m.pml").write_text(model)
    subprocess.run(["spin", "-a", "m.pml"], cwd=workdir, check=True, capture_output=True)
    flags = ["-O0", "-DSAFETY", "-DVECTORSZ=65536"] + ([] if reduce else ["-DNOREDUCE"])
    subprocess.run(["cc", *flags, "-o", "pan", "pan.c"], cwd=workdir, check=True, capture_output=True)
    out = subprocess.run(["./pan", "-m10000000", *([] if reduce else ["-E"])], cwd=workdir, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    first = next((line[7:].split(" (at depth")[0] for line in out.splitlines() if line.startswith("pan:1: ")),
                 "")
    states = re.search(r"(\d+) states, stored", out)
    transitions = re.search(r"(\d+) transitions", out)
    assert states and transitions, out
    return int(states.group(1)), int(transitions.group(1)), first


# (kernel, block, threads per process): 2 of 3 and 3 of 4 leave the last process a thread short
GRAPHS = [("handoff.ptx", 2, 2), ("exit_drop.ptx", 3, 2), ("exit_no_drop.ptx", 3, 2),
          ("ring_tx_mismatch.ptx", 3, 2)]


@pytest.mark.tool("spin", "cc")
@pytest.mark.parametrize(("name", "block", "per"), GRAPHS)
def test_grouped_threads_keep_the_checkers_state_graph(name: str, block: int, per: int,
                                                       tmp_path: Path) -> None:
    module = sim.load(CORPUS / name)
    model = export_promela(module, sim.launch(module, grid=1, block=block), threads_per_process=per)
    assert f"#define TPP {per}" in model and f"#define NP {-(-block // per)} " in model
    ours = check(module, grid=1, block=block,
                 options=Options(reductions=False, races=False, max_findings=1_000_000, walks=0))
    states, transitions, _ = spin(model, tmp_path, reduce=False)
    assert (states, transitions) == (ours.stats.states, ours.stats.transitions + 1)


@pytest.mark.tool("spin", "cc")
def test_counted_barriers_and_collectives_keep_it_too(tmp_path: Path) -> None:
    """bar.sync / bar.arrive with thread counts, vote, elect and bar.warp.sync over a partial warp whose
    last thread exits at once: what a thread at a barrier or collective waits for, per thread."""
    module = sim.load(KERNELS / "sync.ptx")
    model = export_promela(module, sim.launch(module, grid=1, block=4, args={1: 2}), threads_per_process=3)
    ours = check(module, grid=1, block=4, args={1: 2},
                 options=Options(reductions=False, races=False, max_findings=1_000_000, walks=0))
    states, transitions, _ = spin(model, tmp_path, reduce=False)
    assert (states, transitions) == (ours.stats.states, ours.stats.transitions + 1)


def spin_kind(first: str) -> str:
    """SPIN's first error as the checker's answer: an invalid end state is a deadlock, an assertion a
    violation (never the model's own bound here)."""
    assert "MODEL_LIMIT" not in first
    if not first:
        return "verified"
    if first.startswith("invalid end state"):
        return "deadlock"
    assert first.startswith("assertion violated"), first
    return "violation"


# (kernel, block, threads per process, what `check --no-races` answers): correct, deadlock, UB
VERDICTS = [("handoff.ptx", 2, 2, "verified"), ("ring.ptx", 3, 2, "verified"),
            ("exit_no_drop.ptx", 3, 2, "deadlock"), ("ring_missing_arrive.ptx", 3, 2, "deadlock"),
            ("ring_tx_mismatch.ptx", 3, 3, "deadlock"), ("stale_token.ptx", 3, 2, "violation"),
            ("nocomplete.ptx", 3, 3, "violation")]


@pytest.mark.tool("spin", "cc")
@pytest.mark.parametrize(("name", "block", "per", "answer"), VERDICTS)
def test_spins_verdict_on_grouped_threads_is_checks(name: str, block: int, per: int, answer: str,
                                                    tmp_path: Path) -> None:
    module = sim.load(CORPUS / name)
    ours = check(module, grid=1, block=block, options=Options(races=False))
    assert (ours.findings[0].kind.value if ours.findings else ours.verdict.value) == answer
    model = export_promela(module, sim.launch(module, grid=1, block=block), threads_per_process=per)
    assert spin_kind(spin(model, tmp_path, reduce=True)[2]) == answer


@pytest.mark.tool("spin", "cc")
@pytest.mark.parametrize("bug", [False, True])
def test_grouped_cluster_threads_find_their_cta(bug: bool, tmp_path: Path) -> None:
    """2 CTAs of 2 threads, 3 threads per process: one process holds threads of both CTAs, so each
    thread's CTA (its shared memory, its barriers) follows its own index. The bug: the multicast mask
    misses CTA 1, whose `full` waits for bytes that never come."""
    text = (KERNELS / "cluster.ptx").read_text()
    path = tmp_path / "k.ptx"
    path.write_text(text.replace("mov.u16 %rs1, 3;", "mov.u16 %rs1, 1;") if bug else text)
    module = sim.load(path)
    launch = {"grid": 2, "cluster": 2, "block": 2, "args": {2: 1}}
    ours = check(module, **launch, options=Options(races=False))  # type: ignore[arg-type]
    assert [f.kind.value for f in ours.findings][:1] == (["deadlock"] if bug else [])
    model = export_promela(module, sim.launch(module, **launch), threads_per_process=3)  # type: ignore[arg-type]
    assert spin_kind(spin(model, tmp_path, reduce=True)[2]) == ("deadlock" if bug else "verified")


@pytest.mark.parametrize("name", ["warpgroup", "warpgroup_bug_count", "pingpong", "pingpong_bug_order"])
def test_the_384_thread_shapes_export_a_warp_per_process(name: str) -> None:
    s = SHAPES[name]
    model = export_promela(sim.load(s.path), s.launch())
    assert "#define NT 384" in model and "#define TPP 32" in model and "#define NP 12 " in model


def test_a_launch_that_fits_keeps_a_process_per_thread() -> None:
    s = SHAPES["cluster"]  # 192 threads and 8 copy engines
    model = export_promela(sim.load(s.path), s.launch())
    assert "#define NP 192 " in model and "#define ME _pid" in model and "TPP" not in model


def test_a_grouping_over_spins_limit_is_refused_with_the_reason() -> None:
    s = SHAPES["warpgroup"]
    module = sim.load(s.path)
    with pytest.raises(ExportError, match=r"SPIN runs at most 255 processes; the model of this launch has "
                                          r"388 \(384 threads, 4 bulk copy engines\)"):
        export_promela(module, s.launch(), threads_per_process=1)
    with pytest.raises(ExportError, match="0 threads per process: at least 1"):
        export_promela(module, s.launch(), threads_per_process=0)
