"""Why a launch's stubborn sets are big: their sizes by depth, and at the first set of at least --big
enabled agents, who brings whom into it and through which pair of items.

    PYTHONPATH=src python bench/sets.py --launch DIR/F.launch.json [--big 5] [--every 500] [--seeds]
        [mbarrier check options: --walks 0 --timeout 60 ...]

Runs `mbarrier check` with `explore.check.stubborn` wrapped: every --every states it prints the
histogram of set sizes per 50 levels of depth. At the first big set it prints the barriers of the
seed's CTA, then rebuilds the closure of the member whose closure is that set (`closure._Closure`) and,
breadth-first from the seed, for each agent taken in: the member that brings it (the first, in that
order, whose query conflicts with its future) and the first conflicting pair (the member's item, the
agent's future item), liveness of CTAs immortal for the query left out as the index does (a blocked
member's query is what it waits for). `--seeds`: also the size of one closure per seed kind
(`seeds._kind`), to see which seed the search should have taken.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from functools import partial
from typing import Any

import mbarrier.explore.check as check_module
from mbarrier.cli import main as cli_main
from mbarrier.explore.closure import _Closure, _outlived_exit
from mbarrier.explore.footprints import Item, awaited, conflict, matches
from mbarrier.explore.seeds import _kind
from mbarrier.sim.machine import Copy, Thread


def name(a: Thread | Copy) -> str:
    if isinstance(a, Thread):
        wait = f" waiting ({type(a.wait).__name__})" if a.wait is not None else ""
        return f"thread {a.aid} (CTA {a.cta.index}) at {a.func.sites[a.pc].text.strip()[:60]!r}{wait}"
    bar = f", barrier {a.bar_cta.index}:{a.bar_off}" if a.bar_cta is not None else ""
    return f"{a.kind} c{a.aid} (line {a.site.line}{bar})"


def query(c: _Closure, i: int) -> tuple[list[Item], Any]:
    """Member i's query and the index it asks, as `_Closure.run` builds them."""
    a = c.agents[i]
    ask = c.index if i != c.seed else c.own
    if not c.enabled.get(i):
        return awaited(c.m, a, c.blocked_on.get(i)), ask
    code = c.fp.code_of(a)
    items = c.quiet.adjust(a, code, c.counted.adjust(i, c.current(a)), partial(c._writers, i))
    if isinstance(a, Thread) and _outlived_exit(a, code) and a.cta.index not in ask.immortal:
        ask = ask.like(ask.immortal | {a.cta.index})
    return items, ask


def why(items: list[Item], ask: Any, j: int) -> tuple[Item, Item] | None:
    """The first pair of a query's item and agent j's future item that conflict."""
    future = [it for its in ask.futures[j].future.values() for it in its]
    for obj, mode in items:
        if obj[0] == "live" and obj[1] in ask.immortal:
            continue
        for obj2, mode2 in future:
            if obj2[0] == "live" and obj2[1] in ask.immortal:
                continue
            if conflict(mode, mode2) and matches(obj, obj2):
                return (obj, mode), (obj2, mode2)
    return None


def provenance(c: _Closure) -> None:
    order, seen = [c.seed], {c.seed}
    for i in order:
        items, ask = query(c, i)
        print(f"  [{i}] {'enabled' if c.enabled.get(i) else 'blocked'} {name(c.agents[i])}: query "
              f"{items[:6]}{' ...' if len(items) > 6 else ''}")
        found = ask.conflicting(items)
        for j in sorted(found - seen):
            seen.add(j)
            order.append(j)
            print(f"      brings [{j}] {name(c.agents[j])}: {why(items, ask, j)}")


def main() -> None:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--big", type=int, default=5)
    ap.add_argument("--every", type=int, default=500)
    ap.add_argument("--seeds", action="store_true")
    ours, rest = ap.parse_known_args()
    sizes: Counter[int] = Counter()
    by_depth: defaultdict[int, Counter[int]] = defaultdict(Counter)
    depth = [0]
    done = [False]
    original: Callable[..., list[int]] = vars(check_module)["stubborn"]
    expand = check_module.Explorer.expand

    def expanding(self: Any, entry: Any, frontier: Any) -> None:
        depth[0] = entry[1]
        expand(self, entry, frontier)

    def stubborn(m: Any, fp: Any, agents: list[Thread | Copy], enabled: dict[int, bool],
                 blocked_on: dict[int, tuple[int, int]], *args: Any, **kw: Any) -> list[int]:
        out = original(m, fp, agents, enabled, blocked_on, *args, **kw)
        sizes[len(out)] += 1
        by_depth[depth[0] // 50 * 50][len(out)] += 1
        if sum(sizes.values()) % ours.every == 0:
            print(f"sets: {sorted(sizes.items())}; by depth: "
                  f"{ {d: sorted(c.items()) for d, c in sorted(by_depth.items())} }", flush=True)
        if len(out) >= ours.big and not done[0]:
            done[0] = True
            big(m, fp, agents, enabled, blocked_on, out)
        return out

    def big(m: Any, fp: Any, agents: list[Thread | Copy], enabled: dict[int, bool],
            blocked_on: dict[int, tuple[int, int]], out: list[int]) -> None:
        print(f"first set of {len(out)} at depth {depth[0]}: {[name(agents[i]) for i in out]}")
        home = agents[out[0]]
        cta = home.cta if isinstance(home, Thread) else (home.bar_cta or home.thread.cta)
        for off, b in sorted(cta.barriers.items()):
            print(f"  barrier {cta.index}:{off}: phase {b.phase}, pending {b.pending}, tx {b.tx}, "
                  f"valid {b.valid}, waited {b.waited}")

        def current(a: Thread | Copy) -> list[Item]:
            return fp.current(a)  # type: ignore[no-any-return]

        fp.begin(agents)
        try:
            for seed in out:
                c = _Closure(m, fp, agents, enabled, blocked_on, seed, current, None, None)
                c.run(len(agents) + 1)
                if c.members() == out:
                    print(f"  the closure of [{seed}]:")
                    provenance(_Closure(m, fp, agents, enabled, blocked_on, seed, current, None, None))
                    break
            if ours.seeds:
                kinds: set[tuple[object, ...]] = set()
                for seed in (i for i, a in enumerate(agents) if enabled.get(i)):
                    if _kind(agents[seed]) in kinds:
                        continue
                    kinds.add(_kind(agents[seed]))
                    c = _Closure(m, fp, agents, enabled, blocked_on, seed, current, None, None)
                    c.run(len(agents) + 1)
                    print(f"  seed kind {_kind(agents[seed])} [{seed}] {name(agents[seed])}: "
                          f"{len(c.members())} enabled")
        finally:
            fp.begin(None)

    vars(check_module)["stubborn"] = stubborn  # what check.Explorer calls
    check_module.Explorer.expand = expanding  # type: ignore[method-assign]
    sys.argv = ["mbarrier", "check", *rest]
    try:
        code = cli_main()
    finally:
        print(f"sets: {sorted(sizes.items())}")
    sys.exit(code)


if __name__ == "__main__":
    main()
