"""Instruction semantics: each module registers code emitters for its opcodes (see `sim.compile`)."""

from mbarrier.sim.isa import arith, asynccopy, control, mbarrier, memory

__all__ = ["arith", "asynccopy", "control", "mbarrier", "memory"]
