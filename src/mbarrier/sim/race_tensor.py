"""The accesses of a tensor copy for the race tracker (`sim.races`), from its plan (`sim.tensorcopy`).

All in the async proxy (PTX ISA 9.7.9.25.5.2: "the copy operation ... is performed in the async
proxy"): a load reads the global bytes inside the tensor and writes the swizzled box in shared memory;
a store reads the box and writes the elements inside the tensor; a reduction writes them atomically
(element-wise atomic, PTX ISA 9.7.9.25.5.3). Runs contiguous on both sides are checked as one access.
"""

from __future__ import annotations

from collections.abc import Callable

from mbarrier.sim.hb import ASYNC, ATOMIC, VC, WRITE, Agent, Info, Shadow
from mbarrier.sim.machine import Copy

Check = Callable[[Shadow, int, int, Agent, Info, "int | None", "VC | None", "bytes | None"], None]


def tensor_accesses(check: Check, shadow: Callable[[int], Shadow], c: Copy, cag: Agent,
                    gread: Callable[[int, int], bytes]) -> None:
    """Check each access of the landing copy `c` (its agent `cag`) with `check`; `shadow(cta)` is the
    shadow memory of a CTA's shared memory (-1: global); `gread(addr, n)` reads global memory. The
    plain writes carry the bytes written (two unordered identical writes are no race: `sim.hb`)."""
    plan, load = c.plan, c.src[0] == "tensor"
    cta = c.dst_cta if load else c.src[1]
    assert plan is not None and cta is not None
    gw = 0 if load else WRITE | (ATOMIC if c.kind.startswith("cp.reduce") else 0)
    for at, g, n in plan.runs(c.dst if load else c.src[2], load):
        if g >= 0:
            ginfo: Info = (cag.me, c.site, ASYNC | gw, "global", -1, g, n, "")
            gdata = gread(g, n) if gw == WRITE else None
            check(shadow(-1), g, n, cag, ginfo, 2 if gw else 1, cag.pvcg, gdata)
        sinfo: Info = (cag.me, c.site, ASYNC | (WRITE if load else 0), "shared", cta.index, at, n, "")
        sdata = bytes(cta.smem[at:at + n]) if load else None
        check(shadow(cta.index), at, n, cag, sinfo, 2 if load else 1, cag.pvc, sdata)
