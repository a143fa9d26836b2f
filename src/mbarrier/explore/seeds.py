"""The seeds the stubborn closure tries (`closure.stubborn`), in order: the closure stops at a set of one, so
the order decides what a state costs and which set of one is taken."""

from __future__ import annotations

from collections.abc import Callable

from mbarrier.explore.code import LOAD, STORE, Code
from mbarrier.sim.machine import Copy, Thread


def order(agents: list[Thread | Copy], seeds: list[int], n: int, sizes: dict[int, int],
          single: int | None, code_of: Callable[[Thread | Copy], Code | None],
          failed: frozenset[int] = frozenset()) -> list[int]:
    """The seeds (indices into `agents`) to try. Cheap ones first: copies and threads whose next step touches
    few objects (`sizes`, by index: the items of its next step; a wgmma.mma_async's engine, which its whole
    warp waits for, among the threads); of those the first n, then up to n more, each of a kind none before it
    had (copies of one kind from one line, threads at one pc): alike agents close alike (the pending
    ons of a warp's lanes), so where the first n are all of one kind another kind may give a smaller set. And
    a thread, where copies filled them: a copy that may land after every thread of its CTA exits conflicts
    with each thread's exit, while a thread that does not exit next keeps its CTA alive (`frozen.seed_lives`).
    Before all of them the agent of the last set of one (`single`) where it is a thread standing at a plain
    load or store: the child of the last state is most often expanded next, and a thread storing word after
    word is most often alone again. Agents whose closure grew past the first pass at an earlier state of
    the chain being expanded, and has not closed since (`failed`, by id; `Explorer.expand` forgets them
    off a chain), come after the others: most states differ from the last by one
    agent's step, and a CUTLASS producer whose closure takes in the consumers failed at each of the 256
    states where they arrived one by one on an mbarrier, before the consumer that closed alone. The order
    decides only which set is taken where several are smallest, and what a state costs."""
    seeds = sorted(seeds, key=lambda i: (not _cheap_copy(agents[i]), sizes[i]))
    out = seeds[:n]
    kinds = {_kind(agents[i]) for i in out}
    for i in seeds[n:]:
        k = _kind(agents[i])
        if k not in kinds:
            kinds.add(k)
            out.append(i)
            if len(out) == 2 * n:
                break
    if not any(isinstance(agents[i], Thread) for i in out):
        out += [i for i in seeds if isinstance(agents[i], Thread)][:1]
    if failed:
        out = [i for i in out if agents[i].aid not in failed] + [i for i in out if agents[i].aid in failed]
    again = [i for i in seeds if agents[i].aid == single and _plain(agents[i], code_of(agents[i]))]
    return again + [i for i in out if i not in again]


def more(agents: list[Thread | Copy], seeds: list[int], tried: list[int], n: int,
         sizes: dict[int, int]) -> list[int]:
    """Up to n further seeds, one of each kind no tried seed had (threads first, then by `sizes`): for a
    state where every closure `order` gave grew past the first pass. Its first n seeds may all be copies
    and threads whose closures take in a whole warpgroup (the pending arrive-ons of 256 producer threads,
    each conflicting with the others' arrivals), while a thread at another pc (one of them issuing its
    next cp.async) closes alone."""
    kinds = {_kind(agents[i]) for i in tried}
    out: list[int] = []
    for i in sorted(seeds, key=lambda i: (not isinstance(agents[i], Thread), sizes[i])):
        k = _kind(agents[i])
        if k not in kinds:
            kinds.add(k)
            out.append(i)
            if len(out) == n:
                break
    return out


def alike_first(agents: list[Thread | Copy], seeds: list[int], first: int) -> list[int]:
    """The seeds but `first`, those of its kind (`_kind`) first, each part in seed order: the candidates
    for a run of sets of one after `first`'s (`closure.alone_too`). Alike agents close alike (the lanes of
    a producer warp issuing one cp.async each, the threads of a warpgroup arriving at one bar.sync)."""
    k = _kind(agents[first])
    same = [i for i in seeds if i != first and _kind(agents[i]) == k]
    return same + [i for i in seeds if i != first and _kind(agents[i]) != k]


def _plain(a: Thread | Copy, code: Code | None) -> bool:
    """Whether `a` is a thread standing at a plain load or store (outside calls)."""
    return isinstance(a, Thread) and code is not None and not a.frames \
        and code.ins[a.pc].kind in (LOAD, STORE)


def _kind(a: Thread | Copy) -> tuple[object, ...]:
    """Copies of one kind into one CTA close alike, whatever line issued them (the 32 tensor loads a CuTe
    stage takes, one instruction each); threads at one pc. A wgmma's engines by their line: each reads
    its own warp's operands and completes to its own warp, and where some close over the others (the
    engines of a CUTLASS consumer warpgroup's k-block) one of another line closes alone."""
    if isinstance(a, Copy) and a.mma is not None:
        return (a.kind, a.site.line)
    if isinstance(a, Copy):
        home = a.bar_cta if a.bar_cta is not None else a.dst_cta if a.dst_cta is not None else a.thread.cta
        return (a.kind, home.index)
    return (a.func.name, a.pc)


def _cheap_copy(a: Thread | Copy) -> bool:
    return isinstance(a, Copy) and a.mma is None
