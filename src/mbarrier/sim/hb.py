"""Happens-before tracking: vector clocks, the shadow of every byte accessed, and the race check.

Agents are threads and copy engines, each a component of the vector clocks (its agent id). A thread's
clock advances after each synchronizing event it performs (a release, a copy issue, a fence), so
every snapshot a thread hands out names a distinct moment of it; its accesses are stamped with the
current value (an *epoch*: component, clock). A copy engine's reads carry clock 1 and its writes clock 2,
so a `cp.async.bulk.wait_group.read` can order the reads alone.

The shadow keeps, for each byte, the last write's epoch and the epochs of the reads since, FastTrack
style. An access races with an earlier one when they are from different agents, one writes, they are
not both atomic (atomics, strong loads/stores and mbarrier operations on the object's word), and the
earlier epoch is not in the accessing agent's vector clock. Two plain async-proxy writes (copies) of
the same bytes with the same values do not race with each other (docs/memory-model.md): the later
keeps the earlier as a *twin*, and every later access is checked against the twins as well. An atomic
write keeps the same way the atomic writes (as twins) and the atomic reads (as reads) that it is not
ordered after: a later plain access must be ordered after each of them, not only after the last write
(PTX ISA 8, a data race is any pair of conflicting accesses neither morally strong nor ordered). Two
threads trying a lock in turn then leave one history whichever tried last.

Nothing here knows the machine: `sim.races` feeds the events in and explains what it finds.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from itertools import count

from mbarrier.sim.registry import FenceKind

VC = dict[int, int]

# Access flags.
WRITE = 1
ATOMIC = 2      # atomics, strong (.relaxed/.acquire/.release/.volatile) loads and stores, mbarrier ops
ASYNC = 4       # performed by the async proxy (cp.async.bulk)
THREAD = 8      # performed by a thread (generic proxy), not a copy engine
MBAR = 16       # an mbarrier operation on the object's word (init and inval are non-atomic writes)

# An access as the shadow remembers it: (agent id, site, flags, space, cta index, address, size, what).
# `site` is the thread's instruction (a sim.compile.Site) or the copy's; `what` names the operation.
Info = tuple[int, object, int, str, int, int, int, str]
# A write's epoch as a twin keeps it: (agent, clock, info).
Twin = tuple[int, int, Info]
# What an async-proxy write wrote: (its first address, its bytes, the twins: earlier writes of the same
# bytes that happen-before does not order with it, kept so that a later access still races with them).
# An atomic write with twins keeps no bytes (b"": its twins are atomic writes, never compared by value).
Data = tuple[int, bytes, tuple[Twin, ...]]
# A byte's history: the last write (agent, clock, info; -1, 0, None: none), the reads since, by agent,
# the last write's data (None: not kept), the readers' part of the key and the cell's part of the key.
# The two parts are kept in the cell (`_cell`) so that a page's key never walks a cell's readers: a
# byte that 128 threads read held 128 readers, and hashing them at every state was a quarter of a
# CUTLASS kernel's search.
Cell = tuple[int, int, Info | None, dict[int, tuple[int, Info]], Data | None, int, int]

_MASK = (1 << 64) - 1


def _reader(agent: int, clk: int) -> int:
    """A read epoch's part of its cell's readers sum (a set hash: the sum of the members' hashes)."""
    return hash((agent, clk)) & _MASK


def _cell(writer: int, clk: int, info: Info | None, reads: dict[int, tuple[int, Info]],
          data: Data | None, readers: int) -> Cell:
    """A cell, with its part of the key: who wrote it at which clock (with twins, the set of the write's
    and its twins' epochs: they decide later verdicts, whichever of them wrote last), and who read it
    since at which clock (`readers`, the sum of `_reader` over `reads`)."""
    writers: object = (writer, clk)  # with twins, the set of their epochs: which wrote last is wording
    if data is not None and data[2]:
        writers = frozenset([(writer, clk), *((t[0], t[1]) for t in data[2])])
    return (writer, clk, info, reads, data, readers, hash((writers, readers)))


def join(into: VC, other: VC) -> None:
    get = into.get
    for k, v in other.items():
        if get(k, 0) < v:
            into[k] = v


class Conflict(Exception):
    """Two accesses that no happens-before edge orders (raised by `Shadow.access`)."""

    def __init__(self, rule: str, earlier: Info, clk: int, later: Info, addr: int,
                 writer: tuple[Info, int] | None = None) -> None:
        super().__init__(rule)
        self.rule = rule
        self.earlier = earlier
        self.clk = clk            # the earlier access's clock (its agent's component)
        self.later = later
        self.addr = addr          # the first byte both touch
        self.writer = writer      # a racing read's byte: the write before it (info, clock), if any


PAGE_BITS = 6  # a shadow page covers 64 bytes: the unit that copies share until one side changes it
_VERSIONS = count()  # `Shadow.version`'s stamps


class Shadow:
    """The per-byte access history of one memory (a CTA's shared memory, or global memory).

    A cell is (writer, its clock, its info, {reader: (clock, info)}, ...), never changed once made: an access
    makes new cells, one for all the bytes it touches that held the same cell (a 128-byte copy makes one
    cell, not 128). Cells live in pages of 2^PAGE_BITS bytes. A copy (`clone`) shares every page; each
    side copies a page before its first change (`owned_pages`), so a checker's snapshot costs the pages
    its last step touched, not the whole history. Each page's part of `key()` is kept (`hashes`) and
    recomputed only for the pages changed since (`stale`); the key itself is the sum of the pages'
    parts (`total`, a set hash), kept up to date page by page: a GEMM's memory has thousands of pages
    and a step changes a few."""

    __slots__ = ("pages", "owned_pages", "hashes", "stale", "total", "version")

    def __init__(self) -> None:
        self.pages: dict[int, dict[int, Cell]] = {}
        self.owned_pages: set[int] = set()
        self.hashes: dict[int, int] = {}
        self.stale: set[int] = set()
        self.total = 0
        # Its contents' stamp, unique in the process: a new one at every change, a copy's the same
        # (`explore.twins` keeps answers by it).
        self.version = next(_VERSIONS)

    def access(self, addr: int, size: int, vc: VC, me: int, clk: int, info: Info,
               pvc: VC | None = None, data: bytes | None = None) -> None:
        """Check an access of `size` bytes at `addr` by agent `me` (clock `clk`, vector clock `vc`) against
        the history, then record it. `pvc`: for async-proxy accesses, what fences made visible to the
        async proxy (a generic write must be in it, 9.7.13.4 fence.proxy.async). `data`: the bytes a
        plain async-proxy write wrote (an unordered write of the same bytes is then no race)."""
        flags = info[2]
        write = flags & WRITE
        atomic = flags & ATOMIC
        get = vc.get
        written = _cell(me, clk, info, {}, None if data is None else (addr, data, ()), 0)
        # The cell each old cell becomes (by the old one's id; the old one is kept alive with it): bytes
        # that shared a cell are checked once and share the new one, unless twins made the verdict
        # depend on the values (then each byte's values are compared).
        made: dict[int, tuple[Cell | None, Cell, bool]] = {}
        p = -1
        cells: dict[int, Cell] = {}
        for a in range(addr, addr + size):
            if a >> PAGE_BITS != p:
                p = a >> PAGE_BITS
                cells = self._page(p)
            cell = cells.get(a)
            seen = made.get(id(cell))
            if seen is not None:
                if seen[2] and not _same(cell, data, addr, a):
                    assert cell is not None and cell[2] is not None
                    raise Conflict(_rule(cell[2], info), cell[2], cell[1], info, a)
                cells[a] = seen[1]
                continue
            if cell is None:
                new = written if write else _cell(-1, 0, None, {me: (clk, info)}, None, _reader(me, clk))
                made[id(None)] = (None, new, False)
                cells[a] = new
                continue
            wc, wk, winfo, reads, old, readers, _ = cell
            twins: list[Twin] = []  # the unordered writes of the same bytes that this write keeps
            same = False
            writers = ((wc, wk, winfo),) if winfo is not None else ()
            for tc, tk, tinfo in writers + (old[2] if old is not None else ()):
                if tc == me:
                    continue
                if get(tc, 0) < tk:
                    if atomic and tinfo[2] & ATOMIC:
                        if write:  # a later weak access must be ordered after it too (8.x data-race)
                            twins.append((tc, tk, tinfo))
                        continue
                    if write and _twin(tinfo, info) and _same(cell, data, addr, a):
                        twins.append((tc, tk, tinfo))
                        same = True
                        continue
                    raise Conflict(_rule(tinfo, info), tinfo, tk, info, a)
                if pvc is not None and tinfo[2] & THREAD and pvc.get(tc, 0) < tk:
                    raise Conflict("proxy-fence", tinfo, tk, info, a)
            if write:
                kept: dict[int, tuple[int, Info]] = {}  # unordered atomic reads, kept as twins are
                for rc, (rk, rinfo) in reads.items():
                    if rc != me and get(rc, 0) < rk:
                        if atomic and rinfo[2] & ATOMIC:
                            kept[rc] = (rk, rinfo)
                            continue
                        prev = (winfo, wk) if winfo is not None else None
                        raise Conflict(_rule(rinfo, info), rinfo, rk, info, a, prev)
                if twins or kept:
                    new = _cell(me, clk, info, kept, (addr, b"" if data is None else data, tuple(twins)),
                                sum(_reader(rc, rk) for rc, (rk, _) in kept.items()) & _MASK)
                else:
                    new = written
            else:
                mine = reads.get(me)
                readers = (readers - (_reader(me, mine[0]) if mine is not None else 0)
                           + _reader(me, clk)) & _MASK
                new = _cell(wc, wk, winfo, {**reads, me: (clk, info)}, old, readers)
            made[id(cell)] = (cell, new, same)
            cells[a] = new

    def read_by(self, addr: int, size: int, me: int, clk: int, info: Info) -> bool:
        """Whether agent `me` read every byte of these with clock `clk` and access `info` since the byte was
        last written: the same read again would record nothing new (nor race, as the first did not)."""
        for a in range(addr, addr + size):
            cell = self.pages.get(a >> PAGE_BITS, {}).get(a)
            if cell is None or cell[3].get(me) != (clk, info):
                return False
        return True

    def written_by(self, addr: int, size: int, vc: VC, me: int, clk: int, info: Info) -> bool:
        """Whether the atomic write `info` by agent `me` (clock `clk`, vector clock `vc`) of these bytes, made
        again, would record nothing new nor race: on each byte every read it finds is an atomic one it is
        not ordered after (so it keeps it), and the set of writers it would leave (itself, with the
        unordered atomic writes it keeps as twins) is the set there now. Two threads whose failed
        `atom.cas` writes back what they find then take turns on one state, whichever wrote last
        (`explore.spin`)."""
        get = vc.get
        for a in range(addr, addr + size):
            cell = self.pages.get(a >> PAGE_BITS, {}).get(a)
            if cell is None or cell[2] is None:
                return False
            for rc, (rk, rinfo) in cell[3].items():
                if rc == me or get(rc, 0) >= rk or not rinfo[2] & ATOMIC:
                    return False  # the write would drop the read, or race with it
            mine = cell[0] == me and cell[1] == clk and cell[2] == info
            writers = [(cell[0], cell[1], cell[2]), *(cell[4][2] if cell[4] is not None else ())]
            for tc, tk, tinfo in writers:
                if tc == me:
                    mine = mine or (tk == clk and tinfo == info)
                elif get(tc, 0) >= tk or not tinfo[2] & ATOMIC:
                    return False  # the write would drop it (ordered before), or race with it
            if not mine:
                return False
        return True

    def _page(self, p: int) -> dict[int, Cell]:
        """Page `p`, this copy's own (copied first if shared), marked for a new hash."""
        self.stale.add(p)
        self.version = next(_VERSIONS)
        page = self.pages.get(p)
        if page is None:
            page = self.pages[p] = {}
            self.owned_pages.add(p)
        elif p not in self.owned_pages:
            page = self.pages[p] = dict(page)
            self.owned_pages.add(p)
        return page

    def freeze(self) -> None:
        """Make this shadow shareable as it is: its key up to date, none of its pages changed in place
        again (a later change copies the page first)."""
        self._refresh()
        self.owned_pages = set()

    def clone(self) -> Shadow:
        """A copy that shares every page and cell with this one until either side changes them."""
        self.freeze()
        out = Shadow()
        out.pages = dict(self.pages)
        out.hashes = dict(self.hashes)
        out.total = self.total
        out.version = self.version
        return out

    def _refresh(self) -> None:
        if not self.stale:
            return
        pages, hashes = self.pages, self.hashes
        total = self.total
        for p in self.stale:
            old = hashes.get(p)
            if old is not None:
                total -= hash((p, old))
            new = hashes[p] = hash(frozenset([(a, c[6]) for a, c in pages[p].items()]))
            total += hash((p, new))
        self.total = total & _MASK
        self.stale = set()

    def twin_clean(self, addr: int, data: bytes) -> bool:
        """Whether a plain async-proxy write of `data` at `addr` meets, on each byte, nothing but plain
        async-proxy writes of the same value and no read since: an untouched byte, or the last write and
        its twins all of that value. Two unordered such writes of the same bytes then leave the same
        history in either order (each keeps the other as a twin, those unordered with either are kept,
        those ordered before either dropped: the same set of writers, `_cell`) and neither races, so
        their order does not matter (`explore.twins`). A read, or an earlier write of other values, may
        be ordered before one of them only: the first to land would hide it from the other."""
        pages = self.pages
        checked: set[int] = set()
        for a in range(addr, addr + len(data)):
            page = pages.get(a >> PAGE_BITS)
            cell = None if page is None else page.get(a)
            if cell is None or id(cell) in checked:  # one write's cell: its bytes compared at once
                continue
            old = cell[4]
            if cell[3] or old is None:
                return False
            lo, hi = max(addr, old[0]), min(addr + len(data), old[0] + len(old[1]))
            if old[1][lo - old[0]:hi - old[0]] != data[lo - addr:hi - addr]:
                return False
            checked.add(id(cell))
        return True

    def items(self) -> Iterator[tuple[int, Cell]]:
        """Every cell: (address, cell), page by page."""
        for page in self.pages.values():
            yield from page.items()

    def key(self) -> int:
        """Who accessed each byte at which clock (which instruction did it decides only the wording), as
        a hash: the sum of the pages' parts, each the hash of the set of its cells' (address, writers,
        readers): a write's epoch, or with twins the set of their epochs, whichever of them wrote last."""
        self._refresh()
        return self.total


def _twin(earlier: Info, later: Info) -> bool:
    """Writes that may be twins: both plain (not atomic, not an mbarrier object's word) async-proxy
    writes. Generic stores keep no data: two of them race whatever they write."""
    both = earlier[2] & later[2]
    return bool(both & ASYNC and both & WRITE) and not (earlier[2] | later[2]) & (ATOMIC | MBAR)


def _same(cell: Cell | None, data: bytes | None, addr: int, a: int) -> bool:
    """Whether byte `a` of the write `data` (from `addr`) equals what the cell's last write put there."""
    old = cell[4] if cell is not None else None
    return (old is not None and data is not None and 0 <= a - old[0] < len(old[1])
            and old[1][a - old[0]] == data[a - addr])


def _rule(earlier: Info, later: Info) -> str:
    """An mbarrier operation unordered with the init (or inval) of its object is an init problem."""
    if later[2] & MBAR and earlier[2] & MBAR and earlier[2] & WRITE and not earlier[2] & ATOMIC:
        return "mbarrier-init-visibility"
    return "data-race"


SHARED_SPACE, GLOBAL_SPACE = 1, 2  # the state spaces a proxy fence covers (a bit each)
#: The state spaces in which each proxy fence makes generic writes visible to the async proxy.
PROXY_SPACES = {FenceKind.PROXY_ASYNC: SHARED_SPACE | GLOBAL_SPACE,
                FenceKind.PROXY_ASYNC_SHARED: SHARED_SPACE, FenceKind.PROXY_ASYNC_GLOBAL: GLOBAL_SPACE}


class Fences:
    """Fences of one kind (proxy, or mbarrier-init publishing) by each thread: (clock, vector clock, the
    state spaces it covers). Each thread's are tuples, replaced by a fence and shared by the clones: a
    kernel's fences pile up with its depth (a CUTLASS consumer's fence.proxy.async every k-tile), and
    copying them all at every state was a tenth of a deep search's time."""

    __slots__ = ("by",)

    def __init__(self) -> None:
        self.by: dict[int, tuple[tuple[int, ...], tuple[VC, ...], tuple[int, ...]]] = {}

    def add(self, me: int, clk: int, vc: VC, spaces: int = SHARED_SPACE | GLOBAL_SPACE) -> None:
        clocks, vcs, covers = self.by.get(me, ((), (), ()))
        self.by[me] = (clocks + (clk,), vcs + (dict(vc),), covers + (spaces,))

    def clone(self) -> Fences:
        out = Fences()  # the tuples and the entries in them never change
        out.by = dict(self.by)
        return out

    def key(self) -> tuple[object, ...]:
        return tuple(sorted((k, c, s) for k, (c, _, s) in self.by.items()))

    def visible(self, vc: VC, space: int = SHARED_SPACE) -> VC:
        """The join of what every fence of `space` that happens before `vc` saw: each thread's latest."""
        out: VC = {}
        for f, (clocks, vcs, covers) in self.by.items():
            i = bisect_right(clocks, vc.get(f, 0))
            while i and not covers[i - 1] & space:
                i -= 1
            if i:
                join(out, vcs[i - 1])
        return out


class Agent:
    """One thread's or copy engine's happens-before state."""

    __slots__ = ("me", "vc", "clk", "frel", "facq", "releases", "notes", "cp_issued", "groups", "pvc", "pvcg",
                 "_key")

    def __init__(self, me: int, vc: VC | None = None) -> None:
        self.me = me
        self.vc: VC = vc if vc is not None else {me: 1}
        self.clk = self.vc[me]
        self.frel: VC | None = None         # the clock at the last release fence (fence-release pattern)
        self.facq: VC = {}                  # what relaxed reads observed, for the next acquire fence
        self.releases: tuple[list[int], list[str]] = ([], [])  # the thread's releases: clock, what
        self.notes: dict[int, str] = {}     # agent -> why a synchronization with it ordered nothing
        self.cp_issued: VC = {}             # write epochs of the thread's cp.async copies (rule 2)
        # The thread's copies by commit group, not yet waited for ("cp.async", "bulk"); the last is open.
        self.groups: dict[str, list[list[int]]] = {"cp.async": [[]], "bulk": [[]]}
        self.pvc: VC | None = None          # a bulk copy: what fences made visible to the async proxy
        self.pvcg: VC | None = None         # ... of global memory (pvc: of shared memory)
        self._key: int | None = None   # the key's hash, cached once shared (a shared agent never changes)

    def clone(self) -> Agent:
        out = Agent(self.me, dict(self.vc))
        out.clk = self.clk
        out.frel = None if self.frel is None else dict(self.frel)
        out.facq = dict(self.facq)
        out.releases = (list(self.releases[0]), list(self.releases[1]))
        out.notes = dict(self.notes)
        out.cp_issued = dict(self.cp_issued)
        out.groups = {k: [list(g) for g in v] for k, v in self.groups.items()}
        out.pvc, out.pvcg = self.pvc, self.pvcg  # fixed at the copy's issue
        return out

    def proxy(self, fences: Fences, vc: VC) -> None:
        """A copy issued at `vc`: what the proxy fences before it made visible to the async proxy."""
        self.pvc, self.pvcg = fences.visible(vc, SHARED_SPACE), fences.visible(vc, GLOBAL_SPACE)

    def tick(self, what: str | None = None) -> VC:
        """A synchronizing event: a snapshot of the clock, which then advances."""
        snap = dict(self.vc)
        if what is not None:
            self.releases[0].append(self.clk)
            self.releases[1].append(what)
        self.clk += 1
        self.vc[self.me] = self.clk
        return snap

    def release(self, into: list[VC], what: str) -> None:
        """A release event: the clock joins each of `into`, then advances (no snapshot needed)."""
        for acc in into:
            join(acc, self.vc)
        self.releases[0].append(self.clk)
        self.releases[1].append(what)
        self.clk += 1
        self.vc[self.me] = self.clk

    def acquire(self, other: VC) -> None:
        join(self.vc, other)

    def note(self, related: frozenset[int], text: str) -> None:
        for a in related:
            self.notes[a] = text

    def release_after(self, clk: int) -> str | None:
        """The first release of this thread that covers its access at clock `clk`."""
        clocks, what = self.releases
        i = bisect_right(clocks, clk - 1)
        return what[i] if i < len(what) else None

    def key(self) -> int:
        """Only called on snapshots, whose agents never change again: computed once, kept as its hash
        (a state's key is only ever hashed)."""
        if self._key is None:
            self._key = hash(self._compute_key())
        return self._key

    def _compute_key(self) -> tuple[object, ...]:
        return (self.me, tuple(sorted(self.vc.items())), self.clk,
                tuple(sorted(self.frel.items())) if self.frel is not None else None,
                tuple(sorted(self.facq.items())), tuple(sorted(self.cp_issued.items())),
                tuple((k, tuple(map(tuple, v))) for k, v in self.groups.items()))


CHUNK_BITS = 5  # agents are kept in chunks of 32 ids: the unit that copies of a table share


class AgentTable:
    """Agents by id (threads 0 .. n-1, then copy engines in issue order). A copy (`clone`) shares the
    chunks of 32 ids until one side puts an agent into one: a snapshot costs a list of chunks and the
    chunks its last step changed, not an entry per agent."""

    __slots__ = ("chunks", "owned")

    def __init__(self) -> None:
        self.chunks: list[list[Agent | None]] = []
        self.owned: set[int] = set()

    def __getitem__(self, aid: int) -> Agent:
        a = self.get(aid)
        if a is None:
            raise KeyError(aid)
        return a

    def get(self, aid: int) -> Agent | None:
        i = aid >> CHUNK_BITS
        return self.chunks[i][aid & ((1 << CHUNK_BITS) - 1)] if 0 <= i < len(self.chunks) else None

    def __setitem__(self, aid: int, agent: Agent) -> None:
        i = aid >> CHUNK_BITS
        chunks = self.chunks
        while len(chunks) <= i:
            self.owned.add(len(chunks))
            chunks.append([None] * (1 << CHUNK_BITS))
        if i not in self.owned:
            chunks[i] = list(chunks[i])
            self.owned.add(i)
        chunks[i][aid & ((1 << CHUNK_BITS) - 1)] = agent

    def values(self) -> Iterator[Agent]:
        """The agents in id order."""
        for chunk in self.chunks:
            for a in chunk:
                if a is not None:
                    yield a

    def clone(self) -> AgentTable:
        out = AgentTable()
        out.chunks = list(self.chunks)
        self.owned = set()
        return out


class BarrierClocks:
    """An mbarrier's releases: the phase in progress and the last completed phase, for an acquire at
    .cta scope (the waiter's CTA only) and at .cluster scope; plus arrivals that released to no one."""

    __slots__ = ("phase", "acc_cta", "acc_cluster", "done_cta", "done_cluster", "notes", "done_notes",
                 "arrivers", "done_arrivers", "_key")

    def __init__(self, phase: int) -> None:
        self.phase = phase
        self._key: int | None = None
        self.acc_cta: VC = {}
        self.acc_cluster: VC = {}
        self.done_cta: VC = {}
        self.done_cluster: VC = {}
        self.notes: list[tuple[int, str, bool]] = []     # (arriver, why it orders nothing, remote .cluster)
        self.done_notes: list[tuple[int, str, bool]] = []
        self.arrivers: set[int] = set()
        self.done_arrivers: frozenset[int] = frozenset()

    def clone(self) -> BarrierClocks:
        out = BarrierClocks(self.phase)
        out.acc_cta, out.acc_cluster = dict(self.acc_cta), dict(self.acc_cluster)
        out.done_cta, out.done_cluster = self.done_cta, self.done_cluster  # replaced, never changed, by roll
        out.notes, out.done_notes = list(self.notes), self.done_notes
        out.arrivers, out.done_arrivers = set(self.arrivers), self.done_arrivers
        return out

    def roll(self, phase: int) -> None:
        """The phase completed: what it released becomes what a successful wait acquires."""
        self.done_cta, self.acc_cta = self.acc_cta, {}
        self.done_cluster, self.acc_cluster = self.acc_cluster, {}
        self.done_notes, self.notes = self.notes, []
        self.done_arrivers, self.arrivers = frozenset(self.arrivers), set()
        self.phase = phase

    def key(self) -> int:
        """Only called on snapshots, whose clocks never change again (the tracker copies them first, as
        it does agents): computed once, kept as its hash (a state's key is only ever hashed)."""
        if self._key is None:
            self._key = hash((self.phase, tuple(sorted(self.acc_cta.items())),
                              tuple(sorted(self.acc_cluster.items())), tuple(sorted(self.done_cta.items())),
                              tuple(sorted(self.done_cluster.items()))))
        return self._key
