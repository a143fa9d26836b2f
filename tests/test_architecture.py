"""The layers of docs/architecture.md: no package imports one above it or beside it, and no module
imports itself back through others (an import cycle)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "mbarrier"

# docs/architecture.md's table: a package may import packages of a lower level, and its own modules.
LEVELS = {"spec": 0, "core": 1, "ptx": 2, "sim": 3, "hw": 3, "explore": 4, "examples": 4, "capture": 4,
          "triton": 4,
          "report": 5, "cli": 6, "api": 6, "testing": 7}
# The top-level package re-exports the object (core); `python -m mbarrier` is the command line.
FACADES = {"": "core", "__main__": "cli"}
# ... and, on first use (its module __getattr__, and for type checkers under TYPE_CHECKING), the API for
# PTX text: the one edge of the facade that may point up. It runs after the package is imported, so it
# cannot make an import cycle.
LAZY = ("mbarrier", "mbarrier.api")


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _package(module: str) -> str:
    """`mbarrier.sim.isa.arith` -> "sim"; `mbarrier` -> "core", `mbarrier.__main__` -> "cli"."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    return FACADES.get(top, top)


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(imports that run, imports under `if TYPE_CHECKING:`) of a module, as module names of the package."""
    tree = ast.parse(MODULES[module].read_text())
    typing_only = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for n in ast.walk(node)}
    run: set[str] = set()
    typed: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mbarrier":
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                     for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "mbarrier"]
        for name in names:
            while name not in MODULES:  # `import mbarrier.sim.x` of a name inside a module
                name = name.rsplit(".", 1)[0]
            if (module, name) == LAZY:
                continue
            if name != module:
                (typed if id(node) in typing_only else run).add(name)
    return run, typed


GRAPH = {m: _imports(m) for m in MODULES}


def test_every_package_has_a_level() -> None:
    assert {_package(m) for m in MODULES} <= set(LEVELS), {_package(m) for m in MODULES} - set(LEVELS)


def test_no_upward_or_sideways_import() -> None:
    bad = []
    for m, (run, typed) in GRAPH.items():
        for d in run | typed:
            pm, pd = _package(m), _package(d)
            if pm != pd and LEVELS[pd] >= LEVELS[pm]:
                bad.append(f"{m} (level {LEVELS[pm]}) imports {d} (level {LEVELS[pd]})")
    assert not bad, "\n".join(bad)


def test_no_import_cycle() -> None:
    """Tarjan's strongly connected components over the imports that run: each must be one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v][0]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_the_check_catches_a_cycle_and_an_upward_import() -> None:
    """The graph is read right: the known imports are there (so an empty answer is not a parse miss)."""
    assert "mbarrier.sim.registry" in GRAPH["mbarrier.sim.compile"][0]
    assert "mbarrier.explore.results" in GRAPH["mbarrier.explore.deadlock"][0]
    assert "mbarrier.sim.compile" in GRAPH["mbarrier.sim.registry"][1]  # typing only: no cycle
    assert "mbarrier.report.model" in GRAPH["mbarrier.api"][0]


def test_the_facade_reaches_the_api_only_lazily() -> None:
    """`import mbarrier` does not import the simulator: the API for PTX text comes on first use."""
    code = ("import sys, mbarrier; assert 'mbarrier.api' not in sys.modules;"
            "assert 'mbarrier.sim' not in sys.modules; mbarrier.Launch; assert 'mbarrier.api' in sys.modules")
    env = {**os.environ, "PYTHONPATH": str(SRC.parent)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# Source files longer than LONG lines, each with the reason it is one file.
LONG = 600
LONG_BY_DESIGN = {
    "spec/forms.py": "data: the mbarrier family's instruction forms, gates and constraints, one table",
    "spec/modifiers.py": "data: ptxas's verdict on each modifier word it knows, measured, one word a line",
    "ptx/parser.py": "one recursive-descent parser of PTX's grammar, one method per production",
    "sim/races.py": "RaceMachine: each machine operation with its happens-before edges, one method a "
                    "kind of step (tensor-copy and wgmma accesses already live in race_tensor/race_wgmma)",
    "explore/code.py": "the checker's view of a function and the static facts read from it in one pass "
                       "(kinds, control flow, liveness, spin-waits and first tries); splitting the wait "
                       "analysis out needs Ins and Code in a module of their own",
    "explore/frozen.py": "the frozen futures' passability fixpoint with the plans, segments and gates it "
                         "opens, one analysis over one plan cache",
    "explore/check.py": "Explorer: the search loop, a state's expansion and its findings share the machine, "
                        "the frontier, the statistics and the bounds",
    "explore/values.py": "the futures' constant propagation, of one thread (`unroll`) and of a warp's lanes "
                         "walked together (`unroll_lanes`), which must build exactly unroll's graph: one "
                         "node table, one transfer (registers and local memory) and one merge rule for both",
    "explore/footprints.py": "each instruction kind's footprint, now and in a future, one branch a kind of "
                             "`of_ins`, with the in-flight copies' landings beside them: both build their "
                             "items from the same address, range and tensor-box helpers",
    "ptx/validate.py": "ptxas's checks of one instruction in ptxas's order, sharing one line's state; "
                       "splitting out the operand matching is left to the lint work under way (issue 18)",
}


def test_no_source_file_is_long_without_a_stated_reason() -> None:
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > LONG}
    unexplained = {name: n for name, n in long.items() if name not in LONG_BY_DESIGN}
    assert not unexplained, f"longer than {LONG} lines with no reason in LONG_BY_DESIGN: {unexplained}"


DOC = SRC.parents[1] / "docs" / "architecture.md"


def _index() -> dict[str, set[str]]:
    """docs/architecture.md's "Every module": each package's folder and the module names it lists."""
    text = DOC.read_text().split("## Every module", 1)[1].split("\n## ", 1)[0]
    out: dict[str, set[str]] = {}
    for item in re.split(r"\n- ", text)[1:]:
        head, _, rest = item.partition(":")
        folder = head.strip(" *`")
        out[folder] = set(re.findall(r"`([\w.]+)`", re.sub(r"\([^()]*\)", "", rest)))
    return out


CORPORA = ("examples/races", "examples/shapes")


def _files() -> dict[str, set[str]]:
    """Each folder's modules (.py without the suffix, .c with it), `mbarrier` for the top."""
    out: dict[str, set[str]] = {}
    for path in [*SRC.rglob("*.py"), *SRC.rglob("*.c")]:
        rel = path.parent.relative_to(SRC).as_posix()
        folder = "mbarrier" if rel == "." else rel
        if path.name == "__init__.py" and folder not in ("mbarrier", "cli", *CORPORA):
            continue  # a package's __init__ is the package: named by its folder
        out.setdefault(folder, set()).add(path.stem if path.suffix == ".py" else path.name)
    # The corpora are listed as modules of `examples`.
    for corpus in CORPORA:
        out.pop(corpus)
        out["examples"].add(corpus.split("/")[1])
    return out


def test_every_module_is_in_the_architecture_page_and_every_name_there_is_a_module() -> None:
    index, files = _index(), _files()
    assert set(index) == set(files), (set(index) ^ set(files))
    for folder in files:
        assert files[folder] <= index[folder], f"{folder}: not in docs/architecture.md: " \
            f"{sorted(files[folder] - index[folder])}"
        assert index[folder] <= files[folder], f"{folder}: named in docs/architecture.md, no such module: " \
            f"{sorted(index[folder] - files[folder])}"
