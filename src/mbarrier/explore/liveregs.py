"""Registers live at each instruction of a function: all a thread's future depends on of its register
file (`explore.frozen` keys its plans by their values, read by one C call per thread and state)."""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter

from mbarrier.explore.code import Code

Getter = Callable[[list[object]], tuple[object, ...]]


class LiveRegs:
    """Per function, per pc: its live registers and a getter of their values (computed once).
    `relevant`: only those whose values may reach what the futures evaluate (`code.relevant_registers`):
    all a thread's future and its next step's footprint depend on."""

    def __init__(self, relevant: bool = False) -> None:
        self._by_code: dict[int, tuple[Code, list[tuple[int, ...]], list[Getter]]] = {}
        self._relevant = relevant

    def of(self, code: Code) -> tuple[list[tuple[int, ...]], list[Getter]]:
        found = self._by_code.get(id(code))
        if found is None or found[0] is not code:
            rel = [tuple(sorted(live)) for live in (code.relevant if self._relevant else code.live)]
            found = self._by_code[id(code)] = (code, rel, [_getter(r) for r in rel])
        return found[1], found[2]


def _getter(slots: tuple[int, ...]) -> Getter:
    """The values of `slots` in a register file, as a tuple (a plan's key, built for every thread of
    every state)."""
    if len(slots) > 1:
        return itemgetter(*slots)
    if slots:
        s = slots[0]
        return lambda regs: (regs[s],)
    return lambda regs: ()
