"""Instruction semantics: each module registers code emitters for its opcodes (see `sim.compile`)."""

from mbarrier.sim.isa import (
    arith,
    asynccopy,
    bitops,
    control,
    floats,
    matrix,
    mbarrier,
    memory,
    tensor,
    tensormap,
    wgmma,
)

__all__ = ["arith", "asynccopy", "bitops", "control", "floats", "matrix", "mbarrier", "memory", "tensor",
           "tensormap", "wgmma"]
