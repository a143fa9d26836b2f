"""Who may touch what: each agent's future indexed by object (`FutureIndex`) and a state's futures together
(`Index`), for the stubborn closure's conflict queries (`explore.closure`, built by `explore.por`). Memory
ranges are indexed by 128-byte buckets; a query's answer is kept per future and per index."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import compress
from operator import attrgetter

from mbarrier.explore.footprints import Future, Item, conflict, matches

_BUCKET = 7  # memory ranges are indexed by 128-byte buckets
MEMO_KEPT = 16  # answers kept per future


def _buckets(obj: tuple[object, ...]) -> range | None:
    lo, hi = (obj[2], obj[3]) if obj[0] == "sm" else (obj[1], obj[2])
    if lo is None or hi is None or (obj[0] == "sm" and obj[1] is None):
        return None
    first, last = lo >> _BUCKET, (hi - 1) >> _BUCKET  # type: ignore[operator]
    return range(first, last + 1) if last - first < 64 else None


class FutureIndex:
    """One agent's future by object, for the closure's queries (built once per future: the futures are
    cached with their plans, so a state's index costs a lookup per agent, not a pass over every item).
    Each kind of object is indexed at the first query that asks about it (`_index`): a state's futures
    are many (384 threads' in a CUTLASS kernel) and most of a state's queries ask about one or two kinds
    (a seed at an mbarrier arrive asks about that mbarrier, not about the threads' shared-memory reads)."""

    __slots__ = ("anything", "by_kind", "exact", "future", "indexed", "kinds", "live", "memo", "mem",
                 "touches", "wild")

    def __init__(self, fut: Future) -> None:
        self.future = fut
        self.anything = "any" in fut
        self.kinds = frozenset(fut)
        self.touches = bool(self.kinds) and not self.anything  # what `Index.touching` holds
        self.exact: dict[tuple[object, ...], list[int]] = {}
        self.by_kind: dict[object, list[Item]] = {}
        self.wild: dict[object, list[Item]] = {}
        self.mem: dict[tuple[object, ...], list[Item]] = {}
        self.live: list[Item] = list(fut.get("live", ()))
        self.indexed: set[object] = set()  # the kinds indexed so far
        # `hits`'s answers by (query number, immortal CTAs): most futures and queries recur state after
        # state (the threads that did not move).
        self.memo: dict[tuple[int, frozenset[int]], bool] = {}

    def _index(self, kind: object) -> None:
        """Index the items of one kind (the items themselves are kept, not copies)."""
        self.indexed.add(kind)
        if kind in ("any", "live"):
            return
        for it in self.future[kind]:
            obj, mode = it
            if kind in ("sm", "gm"):
                bs = _buckets(obj)
                if bs is None:
                    self.wild.setdefault(kind, []).append(it)
                else:
                    space = obj[:2] if kind == "sm" else (kind,)
                    for b in bs:
                        self.mem.setdefault(space + (b,), []).append(it)
                continue
            if None in obj:
                self.wild.setdefault(kind, []).append(it)
            else:
                self.exact.setdefault(obj, []).append(mode)
            self.by_kind.setdefault(kind, []).append(it)

    def hits(self, query: list[Asked], immortal: frozenset[int]) -> bool:
        """Whether any item of a query (`asked`) conflicts with this future (liveness of `immortal` CTAs
        left out)."""
        kinds = self.kinds
        for obj, mode, kind, keys in query:
            if kind not in kinds:
                continue
            if kind not in self.indexed:
                self._index(kind)
            if keys is not None:  # memory: the items in its buckets, then those of no known range
                mem = self.mem
                for key in keys:
                    for o2, m2 in mem.get(key, ()):
                        if conflict(mode, m2) and matches(obj, o2):
                            return True
                cands: Iterable[Item] = self.wild.get(kind, ())
            elif kind == "sm" or kind == "gm":  # a range too wide for buckets: every item of its kind
                cands = [e for key, lst in self.mem.items() if key[0] == kind for e in lst]
                cands += self.wild.get(kind, ())
            elif kind == "live":
                cands = [e for e in self.live if e[0][1] not in immortal]
            elif None in obj:
                cands = self.by_kind.get(kind, ())
            else:
                modes = self.exact.get(obj)
                if modes is not None:
                    for m2 in modes:
                        if conflict(mode, m2):
                            return True
                cands = self.wild.get(kind, ())
            for o2, m2 in cands:
                if conflict(mode, m2) and matches(obj, o2):
                    return True
        return False


# A query's item as `FutureIndex.hits` reads it: object, mode, kind and, for a memory range that buckets
# hold, the keys of its buckets in `FutureIndex.mem` (a known CTA's also the buckets of unknown CTAs).
Asked = tuple[tuple[object, ...], int, object, tuple[tuple[object, ...], ...] | None]


def asked(items: Iterable[Item]) -> list[Asked]:
    """A query's items with their buckets, worked out once for every future it is asked of."""
    out: list[Asked] = []
    for obj, mode in items:
        kind = obj[0]
        keys: tuple[tuple[object, ...], ...] | None = None
        if kind == "sm" or kind == "gm":
            bs = _buckets(obj)
            if bs is not None:
                space = obj[:2] if kind == "sm" else (kind,)
                keys = tuple(space + (b,) for b in bs)
                if kind == "sm" and obj[1] is not None:
                    keys += tuple(("sm", None, b) for b in bs)
        out.append((obj, mode, kind, keys))
    return out


NOTHING = FutureIndex({})  # the future of an agent that touches nothing
_ANYTHING, _TOUCHES = attrgetter("anything"), attrgetter("touches")


def _lists(futures: list[FutureIndex]) -> tuple[list[int], list[int], list[FutureIndex]]:
    """`Index`'s lists of its futures: who may touch anything; the numbers and futures touching something."""
    n = range(len(futures))
    touches = list(map(_TOUCHES, futures))
    anything = list(compress(n, map(_ANYTHING, futures)))
    return anything, list(compress(n, touches)), list(compress(futures, touches))


class Index:
    """Who may touch what: the futures of every agent of one state, for the closure."""

    def __init__(self, futures: list[FutureIndex], immortal: frozenset[int] = frozenset()) -> None:
        """`immortal`: CTAs that stay alive whatever the agents outside the set do (`explore.frozen`):
        their liveness items are left out, so no exit or copy conflicts through them."""
        self.n = len(futures)
        self.futures = futures
        self.immortal = immortal
        # Who may touch anything, and (numbers, futures) of those that touch something (threads waiting at
        # a closed gate touch nothing): listed at the first query (`_lists`), shared by an index of the
        # same futures (`like`; the closure asks the seed's own and one more of most states' futures).
        self._lists: tuple[list[int], list[int], list[FutureIndex]] | None = None
        self._answers: dict[int, set[int]] = {}  # by query number: the index is kept while the futures stand

    def like(self, immortal: frozenset[int]) -> Index:
        """An index of the same futures with other immortal CTAs (the lists shared, the answers not)."""
        out = Index(self.futures, immortal)
        out._lists = self._lists = self._lists or _lists(self.futures)
        return out

    @property
    def anything(self) -> list[int]:
        self._lists = self._lists or _lists(self.futures)
        return self._lists[0]

    def conflicting(self, items: Iterable[Item], query: int | None = None) -> set[int]:
        """The agents whose futures conflict with `items` (a set the caller must not change); `query`:
        their number (`AllFootprints.query`), under which the index and each future keep the answer."""
        items = list(items)
        if any(obj[0] == "any" for obj, _ in items):
            return set(range(self.n))
        self._lists = lists = self._lists or _lists(self.futures)
        out = set(lists[0])
        touching = zip(lists[1], lists[2], strict=True)
        immortal = self.immortal
        if query is None:
            prepared = asked(items)
            out.update(j for j, f in touching if f.hits(prepared, immortal))
            return out
        found = self._answers.get(query)
        if found is not None:
            return found
        self._answers[query] = out
        qk = (query, immortal)
        ready: list[Asked] | None = None
        for j, f in touching:
            hit = f.memo.get(qk)
            if hit is None:
                if len(f.memo) >= MEMO_KEPT:
                    f.memo.clear()
                if ready is None:
                    ready = asked(items)
                hit = f.memo[qk] = f.hits(ready, immortal)
            if hit:
                out.add(j)
        return out
