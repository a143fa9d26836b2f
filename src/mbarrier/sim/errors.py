"""Errors of the simulator that are not mbarrier undefined behaviour (those are core Violations).

Two classes, never mixed, because they mean opposite things to the user:
* `Unsupported`: the simulator cannot run this (the tool's limit): `run` and `check` end with the
  outcome `unsupported` (exit 2), naming the instruction and its line; never "the kernel has a bug".
* `KernelFault`: the kernel did something that faults on the GPU or that the ISA leaves undefined outside
  the mbarrier object's own rules (an access outside memory, `trap`, a collective the executing lane is
  not part of ...): the kernel's bug, a finding of kind `violation` with the fault's `rule` (exit 1); the
  rules are catalogued in `spec.checks`.
"""

from __future__ import annotations

from mbarrier.spec.checks import KERNEL_FAULT, MEMORY_FAULT, checker_rule


class SimError(Exception):
    """A run cannot go on. The message names the instruction and its line where there is one. Raised
    only through its subclasses: whether the tool or the kernel is at fault is always decided."""


class Unsupported(SimError):
    """An instruction or operand form the simulator does not implement: never silently skipped."""


class KernelFault(SimError):
    """The kernel's error (see the module's doc); `rule` is a rule id of `spec.checks`."""

    def __init__(self, message: str, rule: str = KERNEL_FAULT) -> None:
        super().__init__(message)
        self.rule = rule
        self.section = checker_rule(rule).section


class MemoryFault(KernelFault):
    """An access outside every buffer or window (what would be an illegal address on the GPU)."""

    def __init__(self, message: str, rule: str = MEMORY_FAULT) -> None:
        super().__init__(message, rule)


class LaunchError(SimError):
    """A launch that cannot start: unknown kernel, missing scalar argument, bad shapes (an input error,
    raised before any step)."""
