"""Which of a function's branches may depend on the contents of memory.

A check explores every interleaving of one launch: its kernel parameters, and the memory the launch
filled (zeros where nothing was given). A branch on a value the kernel loaded from shared or global
memory (a warp vote on loaded data, a flag from a workspace, a tile index read from shared memory) may
go another way for other contents, so VERIFIED speaks for these contents only; the report says where
(`report.check`). The analysis is flow-insensitive and conservative: a register slot is tainted when any
instruction writes it from a load (shared, global or generic memory; an atomic's or a call's result) or
from a tainted slot, and a guarded instruction whose guard is tainted is such a branch. Parameters,
special registers, the thread's local memory and mbarrier results (a try_wait's predicate) are not
memory contents."""

from __future__ import annotations

from mbarrier.explore.code import ATOM, LOAD, Code


def data_branches(code: Code) -> list[int]:
    """The source lines of `code`'s guarded instructions whose guard may depend on memory contents."""
    tainted: set[int] = set()
    sources = [x for x in code.ins if (x.kind == LOAD and not x.local) or x.kind == ATOM]
    for x in sources:
        tainted |= x.defs
    changed = True
    while changed:
        changed = False
        for x in code.ins:
            if x.defs and not x.defs <= tainted and x.reads & tainted:
                tainted |= x.defs
                changed = True
    return sorted({x.line for x in code.ins if x.guard is not None and x.guard[0] in tainted})
