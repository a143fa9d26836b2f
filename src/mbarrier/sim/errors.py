"""Errors of the simulator that are not mbarrier undefined behaviour (those are core Violations)."""

from __future__ import annotations


class SimError(Exception):
    """A run cannot go on: an unsupported instruction, a bad address, a bad launch. The message names
    the instruction and its line where there is one."""


class Unsupported(SimError):
    """An instruction or operand form the simulator does not implement: never silently skipped."""


class MemoryFault(SimError):
    """An access outside every buffer or window (what would be an illegal address on the GPU)."""


class LaunchError(SimError):
    """A launch that cannot start: unknown kernel, missing scalar argument, bad shapes."""
