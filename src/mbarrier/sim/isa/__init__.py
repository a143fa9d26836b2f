"""Instruction semantics: each module registers code emitters for its opcodes (see `sim.compile`)."""

from mbarrier.sim.isa import (
    arith,
    asynccopy,
    bitops,
    control,
    floats,
    launchcontrol,
    matrix,
    mbarrier,
    memory,
    tcgen05,
    tensor,
    tensormap,
    wgmma,
)

__all__ = ["arith", "asynccopy", "bitops", "control", "floats", "launchcontrol", "matrix", "mbarrier",
           "memory", "tcgen05", "tensor", "tensormap", "wgmma"]
