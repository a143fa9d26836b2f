"""setmaxnreg's rules (PTX ISA, Miscellaneous Instructions: setmaxnreg), checked as the warps run.

A warpgroup is four consecutive warps of a CTA, the first at a warp index divisible by 4. The ISA:
  * `imm-reg-count` lies in 24..256 and is a multiple of 8;
  * every thread of the warp executes the same setmaxnreg (`.sync`), and every warp of the warpgroup
    executes the same setmaxnreg instruction (`.aligned`); "if a setmaxnreg instruction is not executed
    by all warps in the warpgroup, then the behavior is undefined";
  * `.dec` needs the warp's current per-thread maximum to be at least the count, `.inc` at most the
    count; otherwise the behaviour is undefined.
Each warp keeps the setmaxnreg it completed, in order (`Warp.nreg`: (pc, action, count)); the k-th of
one warp must be the same instruction as the k-th of each other warp of its warpgroup, and a warp whose
last thread exits must not leave a sibling with more of them. The count a warp starts with is ptxas'
allocation, which the PTX does not fix: the order rule is checked from a warp's first setmaxnreg on.
Not checked: the explicit synchronization the ISA asks for between two setmaxnreg of a warpgroup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mbarrier.sim.errors import KernelFault
from mbarrier.spec.checks import SETMAXNREG
from mbarrier.spec.wgmma import WARPS_PER_GROUP  # 9.7.15.1: a warpgroup is four contiguous warps

if TYPE_CHECKING:
    from mbarrier.sim.machine import Thread, Warp

#: imm-reg-count's range and step.
COUNT_MIN, COUNT_MAX, COUNT_STEP = 24, 256, 8


def count_error(count: int) -> str | None:
    if COUNT_MIN <= count <= COUNT_MAX and count % COUNT_STEP == 0:
        return None
    return (f"setmaxnreg with imm-reg-count {count}: it must lie in {COUNT_MIN}..{COUNT_MAX} and be a "
            f"multiple of {COUNT_STEP}")


def _siblings(t: Thread) -> list[Warp]:
    """The other warps of the executing thread's warpgroup."""
    cta = t.cta
    first = cta.threads[0].aid
    warp = (t.aid - first) // 32
    base = warp - warp % WARPS_PER_GROUP
    out: list[Warp] = []
    for i in range(base, base + WARPS_PER_GROUP):
        if i != warp and i * 32 < len(cta.threads):
            w = cta.threads[i * 32].warp
            if w is not None:
                out.append(w)
    return out


def _describe(entry: tuple[int, str, int], t: Thread) -> str:
    pc, action, count = entry
    return f"setmaxnreg{action} {count} at line {t.func.sites[pc].line}"


def completed(t: Thread, parts: list[tuple[int, str, int]], gone: Callable[[Warp], bool]) -> None:
    """Every live lane of `t`'s warp reached a setmaxnreg (`parts`: each lane's (pc, action, count)):
    check the rules and record it in the warp. `gone`: whether every thread of a warp has exited."""
    w = t.warp
    assert w is not None
    mine = parts[0]
    if any(p != mine for p in parts):
        kinds = sorted({_describe(p, t) for p in parts})
        raise KernelFault(f"the lanes of warp {w.threads[0].aid // 32} executed different setmaxnreg "
                          f"instructions ({'; '.join(kinds)}): all threads of the warp must execute the same "
                          "one", SETMAXNREG)
    _, action, count = mine
    if w.nreg:
        current = w.nreg[-1][2]
        if action == ".dec" and current < count:
            raise KernelFault(f"setmaxnreg.dec to {count} registers, but the warp holds {current} (after "
                              f"its {_describe(w.nreg[-1], t)}): .dec needs at least that many",
                              SETMAXNREG)
        if action == ".inc" and current > count:
            raise KernelFault(f"setmaxnreg.inc to {count} registers, but the warp holds {current} (after "
                              f"its {_describe(w.nreg[-1], t)}): .inc needs at most that many",
                              SETMAXNREG)
    k = len(w.nreg)
    for s in _siblings(t):
        if len(s.nreg) > k and s.nreg[k] != mine:
            raise KernelFault(f"warps of one warpgroup executed different setmaxnreg instructions: "
                              f"{_describe(mine, t)} here, {_describe(s.nreg[k], t)} in warp "
                              f"{s.threads[0].aid // 32}: every warp of the warpgroup must execute the same",
                              SETMAXNREG)
        if len(s.nreg) <= k and gone(s):
            raise KernelFault(f"{_describe(mine, t)}: warp {s.threads[0].aid // 32} of the warpgroup has "
                              "exited without executing it (every warp of the warpgroup must)", SETMAXNREG)
    w.nreg = (*w.nreg, mine)


def exited(t: Thread, gone: Callable[[Warp], bool]) -> None:
    """`t` has exited: if its warp is now gone, no sibling may have done more setmaxnreg than it."""
    w = t.warp
    if w is None or not gone(w):
        return
    for s in _siblings(t):
        if len(s.nreg) > len(w.nreg):
            raise KernelFault(f"warp {w.threads[0].aid // 32} exits without the "
                              f"{_describe(s.nreg[len(w.nreg)], t)} that warp {s.threads[0].aid // 32} of "
                              "its warpgroup executed: every warp of the warpgroup must execute it",
                              SETMAXNREG)
