"""Symmetry reduction: states that differ only by which thread plays which role are remembered once.

Let s be a state and π a permutation of the threads of one CTA. π(s) gives thread π(i) the complete local
state of thread i (pc, registers, status, what it waits for, its copies, ...) and renames every place
where the machine names a thread: the threads arrived at a bar.sync, the lanes of a warp collective in
progress, the issuer of an in-flight copy, and (with race tracking) the agents of the vector clocks and
of the shadow memory. A thread's identity lives in its registers (%tid.x, %laneid, %warpid are register
slots, `sim.compile.SPECIAL_CONSTANTS`), which move with its local state; the only things the machine
knows about a thread that do not move are its CTA, its warp and its lane (`Thread.cta/warp/lane`). So π
maps the state graph onto itself when it keeps each thread in its CTA and
  * keeps warps together: whole warps of equal size are exchanged, lane by lane, or lanes are permuted
    inside one warp;
  * permutes lanes inside a warp only if no instruction of the kernel can tell lanes apart by position
    (`lane_sensitive`: shfl, vote.ballot, elect, activemask, redux, match, a bar.warp.sync or vote with a
    mask other than the full immediate 0xffffffff, any instruction this module does not know).
Then s and π(s) have the same future up to π: the same deadlocks and violations (of another thread) and,
with race tracking, the same races.

The key of a state is the key of its canonical image: lanes sorted by their local state (with the dead
registers masked, `explore.liveness`, so threads whose identity will never be read again compare equal),
then warps sorted by their lanes' states. Equal keys mean the two states are images of one another, which
is all soundness needs (a tie broken either way only costs a merge). Only the key changes: the search
still stores and restores the real states and records the real schedule, so every finding's schedule is
a real path that `mbarrier run --schedule` replays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mbarrier.explore import snapshot
from mbarrier.explore.code import Code
from mbarrier.explore.liveness import Residual
from mbarrier.ptx import ast
from mbarrier.sim.hb import VC, Agent, BarrierClocks, Cell, Shadow
from mbarrier.sim.machine import EXITED, Machine, Warp
from mbarrier.sim.races import RaceState
from mbarrier.sim.registry import Kind, facts_of

# Instructions that may treat the lanes of a warp differently: the warp-level ones (checked operand by
# operand below); every other instruction the simulator executes treats every lane alike.
_WARP_LEVEL = (Kind.COLLECTIVE, Kind.WARP_READ, Kind.MMA)
_CACHE_LIMIT = 400_000


def lane_sensitive(module: ast.Module) -> str | None:
    """Why lanes of a warp cannot be exchanged ("shfl.sync at line 12"), or None when they can."""
    for fn in module.functions:
        for s in ast.instructions(fn.body or ()):
            f = facts_of(s)
            if f.kind not in (*_WARP_LEVEL, Kind.OPAQUE):
                continue
            if f.sync is not None and f.sync.whole and f.sync.uniform:  # the whole warp, one result for all
                continue
            what = ".".join([s.opcode, *(x.lstrip(".") for x in s.qualifiers)])
            return f"{what} at line {s.pos.line}"
    return None


def warpgroup_level(module: ast.Module) -> bool:
    """Whether an instruction of the kernel relates the warps of a warpgroup (setmaxnreg; wgmma.mma_async,
    whose warps compute different rows)."""
    return any(facts_of(s).warpgroup for fn in module.functions for s in ast.instructions(fn.body or ()))


class Symmetry:
    """Canonical state keys of one launched machine under the symmetries that its kernel allows."""

    def __init__(self, m: Machine, module: ast.Module, codes: dict[str, Code], warp_mode: bool) -> None:
        self.n = len(m.threads)
        self.residual = {f.name: Residual(f, codes[f.name], m.threads[0], m) for f in module.functions
                         if f.name in codes}
        self.why_not_lanes = lane_sensitive(module)
        self.lanes = self.why_not_lanes is None
        # Warps in the order the snapshot lists them (first appearance among the threads), and per CTA
        # the warps grouped by size: those are the ones that can be exchanged.
        warps: list[Warp] = []
        seen: set[int] = set()
        for t in m.threads:
            if t.warp is not None and id(t.warp) not in seen:
                seen.add(id(t.warp))
                warps.append(t.warp)
        self.warps = [[t.aid for t in w.threads] for w in warps]
        self.lane_of = [t.lane for t in m.threads]
        self.classes: list[list[int]] = []   # indices into self.warps that may be exchanged
        for cta in m.ctas:
            by_size: dict[int, list[int]] = {}
            for i, w in enumerate(warps):
                if w.threads and w.threads[0].cta is cta:
                    by_size.setdefault(len(w.threads), []).append(i)
            self.classes.extend(by_size.values())
        if warpgroup_level(module):
            # setmaxnreg ties each warp to the three others of its warpgroup (sim.warpgroup): warps
            # can no longer be exchanged one by one.
            self.classes = []
        # Warp granularity groups lanes by aid // 32: exchanging warps must keep those groups whole.
        aligned = all(t.aid - t.lane == t.warp.threads[0].aid and t.warp.threads[0].aid % 32 == 0
                      for t in m.threads if t.warp is not None)
        self.enabled = bool(warps) and (aligned or not warp_mode) and \
            all(t.warp is not None for t in m.threads)
        self._agents: AgentCache = {}
        self._rens: dict[tuple[int, ...], int] = {}
        self.merges = 0
        self.note = ""   # what the checker changed for symmetry's sake (for the mode line)
        self._masked: dict[int, tuple[object, tuple[object, ...], int]] = {}
        self._raw: set[int] = set()
        self._canon: set[int] = set()

    def describe(self) -> str:
        if not self.enabled:
            return "symmetry off (threads outside warps, or warps not aligned for warp granularity)"
        what = ("symmetry: lanes of a warp, whole warps of a CTA" if self.lanes
                else f"symmetry: whole warps of a CTA only (lanes told apart by {self.why_not_lanes})")
        return f"{what}; {self.note}" if self.note else what

    # -- local states ----------------------------------------------------------------------------------
    def local(self, core: tuple[object, ...]) -> tuple[tuple[object, ...], int]:
        """A thread's canonical local state (dead registers masked, its own copies unnamed) and its hash."""
        hit = self._masked.get(id(core))
        if hit is not None and hit[0] is core:
            return hit[1], hit[2]
        masked = self._mask(core)
        h = hash(masked)
        if len(self._masked) > _CACHE_LIMIT:
            self._masked.clear()
        self._masked[id(core)] = (core, masked, h)
        return masked, h

    def _mask(self, core: tuple[object, ...]) -> tuple[object, ...]:
        pc, regs, status = core[0], snapshot.flat_regs(core[1]), core[2]  # type: ignore[arg-type]
        if status == EXITED:
            return (EXITED,)  # it never runs again; what others see of it is renamed elsewhere
        copies = core[8]
        if copies:
            # The copies a thread holds in its groups are its own: name the issuer "self".
            copies = tuple(_unname(part) for part in copies)  # type: ignore[attr-defined]
        frames = core[11]
        if frames:
            kept: object = regs  # inside a call: not masked
        else:
            kept = self.residual[core[9]].key(pc, regs)  # type: ignore[arg-type, index]
        return (pc, kept, status, *core[3:8], copies, *core[9:])

    # -- the canonical key ----------------------------------------------------------------------------
    def key(self, snap: snapshot.Snapshot) -> tuple[tuple[object, ...], tuple[object, ...]]:
        """(canonical key, plain key without the race tracker's state) of a snapshot."""
        plain = snapshot.key(snap[:10] + (None,))
        threads = snapshot.thread_states(snap)
        locs: list[tuple[object, ...]] = []
        hashes: list[int] = []
        for st in threads:
            loc, h = self.local(st[0])
            locs.append(loc)
            hashes.append(h)
        # new[i] = the old thread that takes position i.
        new = list(range(self.n))
        for cls in self.classes:
            orders = []
            for wi in cls:
                aids = self.warps[wi]
                lanes = sorted(aids, key=hashes.__getitem__) if self.lanes else aids
                orders.append((tuple(hashes[a] for a in lanes), lanes))
            orders.sort(key=lambda o: o[0])
            for wi, (_, lanes) in zip(cls, orders, strict=True):
                for pos, old in zip(self.warps[wi], lanes, strict=True):
                    new[pos] = old
        ren = [0] * self.n
        for pos, old in enumerate(new):
            ren[old] = pos
        tk = tuple(locs[old] for old in new)
        _, _, cta_k, cl_k, _, g_k, _ = plain
        hb = snap[10]
        race = isinstance(hb, RaceState)
        # Each copy with its tracker agent renamed (`snapshot.key`), a tuple (`_renamer`).
        r = _renamer(hb, ren) if race else None
        ck2 = tuple(sorted(((cid[0], ren[c.thread.aid], *cid[2:]), status, deps,
                            None if r is None else r(hb.hid[c.aid]))
                           for c, _, status, deps, _ in snap[1] for cid in (snapshot.copy_id(c),)))
        cta2 = tuple((smem, barriers, tuple(sorted((i, tuple(sorted(ren[a] for a in arrived)), count)
                                                   for i, arrived, count in bars)))
                     for smem, barriers, bars in cta_k)
        wk = self._warp_key(snap[4], ren)
        hk = None
        if race:
            if len(self._agents) > _CACHE_LIMIT:
                self._agents.clear()
            rid = self._rens.setdefault(tuple(ren), len(self._rens))
            hk = hb_key(hb, ren, self.lane_of, (self._agents, rid))
        return (tk, ck2, cta2, cl_k, wk, g_k, hk), plain

    def _warp_key(self, warps: tuple[Any, ...], ren: list[int]) -> tuple[object, ...]:
        """Warp collectives in progress, each under the warp and lanes its threads move to."""
        out: list[tuple[int, tuple[object, ...], tuple[object, ...]]] = []
        for wi, (pending, nreg) in enumerate(warps):
            if not pending and not nreg:
                continue
            aids = self.warps[wi]
            lane_aid = {self.lane_of[a]: a for a in aids}
            dest = ren[aids[0]] - self.lane_of[ren[aids[0]]]  # the first aid of the warp it moves to
            out.append((dest, nreg, tuple(sorted(
                (k, need, tuple(sorted((self.lane_of[ren[lane_aid[lane]]], repr(arg))
                                       for lane, (_, arg) in parts)))
                for k, _, need, parts in pending))))
        return tuple(sorted(out, key=lambda e: e[0]))

    def state_hash(self, snap: snapshot.Snapshot) -> int:
        """The canonical key's hash; counts the states that only canonicalisation merged (with race
        tracking, those whose key without the tracker's state was new: a lower bound)."""
        canon, plain = self.key(snap)
        h, raw = hash(canon), hash(plain)
        if h in self._canon and raw not in self._raw:
            self.merges += 1
        self._canon.add(h)
        self._raw.add(raw)
        return h


def _unname(part: object) -> object:
    """A thread's copy list (or list of groups) with the issuer field of each copy id set to -1."""
    out = []
    for c in part:  # type: ignore[attr-defined]
        if c and isinstance(c[0], tuple):
            out.append(_unname(c))
        else:
            out.append((c[0], -1, *c[2:]))
    return tuple(out)


# -- happens-before state, renamed ------------------------------------------------------------------------
AgentCache = dict[tuple[int, int], tuple[Agent, tuple[object, ...]]]


def _renamer(hb: RaceState, ren: list[int]) -> Callable[[int], object]:
    """Tracker agent ids renamed: a thread's by `ren`, a copy engine's by its issue under `ren` (its issuer
    renamed, the issuer's clock then: `RaceState.copy_agent`); -1, no agent, stays -1."""
    n, issues, first = len(ren), hb.issues, hb.first_copy

    def r(a: int) -> object:
        if 0 <= a < n:
            return ren[a]
        if a < 0:
            return a
        issuer, clk = issues[a - first]
        return ("c", ren[issuer], clk)
    return r


def hb_key(hb: RaceState, ren: list[int], lane_of: list[int],
           cache: tuple[AgentCache, int] | None = None) -> tuple[object, ...]:
    """`RaceState.key()` with each agent renamed (`_renamer`). `cache`: renamed agents by (agent object,
    renaming id): an agent a snapshot holds never changes (the tracker copies it first), and renamings
    repeat."""
    r = _renamer(hb, ren)

    # Unordered collections are frozensets (equal as sets, hashed without sorting): the key is only hashed.
    def vc(d: VC) -> frozenset[tuple[object, int]]:
        return frozenset(zip(map(r, d), d.values(), strict=True))

    def vcs(d: dict[tuple[int, int], VC]) -> frozenset[object]:
        return frozenset((k, vc(v)) for k, v in d.items())

    def agent(a: Agent) -> tuple[object, ...]:
        return (r(a.me), vc(a.vc), a.clk, vc(a.frel) if a.frel is not None else None, vc(a.facq),
                vc(a.cp_issued), tuple((k, tuple(tuple(map(r, g)) for g in v)) for k, v in a.groups.items()))

    def writers(c: Cell) -> object:
        """The last write's epoch, or with twins the set of their epochs, whichever wrote last (hb._cell)."""
        if c[4] is None or not c[4][2]:
            return (r(c[0]), c[1])
        return frozenset([(r(c[0]), c[1]), *((r(t[0]), t[1]) for t in c[4][2])])

    def shadow(s: Shadow) -> frozenset[object]:
        return frozenset((addr, writers(c),
                          frozenset(zip(map(r, c[3]), (v[0] for v in c[3].values()), strict=True)))
                         for addr, c in s.items())

    def clocks(b: BarrierClocks) -> tuple[object, ...]:
        return (b.phase, vc(b.acc_cta), vc(b.acc_cluster), vc(b.done_cta), vc(b.done_cluster))

    def warp(a: int) -> int:
        """bar.warp.sync accumulators are keyed by their warp's first aid: the first aid of its image."""
        b = ren[a]
        return b - lane_of[b]

    agents: frozenset[object]
    if cache is None:
        agents = frozenset(map(agent, hb.agents.values()))
    else:
        known, rid = cache
        keys = []
        for a in hb.agents.values():
            hit = known.get((id(a), rid))
            if hit is None or hit[0] is not a:
                hit = known[(id(a), rid)] = (a, agent(a))
            keys.append(hit[1])
        agents = frozenset(keys)
    return (agents,
            tuple(shadow(s) for s in hb.smem), shadow(hb.gmem),
            frozenset((k, clocks(b)) for k, b in hb.barriers.items()),
            frozenset((k, vc(v), tuple(map(r, w))) for k, (v, w) in hb.bars.items()),
            vcs(hb.cluster), frozenset(((warp(k[0]), k[1]), vc(v)) for k, v in hb.warp_sync.items()),
            vcs(hb.sync),
            frozenset((r(k), tuple(c), tuple(s)) for k, (c, _, s) in hb.proxy_fences.by.items()),
            frozenset((k[2], frozenset(map(r, v))) for k, v in hb.wg_ops.items()))
