"""N simulated threads for replaying the manual's examples: each thread is a generator that yields
after every mbarrier operation, and a seeded scheduler interleaves them.

A waiting loop (`while not b.test_wait(tok): yield`) spins until other threads make progress, as on
the GPU; a schedule that leaves only spinning threads would be a hang, and `run` reports it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

Program = Iterator[None]


def run(threads: dict[str, Program], seed: int, max_steps: int = 20_000) -> list[str]:
    """Run the threads to completion in a random interleaving; return the order of steps taken."""
    rng = random.Random(seed)
    live = dict(threads)
    order: list[str] = []
    while live:
        if len(order) >= max_steps:
            raise AssertionError(f"no progress after {max_steps} steps: {sorted(live)} still running")
        name = rng.choice(sorted(live))
        try:
            next(live[name])
            order.append(name)
        except StopIteration:
            del live[name]
    return order


def spin(test: Callable[[], bool]) -> Program:
    """A waiting loop: test, and yield to the other threads until the test returns True."""
    while not test():
        yield
