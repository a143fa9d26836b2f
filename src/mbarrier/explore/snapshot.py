"""Save and restore a machine's state in place, and its canonical key for state hashing.

`Machine.copy()` deep-copies everything (compiled code aside); the search needs something much
cheaper: a snapshot holds only the mutable fields, as tuples, and `restore` puts them back into the
same objects. The checker refuses to run on a machine whose classes have fields it does not know,
so a new piece of simulator state can never be silently left out of the search.

The key is canonical where the simulator's numbering is an accident of the schedule: in-flight copies
are named by what they are (issuer, addresses, size, barrier), not by their issue number.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain, compress
from operator import attrgetter, is_, is_not, itemgetter
from typing import Any

from mbarrier.core.barrier import Barrier
from mbarrier.sim.machine import (
    DONE,
    Cluster,
    Collective,
    Copy,
    Cta,
    Machine,
    NamedBarrier,
    Thread,
    TokenWord,
    Warp,
)
from mbarrier.sim.memory import PAGE
from mbarrier.sim.races import RaceMachine, RaceState
from mbarrier.sim.wgmmastate import NONE, WgState

_THREAD_STATE = ("pc", "regs", "status", "time", "effects", "last_fail", "wait", "cp_open", "cp_groups",
                 "bulk_open", "bulk_groups", "cl_arrived", "cl_gen", "ridx", "local", "frames", "func",
                 "code", "cc", "wg")
_THREAD_FIXED = ("aid", "cta", "warp", "lane", "tid")
_COPY_STATE = ("pc", "status", "ridx", "deps", "watchers")
_COPY_FIXED = ("aid", "code", "kind", "thread", "site", "dst_cta", "dst", "src", "size", "src_size",
               "bar_cta", "bar_off", "mma", "plan")
_CTA_STATE = ("smem", "barriers", "words", "bars", "live")
_CTA_FIXED = ("index", "ctaid", "rank", "cluster", "size", "threads", "symbols")
_BARRIER = Barrier.__slots__
_FIELDS = attrgetter(*_BARRIER)
_ZERO_PAGE = bytes(PAGE)
_KNOWN: dict[type[Any], set[str]] = {
    Thread: set(_THREAD_STATE + _THREAD_FIXED), Copy: set(_COPY_STATE + _COPY_FIXED),
    Cta: set(_CTA_STATE + _CTA_FIXED), Cluster: {"index", "ctas", "live", "phase", "count"},
    NamedBarrier: {"arrived", "count"}, Warp: {"threads", "pending", "nreg"},
    Collective: {"finish", "need", "parts"},
}
_MACHINE_STATE = {"runnable", "inflight", "next_aid", "parked", "gmem", "resolved"}
# `output` is printf's text: a log that no step reads back; `params` the kernel's parameters (read-only).
_MACHINE_FIXED = {"threads", "ctas", "clusters", "tracing", "events", "buffers", "functions", "frames",
                  "code_names", "output", "params"}
# `hb`: the happens-before state of a RaceMachine (sim.races), saved whole by RaceState.clone().
_MACHINE_RACES = {"hb"}


class UnknownState(RuntimeError):
    """The simulator grew state the checker does not save: exploring would be unsound."""


def check_known(m: Machine) -> None:
    for cls, known in _KNOWN.items():
        fields = set(cls.__slots__)
        if fields != known:
            raise UnknownState(f"{cls.__name__} has fields {sorted(fields ^ known)} that the checker's "
                               "snapshot does not know (update explore/snapshot.py)")
    fields = set(vars(m)) - (_MACHINE_RACES if isinstance(m, RaceMachine) else set())
    if fields != _MACHINE_STATE | _MACHINE_FIXED:
        raise UnknownState(f"Machine has fields {sorted(fields ^ (_MACHINE_STATE | _MACHINE_FIXED))} that "
                           "the checker's snapshot does not know (update explore/snapshot.py)")


# Positional tuples, built by save() and read by restore() and key() in the search's inner loop; their
# fields are typed where save() builds them.
Snapshot = tuple[Any, ...]
ThreadState = tuple[Any, ...]
# A snapshot's threads are in chunks of CHUNK consecutive ids, each a tuple: a step that changes one
# thread makes one new chunk and shares the others (`thread_states` lists them all).
CHUNK = 32
# A thread's registers are in chunks of REG_CHUNK slots, each a tuple: an entry shares with the thread's
# previous one the chunks its steps left unchanged. A kernel of 1,400 registers per thread and a warp
# changed per step kept 11 KB per changed thread and 170 KB per state as one tuple (CUTLASS, 768 threads).
REG_CHUNK = 64


def thread_states(s: Snapshot) -> list[ThreadState]:
    """Every thread's entry of a snapshot, by thread id."""
    return list(chain.from_iterable(s[0]))


def copy_id(c: Copy) -> tuple[object, ...]:
    """A copy named by what it is (issuer, line, addresses, size, barrier; a tensor copy's map and
    coordinates), not by its issue number; a wgmma.mma_async by its issuer, line and operands."""
    if c.mma is not None:
        return (c.kind, c.thread.aid, c.site.line, -1, 0, "wgmma", 0, 0, -1, 0, c.mma.key())
    return (c.kind, c.thread.aid, c.site.line, c.dst_cta.index if c.dst_cta else -1, c.dst, c.src[0],
            c.src[2], c.size, c.bar_cta.index if c.bar_cta else -1, c.bar_off,
            None if c.plan is None else c.plan.key)


def _wg_key(wg: WgState) -> tuple[object, ...]:
    """A thread's warpgroup-MMA state with its operations named by what they are (`copy_id`)."""
    if wg is NONE:
        return ()
    return (wg.fenced, tuple(sorted(wg.touched)), wg.accs, tuple(copy_id(c) + (c.status,) for c in wg.open),
            tuple(tuple(copy_id(c) + (c.status,) for c in g) for g in wg.groups),
            tuple((copy_id(c), v) for c, v in wg.results), wg.issued)


def _pending(cs: list[Copy]) -> tuple[object, ...]:
    """The copies of a thread's list that have not landed, named by what they are."""
    return tuple(copy_id(c) + (c.status,) for c in cs if c.status != DONE)


class Chunks(tuple):  # type: ignore[type-arg]
    """A register file of more than REG_CHUNK slots, as tuples of REG_CHUNK (`_reg_chunks`)."""

    __slots__ = ()


def _effects_at(fail: tuple[object, ...]) -> int:
    """The thread's effect count when its last wait failed: the last field of `Thread.last_fail`."""
    n = fail[-1]
    return n if isinstance(n, int) else 0


def _reg_chunks(regs: list[object] | tuple[object, ...], was: tuple[object, ...] | None
                ) -> tuple[object, ...]:
    """`regs` as one tuple, or beyond REG_CHUNK slots as Chunks, each the chunk of `was` holding the same
    objects where it has one (a small register file gains nothing from chunks: it stays one tuple)."""
    if len(regs) <= REG_CHUNK:
        return tuple(regs)
    old = was if type(was) is Chunks else None
    out = []
    for k, i in enumerate(range(0, len(regs), REG_CHUNK)):
        c = tuple(regs[i:i + REG_CHUNK])
        # The same objects, not equal ones: 1 == 1.0 == True, and a token word equals another of the
        # same bits (what restore puts back must be what the thread held).
        if old is not None and k < len(old) and len(old[k]) == len(c) and all(map(is_, old[k], c)):
            c = old[k]
        out.append(c)
    return Chunks(out)


def flat_regs(regs: tuple[object, ...]) -> list[object]:
    """The registers of an entry (`_reg_chunks`), in slot order."""
    return list(chain.from_iterable(regs)) if type(regs) is Chunks else list(regs)


def _thread_state(t: Thread, token_slots: Mapping[str, frozenset[int]], was: ThreadState | None = None,
                  same_regs: bool = False) -> ThreadState:
    """(canonical part, restore-only part) of one thread. `token_slots`: per function, the registers
    its arrives write (a slot number means something only in the function the thread is running).
    `was`: the thread's previous entry, whose unchanged register chunks the new one shares; `same_regs`:
    the thread's registers are those of `was` (it did not step since), whose chunks it takes whole."""
    wait = t.wait
    regs: list[object] | tuple[object, ...] = t.regs
    real = None
    slots = token_slots.get(t.func.name)
    if same_regs and was is not None:
        chunks, real = was[0][1], was[9]
    elif slots:
        # A token is compared by what a wait can see of it (its object, initialization and phase), not
        # by its pending bits, which depend on the order of arrivals; .noComplete tokens keep their
        # word for mbarrier.pending_count.
        canon = list(regs)
        for s in slots:
            v = canon[s]
            if isinstance(v, TokenWord) and not v.token.no_complete:
                canon[s] = ("token", v.token.barrier_id, v.token.generation, v.token.phase)
        if canon != regs:
            real = _reg_chunks(regs, None if was is None else was[9] or was[0][1])
            regs = canon
        chunks = _reg_chunks(regs, None if was is None else was[0][1])
    else:
        chunks = _reg_chunks(regs, None if was is None else was[0][1])
    copies: tuple[object, ...] = ()
    if t.cp_open or t.cp_groups or t.bulk_open or t.bulk_groups:
        # Copies that have landed are left out (a group keeps its place): nothing reads them any more
        # (wait_group skips them, cp.async.mbarrier.arrive does not watch them, an exit does not
        # check them), and whether a landed copy is still listed depends only on the order of its
        # landing and its thread's next cp.async.mbarrier.arrive, which commute (`explore.footprints`).
        copies = (_pending(t.cp_open), tuple(_pending(g) for g in t.cp_groups), _pending(t.bulk_open),
                  tuple(_pending(g) for g in t.bulk_groups))
    # A failed wait parks the thread at its next failure with no effect between (`Machine.mb_wait`): what
    # that reads is the effects since the last failure, not their running count (a poll that stores
    # between its tries would make a new state on every try).
    fail = None if t.last_fail is None else (t.last_fail[:-1], t.effects - _effects_at(t.last_fail))
    frames = tuple((f, tuple(r), pc, tuple(moves)) for f, r, pc, moves in t.frames) if t.frames else ()
    local = bytes(t.local) if t.local else b""
    core = (t.pc, chunks, t.status, t.time, fail, wait, t.cl_arrived, t.cl_gen, copies,
            t.func.name, local, tuple((f.name, r, pc) for f, r, pc, _ in frames), t.cc, _wg_key(t.wg))
    # The core's hash is taken once here: a state's key hashes every thread's, most of them unchanged.
    return (core, t.effects, wait, tuple(t.cp_open), tuple(map(tuple, t.cp_groups)),
            tuple(t.bulk_open), tuple(map(tuple, t.bulk_groups)), t.func, frames, real, hash(core), t.wg)


def save(m: Machine, token_slots: Mapping[str, frozenset[int]], prev: Snapshot | None = None,
         dirty: set[int] | None = None, moved: set[int] | None = None) -> Snapshot:
    """The mutable state. With `prev` and `dirty` (aids that may have changed since `prev`), the other
    threads' entries are shared with `prev` (the work is proportional to the dirty threads). `moved`:
    those of `dirty` whose registers may have changed (None: all); the others (the issuers of copies
    in flight, whose copies' statuses changed) keep `prev`'s register chunks, not compared again: a
    CUTLASS kernel's thread holds thousands of register slots."""
    ts = m.threads
    if prev is None or dirty is None:
        threads = tuple(tuple(_thread_state(t, token_slots) for t in ts[i:i + CHUNK])
                        for i in range(0, len(ts), CHUNK))
    else:
        chunks: list[tuple[ThreadState, ...]] = list(prev[0])
        by_chunk: dict[int, list[int]] = {}
        for aid in dirty:
            by_chunk.setdefault(aid // CHUNK, []).append(aid)
        for i, aids in by_chunk.items():
            entries = list(chunks[i])
            for aid in aids:
                j = aid - i * CHUNK
                entries[j] = _thread_state(ts[aid], token_slots, entries[j],
                                           moved is not None and aid not in moved)
            chunks[i] = tuple(entries)
        threads = tuple(chunks)
    copies = tuple((c, c.pc, c.status, c.deps, tuple(c.watchers)) for c in m.inflight)
    ctas = _same(tuple(_cta_state(c, prev[2][i] if prev is not None else None)
                       for i, c in enumerate(m.ctas)), prev, 2)
    clusters = tuple((c.live, c.phase, c.count) for c in m.clusters)
    warps = tuple((tuple((k, v.finish, v.need, tuple(v.parts.items())) for k, v in w.pending.items()), w.nreg)
                  for w in _warps(m))
    gmem = _same(tuple(_pages(r.pages, prev[5][i] if prev is not None else ())
                       for i, r in enumerate(m.gmem.regions)), prev, 5)
    parked = tuple((k, v[0], tuple(v[1])) for k, v in m.parked.items())
    # `resolved` caches address -> Barrier object; objects created after a snapshot must not leak back.
    hb = m.hb.clone() if isinstance(m, RaceMachine) else None
    return (threads, copies, ctas, clusters, warps, gmem, parked, _same(tuple(m.runnable), prev, 7),
            m.next_aid, _equal(tuple(m.resolved.items()), prev, 9), hb)


# What a step leaves unchanged is shared with the previous snapshot, not copied again: most steps
# change one thread, a few bytes and a barrier, and a queued state holds everything else in common
# with its parent (`restore` also skips the parts a snapshot shares with the machine's current one).
def _same(new: tuple[object, ...], prev: Snapshot | None, i: int) -> tuple[object, ...]:
    """`new`, or the equal part `i` of `prev` (a tuple of objects compared by identity)."""
    if prev is not None:
        old: tuple[object, ...] = prev[i]
        if len(old) == len(new) and all(map(is_, old, new)):
            return old
    return new


def _equal(new: tuple[object, ...], prev: Snapshot | None, i: int) -> tuple[object, ...]:
    """`new`, or part `i` of `prev` if equal (for parts whose objects compare by identity or by a value
    that restores the same state: the resolved-address cache, CTAs and barriers, which have no __eq__)."""
    if prev is not None and prev[i] == new:
        old: tuple[object, ...] = prev[i]
        return old
    return new


def _cta_state(c: Cta, was: tuple[object, ...] | None) -> tuple[object, ...]:
    """A CTA's shared memory, barriers, valid words, bar.sync state and live count, reusing the parts
    (and the whole) of its previous state `was` that are unchanged."""
    smem: object = bytes(c.smem) if was is None or c.smem != was[0] else was[0]
    barriers: object = tuple((off, b, _FIELDS(b)) for off, b in c.barriers.items())
    words: object = frozenset(c.words) if was is None or c.words != was[2] else was[2]
    bars: object = tuple((i, tuple(nb.arrived), nb.count) for i, nb in c.bars.items())
    if was is None:
        return (smem, barriers, words, bars, c.live)
    if barriers == was[1]:
        barriers = was[1]
    if bars == was[3]:
        bars = was[3]
    state = (smem, barriers, words, bars, c.live)
    return was if all(map(is_, state[:4], was[:4])) and c.live == was[4] else state


def _pages(pages: dict[int, bytearray], was: tuple[object, ...]) -> tuple[object, ...]:
    """A region's written pages as (page, bytes), reusing the pairs of its previous state `was` whose
    bytes are unchanged (and `was` itself if every pair is)."""
    before: dict[int, tuple[int, bytes]] = {pair[0]: pair for pair in was}  # type: ignore[index,misc]
    out: list[tuple[int, bytes]] = []
    for k, v in pages.items():
        if v != _ZERO_PAGE:
            old = before.get(k)
            out.append(old if old is not None and old[1] == v else (k, bytes(v)))
    return was if len(out) == len(was) and all(map(is_, out, was)) else tuple(out)


_WARPS: dict[int, list[Warp]] = {}


def _warps(m: Machine) -> list[Warp]:
    found = _WARPS.get(id(m))
    if found is None or (found and found[0] is not m.threads[0].warp):
        seen: dict[int, Warp] = {}
        for t in m.threads:
            if t.warp is not None and id(t.warp) not in seen:
                seen[id(t.warp)] = t.warp
        found = _WARPS[id(m)] = list(seen.values())
    return found


def restore(m: Machine, s: Snapshot, current: Snapshot | None = None) -> None:
    """Put the machine back into state `s`. `current`: a snapshot the machine is known to equal now;
    what `s` shares with it (unchanged threads, barriers, bar.sync and warp state) is left alone, so the
    work is proportional to what differs."""
    threads, copies, ctas, clusters, warps, gmem, parked, runnable, next_aid, resolved, hb = s
    if isinstance(hb, RaceState):
        m.hb = hb.clone()  # type: ignore[attr-defined]
    ts = m.threads
    if current is None:
        changed: list[int] = list(range(len(ts)))
    else:
        # Chunks and entries shared with `current` are unchanged threads: compared by identity, in C.
        changed = []
        for i in compress(range(len(threads)), map(is_not, threads, current[0])):
            changed += compress(range(i * CHUNK, (i + 1) * CHUNK), map(is_not, threads[i], current[0][i]))
    for aid in changed:
        t = ts[aid]
        core, t.effects, t.wait, cp_open, cp_groups, bulk_open, bulk_groups, func, frames, real, _, t.wg = \
            threads[aid // CHUNK][aid % CHUNK]
        t.pc, regs, t.status, t.time, fail = core[:5]
        if real is not None:
            regs = real
        t.cl_arrived, t.cl_gen = core[6], core[7]
        t.cc = core[12]
        t.last_fail = None if fail is None else (*fail[0], t.effects - fail[1])  # `_thread_state`
        if t.func is func and not frames and not t.frames:
            t.regs[:] = flat_regs(regs)
        else:
            t.func, t.code, t.regs = func, func.code, flat_regs(regs)
            t.frames = [(f, list(r), pc, list(moves)) for f, r, pc, moves in frames]
        if t.local:
            t.local[:] = core[10]
        t.cp_open = list(cp_open)
        t.cp_groups = [list(g) for g in cp_groups]
        t.bulk_open = list(bulk_open)
        t.bulk_groups = [list(g) for g in bulk_groups]
    inflight = []
    for c, pc, status, deps, watchers in copies:
        c.pc, c.status, c.deps = pc, status, deps
        c.watchers = list(watchers)
        inflight.append(c)
    m.inflight = inflight
    # A copy leaves `inflight` only when it lands, so one that a thread's groups still list but `s` does
    # not hold in flight had landed in `s`: its status may still say otherwise, left from a later state.
    # (A thread whose entry is shared with `current` lists the same copies with the same statuses.)
    live = {id(c) for c in inflight}
    for aid in changed:
        t = ts[aid]
        if t.cp_open or t.cp_groups or t.bulk_open or t.bulk_groups or t.wg is not NONE:
            for c in [*t.cp_open, *t.bulk_open, *(c for g in t.cp_groups for c in g),
                      *(c for g in t.bulk_groups for c in g), *t.wg.pending()]:
                if id(c) not in live:
                    c.status = DONE
    cur_ctas = current[2] if current is not None else (None,) * len(m.ctas)
    for cta, state, was in zip(m.ctas, ctas, cur_ctas, strict=True):
        if state is was:
            continue
        smem, barriers, words, bars, live_n = state
        if was is None or smem != was[0]:
            cta.smem[:] = smem
        if was is None or barriers != was[1]:
            same_bars = {id(b): fields for _, b, fields in was[1]} if was is not None else {}
            cta.barriers = {}
            for off, b, fields in barriers:
                if same_bars.get(id(b)) != fields:
                    for name, value in zip(_BARRIER, fields, strict=True):
                        setattr(b, name, value)
                cta.barriers[off] = b
        if was is None or words != was[2]:
            cta.words = set(words)
        if was is None or bars != was[3]:
            cta.bars = {}
            for i, arrived, count in bars:
                nb = NamedBarrier()
                nb.arrived, nb.count = list(arrived), count
                cta.bars[i] = nb
        cta.live = live_n
    for cl, (live_n, phase, count) in zip(m.clusters, clusters, strict=True):
        cl.live, cl.phase, cl.count = live_n, phase, count
    if current is None or warps != current[4]:
        for w, (pending, nreg) in zip(_warps(m), warps, strict=True):
            w.nreg = nreg
            w.pending = {}
            for k, finish, need, parts in pending:
                c = Collective(finish, need)
                c.parts = dict(parts)
                w.pending[k] = c
    for r, pages in zip(m.gmem.regions, gmem, strict=True):
        if len(r.pages) == len(pages) and all(r.pages.get(k) == v for k, v in pages):
            continue  # unchanged (compared in C, cheaper than copying the pages)
        r.pages = {k: bytearray(v) for k, v in pages}
    if current is None or parked != current[6]:
        m.parked = {k: (state, list(v)) for k, state, v in parked}
    _runnable(m, runnable, current is None)
    m.next_aid = next_aid
    m.resolved = dict(resolved)


def _runnable(m: Machine, runnable: tuple[Thread | Copy, ...], full: bool) -> None:
    """Restore `m.runnable` and each agent's index in it (-1 for an agent not in it: an invariant of the
    machine that `full` re-establishes after a step that raised half-way)."""
    old = m.runnable
    if full:
        for t in m.threads:
            t.ridx = -1
        for a in old:
            a.ridx = -1
        moved: list[int] = list(range(len(runnable)))
    else:
        if len(old) > len(runnable) or any(map(is_not, runnable, old)):
            for a in set(old).difference(runnable):
                a.ridx = -1
        moved = list(compress(range(len(runnable)), map(is_not, runnable, old)))
        moved += range(len(old), len(runnable))
    old[:] = runnable
    for i in moved:
        runnable[i].ridx = i


_HASH = itemgetter(10)


def key(s: Snapshot) -> tuple[Any, ...]:
    """The canonical state of a snapshot: equal keys mean the same future (copies named by what they
    are, not by issue order; runnable-list order and effect counters left out). Threads enter it by the
    64-bit hash of their canonical state (`_thread_state`), taken once when the thread changed."""
    threads, copies, ctas, clusters, warps, gmem = s[:6]
    hb = s[10]
    tk = tuple(map(_HASH, chain.from_iterable(threads)))
    # With race tracking, each copy with its tracker's agent (`RaceState.copy_agent`: named by its issue,
    # not by the machine's issue order, which the key leaves out too).
    hid = hb.hid if isinstance(hb, RaceState) else {}
    ck = tuple(sorted((copy_id(c), status, deps, hid.get(c.aid, -1)) for c, _, status, deps, _ in copies))
    cta_k = tuple((smem, tuple(sorted((off, b.key()) for off, b, _ in barriers)),
                   tuple(sorted((i, tuple(sorted(x.aid for x in arrived)), count)
                                for i, arrived, count in bars)))
                  for smem, barriers, _, bars, _ in ctas)
    cl_k = tuple((phase, count) for _, phase, count in clusters)
    w_k = tuple((tuple(sorted((k, need, tuple(sorted((lane, repr(arg)) for lane, (_, arg) in parts)))
                              for k, _, need, parts in pending)), nreg)
                for pending, nreg in warps) if any(p or n for p, n in warps) else ()
    g_k = tuple(tuple(sorted(pages)) for pages in gmem)
    return tk, ck, cta_k, cl_k, w_k, g_k, hb.key() if isinstance(hb, RaceState) else None
