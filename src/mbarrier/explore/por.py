"""Partial-order reduction that knows mbarrier: footprints and stubborn sets.

A *footprint item* is `(object, mode)`. Objects: `("mb", cta, offset)` an mbarrier, `("sm", cta, chunk)`
16 bytes of shared memory, `("gm", chunk)` 16 bytes of global memory, `("bar", cta)` the CTA's bar.sync
barriers, `("cl", cluster)` the cluster barrier, `("warp", cta, warp)` a warp's collectives, `("cp", aid)`
and `("bulk", aid)` the cp.async and bulk copies a thread issued, `("live", cta)` whether a CTA still
runs. `None` in place of a CTA or an offset means "any" (an address the analysis cannot know). Modes:
READ, WRITE, JOIN for arrivals at bar.sync, the cluster barrier and warp collectives, which commute with each
other (the arrived set is the same in any order) but not with reads of it, exits or counted bars, and
LEAVE for what an exit does to those and to its CTA's liveness (exits commute with each other).

Two items conflict when their objects may be the same and their modes are not both READ, both JOIN or
both LEAVE. Waits are READs of their mbarrier, so waits commute with each other; plain arrivals are
JOINs; every other mbarrier operation is a WRITE. Operations on different barriers or bytes never conflict.

A stubborn set (Valmari) is closed under: an enabled agent in the set brings in every agent whose
current or *future* operations conflict with its next one; a blocked agent brings in every agent that
could change what it waits for. The futures are those the other agents can reach before the set's seed
moves (`explore.frozen`: cut at barriers and mbarrier waits they cannot pass meanwhile), read from the
code with register values propagated from the thread's registers now (`explore.values`). Exploring only
the set's enabled agents preserves every deadlock and, for every reachable violation, some violation.
"""

from __future__ import annotations

from collections.abc import Iterable

from mbarrier.explore.code import (
    ATOM,
    BAR,
    BULK,
    BULK_STORE,
    CLUSTER,
    CP_ASYNC,
    CP_MB,
    CP_WAIT,
    EXIT,
    LOAD,
    MB,
    STORE,
    WARP,
    WARP_READ,
    Addr,
    Code,
    Ins,
)
from mbarrier.explore.frozen import Frozen
from mbarrier.explore.values import Env, value
from mbarrier.sim.address import OWN, shared_address
from mbarrier.sim.machine import WAITING_DEPS, Copy, Cta, Machine, Thread
from mbarrier.sim.waits import AtBar, AtCluster, ForCopies, InCollective, OnMbarrier

READ, WRITE, JOIN, LEAVE = 0, 1, 2, 3
Item = tuple[tuple[object, ...], int]
Future = dict[object, list[Item]]


def _group(items: Iterable[Item]) -> Future:
    out: Future = {}
    for it in dict.fromkeys(items):
        out.setdefault(it[0][0], []).append(it)
    return out


def conflict(a: int, b: int) -> bool:
    return not (a == b and a != WRITE)


class Footprints:
    """Footprints of agents' next operations and of everything they may still do."""

    def __init__(self, m: Machine, code: Code) -> None:
        self.m = m
        self.code = code

    # -- addresses -----------------------------------------------------------------------------------
    def _value(self, t: Thread, a: Addr, pc: int, future: bool, env: Env | None = None) -> int | None:
        """An address; in the future, known when its base register is fixed or `env` (the register
        values at that instruction, `explore.values`) knows it."""
        if a.base is None:
            return a.offset
        v = t.regs[a.base] if not future else value(self.code, t, pc, env, a.base)
        if not isinstance(v, int):
            return None
        return (v + a.offset) & a.mask

    def _shared(self, t: Thread, space: str, v: int | None) -> tuple[int | None, int | None] | None:
        """(cta index, offset) of a shared address, None when it is not shared; unknowns as None."""
        if v is None:
            return (t.cta.index, None) if space == "cta" else (None, None)
        found = shared_address(space, v)
        if found is None:
            return None
        rank, off = found
        if rank == OWN:
            return t.cta.index, off
        ctas = t.cta.cluster.ctas
        return (ctas[rank].index, off) if rank < len(ctas) else (None, None)

    def _mem(self, t: Thread, a: Addr | None, size: int | None, mode: int, pc: int,
             future: bool, env: Env | None = None) -> list[Item]:
        if a is None:
            return [(("sm", None, None, None), mode), (("gm", None, None), mode)]
        v = self._value(t, a, pc, future, env)
        if a.space == "global":
            return _chunks("gm", None, v, size, mode)
        sh = self._shared(t, a.space, v)
        if sh is None:
            return _chunks("gm", None, v, size, mode)
        items = _chunks("sm", sh[0], sh[1], size, mode)
        if a.space == "generic" and v is None:
            items.append((("gm", None, None), mode))
        if sh[0] != t.cta.index:
            items.append((("live", sh[0]), READ))
        return items

    def _mb(self, t: Thread, a: Addr | None, mode: int, pc: int, future: bool,
            env: Env | None = None) -> list[Item]:
        if a is None:
            return [(("mb", None, None), mode)]
        v = self._value(t, a, pc, future, env)
        sh = self._shared(t, a.space, v)
        if sh is None:
            return [(("mb", None, None), mode)]
        items: list[Item] = [(("mb", sh[0], sh[1]), mode)]
        if sh[0] != t.cta.index:
            items.append((("live", sh[0]), READ))
        return items

    # -- one instruction -----------------------------------------------------------------------------
    def of_ins(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None = None) -> list[Item]:
        k = x.kind
        cta = t.cta.index
        if k == MB:
            # Plain arrivals commute with each other: the counts add up the same in any order, and
            # when one of them would complete the phase in between, both orders raise a violation
            # (the later one underflows pending or arrives before the phase was waited for).
            mode = READ if x.mb_op in ("test_wait", "try_wait") else JOIN if x.mb_plain else WRITE
            items = self._mb(t, x.addr, mode, pc, future, env)
            if x.mb_op in ("init", "inval"):
                items += self._mem(t, x.addr, 8, WRITE, pc, future, env)
            return items
        if k == LOAD:
            return self._mem(t, x.addr, x.size, READ, pc, future, env)
        if k == STORE:
            return self._mem(t, x.addr, x.size, WRITE, pc, future, env)
        if k == ATOM:
            if x.op in ("atom", "red"):
                return self._mem(t, x.addr, x.size, WRITE, pc, future, env)
            return [(("any",), WRITE)]
        if k == BAR:
            return [(("bar", cta), WRITE if x.counted else JOIN)]
        if k == CLUSTER:
            return [(("cl", t.cta.cluster.index), JOIN)]
        if k == WARP:
            return [(("warp", cta, t.aid // 32), JOIN)]
        if k == WARP_READ:
            return [(("warp", cta, t.aid // 32), READ)]
        if k == EXIT:
            # Exits commute with each other (LEAVE): each lowers the live counts the bar.sync, cluster
            # and warp-collective checks compare with, and those releases are monotone, so two exits
            # end in the same state in either order; the CTA dies at whichever exit is last.
            return [(("bar", cta), LEAVE), (("cl", t.cta.cluster.index), LEAVE),
                    (("warp", cta, t.aid // 32), LEAVE), (("live", cta), LEAVE), (("cp", t.aid), READ)]
        if k == CP_WAIT:
            return [(("cp", t.aid), READ), (("bulk", t.aid), READ)]
        if k == CP_ASYNC:
            return (self._mem(t, x.addr, x.size, WRITE, pc, future, env)
                    + self._mem(t, x.addr2, x.size, READ, pc, future, env)
                    + [(("cp", t.aid), JOIN)])
        # A thread's copies: `("cp", aid)` its cp.async copies (and their arrive-on), `("bulk", aid)`
        # its bulk copies. Issuing a copy and a copy landing are JOINs: they commute with each other (a
        # landing touches only its own copy's status, an issue only appends to the open group). What
        # observes them READs: the wait_group/wait_all instructions both, an exit only the cp.async
        # ones (it checks those for untracked copies; bulk copies into a dying CTA are the "live"
        # object's business). cp.async.mbarrier.arrive, which takes over the copies so far, WRITEs.
        if k == CP_MB:
            return self._mb(t, x.bar, WRITE, pc, future, env) + [(("cp", t.aid), WRITE)]
        if k == BULK:
            size = self._size(t, x, pc, future, env)
            src = self._mem(t, x.addr2, size, READ, pc, future, env) if x.reads_source else []
            return (self._mem(t, x.addr, size, WRITE, pc, future, env) + src
                    + self._mb(t, x.bar, WRITE, pc, future, env) + [(("bulk", t.aid), JOIN)])
        if k == BULK_STORE:
            size = self._size(t, x, pc, future, env)
            return (self._mem(t, x.addr, size, WRITE, pc, future, env)
                    + self._mem(t, x.addr2, size, READ, pc, future, env) + [(("bulk", t.aid), JOIN)])
        return []

    def _size(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None) -> int | None:
        """A bulk copy's size: its immediate, or its register's value where known (nvcc puts it in one)."""
        if x.size is not None:
            return x.size
        found = x.size_arg
        if found is None:
            return None
        slot, const = found
        if slot is None:
            return const
        v = t.regs[slot] if not future else value(self.code, t, pc, env, slot)
        return v if isinstance(v, int) else None

    # -- agents --------------------------------------------------------------------------------------
    def current(self, a: Thread | Copy) -> list[Item]:
        """The footprint of the agent's next step (exact: addresses from its registers now)."""
        if isinstance(a, Copy):
            return copy_items(a)
        return self.of_ins(a, self.code.ins[a.pc], a.pc, False)

    def _reachable(self, t: Thread, pc: int, cut: frozenset[str] = frozenset()) -> list[int]:
        """Instructions reachable after pc, following guards that read fixed registers, not past a
        barrier of a kind in `cut` (the barrier itself is included)."""
        code = self.code
        seen: set[int] = set()
        stop = code.ins[pc].sync_all in cut and code.ins[pc].sync_all is not None
        todo = [] if stop else list(self._succ(t, pc, pc))
        while todo:
            j = todo.pop()
            if j in seen:
                continue
            seen.add(j)
            x = code.ins[j]
            if x.sync_all is not None and x.sync_all in cut and self._guard_may(t, x, pc):
                if x.guard is None or code.fixed(pc, x.guard[0]):
                    continue
            todo.extend(self._succ(t, j, pc))
        return [j for j in seen if self._guard_may(t, code.ins[j], pc)]

    def _guard_may(self, t: Thread, x: Ins, pc: int, env: Env | None = None) -> bool:
        if x.guard is None:
            return True
        g = value(self.code, t, pc, env, x.guard[0])
        return g is None or bool(g) != x.guard[1]

    def _succ(self, t: Thread, j: int, pc: int, env: Env | None = None) -> tuple[int, ...]:
        x = self.code.ins[j]
        succ = self.code.succ[j]
        if x.guard is None or len(succ) < 2:
            return succ
        g = value(self.code, t, pc, env, x.guard[0])
        if g is None:
            return succ
        return succ[:1] if bool(g) != x.guard[1] else succ[1:]


def copy_items(c: Copy) -> list[Item]:
    """What an in-flight copy (or a pending cp.async arrive-on) does when it lands."""
    group = "cp" if c.kind in ("cp.async", "cp.async.mbarrier.arrive") else "bulk"
    items: list[Item] = [((group, c.thread.aid), JOIN)]
    if c.kind == "cp.async.mbarrier.arrive":
        assert c.bar_cta is not None
        return items + [(("mb", c.bar_cta.index, c.bar_off), JOIN)]
    kind, scta, saddr = c.src
    if kind == "global":
        items += _chunks("gm", None, saddr, c.src_size, READ)
    elif kind == "shared":
        assert scta is not None
        items += _chunks("sm", scta.index, saddr, c.size, READ)  # (st.async/red.async carry a value)
    if c.dst_cta is None:
        items += _chunks("gm", None, c.dst, c.size, WRITE)
    else:
        items += _chunks("sm", c.dst_cta.index, c.dst, c.size, WRITE) + [(("live", c.dst_cta.index), READ)]
    if c.bar_cta is not None:
        items.append((("mb", c.bar_cta.index, c.bar_off), WRITE))
    return items


def _chunks(space: str, cta: int | None, addr: int | None, size: int | None, mode: int) -> list[Item]:
    """A byte range [lo, hi) of shared (per CTA) or global memory; None bounds mean "anywhere"."""
    if addr is None or size is None:
        return [((space, cta, None, None) if space == "sm" else (space, None, None), mode)]
    hi = addr + max(size, 1)
    return [(("sm", cta, addr, hi) if space == "sm" else ("gm", addr, hi), mode)]


def _matches(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    if a[0] == "any" or b[0] == "any":
        return True
    if a[0] != b[0]:
        return False
    if a[0] == "sm":
        if a[1] is not None and b[1] is not None and a[1] != b[1]:
            return False
        return a[2] is None or b[2] is None or (a[2] < b[3] and b[2] < a[3])  # type: ignore[operator]
    if a[0] == "gm":
        return a[1] is None or b[1] is None or (a[1] < b[2] and b[1] < a[2])  # type: ignore[operator]
    return all(x is None or y is None or x == y for x, y in zip(a[1:], b[1:], strict=True))


def conflicts(items: Iterable[Item], future: Future) -> bool:
    anything = future.get("any")
    for obj, mode in items:
        if anything or obj[0] == "any":
            if obj[0] == "any" and not future:
                continue
            return True
        for obj2, mode2 in future.get(obj[0], ()):
            if conflict(mode, mode2) and _matches(obj, obj2):
                return True
    return False


def awaited(m: Machine, a: Thread | Copy, mb: tuple[int, int] | None) -> list[Item]:
    """What a blocked agent waits for, as READ items: whoever may write them could unblock it."""
    if isinstance(a, Copy):
        return [(("cp", a.thread.aid), READ)]
    if mb is not None:
        return [(("mb", mb[0], mb[1]), READ)]
    w = a.wait
    if isinstance(w, OnMbarrier):
        return [(("mb", w.cta, w.off), READ)]
    if isinstance(w, AtBar):
        return [(("bar", a.cta.index), READ)]
    if isinstance(w, AtCluster):
        return [(("cl", a.cta.cluster.index), READ)]
    if isinstance(w, InCollective):
        return [(("warp", a.cta.index, a.aid // 32), READ)]
    if isinstance(w, ForCopies):
        return [(("cp", a.aid), READ)]
    return [(("any",), READ)]


# The barrier cut (`_cuts`) a thread blocked for this reason is inside of.
_WAIT_CUT: dict[type, str] = {AtBar: "cta", InCollective: "warp", AtCluster: "cluster"}


class AllFootprints:
    """Footprints of agents in any function: threads inside a call (their return is not modelled) may
    touch anything."""

    def __init__(self, fps: dict[str, Footprints]) -> None:
        self.fps = fps
        self._anything: Future = {"any": [(("any",), WRITE)]}
        self.frozen = Frozen()
        self._grouped: dict[int, tuple[list[Item], Future]] = {}

    def current(self, a: Thread | Copy) -> list[Item]:
        if isinstance(a, Copy):
            return copy_items(a)
        return self.fps[a.func.name].current(a)

    def future(self, a: Copy | Thread) -> Future:
        """The future of an agent the frozen analysis leaves alone: a copy's landing, or anything for a
        thread inside a call (its return is not modelled)."""
        if isinstance(a, Copy):
            return _group(copy_items(a))
        assert a.frames
        return self._anything

    def frozen_futures(self, m: Machine, agents: list[Thread | Copy], seed: int,
                       blocked_on: dict[int, tuple[int, int]]) -> tuple[list[Future], frozenset[int]]:
        """Every agent's future while agents[seed] is frozen (`explore.frozen`): threads stop at the
        barrier cuts and at the mbarrier waits they cannot pass before the seed moves."""
        s = agents[seed]
        cuts: list[frozenset[str] | None] = []
        for b in agents:
            cut = self.cuts(s, b)
            if isinstance(b, Thread) and cut and b.wait is not None and _WAIT_CUT.get(type(b.wait)) in cut:
                cuts.append(None)  # inside a barrier that cannot complete before the seed moves
            else:
                cuts.append(cut)
        lists, immortal = self.frozen.futures(m, self.fps, agents, seed, cuts, blocked_on)
        out: list[Future] = []
        for b, bcut, items in zip(agents, cuts, lists, strict=True):
            if items is None:
                out.append({} if bcut is None else self.future(b))
                continue
            found = self._grouped.get(id(items))
            if found is None or found[0] is not items:
                found = self._grouped[id(items)] = (items, _group(items))
            out.append(found[1])
        return out, immortal

    def cuts(self, seed: Thread | Copy, other: Thread | Copy) -> frozenset[str]:
        if isinstance(other, Thread) and not other.frames:
            return _cuts(self.fps[other.func.name].code, seed, other)
        return frozenset()


def _cuts(code: Code, seed: Thread | Copy, other: Thread | Copy) -> frozenset[str]:
    """Barriers `other` cannot pass before the (enabled) seed moves: whole-CTA bar.sync of the seed's
    CTA, full-warp bar.warp.sync of its warp, barrier.cluster.wait of its cluster (if it has not
    arrived). The seed is enabled, so it is not waiting inside any of them."""
    if not isinstance(seed, Thread) or not isinstance(other, Thread):
        return frozenset()
    cut = []
    if other.cta is seed.cta and code.cta_barriers_whole:
        cut.append("cta")
    if other.warp is seed.warp:
        cut.append("warp")
    if other.cta.cluster is seed.cta.cluster and not seed.cl_arrived:
        cut.append("cluster")
    return frozenset(cut)


_BUCKET = 7  # memory ranges are indexed by 128-byte buckets


def _buckets(obj: tuple[object, ...]) -> range | None:
    lo, hi = (obj[2], obj[3]) if obj[0] == "sm" else (obj[1], obj[2])
    if lo is None or hi is None or (obj[0] == "sm" and obj[1] is None):
        return None
    first, last = lo >> _BUCKET, (hi - 1) >> _BUCKET  # type: ignore[operator]
    return range(first, last + 1) if last - first < 64 else None


class Index:
    """Who may touch what: the futures of every agent of one state, by object, for the closure."""

    def __init__(self, futures: list[Future], immortal: frozenset[int] = frozenset()) -> None:
        """`immortal`: CTAs that stay alive whatever the agents outside the set do (`explore.frozen`):
        their liveness items are left out, so no exit or copy conflicts through them."""
        self.n = len(futures)
        self.exact: dict[tuple[object, ...], list[tuple[int, int]]] = {}
        self.by_kind: dict[object, list[tuple[int, tuple[object, ...], int]]] = {}
        self.wild: dict[object, list[tuple[int, tuple[object, ...], int]]] = {}
        self.mem: dict[tuple[object, ...], list[tuple[int, tuple[object, ...], int]]] = {}
        self.anything: list[int] = []
        for j, fut in enumerate(futures):
            for kind, items in fut.items():
                if kind == "any":
                    self.anything.append(j)
                    continue
                if kind == "live" and immortal:
                    items = [it for it in items if it[0][1] not in immortal]
                for obj, mode in items:
                    entry = (j, obj, mode)
                    if kind in ("sm", "gm"):
                        bs = _buckets(obj)
                        if bs is None:
                            self.wild.setdefault(kind, []).append(entry)
                        else:
                            space = obj[:2] if kind == "sm" else (kind,)
                            for b in bs:
                                self.mem.setdefault(space + (b,), []).append(entry)
                        continue
                    if None in obj:
                        self.wild.setdefault(kind, []).append(entry)
                    else:
                        self.exact.setdefault(obj, []).append((j, mode))
                    self.by_kind.setdefault(kind, []).append(entry)

    def conflicting(self, items: Iterable[Item]) -> set[int]:
        out = set(self.anything)
        for obj, mode in items:
            kind = obj[0]
            if kind == "any":
                return set(range(self.n))
            if kind in ("sm", "gm"):
                bs = _buckets(obj)
                if bs is None:
                    cands: Iterable[tuple[int, tuple[object, ...], int]] = [
                        e for key, lst in self.mem.items() if key[0] == kind for e in lst]
                else:
                    space = obj[:2] if kind == "sm" else (kind,)
                    cands = [e for b in bs for e in self.mem.get(space + (b,), ())]
                    if kind == "sm" and obj[1] is not None:
                        cands += [e for b in bs for e in self.mem.get(("sm", None, b), ())]
                for j, obj2, mode2 in list(cands) + self.wild.get(kind, []):
                    if j not in out and conflict(mode, mode2) and _matches(obj, obj2):
                        out.add(j)
                continue
            if None in obj:
                for j, obj2, mode2 in self.by_kind.get(kind, ()):
                    if j not in out and conflict(mode, mode2) and _matches(obj, obj2):
                        out.add(j)
                continue
            for j, mode2 in self.exact.get(obj, ()):
                if conflict(mode, mode2):
                    out.add(j)
            for j, obj2, mode2 in self.wild.get(kind, ()):
                if j not in out and conflict(mode, mode2) and _matches(obj, obj2):
                    out.add(j)
        return out


def stubborn(m: Machine, fp: AllFootprints, agents: list[Thread | Copy], enabled: dict[int, bool],
             blocked_on: dict[int, tuple[int, int]], max_seeds: int = 3) -> list[int]:
    """Indices (into `agents`) of the enabled agents of a small stubborn set."""
    seeds = [i for i, a in enumerate(agents) if enabled.get(i)]
    # Cheap seeds first: copies and threads whose next step touches few objects.
    seeds.sort(key=lambda i: (not isinstance(agents[i], Copy), len(fp.current(agents[i]))))
    best: list[int] | None = None
    for seed in seeds[:max_seeds]:
        index = Index(*fp.frozen_futures(m, agents, seed, blocked_on))
        in_set = {seed}
        work = [seed]
        count = 1
        while work:
            i = work.pop()
            a = agents[i]
            items = fp.current(a) if enabled.get(i) else awaited(m, a, blocked_on.get(i))
            for j in index.conflicting(items):
                if j not in in_set:
                    in_set.add(j)
                    work.append(j)
                    if enabled.get(j):
                        count += 1
            if best is not None and count >= len(best):
                break
        if best is not None and count >= len(best):
            continue
        best = sorted(k for k in in_set if enabled.get(k))
        if len(best) == 1:
            break
    return best if best is not None else []


def is_waiting_deps(a: Thread | Copy) -> bool:
    return isinstance(a, Copy) and a.status == WAITING_DEPS


__all__ = ["Cta", "Footprints", "stubborn"]
