"""`Code.fixed(pc, slot)`: no instruction reachable from pc (itself included) writes the register. The
reachable writes are kept as one bit mask per pc (`explore.code._reach_defs`); they must be exactly
what a plain search of the control-flow graph finds, on every shape of the corpus (loops, branches,
calls of none) and at every pc and register."""

from __future__ import annotations

import pytest

from mbarrier import sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore.code import Code, analyse, shared_symbols


def _reachable_writes(code: Code, pc: int) -> set[int]:
    seen, todo, out = {pc}, [pc], set()
    while todo:
        j = todo.pop()
        out |= code.ins[j].defs
        for s in code.succ[j]:
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return out


@pytest.mark.parametrize("name", ["ring_rolled", "pingpong", "persistent", "cluster", "branch", "named"])
def test_fixed_is_no_reachable_write(name: str) -> None:
    s = SHAPES[name]
    m = s.launch()
    module = sim.load(s.path)
    symbols = shared_symbols(m)
    for f in module.functions:
        if f.body is None or f.name not in m.functions:
            continue
        code = analyse(f, m.functions[f.name], symbols)
        slots = range(max((d for x in code.ins for d in x.defs | x.reads), default=0) + 2)
        for pc in range(len(code.ins)):
            written = _reachable_writes(code, pc)
            assert [code.fixed(pc, r) for r in slots] == [r not in written for r in slots], (name, pc)
