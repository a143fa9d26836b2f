"""A replay beside the GPU: for each buffer the captured launch changed, the bytes the replay left
against the bytes the GPU left (the launch file's `capture.after`)."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.sim import Launch, Machine
from mbarrier.sim.compile import SPECIAL_SLOT


@dataclass(frozen=True)
class BufferComparison:
    """One buffer: `wrong` bytes the replay wrote that differ from the GPU's, `missing` bytes the GPU
    changed that the replay left as they were, of `size`. A `partial` replay (some CTAs of the grid,
    `--cta`) is expected to miss the bytes of the CTAs it left out: only its wrong bytes count."""

    buffer: str
    size: int
    gpu_changed: int
    replay_changed: int
    wrong: int
    missing: int
    partial: bool = False

    @property
    def equal(self) -> bool:
        return self.wrong == 0 and (self.missing == 0 or self.partial)


def compare(spec: Launch, machine: Machine) -> list[BufferComparison]:
    """Every buffer of `spec.capture_after`, after `machine` (launched from `spec`) has run."""
    regs = machine.threads[0].regs
    grid = 1
    for axis in "xyz":
        n = regs[SPECIAL_SLOT[f"%nctaid.{axis}"]]
        assert isinstance(n, int)
        grid *= n
    partial = len(machine.ctas) < grid
    out = []
    for name, gpu in sorted(spec.capture_after.items()):
        base, size = machine.buffers[name]
        before = spec.buffers[name].data.ljust(size, b"\0")
        replay = machine.gmem.read(base, size)
        gpu = gpu.ljust(size, b"\0")[:size]
        if replay == gpu:
            changed = sum(a != b for a, b in zip(before, gpu, strict=True))
            out.append(BufferComparison(name, size, changed, changed, 0, 0, partial))
            continue
        gpu_changed = replay_changed = wrong = missing = 0
        for b, r, g in zip(before, replay, gpu, strict=True):
            gpu_changed += b != g
            replay_changed += b != r
            wrong += b != r and r != g
            missing += b == r and b != g
        out.append(BufferComparison(name, size, gpu_changed, replay_changed, wrong, missing, partial))
    return out
