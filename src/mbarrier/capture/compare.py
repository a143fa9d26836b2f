"""A replay beside the GPU: for each buffer the captured launch changed, the bytes the replay left
against the bytes the GPU left (the launch file's `capture.after`)."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.sim import Launch, Machine


@dataclass(frozen=True)
class BufferComparison:
    """One buffer: `wrong` bytes the replay wrote that differ from the GPU's, `missing` bytes the GPU
    changed that the replay left as they were (expected only of CTAs a replay leaves out), of `size`."""

    buffer: str
    size: int
    gpu_changed: int
    replay_changed: int
    wrong: int
    missing: int

    @property
    def equal(self) -> bool:
        return self.wrong == 0 and self.missing == 0


def compare(spec: Launch, machine: Machine) -> list[BufferComparison]:
    """Every buffer of `spec.capture_after`, after `machine` (launched from `spec`) has run."""
    out = []
    for name, gpu in sorted(spec.capture_after.items()):
        base, size = machine.buffers[name]
        before = spec.buffers[name].data.ljust(size, b"\0")
        replay = machine.gmem.read(base, size)
        gpu = gpu.ljust(size, b"\0")[:size]
        if replay == gpu:
            changed = sum(a != b for a, b in zip(before, gpu, strict=True))
            out.append(BufferComparison(name, size, changed, changed, 0, 0))
            continue
        gpu_changed = replay_changed = wrong = missing = 0
        for b, r, g in zip(before, replay, gpu, strict=True):
            gpu_changed += b != g
            replay_changed += b != r
            wrong += b != r and r != g
            missing += b == r and b != g
        out.append(BufferComparison(name, size, gpu_changed, replay_changed, wrong, missing))
    return out
