"""`mbarrier demo`: the tool's main job on bundled examples, with no arguments.

First `mbarrier check` on a TMA-style ring (a producer, two consumers, two stages): every interleaving
of its threads and bulk copies verified; then the same kernel with a planted bug (the producer announces
4 bytes more than it copies), whose deadlock comes back explained with a replayable schedule; last, a
short tour of the mbarrier object itself.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from functools import partial

import mbarrier as mb


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="run the bundled example (no arguments needed)")
    p.set_defaults(handler=main)


def _state(b: mb.Barrier) -> str:
    return (f"phase={b.phase} pending={b.pending:<2} expected={b.expected} tx={b.tx:<4} "
            f"word={b.word:#018x}")


def core_tour(out: Callable[[str], None] = print) -> None:
    """A producer/consumer round trip on a full/empty pair of barriers, one line per operation."""
    full, empty = mb.Barrier("full"), mb.Barrier("empty")

    def step(who: str, b: mb.Barrier, call: str, fn: Callable[[], object]) -> object:
        result = fn()
        shown = "" if result is None else f" -> {result!r}"
        out(f"  {who:<9} {b.name}.{call}{shown}")
        out(f"  {'':<9}   {b.name:<5} {_state(b)}")
        return result

    out("A producer and two consumers share one stage: `full` counts the producer's arrival and the")
    out("256 bytes its copy brings (tx-count); `empty` counts the consumers' releases.\n")
    step("setup", full, "init(1)", lambda: full.init(1))
    step("setup", empty, "init(2)", lambda: empty.init(2))
    for rnd in range(2):
        out(f"\n-- round {rnd}: the stage is filled and drained (phase parity {rnd & 1})")
        step("producer", empty, f"try_wait(parity={1 - (rnd & 1)})",
             partial(empty.try_wait, parity=1 - (rnd & 1)))
        step("producer", full, "arrive(expect_tx=256)", lambda: full.arrive(expect_tx=256))
        step("consumer0", full, f"try_wait(parity={rnd & 1})", partial(full.try_wait, parity=rnd & 1))
        step("copy", full, "complete_tx(128)", lambda: full.complete_tx(128))
        step("copy", full, "complete_tx(128)", lambda: full.complete_tx(128))
        for c in range(2):
            step(f"consumer{c}", full, f"try_wait(parity={rnd & 1})", partial(full.try_wait, parity=rnd & 1))
            step(f"consumer{c}", empty, "arrive()", lambda: empty.arrive())

    out("\n-- a .noComplete arrival carries the pending count in its token")
    step("producer", empty, "try_wait(parity=1)", lambda: empty.try_wait(parity=1))
    tok = step("consumer0", empty, "arrive(count=1, no_complete=True)",
               lambda: empty.arrive(count=1, no_complete=True))
    assert isinstance(tok, mb.Token)
    out(f"  {'':<9} mb.pending_count(token) = {mb.pending_count(tok)}")

    out("\n-- undefined behaviour is caught, never wrapped silently")
    out(f"  consumer1 {empty.name}.arrive(count=3)")
    try:
        empty.arrive(count=3)
    except mb.Violation as v:
        out(f"  caught {type(v).__name__} [rule {v.rule}, PTX ISA {v.section}]:")
        out(f"    {v}")


def check_tour(out: Callable[[str], None] = print) -> None:
    """Check the bundled ring (verified) and its tx-count bug (a deadlock, explained)."""
    from mbarrier import examples, sim
    from mbarrier.cli.schedules import launch_fingerprint
    from mbarrier.explore import Replay, run
    from mbarrier.explore.check import Finding, check
    from mbarrier.explore.run import TraceStep
    from mbarrier.report.check import format_result

    corpus = examples.HERE / "corpus"
    ring = "a producer fills two stages for three iterations; two consumers drain them"
    for name, what in (("ring", ring),
                       ("ring_tx_mismatch",
                        "the same kernel, but its expect_tx announces 20 bytes for a 16-byte copy")):
        path = corpus / f"{name}.ptx"
        module = sim.load(path)
        launch = [str(path), "--grid", "1", "--block", "3"]
        out(f"$ {shlex.join(['mbarrier', 'check', *launch])}")
        out(f"  ({what})")

        def trace(f: Finding, module: object = module) -> list[TraceStep]:
            m = sim.launch(module, grid=1, block=3)  # type: ignore[arg-type]
            return run(m, Replay(f.schedule), max_steps=len(f.aids), trace=True).trace or []

        result = check(module, grid=1, block=3)
        fingerprint = launch_fingerprint(module, sim.launch(module, grid=1, block=3))
        for line in format_result(result, trace, shlex.join(["mbarrier", "run", *launch]), fingerprint):
            out(line)
        out("")


def main(args: argparse.Namespace) -> int:
    print("== Every interleaving, checked (mbarrier check)\n")
    check_tour()
    print("== The mbarrier object, operation by operation (PTX ISA 9.7.13.15)\n")
    core_tour()
    return 0
