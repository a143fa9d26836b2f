"""Why a thread cannot move: one explanation for `mbarrier run` (a stuck run, a run stopped by its limit
or an interrupt) and for `mbarrier check` (the waiters of a deadlock); and, where nothing can move, which
mbarrier phase starves and of what (its headline)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from mbarrier.core.barrier import Barrier
from mbarrier.explore.spin import FlagSpin
from mbarrier.explore.who import Layout, plural
from mbarrier.sim.compile import Site
from mbarrier.sim.machine import ARRIVALS, EXITED, Machine, Thread
from mbarrier.sim.waits import AtBar, AtCluster, ForCopies, InCollective, OnMbarrier, Wait, wants


@dataclass(frozen=True)
class Blocked:
    """A thread that waits: the instruction it waits at, what for (`what`: "mbarrier", "bar", "cluster",
    "warp", "cp.wait", "flag" (a spin on a flag in memory, `explore.spin.FlagSpin`); "running" for a
    thread that can still step), the reason in words, and for an mbarrier the object (its symbol, shared
    offset, the index of its CTA), the phase awaited and the object's state; for a flag its address (the
    shared offset or the global address) and CTA (None: global)."""

    site: Site
    what: str
    reason: str
    barrier: str | None = None
    address: str | None = None
    cta: int | None = None
    wants: str | None = None
    state: Barrier | None = None


def describe_barrier(b: Barrier | None) -> str:
    """A waited-for mbarrier's state in words, as `run` and `check` print it beside the reason."""
    if b is None:
        return "never initialized"
    if not b.valid:
        return "not a valid object (invalidated)"
    parts = [f"phase {b.phase} (parity {b.phase & 1})",
             f"{b.pending} of {b.expected} arrival{'s' if b.expected != 1 else ''} still pending"]
    if b.tx > 0:
        parts.append(f"{b.tx} transaction bytes still outstanding")
    elif b.tx < 0:
        parts.append(f"{-b.tx} transaction bytes delivered ahead of expect_tx")
    return ", ".join(parts)


def blocked(m: Machine, t: Thread, wait: Wait | FlagSpin | None = None) -> Blocked:
    """Why `t` waits: `wait`, or the reason the machine blocked it for (`Thread.wait`). The checker passes
    an `OnMbarrier` for a thread it found spinning, which the machine has not parked, or its `FlagSpin`."""
    assert t.status != EXITED
    if isinstance(wait, FlagSpin):
        space = "global" if wait.cta is None else f"shared (CTA {m.ctas[wait.cta].name})"
        return Blocked(t.func.sites[wait.pc], "flag",
                       f"spins on the {wait.size}-byte flag at {space} {wait.addr:#x}: it reads "
                       f"{wait.value:#x}, which keeps it looping, until a write there", None,
                       f"{wait.addr:#x}", wait.cta)
    w = wait if wait is not None else t.wait
    if isinstance(w, OnMbarrier):
        cta = m.ctas[w.cta]
        b = cta.barriers.get(w.off)
        sym = cta.symbols(w.off)
        awaited = wants(w.parity, w.value, word=False)
        return Blocked(t.func.sites[w.pc], "mbarrier",
                       f"waits for {awaited} of mbarrier {sym} (shared {w.off:#x}, CTA {cta.name})",
                       sym, f"{w.off:#x}", cta.index, wants(w.parity, w.value),
                       None if b is None else b.copy())
    site = t.func.sites[max(t.pc - 1, 0)]  # the blocking instructions move pc past themselves first
    if isinstance(w, AtBar):
        nb = t.cta.bars.get(w.ident)
        n = len(nb.arrived) if nb else 0
        need = nb.count if nb and nb.count is not None else t.cta.live
        return Blocked(site, "bar", f"waits at bar.sync {w.ident}: {n} of {need} threads arrived")
    if isinstance(w, AtCluster):
        cl = t.cta.cluster
        return Blocked(site, "cluster", f"waits at barrier.cluster.wait: {cl.count} of {cl.live} threads of "
                                        "the cluster arrived")
    if isinstance(w, InCollective):
        return Blocked(site, "warp", f"waits in {w.kind} (membermask {w.mask:#010x}) for the other lanes")
    if isinstance(w, ForCopies):
        if w.which == "wgmma.mma_async":  # wgmma.wait_group keeps its pc: it retires when it steps again
            site = t.func.sites[t.pc]
        return Blocked(site, "cp.wait", f"waits for its {w.which} groups ({w.pending} may stay pending)")
    return Blocked(t.func.sites[t.pc], "running", "still runnable")


class Ahead(Protocol):
    """What a live thread's remaining code may still do (`explore.deadlock.FootprintsAhead`)."""

    def reaches_bar(self, t: Thread, ident: int) -> bool:
        """Whether it may still arrive at bar.sync/bar.arrive `ident` of its CTA."""
        ...

    def arrives_on(self, t: Thread, cta: int, off: int) -> bool:
        """Whether it may still arrive on the mbarrier at shared offset `off` of CTA index `cta`."""
        ...


@dataclass(frozen=True)
class Starved:
    """A phase of an mbarrier that threads wait for and that can no longer complete (nothing can move):
    the object (symbol, shared offset, CTA), its phase and counts, the transaction bytes still outstanding,
    the bytes that copies in flight would still complete on it, and the threads that wait for it. Or
    (`waits_on` "bar") a bar.sync barrier that counted some of its threads: its number as `address`, the
    threads it expects and those that arrived."""

    waits_on: str               # "mbarrier" or "bar"
    barrier: str
    address: int
    cta: int                    # the index of its CTA
    cta_name: str               # that CTA as its ctaid prints
    valid: bool
    phase: int
    expected: int
    pending: int
    tx: int
    landing: int
    waiters: tuple[int, ...]
    # A bar.sync barrier that is the consequence of starved mbarrier phases: the live threads it still
    # lacks, each waiting for such a phase, and those phases' objects.
    lacking: tuple[int, ...] = ()
    lacking_on: tuple[str, ...] = ()
    # An mbarrier phase that misses arrivals no live thread can still make: the parity its waiters want
    # (None where they differ or wait for tokens).
    wanted: int | None = None

    @property
    def arrived(self) -> int:
        """Arrivals this phase has counted."""
        return max(self.expected - self.pending, 0)

    @property
    def short(self) -> str:
        """What is missing: "bytes" (every arrival came, transaction bytes did not), "arrivals" (some came,
        not all), "no arrival", or "invalid" (not an initialized object)."""
        if not self.valid:
            return "invalid"
        if self.pending <= 0:
            return "bytes"
        return "arrivals" if self.arrived else "no arrival"

    def words(self, layout: Layout) -> str:
        """The starved phase in words: which object, what it expects, what came, who waits for it."""
        obj = f"mbarrier {self.barrier} (shared {self.address:#x}, CTA {self.cta_name})"
        n, p = self.expected, self.phase
        short = self.short
        who = f"{layout.threads(self.waiters)} {plural(self.waiters, 'waits', 'wait')}"
        if self.waits_on == "bar":
            text = (f"{self.barrier} (CTA {self.cta_name}) expects {n} threads but only {self.arrived} "
                    f"arrived, and no other can come; {who} at it")
            if self.lacking:
                verb = plural(self.lacking, "waits", "wait")
                text += (f"; {layout.threads(self.lacking)}, which it still needs, {verb} on mbarrier "
                         f"{', '.join(self.lacking_on)}")
            return text
        if short == "invalid":
            text = f"{obj} is not an initialized object, so no phase of it completes"
        elif short == "bytes" and self.tx < 0:
            text = (f"{obj} got all its expected arrivals of phase {p} but its copies delivered {-self.tx} "
                    "transaction bytes more than expect_tx announced, so the phase cannot complete")
        elif short == "bytes":
            landing = ("no copy in flight will complete them" if not self.landing else
                       f"the copies in flight complete only {self.landing}" if self.landing < self.tx else
                       "the copies in flight that would complete them cannot land")
            came = "its one expected arrival" if n == 1 else f"all {n} expected arrivals"
            text = (f"{obj} got {came} of phase {p} but {self.tx} transaction "
                    f"byte{'s are' if self.tx != 1 else ' is'} still outstanding, and {landing}")
        else:
            came = f"only {self.arrived} came" if self.arrived else "none came"
            text = f"{obj} expects {_count(n, 'arrival')} in phase {p} but {came}, and no other can come"
            if self.tx > 0:
                text += f" ({self.tx} transaction bytes are outstanding too)"
        text += f"; {who} for it"
        if self.wanted is not None and p >= 1 and self.wanted == p & 1 and short != "invalid":
            # 9.7.13.15.16: a parity names the current phase or the one before. Waiting now, this parity
            # names the phase in progress; asked before phase p - 1 completed, it named the phase before
            # that and passed at once. Said so that a waiter one whole phase behind shows as such.
            text += (f" (parity {self.wanted}: the phase in progress, {p}; the same wait issued before "
                     f"phase {p - 1} completed would have passed at once)")
        return text


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


_BLAME = {"bytes": 0, "arrivals": 1, "no arrival": 2, "invalid": 3}


def starved(m: Machine, waits: Sequence[tuple[Thread, Wait | None]], ahead: Ahead | None = None
            ) -> list[Starved]:
    """The mbarrier phases the threads of a machine where nothing can move wait for, the likeliest cause
    first: a phase whose arrivals all came but whose bytes did not, then one that counted some of its
    arrivals but not all (a wrong count shows as such a phase), then one that counted none; among alike
    ones, the lowest phase first. `waits`:
    each thread that has not exited and what it waits for (None: the machine's `Thread.wait`). A bar.sync
    barrier that counted some threads but not all ranks with the mbarrier phases that did (a release
    skipped shows as such a barrier), unless every thread it still lacks waits for an mbarrier phase
    that misses arrivals no live thread can still make: then that phase is the cause and the barrier its
    consequence, ranked after every mbarrier phase. `ahead`: what the live threads' code may still do
    (without it, no barrier is taken for a consequence)."""
    by_barrier: dict[tuple[int, int], list[int]] = {}
    by_bar: dict[tuple[int, int], list[int]] = {}
    on_barrier: dict[int, tuple[int, int]] = {}
    parities: dict[tuple[int, int], set[int | None]] = {}
    for t, wait in waits:
        w = wait if wait is not None else t.wait
        if isinstance(w, OnMbarrier):
            by_barrier.setdefault((w.cta, w.off), []).append(t.aid)
            on_barrier[t.aid] = (w.cta, w.off)
            parities.setdefault((w.cta, w.off), set()).add(
                w.value & 1 if w.parity and isinstance(w.value, int) else None)
        elif isinstance(w, AtBar):
            by_bar.setdefault((t.cta.index, w.ident), []).append(t.aid)
    out: list[Starved] = []
    for (cta_i, ident), ids in by_bar.items():
        cta = m.ctas[cta_i]
        nb = cta.bars.get(ident)
        n = len(nb.arrived) if nb else 0
        need = nb.count if nb and nb.count is not None else cta.live
        out.append(Starved("bar", f"bar.sync {ident}", ident, cta_i, cta.name, True, 0, need, need - n, 0, 0,
                           tuple(ids)))
    for (cta_i, off), ids in by_barrier.items():
        cta = m.ctas[cta_i]
        b = cta.barriers.get(off)
        landing = sum(c.size for c in m.inflight if c.kind not in ARRIVALS
                      and c.bar_cta is cta and c.bar_off == off)
        if b is None or not b.valid:
            out.append(Starved("mbarrier", cta.symbols(off), off, cta_i, cta.name, False, 0, 0, 0, 0, landing,
                               tuple(ids)))
        else:
            out.append(Starved("mbarrier", cta.symbols(off), off, cta_i, cta.name, True, b.phase, b.expected,
                               b.pending, b.tx, landing, tuple(ids)))
    if ahead is not None:
        out = _causes(m, out, on_barrier, parities, ahead)
    # Among alike ones, the phase that lags first: in a pipeline, a stage's `full` completes a phase before
    # its `empty` does; a `full` a phase ahead of its `empty` was consumed but never released.
    return sorted(out, key=lambda s: (bool(s.lacking), _BLAME[s.short], s.phase, s.waits_on != "mbarrier",
                                      s.cta, s.address))


def _causes(m: Machine, found: list[Starved], on_barrier: dict[int, tuple[int, int]],
            parities: dict[tuple[int, int], set[int | None]], ahead: Ahead) -> list[Starved]:
    """`found` with the mbarrier phases that miss arrivals no live thread can still make marked (their
    waiters' parity), and the bar.sync barriers whose every lacking thread waits for such a phase marked
    as their consequence."""
    live = [t for t in m.threads if t.status != EXITED]
    roots: dict[tuple[int, int], str] = {}
    out: list[Starved] = []
    for s in found:
        key = (s.cta, s.address)
        if s.waits_on == "mbarrier" and s.short in ("arrivals", "no arrival") and not any(
                on_barrier.get(t.aid) != key and ahead.arrives_on(t, *key) for t in live):
            roots[key] = s.barrier
            wanted = parities.get(key, {None})
            s = replace(s, wanted=next(iter(wanted)) if len(wanted) == 1 else None)
        out.append(s)
    for i, s in enumerate(out):
        if s.waits_on != "bar":
            continue
        at = set(s.waiters)
        lacking = [t.aid for t in m.ctas[s.cta].threads
                   if t.status != EXITED and t.aid not in at and ahead.reaches_bar(t, s.address)]
        if lacking and all(on_barrier.get(a) in roots for a in lacking):
            out[i] = replace(s, lacking=tuple(lacking),
                             lacking_on=tuple(dict.fromkeys(roots[on_barrier[a]] for a in lacking)))
    return out


def cause(m: Machine, found: Sequence[Starved], layout: Layout) -> str:
    """The headline of a machine where nothing can move: the likeliest starved phase in words (`found`,
    from `starved`); "" when no thread waits on a barrier. Threads that exited are named only where no
    thread left could arrive (each waits for that phase itself): then the missing arrivals could only have
    come from them. Elsewhere they are not (a producer warp's idle lanes, which no barrier counts)."""
    if not found:
        return ""
    top = found[0]
    text = top.words(layout)
    gone = [t.aid for t in m.threads if t.status == EXITED]
    live = {t.aid for t in m.threads if t.status != EXITED}
    if top.waits_on == "mbarrier" and top.short in ("arrivals", "no arrival") and gone \
            and live <= set(top.waiters) and not top.landing:
        text += (f"; every thread left waits for it, so its missing arrivals could only have come from "
                 f"{layout.threads(gone)}, which exited (a thread counted in the expected arrivals must "
                 "mbarrier.arrive_drop before it leaves)")
    return text
