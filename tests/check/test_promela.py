"""`mbarrier export --promela` is faithful: with reductions off, the checker's state count on a kernel equals
SPIN's on the exported model (SPIN's POR off, full state space); SPIN counts one more transition, the step
into its initial state."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.examples import family
from mbarrier.explore.check import Options, check
from mbarrier.explore.promela import ExportError, export_promela

CORPUS = Path(sim.__file__).parent.parent / "examples" / "corpus"


def spin_states(model: str, workdir: Path, por: bool = False) -> tuple[int, int, bool]:
    """(states stored, transitions, an error found) of SPIN's exhaustive search of `model`."""
    (workdir / "model.pml").write_text(model)
    subprocess.run(["spin", "-a", "model.pml"], cwd=workdir, check=True, capture_output=True)
    # -O0: pan.c compiles 8 times faster than with -O2, and these searches are small
    flags = ["-O0", "-DSAFETY", "-DVECTORSZ=65536"] + ([] if por else ["-DNOREDUCE"])
    subprocess.run(["cc", *flags, "-o", "pan", "pan.c"], cwd=workdir, check=True, capture_output=True)
    out = subprocess.run(["./pan", "-m10000000", "-E"], cwd=workdir, check=True, capture_output=True,
                         text=True).stdout
    states = int(re.search(r"(\d+) states, stored", out).group(1))  # type: ignore[union-attr]
    trans = int(re.search(r"(\d+) transitions", out).group(1))  # type: ignore[union-attr]
    errors = int(re.search(r"errors: (\d+)", out).group(1))  # type: ignore[union-attr]
    return states, trans, errors > 0


CASES = [("handoff.ptx", 2), ("exit_drop.ptx", 3), ("exit_no_drop.ptx", 3), ("ring.ptx", 3)]


@pytest.mark.tool("spin", "cc")
@pytest.mark.parametrize(("name", "block"), CASES)
def test_state_count_equals_spins(name: str, block: int, tmp_path: Path) -> None:
    module = sim.load(CORPUS / name)
    model = export_promela(module, sim.launch(module, grid=1, block=block))
    ours = check(module, grid=1, block=block,
                 options=Options(reductions=False, races=False, max_findings=1_000_000, walks=0))
    states, transitions, _ = spin_states(model, tmp_path)
    assert ours.stats.states == states
    assert ours.stats.transitions + 1 == transitions


@pytest.mark.tool("spin", "cc")
def test_family_with_two_producers_matches_too(tmp_path: Path) -> None:
    p = tmp_path / "k.ptx"
    p.write_text(family.ring_ptx(2, 1, 1, 2))
    module = sim.load(p)
    model = export_promela(module, sim.launch(module, grid=1, block=3))
    ours = check(module, grid=1, block=3, options=Options(reductions=False, races=False))
    assert ours.verdict == "verified"
    assert ours.stats.states == spin_states(model, tmp_path)[0]


@pytest.mark.tool("spin", "cc")
def test_spin_finds_the_planted_deadlock_as_an_invalid_end_state(tmp_path: Path) -> None:
    module = sim.load(CORPUS / "ring_missing_arrive.ptx")
    model = export_promela(module, sim.launch(module, grid=1, block=3))
    (tmp_path / "model.pml").write_text(model)
    subprocess.run(["spin", "-a", "model.pml"], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(["cc", "-O0", "-DSAFETY", "-DVECTORSZ=65536", "-o", "pan", "pan.c"], cwd=tmp_path,
                   check=True, capture_output=True)
    out = subprocess.run(["./pan"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert "invalid end state" in out


def test_unsupported_instructions_stop_the_export_with_their_line(tmp_path: Path) -> None:
    p = tmp_path / "k.ptx"
    p.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n"
                 "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [out];\n"
                 "\tatom.global.add.u32 %r1, [%rd1], 1;\n\tret;\n}\n")
    module = sim.load(p)
    with pytest.raises(ExportError, match=r"line 9: `atom.global.add.u32` cannot be exported to Promela"):
        export_promela(module, sim.launch(module, grid=1, block=2))
