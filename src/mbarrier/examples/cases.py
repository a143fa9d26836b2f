"""The bundled nvcc-compiled kernels: their launches, inputs and the results their sources say they produce.

Shared by the tests, the benchmark and the GPU comparison (tests/sim/gpu/): one place says how each kernel is
launched and what its output buffer must hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier import examples, sim
from mbarrier.ptx import ast

TILE = 32
RING_ITERS = 6
PIPE_TILE, PIPE_TILES = 64, 5
STAY, ROUNDS = 40, 3


@dataclass(frozen=True)
class Case:
    """A kernel launch: the example file, shapes, inputs, and which buffer holds the result."""

    example: str
    grid: int
    block: int
    inputs: tuple[tuple[int, tuple[int, ...]], ...]  # (param position, int32 values)
    out_param: int
    out_words: int
    scalars: tuple[tuple[int, int], ...] = ()

    def launch(self, module: ast.Module | None = None) -> sim.Machine:
        mod = module or sim.load(examples.path(self.example))
        args: dict[str | int, sim.Buffer | int] = {i: sim.Buffer.of_ints(v) for i, v in self.inputs}
        args[self.out_param] = sim.Buffer(4 * self.out_words)
        args.update(dict(self.scalars))
        return sim.launch(mod, grid=self.grid, block=self.block, args=args)

    def output(self, m: sim.Machine) -> list[int]:
        name = m.threads[0].func.name + f"_param_{self.out_param}"
        base, _ = m.buffers[name]
        return [m.gmem.load(base + 4 * i, 4) for i in range(self.out_words)]


def ring_input() -> tuple[int, ...]:
    return tuple((i * 7919 + 13) % 100003 for i in range(TILE * RING_ITERS))


def pipeline_input() -> tuple[int, ...]:
    return tuple((i * 31 + 5) % 1000 for i in range(PIPE_TILE * PIPE_TILES))


def drop_input() -> tuple[int, ...]:
    return tuple(i * 3 + 1 for i in range(64))


RING = Case("ring_buffer", 1, 32 * 5, ((0, ring_input()),), 1, TILE * RING_ITERS)
PIPELINE = Case("pipeline", 1, 32, ((0, pipeline_input()),), 1, PIPE_TILE * PIPE_TILES, ((2, PIPE_TILES),))
CLUSTER = Case("cluster_handshake", 4, 64, (), 0, 2 * 64)
DROP = Case("arrive_drop", 1, 64, ((0, drop_input()),), 1, 64)

CASES = {"ring_buffer": RING, "pipeline": PIPELINE, "cluster_handshake": CLUSTER, "arrive_drop": DROP}
#: Not among the kernels recorded on the GPU (tests/sim/gpu/h100.json): added after that run.
CALLS = Case("calls", 1, 32, (), 0, 32)


def expected(name: str) -> list[int]:
    """What each kernel's source (examples/cuda/*.cu) says its output is."""
    if name == "ring_buffer":
        xs = ring_input()
        return [(xs[i] * 3 + i // TILE) & 0xFFFFFFFF for i in range(TILE * RING_ITERS)]
    if name == "pipeline":
        xs = pipeline_input()
        return [2 * xs[i] + i // PIPE_TILE for i in range(PIPE_TILE * PIPE_TILES)]
    if name == "cluster_handshake":
        return [1000 * (i // 64) + i % 64 + 7 for i in range(128)]
    if name == "arrive_drop":
        acc = list(drop_input()[:STAY])
        for _ in range(ROUNDS):
            acc = [acc[i] + acc[(i + 1) % STAY] for i in range(STAY)]
        return acc + [0] * (64 - STAY)
    if name == "calls":
        return [i * (i % 8) + 1 for i in range(32)]
    raise KeyError(name)
