"""Race detection in the simulator: the machine with happens-before tracking switched on.

`track(m)` turns a freshly launched machine into a `RaceMachine`: every memory access, mbarrier
operation, barrier, fence and copy also updates the vector clocks of `sim.hb`, and an access that no
happens-before edge orders with an earlier conflicting one raises a `Race` (a `Violation`, so a run or
a check stops there with a replayable schedule; `sim.race_report` explains it). With tracking off, the
plain `Machine` runs: its fast paths carry no trace of this module.

The edges (9.7.13.15.16 and the PTX memory model, as far as mbarrier kernels need them):
  * program order; a copy is ordered after what its issuing thread did before issuing it;
  * mbarrier.arrive{.release} -> a test_wait/try_wait{.acquire} that returns True for that phase
    (rule 1), when both scopes reach the other thread: an arrive from another CTA of the cluster needs
    .cluster on the arrive and on the wait; `.relaxed` orders nothing (unless a release/acquire fence
    stands beside it, the fence patterns of the memory model);
  * the cp.async copies a thread issued before cp.async.mbarrier.arrive -> a successful acquire wait on
    the phase that arrive-on completes (rule 2); cp.async.wait_group/wait_all -> the waiting thread;
  * a cp.async.bulk's complete-tx -> a successful acquire wait on that phase (rule 3); so too the
    complete-tx of clusterlaunchcontrol.try_cancel (its response is an async-proxy write, 9.7.12.21.1);
    tcgen05.commit's arrive-on orders nothing of its thread (it tracks tcgen05 operations only);
    cp.async.bulk.wait_group{.read} -> the waiting thread (the copy's reads only with .read);
  * bar.sync/barrier.sync/bar.arrive (arrivals release, the waiters acquire), bar.warp.sync,
    barrier.cluster.arrive{.release} -> barrier.cluster.wait;
  * st.release/atom.release -> ld.acquire/atom.acquire of the same address; fence.acq_rel/fence.sc/
    membar around relaxed or volatile accesses and relaxed mbarrier operations;
  * fence.proxy.async: a generic write reaches the async proxy (a cp.async.bulk reading or overwriting
    it) only through a proxy fence after the write that happens before the copy;
  * fence.mbarrier_init.release.cluster: a release fence (for a following relaxed arrive); an mbarrier
    operation must happen after its object's init (cross-CTA: through a .cluster-scope release/acquire).
"""

from __future__ import annotations

from mbarrier.sim import race_wgmma
from mbarrier.sim.address import is_local_generic, is_param_generic, is_shared_generic
from mbarrier.sim.compile import Site
from mbarrier.sim.hb import (
    ASYNC,
    ATOMIC,
    MBAR,
    PROXY_SPACES,
    THREAD,
    VC,
    WRITE,
    Agent,
    AgentTable,
    BarrierClocks,
    Conflict,
    Fences,
    Info,
    Shadow,
    join,
)
from mbarrier.sim.machine import ARRIVALS, DONE, Copy, Cta, Machine, Thread, Warp
from mbarrier.sim.race_report import CopyInfo, InvalInflight, RaceAccess, explain
from mbarrier.sim.race_tensor import tensor_accesses
from mbarrier.sim.registry import FenceKind, Order, Scope, Sem
from mbarrier.sim.waits import AtCluster
from mbarrier.spec.memmodel import NO_ORDER_SEM


class RaceState:
    """All happens-before state of one machine (copied and hashed with it).

    A checker snapshot is a `clone()`; the live state and its snapshots share every agent, shadow
    memory, barrier's clocks and copy's description until the live one changes it: it copies the part
    first (`agent`, `shadow`, `clocks`, `copy_info`, `vc_to_change`, `bar_to_change`), so a snapshot
    costs what its last step changed."""

    def __init__(self, m: Machine) -> None:
        self.agents = AgentTable()
        for t in m.threads:
            self.agents[t.aid] = Agent(t.aid)
        self.private: set[int] = {t.aid for t in m.threads}   # agents no snapshot shares: changed in place
        self.smem: list[Shadow] = [Shadow() for _ in m.ctas]
        self.gmem = Shadow()
        self.own_shadows: set[int] = set(range(-1, len(m.ctas)))  # likewise, by CTA index (-1: global)
        self.barriers: dict[tuple[int, int], BarrierClocks] = {}
        self.own_barriers: set[tuple[int, int]] = set()
        self.bars: dict[tuple[int, int], tuple[VC, list[int]]] = {}   # bar.sync: releases, waiters
        self.cluster: dict[tuple[int, int], VC] = {}                   # (cluster, generation) -> releases
        self.warp_sync: dict[tuple[int, int], VC] = {}                 # bar.warp.sync in progress
        self.sync: dict[tuple[int, int], VC] = {}                      # strong stores' releases per address
        # The entries of bars, cluster, warp_sync and sync no snapshot shares, by (table, key).
        self.own_vcs: set[tuple[str, tuple[int, int]]] = set()
        self.proxy_fences = Fences()
        self.copies: dict[int, CopyInfo] = {}
        self.own_copies: set[int] = set()
        # The shares (engine ids) of each warpgroup MMA: (CTA, the warpgroup's first thread, rank).
        self.wg_ops: dict[tuple[int, int, int], tuple[int, ...]] = {}
        # Copy engines' ids (`copy_agent`): by (issuer, the issuer's clock at the issue), and that issue
        # by id less `first_copy`, shared by every clone; and by the machine's id of each copy in flight.
        self.names: dict[tuple[int, int], int] = {}
        self.issues: list[tuple[int, int]] = []
        self.first_copy = len(m.threads)
        self.hid: dict[int, int] = {}

    def agent(self, aid: int) -> Agent:
        """An agent's state to change: copied first if a snapshot shares it (copy on write)."""
        if aid in self.private:
            return self.agents[aid]
        a = self.agents[aid] = self.agents[aid].clone()
        self.private.add(aid)
        return a

    def vc_to_change(self, name: str, key: tuple[int, int]) -> VC:
        """Entry `key` of the clocks table `name` (cluster, warp_sync, sync), empty if it has none yet, to
        change: copied first if a snapshot shares it."""
        table: dict[tuple[int, int], VC] = getattr(self, name)
        vc = table.get(key)
        if vc is None:
            vc = table[key] = {}
        elif (name, key) not in self.own_vcs:
            vc = table[key] = dict(vc)
        self.own_vcs.add((name, key))
        return vc

    def bar_to_change(self, key: tuple[int, int]) -> tuple[VC, list[int]]:
        """A bar.sync barrier's releases and waiters (empty if it has none yet), to change: copied first if
        a snapshot shares them."""
        entry = self.bars.get(key)
        if entry is None:
            entry = self.bars[key] = ({}, [])
        elif ("bars", key) not in self.own_vcs:
            entry = self.bars[key] = (dict(entry[0]), list(entry[1]))
        self.own_vcs.add(("bars", key))
        return entry

    def add(self, a: Agent) -> Agent:
        self.agents[a.me] = a
        self.private.add(a.me)
        return a

    def shadow(self, cta: int) -> Shadow:
        """The shadow memory of CTA `cta` (-1: global memory) to check an access against and record it
        in: copied first if a snapshot shares it."""
        if cta in self.own_shadows:
            return self.gmem if cta < 0 else self.smem[cta]
        self.own_shadows.add(cta)
        if cta < 0:
            self.gmem = self.gmem.clone()
            return self.gmem
        s = self.smem[cta] = self.smem[cta].clone()
        return s

    def clocks(self, key: tuple[int, int], phase: int) -> BarrierClocks:
        """The clocks of the barrier at `key` (cta, offset) to change (new ones in `phase` if it has none
        yet): copied first if a snapshot shares them."""
        bc = self.barriers.get(key)
        if bc is None:
            bc = BarrierClocks(phase)
        elif key in self.own_barriers:
            return bc
        else:
            bc = bc.clone()
        self.barriers[key] = bc
        self.own_barriers.add(key)
        return bc

    def copy_info(self, aid: int) -> CopyInfo:
        """A copy engine's description to change: copied first if a snapshot shares it."""
        info = self.copies[aid]
        if aid not in self.own_copies:
            info = self.copies[aid] = info.clone()
            self.own_copies.add(aid)
        return info

    def add_copy(self, aid: int, info: CopyInfo) -> None:
        self.copies[aid] = info
        self.own_copies.add(aid)

    def copy_agent(self, c: Copy, issuer: int, clk: int) -> int:
        """The tracker's id of a copy engine just issued by thread `issuer` at its clock `clk`: the same
        id for the same issue in every run and search branch, whatever other copies were issued before
        (the machine numbers copies in issue order, across threads). So states that differ only in the
        order two threads issued their copies have equal clocks and keys (`key`)."""
        name = (issuer, clk)
        found = self.names.get(name)
        if found is None:
            found = self.names[name] = self.first_copy + len(self.issues)
            self.issues.append(name)
        self.hid[c.aid] = found
        return found

    def clone(self) -> RaceState:
        """An independent copy (for the checker's snapshots). What this state owns becomes shared with
        the copy; either side copies a part before changing it."""
        for cta in self.own_shadows:
            (self.gmem if cta < 0 else self.smem[cta]).freeze()
        out = RaceState.__new__(RaceState)
        out.agents = self.agents.clone()
        out.private = set()
        self.private = set()
        out.smem = list(self.smem)
        out.gmem = self.gmem
        out.own_shadows = set()
        self.own_shadows = set()
        out.barriers = dict(self.barriers)
        out.own_barriers = set()
        self.own_barriers = set()
        out.bars, out.cluster = dict(self.bars), dict(self.cluster)
        out.warp_sync, out.sync = dict(self.warp_sync), dict(self.sync)
        out.own_vcs = set()
        self.own_vcs = set()
        out.proxy_fences = self.proxy_fences.clone()
        out.copies = dict(self.copies)
        out.own_copies = set()
        self.own_copies = set()
        out.wg_ops = dict(self.wg_ops)
        out.names, out.issues, out.first_copy = self.names, self.issues, self.first_copy
        out.hid = dict(self.hid)
        return out

    def key(self) -> tuple[object, ...]:
        """Everything that decides future race verdicts (the explanations' notes left out)."""
        def vcs(d: dict[tuple[int, int], VC]) -> tuple[object, ...]:
            return tuple(sorted((k, tuple(sorted(v.items()))) for k, v in d.items()))
        return (tuple(a.key() for a in self.agents.values()),
                tuple(s.key() for s in self.smem), self.gmem.key(),
                tuple(sorted((k, b.key()) for k, b in self.barriers.items())),
                tuple(sorted((k, tuple(sorted(vc.items())), tuple(w)) for k, (vc, w) in self.bars.items())),
                vcs(self.cluster), vcs(self.warp_sync), vcs(self.sync), self.proxy_fences.key(),
                tuple(sorted(self.wg_ops.items())))


def track(m: Machine) -> RaceState:
    """Switch race detection on for a machine that has not run yet."""
    if isinstance(m, RaceMachine):
        return m.hb
    if m.inflight or any(t.pc or t.frames for t in m.threads):
        raise ValueError("race tracking must be switched on before the machine runs")
    m.__class__ = RaceMachine
    state = RaceState(m)
    m.hb = state  # type: ignore[attr-defined]
    return state


def _covers(seen: VC, clocks: VC) -> bool:
    """Whether vector clock `seen` already holds every clock of `clocks` (joining them changes nothing)."""
    return all(seen.get(a, 0) >= k for a, k in clocks.items())


def _space_key(cta: Cta | None, addr: int) -> tuple[int, int]:
    return (-1 if cta is None else cta.index, addr)


class RaceMachine(Machine):
    """A Machine whose steps also keep happens-before (see the module docstring)."""

    hb: RaceState

    # -- plumbing ------------------------------------------------------------------------------------
    def _site(self, t: Thread, before: bool = False) -> Site:
        """The instruction running now (`before`: it set t.pc to the next one before calling in)."""
        return t.func.sites[t.pc - 1 if before else t.pc]

    def _access(self, t: Thread, cta: Cta | None, addr: int, size: int, write: bool, atomic: bool = False,
                what: str = "") -> None:
        site = t.func.sites[t.pc]
        order = site.facts.order
        strong = atomic or order.strong
        flags = THREAD | (WRITE if write else 0) | (ATOMIC if strong else 0)
        ag = self.hb.agents[t.aid]
        info: Info = (t.aid, site, flags, "global" if cta is None else "shared",
                      -1 if cta is None else cta.index, addr, size, what)
        self._check(self.hb.shadow(-1 if cta is None else cta.index), addr, size, ag, info)
        if strong:
            self._strong(t, self.hb.agent(t.aid), order, _space_key(cta, addr), write, atomic)

    def reread_changes_nothing(self, t: Thread, cta: Cta | None, addr: int, size: int, rmw: bool = False
                               ) -> bool:
        """Also in the happens-before state: the thread read these bytes with this load and its clock
        since they were last written (so the read is recorded and no race), or, an atom, wrote them last
        with this atom and clock and no one read them since; a strong access has already joined what
        releases through the location hold, and an atom releases nothing new (`_strong`: a release ticks
        the thread's clock; a release fence's clock must be in the location's releases already)."""
        site = t.func.sites[t.pc]
        order = site.facts.order
        ag = self.hb.agents[t.aid]
        index = -1 if cta is None else cta.index
        strong = rmw or order.strong
        info: Info = (t.aid, site, THREAD | (WRITE if rmw else 0) | (ATOMIC if strong else 0),
                      "global" if cta is None else "shared", index, addr, size, "")
        shadow = self.hb.gmem if cta is None else self.hb.smem[index]
        done = (shadow.written_by(addr, size, ag.vc, t.aid, ag.clk, info) if rmw
                else shadow.read_by(addr, size, t.aid, ag.clk, info))
        if not done:
            return False
        if not strong:
            return True
        released = self.hb.sync.get(_space_key(cta, addr), {})
        if rmw and (order.releases or ag.frel is not None and not _covers(released, ag.frel)):
            return False
        return _covers(ag.vc if order.acquires else ag.facq, released)

    def _check(self, shadow: Shadow, addr: int, size: int, ag: Agent, info: Info, clk: int | None = None,
               pvc: VC | None = None, data: bytes | None = None) -> None:
        try:
            shadow.access(addr, size, ag.vc, ag.me, ag.clk if clk is None else clk, info, pvc, data)
        except Conflict as c:
            raise explain(self, c) from None

    def _strong(self, t: Thread, ag: Agent, order: Order, key: tuple[int, int], write: bool,
                rmw: bool) -> None:
        """Release/acquire through a location, and the fence patterns for relaxed accesses."""
        acquire, release = order.acquires, order.releases
        if (not write or rmw) and key in self.hb.sync:
            if acquire:
                ag.acquire(self.hb.sync[key])
            else:
                join(ag.facq, self.hb.sync[key])
        if write:
            line = t.func.sites[t.pc].line
            rel = ag.tick(f"the release store at line {line}") if release else ag.frel
            if rel is not None:
                join(self.hb.vc_to_change("sync", key), rel)

    # -- memory --------------------------------------------------------------------------------------
    def ld_cta(self, t: Thread, addr: int, size: int) -> int:
        v = Machine.ld_cta(self, t, addr, size)
        self._access(t, t.cta, addr, size, False)
        return v

    def st_cta(self, t: Thread, addr: int, size: int, value: int) -> None:
        Machine.st_cta(self, t, addr, size, value)
        self._access(t, t.cta, addr, size, True)

    def ld_cluster(self, t: Thread, addr: int, size: int) -> int:
        v = Machine.ld_cluster(self, t, addr, size)
        cta, off = self._cta_of(t, addr)
        self._access(t, cta, off, size, False)
        return v

    def st_cluster(self, t: Thread, addr: int, size: int, value: int) -> None:
        Machine.st_cluster(self, t, addr, size, value)
        cta, off = self._cta_of(t, addr)
        self._access(t, cta, off, size, True)

    def ld_global(self, t: Thread, addr: int, size: int) -> int:
        v = Machine.ld_global(self, t, addr, size)
        self._access(t, None, addr, size, False)
        return v

    def st_global(self, t: Thread, addr: int, size: int, value: int) -> None:
        Machine.st_global(self, t, addr, size, value)
        self._access(t, None, addr, size, True)

    def ld_gen(self, t: Thread, addr: int, size: int) -> int:
        v = Machine.ld_gen(self, t, addr, size)  # shared and local go through ld_cluster / ld_local
        if not is_shared_generic(addr) and not is_local_generic(addr) and not is_param_generic(addr):
            self._access(t, None, addr, size, False)
        return v

    def atom(self, t: Thread, space: str, addr: int, size: int, op: str, kind: str, b: int, c: int) -> int:
        old = Machine.atom(self, t, space, addr, size, op, kind, b, c)
        cta: Cta | None = None
        if space in ("cta", "cluster") or space == "generic" and is_shared_generic(addr):
            cta, addr = self._cta_of(t, addr, space)
        self._access(t, cta, addr, size, True, atomic=True)
        return old

    # -- mbarrier ------------------------------------------------------------------------------------
    def _clocks(self, cta: Cta, off: int, change: bool = True) -> BarrierClocks:
        """The clocks of the barrier at `off` of `cta`; `change`: to change them (copied if shared)."""
        bc = self.hb.barriers.get((cta.index, off))
        if bc is None or change:
            # barrier_at: a copy may complete on memory that holds no object (the violation is the core's)
            bc = self.hb.clocks((cta.index, off), self.barrier_at(cta, off).phase)
        return bc

    def _mb_access(self, ag: Agent, site: Site, cta: Cta, off: int, flags: int, what: str,
                   clk: int | None = None) -> None:
        info: Info = (ag.me, site, flags | MBAR, "shared", cta.index, off, 8, what)
        self._check(self.hb.shadow(cta.index), off, 8, ag, info, clk)

    def _rolled(self, cta: Cta, off: int) -> None:
        """The phase of the barrier at `off` of `cta` completed: roll its clocks."""
        phase = cta.barriers[off].phase
        if phase != self._clocks(cta, off, change=False).phase:
            self._clocks(cta, off).roll(phase)

    def mb_init(self, t: Thread, space: str, addr: int, count: int) -> None:
        Machine.mb_init(self, t, space, addr, count)
        cta, off, b = self._mbar(t, space, addr, "mbarrier.init", True)
        ag = self.hb.agent(t.aid)
        self._mb_access(ag, self._site(t), cta, off, THREAD | WRITE, "mbarrier.init")
        self.hb.barriers.pop((cta.index, off), None)
        self.hb.clocks((cta.index, off), b.phase)

    def mb_inval(self, t: Thread, space: str, addr: int) -> None:
        cta, off, b = self._mbar(t, space, addr, "mbarrier.inval", True)
        for c in self.inflight:
            if c.bar_cta is cta and c.bar_off == off and c.status != DONE:
                first = f"{c.name}: `{c.site.text}`"
                second = f"{t.name}, line {self._site(t).line}: `{self._site(t).text}`"
                edge = (f"the {c.kind} still has to perform its "
                        f"{'arrive-on' if c.kind.endswith('arrive') else 'complete-tx'} on {b.name}")
                site = self._site(t)
                accesses = (
                    RaceAccess(c.thread.aid, c.name, c.aid - len(self.threads), c.site.line, c.site.text,
                               "arrive-on" if c.kind.endswith("arrive") else "complete-tx", "shared",
                               cta.index, off, 8),
                    RaceAccess(t.aid, t.name, None, site.line, site.text, "mbarrier.inval", "shared",
                               cta.index, off, 8))
                raise InvalInflight(f"mbarrier.inval of {b.name} while {c.name} will still signal it\n"
                                    f"  in flight: {first}\n  inval: {second}\n  {edge}",
                                    first, second, edge, accesses)
        Machine.mb_inval(self, t, space, addr)
        self._mb_access(self.hb.agents[t.aid], self._site(t), cta, off, THREAD | WRITE, "mbarrier.inval")

    def mb_tx(self, t: Thread, space: str, addr: int, count: int, expect: bool) -> None:
        name = "mbarrier.expect_tx" if expect else "mbarrier.complete_tx"
        Machine.mb_tx(self, t, space, addr, count, expect)
        cta, off, _ = self._mbar(t, space, addr, name, False)
        self._mb_access(self.hb.agents[t.aid], self._site(t), cta, off, THREAD | ATOMIC, name)
        self._rolled(cta, off)

    def mb_arrive(self, t: Thread, space: str, addr: int, count: int | None, tx: int | None,
                  no_complete: bool, drop: bool, want: bool) -> int:
        name = "mbarrier.arrive_drop" if drop else "mbarrier.arrive"
        word = Machine.mb_arrive(self, t, space, addr, count, tx, no_complete, drop, want)
        cta, off, b = self._mbar(t, space, addr, name, False)
        site = self._site(t)
        ag = self.hb.agent(t.aid)
        self._mb_access(ag, site, cta, off, THREAD | ATOMIC, name)
        bc = self._clocks(cta, off)
        order = site.facts.order
        relaxed = order.sem == NO_ORDER_SEM
        cluster = order.scope == Scope.CLUSTER
        what = f"the {name.split('.')[1]} on {b.name} at line {site.line}"
        into = [bc.acc_cta, bc.acc_cluster] if cta is t.cta else [bc.acc_cluster] if cluster else []
        if relaxed:
            bc.notes.append((t.aid, f"{what} (thread {t.aid}) is .relaxed: it releases nothing", False))
            for acc in into if ag.frel is not None else ():
                join(acc, ag.frel)  # type: ignore[arg-type]
        else:
            ag.release(into, what)
        if (not relaxed or ag.frel is not None) and cta is not t.cta:
            if cluster:
                bc.notes.append((t.aid, f"{what} comes from CTA {t.cta.name} with .cluster scope, but the "
                                 f"wait has .cta scope: it acquires only from its own CTA", True))
            else:
                bc.notes.append((t.aid, f"{what} (thread {t.aid}) has .cta scope but the waiter is in CTA "
                                 f"{cta.name}", False))
        bc.arrivers.add(t.aid)
        self._rolled(cta, off)
        return word

    def mb_wait(self, t: Thread, space: str, addr: int, value: int, parity: bool, is_try: bool) -> bool:
        name = "mbarrier.try_wait" if is_try else "mbarrier.test_wait"
        ok = Machine.mb_wait(self, t, space, addr, value, parity, is_try)
        cta, off, b = self._mbar(t, space, addr, name, True)
        site = self._site(t)
        ag = self.hb.agent(t.aid)
        self._mb_access(ag, site, cta, off, THREAD | ATOMIC, name)
        if not ok:
            return ok
        bc = self._clocks(cta, off, change=False)
        order = site.facts.order
        cluster = order.scope == Scope.CLUSTER
        done = bc.done_cluster if cluster else bc.done_cta
        if order.sem == NO_ORDER_SEM:
            join(ag.facq, done)
            ag.note(bc.done_arrivers, f"the wait at line {site.line} on {b.name} is .relaxed: it acquires "
                    "nothing")
        else:
            ag.acquire(done)
            for arriver, why, remote_cluster in bc.done_notes:
                if not (remote_cluster and cluster):
                    ag.note(frozenset({arriver}), why)
        return ok

    # -- asynchronous copies ---------------------------------------------------------------------------
    def _issued(self, t: Thread, bulk: bool, c: Copy | None = None) -> Copy:
        """The copy (`c`, else the latest) just issued: ordered after everything its thread did so far."""
        c = self.inflight[-1] if c is None else c
        ag = self.hb.agent(t.aid)
        h = self.hb.copy_agent(c, t.aid, ag.clk)
        snap = ag.tick()
        snap[h] = 2
        cag = self.hb.add(Agent(h, snap))
        if bulk:
            cag.proxy(self.hb.proxy_fences, snap)
        bar = None
        if c.bar_cta is not None:
            bar = c.bar_cta.barriers[c.bar_off].name if c.bar_off in c.bar_cta.barriers else None
        self.hb.add_copy(h, CopyInfo(c.aid, c.kind, t.aid, c.site.line, bar))
        return c

    def cp_async(self, t: Thread, dst: int, src: int, size: int, src_size: int) -> None:
        Machine.cp_async(self, t, dst, src, size, src_size)
        h = self.hb.hid[self._issued(t, False).aid]
        ag = self.hb.agent(t.aid)
        ag.cp_issued[h] = 2
        ag.groups["cp.async"][-1].append(h)

    def bulk_copy(self, t: Thread, dst_space: str, src_space: str, dst: int, src: int, size: int,
                  bar: int, cta_mask: int | None = None) -> None:
        Machine.bulk_copy(self, t, dst_space, src_space, dst, src, size, bar, cta_mask)
        if cta_mask is None:  # a multicast issues one copy per CTA through this method
            self._issued(t, True)

    def st_async(self, t: Thread, dst: int, value: int, size: int, bar: int, op: str | None,
                 kind: str) -> None:
        Machine.st_async(self, t, dst, value, size, bar, op, kind)
        self._issued(t, False)

    def tc_commit(self, t: Thread, space: str, addr: int, cta_mask: int | None) -> None:
        first = len(self.inflight)
        Machine.tc_commit(self, t, space, addr, cta_mask)
        # Its arrive-ons track no operation the simulator runs (none releases the thread's accesses):
        # each is an agent ordered after what its thread did, touching only its mbarrier.
        for a in self.inflight[first:]:
            self._issued(t, False, a)

    def try_cancel(self, t: Thread, space: str, addr: int, bar: int, everywhere: bool) -> None:
        first = len(self.inflight)
        Machine.try_cancel(self, t, space, addr, bar, everywhere)
        for c in self.inflight[first:]:  # one response per CTA, written by the async proxy
            self._issued(t, True, c)

    def tensor_load(self, t: Thread, *args: object) -> None:
        first = len(self.inflight)
        Machine.tensor_load(self, t, *args)  # type: ignore[arg-type]
        for c in self.inflight[first:]:  # one engine per destination CTA
            self._issued(t, True, c)

    def tensor_store(self, t: Thread, *args: object) -> None:
        Machine.tensor_store(self, t, *args)  # type: ignore[arg-type]
        self.hb.agent(t.aid).groups["bulk"][-1].append(self.hb.hid[self._issued(t, True).aid])

    def bulk_store(self, t: Thread, dst: int, src: int, size: int) -> None:
        Machine.bulk_store(self, t, dst, src, size)
        c = self._issued(t, True)
        self.hb.agent(t.aid).groups["bulk"][-1].append(self.hb.hid[c.aid])

    def bulk_reduce(self, t: Thread, dst: int, src: int, size: int, op: str, ty: str) -> None:
        Machine.bulk_reduce(self, t, dst, src, size, op, ty)
        c = self._issued(t, True)
        self.hb.agent(t.aid).groups["bulk"][-1].append(self.hb.hid[c.aid])

    def cp_mb_arrive(self, t: Thread, space: str, addr: int, noinc: bool) -> None:
        Machine.cp_mb_arrive(self, t, space, addr, noinc)
        cta, off, b = self._mbar(t, space, addr, "cp.async.mbarrier.arrive", True)
        ag = self.hb.agent(t.aid)
        self._mb_access(ag, self._site(t), cta, off, THREAD | ATOMIC, "cp.async.mbarrier.arrive")
        a = self.inflight[-1]
        h = self.hb.copy_agent(a, t.aid, ag.clk)
        snap = ag.tick()
        snap[h] = 2
        arr = self.hb.add(Agent(h, snap))
        arr.cp_issued = dict(ag.cp_issued)  # rule 2: every cp.async the thread requested before it
        self.hb.add_copy(h, CopyInfo(a.aid, a.kind, t.aid, a.site.line, b.name))
        for c in ag.cp_issued:
            if self.hb.copies[c].tracked is None:
                self.hb.copy_info(c).tracked = (b.name or f"{off:#x}", a.site.line)

    def cp_commit(self, t: Thread) -> None:
        Machine.cp_commit(self, t)
        self.hb.agent(t.aid).groups["cp.async"].append([])

    def bulk_commit(self, t: Thread) -> None:
        Machine.bulk_commit(self, t)
        self.hb.agent(t.aid).groups["bulk"].append([])

    def cp_wait(self, t: Thread, n: int, which: str) -> None:
        reads_only = which != "cp.async" and self._site(t, before=True).facts.reads_only
        ag = self.hb.agent(t.aid)
        groups = ag.groups["cp.async" if which == "cp.async" else "bulk"]
        done = max(0, len(groups) - 1 - n)   # all committed groups but the n most recent
        # The thread continues only once these groups are complete: what they did is then ordered before.
        for g in groups[:done]:
            for c in g:
                ag.acquire({c: 1 if reads_only else 2})
        if not reads_only:
            del groups[:done]
        Machine.cp_wait(self, t, n, which)

    # -- warpgroup MMA (sim.race_wgmma) ----------------------------------------------------------------------
    def wg_issue(self, parts: dict[int, tuple[Thread, object]]) -> Copy:
        return race_wgmma.issued(self, Machine.wg_issue(self, parts))

    def _wg_reads(self, c: Copy, cta: Cta, chunks: list[int]) -> None:
        race_wgmma.read(self, c, cta, chunks)

    def _wg_retire(self, t: Thread, n: int) -> list[Copy]:
        return race_wgmma.retired(self, t, Machine._wg_retire(self, t, n))

    def finish_async(self, c: Copy) -> None:
        hb = self.hb
        if c.mma is not None:
            Machine.finish_async(self, c)  # its engine's reads (`race_wgmma.read`)
            hb.hid.pop(c.aid)
            return
        h = hb.hid.pop(c.aid)  # its last step
        cag = hb.agents[h]
        bar_cta, off = c.bar_cta, c.bar_off
        bc = self._clocks(bar_cta, off) if bar_cta is not None else None
        if bc is not None and hb.copies[h].phase != bc.phase:
            hb.copy_info(h).phase = bc.phase
        Machine.finish_async(self, c)
        if c.kind in ARRIVALS:
            assert bar_cta is not None and bc is not None
            self._mb_access(cag, c.site, bar_cta, off, ATOMIC, "the arrive-on of " + c.kind)
            # A wait that sees the phase complete is ordered after the copies tracked (9.7.13.15.15) and
            # after this arrive-on itself, which the completion counted (an inval may follow it).
            done = {**cag.cp_issued, h: cag.clk}
            join(bc.acc_cta, done)
            join(bc.acc_cluster, done)
            bc.arrivers.add(h)
            self._rolled(bar_cta, off)
            return
        bulk = c.kind.startswith(("cp.async.bulk", "cp.reduce.async.bulk", "clusterlaunchcontrol"))
        proxy = ASYNC if bulk else 0
        kind, scta, saddr = c.src
        if c.plan is not None:
            tensor_accesses(self._check, hb.shadow, c, cag, self.gmem.read)
        elif kind != "value":  # st.async/red.async carry their value from the issue
            rinfo: Info = (h, c.site, proxy, "global" if kind == "global" else "shared",
                           -1 if scta is None else scta.index, saddr, c.size, "")
            self._check(hb.shadow(-1 if kind == "global" else scta.index),  # type: ignore[union-attr]
                        saddr, c.src_size if kind == "global" else c.size, cag, rinfo, 1,
                        cag.pvcg if kind == "global" else cag.pvc)
        dcta = c.dst_cta
        if c.plan is None:
            reduce = ATOMIC if c.kind.startswith("cp.reduce") else 0  # element-wise atomic reductions
            winfo: Info = (h, c.site, proxy | WRITE | reduce, "global" if dcta is None else "shared",
                           -1 if dcta is None else dcta.index, c.dst, c.size, "")
            # What the copy wrote (it has landed): kept only for plain bulk copies (hb: twins).
            data = None
            if bulk and not reduce:
                end = c.dst + c.size
                data = self.gmem.read(c.dst, c.size) if dcta is None else bytes(dcta.smem[c.dst:end])
            self._check(hb.shadow(-1 if dcta is None else dcta.index), c.dst, c.size, cag, winfo, 2,
                        cag.pvcg if dcta is None else cag.pvc, data)
        if bar_cta is not None and bc is not None:
            self._mb_access(cag, c.site, bar_cta, off, ATOMIC | proxy, "the complete-tx of " + c.kind, 2)
            join(bc.acc_cta, {h: 2})
            join(bc.acc_cluster, {h: 2})
            bc.arrivers.add(h)
            self._rolled(bar_cta, off)

    # -- barriers and fences -------------------------------------------------------------------------
    def bar(self, t: Thread, ident: int, count: int | None, wait: bool) -> None:
        site = self._site(t, before=True)
        entry = self.hb.bar_to_change((t.cta.index, ident))
        self.hb.agent(t.aid).release([entry[0]], f"the {site.text.split()[0]} at line {site.line}")
        if wait:
            entry[1].append(t.aid)
        Machine.bar(self, t, ident, count, wait)

    def _bar_check(self, cta: Cta, ident: int) -> None:
        nb = cta.bars.get(ident)
        Machine._bar_check(self, cta, ident)
        if nb is not None and cta.bars.get(ident) is not nb:
            vc, waiters = self.hb.bars.pop((cta.index, ident), ({}, []))
            for aid in waiters:
                self.hb.agent(aid).acquire(vc)

    def cluster_arrive(self, t: Thread) -> None:
        site = self._site(t, before=True)
        ag = self.hb.agent(t.aid)
        cl = t.cta.cluster
        what = f"the barrier.cluster.arrive at line {site.line}"
        rel = ag.frel if site.facts.order.sem == NO_ORDER_SEM else ag.tick(what)
        acc = self.hb.vc_to_change("cluster", (cl.index, cl.phase))
        if rel is not None:
            join(acc, rel)
        Machine.cluster_arrive(self, t)

    def cluster_wait(self, t: Thread) -> None:
        gen = t.cl_gen
        Machine.cluster_wait(self, t)
        if not t.cl_arrived:  # it went through: the generation it arrived in has completed
            self.hb.agent(t.aid).acquire(self.hb.cluster.get((t.cta.cluster.index, gen), {}))

    def _cluster_check(self, cl: object) -> None:
        from mbarrier.sim.machine import BLOCKED, Cluster
        assert isinstance(cl, Cluster)
        gen = cl.phase
        waiting = [th for cta in cl.ctas for th in cta.threads
                   if th.status == BLOCKED and th.wait == AtCluster(cl.index)]
        Machine._cluster_check(self, cl)
        if cl.phase != gen:
            vc = self.hb.cluster.get((cl.index, gen), {})
            for th in waiting:
                self.hb.agent(th.aid).acquire(vc)

    def coll(self, t: Thread, kind: str, mask: int, arg: object, finish: object) -> None:
        if kind == "bar.warp.sync":
            acc = self.hb.vc_to_change("warp_sync", (t.aid - t.lane, mask))
            self.hb.agent(t.aid).release([acc], f"the bar.warp.sync at line {self._site(t, True).line}")
        Machine.coll(self, t, kind, mask, arg, finish)  # type: ignore[arg-type]

    def _coll_done(self, w: Warp, key: tuple[str, int], entry: object) -> None:
        parts = dict(entry.parts)  # type: ignore[attr-defined]
        Machine._coll_done(self, w, key, entry)  # type: ignore[arg-type]
        if key[0] == "bar.warp.sync" and parts:
            first = next(iter(parts.values()))[0]
            vc = self.hb.warp_sync.pop((first.aid - first.lane, key[1]), {})
            for th, _ in parts.values():
                self.hb.agent(th.aid).acquire(vc)

    def fence(self, t: Thread) -> None:
        if self.threads[t.aid] is not t:
            return  # a probe on a scratch copy of the thread (the checker's spin analysis): no effect
        site = self._site(t)
        kind, sem = site.facts.fence, site.facts.order.sem
        ag = self.hb.agent(t.aid)
        if kind in PROXY_SPACES:
            self.hb.proxy_fences.add(t.aid, ag.clk, ag.vc, PROXY_SPACES[kind])
            ag.tick(f"the fence.proxy.async at line {site.line}")
        elif kind == FenceKind.MBARRIER_INIT:
            ag.frel = ag.tick(f"the fence.mbarrier_init at line {site.line}")
        elif kind == FenceKind.ORDER:
            if sem != Sem.RELEASE:   # fence.acquire, .acq_rel, .sc, membar: the acquire half
                ag.acquire(ag.facq)
            if sem != Sem.ACQUIRE:   # fence.release, .acq_rel, .sc, membar: the release half
                ag.frel = ag.tick(f"the {site.text.split()[0]} at line {site.line}")
