"""Building small kernels from PTX snippets and reading their results."""

from __future__ import annotations

from mbarrier import explore, sim
from mbarrier.ptx import ast
from mbarrier.ptx.parser import parse

HEADER = ".version 8.6\n.target sm_90a\n.address_size 64\n"


def module(body: str, params: str = ".param .u64 out", name: str = "k", extra: str = "") -> ast.Module:
    return parse(f"{HEADER}{extra}\n.visible .entry {name}({params})\n{{\n{body}\n}}\n", "test.ptx")


def words(m: sim.Machine, name: str, n: int, width: int = 4, signed: bool = False) -> list[int]:
    base, _ = m.buffers[name]
    out = [m.gmem.load(base + width * i, width) for i in range(n)]
    if signed:
        sign = 1 << (8 * width - 1)
        out = [(v ^ sign) - sign for v in out]
    return out


def run(mod: ast.Module, seed: int = 0, trace: bool = False, **launch: object) -> explore.RunResult:
    m = sim.launch(mod, **launch)  # type: ignore[arg-type]
    return explore.run(m, explore.RandomScheduler(seed), trace=trace)
