"""Registers live at each instruction of a function: all a thread's future depends on of its register
file (`explore.frozen` keys its plans by their values, read by one C call per thread and state)."""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter

from mbarrier.explore.code import Code
from mbarrier.sim.machine import Thread

Getter = Callable[[Thread], tuple[object, ...]]


class LiveRegs:
    """Per function, per pc: its live registers and a getter of their values (computed once), followed by
    the bytes of the thread's local memory where a load of it is reachable (`Code.reads_local`: the
    futures read it there, `explore.values`).
    `relevant`: only those whose values may reach what the futures evaluate (`code.relevant_registers`):
    all a thread's future and its next step's footprint depend on."""

    def __init__(self, relevant: bool = False) -> None:
        self._by_code: dict[int, tuple[Code, list[tuple[int, ...]], list[Getter]]] = {}
        self._relevant = relevant

    def of(self, code: Code) -> tuple[list[tuple[int, ...]], list[Getter]]:
        found = self._by_code.get(id(code))
        if found is None or found[0] is not code:
            rel = [tuple(sorted(live)) for live in (code.relevant if self._relevant else code.live)]
            getters = [_getter(r, local) for r, local in zip(rel, code.reads_local, strict=True)]
            found = self._by_code[id(code)] = (code, rel, getters)
        return found[1], found[2]


def _getter(slots: tuple[int, ...], local: bool) -> Getter:
    """The values of `slots` in a thread's register file, as a tuple, with its local memory's bytes when
    `local` (a plan's key, built for every thread of every state)."""
    regs: Callable[[list[object]], tuple[object, ...]]
    if len(slots) > 1:
        regs = itemgetter(*slots)
    elif slots:
        s = slots[0]
        regs = lambda r: (r[s],)  # noqa: E731
    else:
        regs = lambda r: ()  # noqa: E731
    if local:
        return lambda t: regs(t.regs) + (bytes(t.local),)
    return lambda t: regs(t.regs)
