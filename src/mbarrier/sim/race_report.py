"""A race as a finding: the `Race` violations (one class per race rule of `spec.memmodel`), its two
accesses as data (`RaceAccess`: the reports' JSON, SARIF and timelines read them), and the explanation
in words of the happens-before edge that is missing (`explain`, for the race tracker of `sim.races`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from mbarrier.core.violations import Violation
from mbarrier.sim.compile import Site
from mbarrier.sim.hb import ATOMIC, WRITE, Conflict, Info
from mbarrier.spec.memmodel import race_rule as _race_rule
from mbarrier.spec.rules import Rule

if TYPE_CHECKING:
    from mbarrier.sim.races import RaceMachine


class CopyInfo:
    """What the explanations need about a copy engine."""

    __slots__ = ("aid", "kind", "thread", "line", "barrier", "phase", "tracked", "lanes")

    def __init__(self, aid: int, kind: str, thread: int, line: int, barrier: str | None,
                 lanes: tuple[int, ...] = ()) -> None:
        self.aid = aid                                  # the machine's agent id (the schedule's name)
        self.kind = kind
        self.lanes = lanes                              # wgmma.mma_async: the issuing warp's threads
        self.thread = thread
        self.line = line
        self.barrier = barrier
        self.phase: int | None = None                   # the phase its complete-tx or arrive-on fell in
        self.tracked: tuple[str, int] | None = None     # cp.async: (barrier, line) of its mbarrier.arrive

    def clone(self) -> CopyInfo:
        out = CopyInfo(self.aid, self.kind, self.thread, self.line, self.barrier, self.lanes)
        out.phase, out.tracked = self.phase, self.tracked
        return out


@dataclass(frozen=True, slots=True)
class RaceAccess:
    """One of a race's two accesses, as data (the reports' JSON, SARIF and timelines read it)."""

    thread: int             # the thread that made it, or that issued the copy that made it
    agent: str              # the agent in words: "thread 2 (cta 1, tid 0)", "cp.async.bulk c4 (issued ...)"
    copy: int | None        # the copy engine when a copy made it, as schedules number it (c<copy>)
    line: int
    instruction: str
    operation: str          # "read", "write", "atomic write", "the complete-tx of cp.async.bulk...", ...
    space: str              # "shared" or "global"
    cta: int | None         # shared memory: the index of the CTA whose memory it is
    address: int            # shared: the offset in that CTA's shared memory; global: the address
    size: int               # bytes


class Race(Violation):
    """A finding of kind "race": two accesses (or an access and an object's lifetime) unordered by
    happens-before. `.first` and `.second` describe the two accesses in words and `.accesses` as data
    (earlier first), `.edge` the missing edge."""

    rule: ClassVar[str] = "data-race"

    def __init__(self, message: str, first: str, second: str, edge: str,
                 accesses: tuple[RaceAccess, ...] = ()) -> None:
        super().__init__(message)
        self.first = first
        self.second = second
        self.edge = edge
        self.accesses = accesses

    @property
    def spec_rule(self) -> Rule:
        return _race_rule(type(self).rule)


class DataRace(Race):
    rule = "data-race"


class ProxyFence(Race):
    rule = "proxy-fence"


class MbarrierInitVisibility(Race):
    rule = "mbarrier-init-visibility"


class InvalInflight(Race):
    rule = "inval-inflight"


class WgmmaOperandInflight(Race):
    rule = "wgmma-operand-inflight"


_RACES: dict[str, type[Race]] = {c.rule: c for c in (DataRace, ProxyFence, MbarrierInitVisibility,
                                                      InvalInflight, WgmmaOperandInflight)}


def _who(m: RaceMachine, aid: int) -> str:
    """An agent of the tracker in words: a thread, or a copy engine (its tracker id is not the machine's,
    `RaceState.copy_agent`: named by the machine's)."""
    info = m.hb.copies.get(aid)
    if info is not None:
        return f"{info.kind} c{info.aid} (issued by thread {info.thread} at line {info.line})"
    a = m.agent(aid)
    if a is not None:
        return a.name
    return f"agent {aid}"

def _where(m: RaceMachine, info: Info, addr: int) -> str:
    _, _, _, space, cta, _, _, _ = info
    if space == "shared":
        c = m.ctas[cta]
        return f"shared memory of CTA {c.name} at offset {addr:#x} ({c.symbols(addr)})"
    for name, (base, size) in m.buffers.items():
        if base <= addr < base + max(size, 1) or (size == 0 and base <= addr < base + (1 << 32)):
            return f"global memory at {addr:#x} ({name}+{addr - base})"
    return f"global memory at {addr:#x}"

def _describe(m: RaceMachine, info: Info) -> str:
    aid, site, flags, _, _, addr, size, what = info
    op = what or (("atomic " if flags & ATOMIC else "") + ("write" if flags & WRITE else "read"))
    s: Site = site  # type: ignore[assignment]
    return f"{op} of {size} bytes at {addr:#x} by {_who(m, aid)}, line {s.line}: `{s.text}`"

def explain(m: RaceMachine, c: Conflict) -> Race:
    """The race a conflict of the shadow memory is: its rule, its two accesses, the missing edge."""
    first, second = _describe(m, c.earlier), _describe(m, c.later)
    released = _wgmma_released(m, c) if c.rule == "data-race" else None
    if released is not None:
        c.rule = "wgmma-operand-inflight"
    edge = _edge(m, c) if released is None else released
    head = {"data-race": "data race", "proxy-fence": "data race across proxies",
            "mbarrier-init-visibility": "mbarrier operation not ordered after the init",
            "wgmma-operand-inflight": "shared-memory operand of a wgmma.mma_async overwritten in flight"
            }[c.rule]
    msg = (f"{head} on {_where(m, c.later, c.addr)}\n  first:  {first}\n  second: {second}\n"
           f"  missing edge: {edge}")
    accesses = (_access_of(m, c.earlier), _access_of(m, c.later))
    return _RACES[c.rule](msg, first, second, edge, accesses)

def _wgmma_released(m: RaceMachine, c: Conflict) -> str | None:
    """A race between a wgmma.mma_async's read and a write ordered after a release its warp made after
    the issue but not after the wgmma.wait_group that retires it (the stage was handed back while the
    operation could still read it): why, in words; None for any other race."""
    for read, write in ((c.earlier, c.later), (c.later, c.earlier)):
        info = m.hb.copies.get(read[0])
        if info is None or info.kind != "wgmma.mma_async" or read[2] & WRITE or not write[2] & WRITE:
            continue
        issued = m.hb.agents[read[0]].vc
        writer = m.hb.agents.get(write[0])
        if writer is None:
            continue
        for lane in info.lanes:
            clk, seen = issued.get(lane, 0), writer.vc.get(lane, 0)
            if seen > clk:
                clocks, whats = m.hb.agents[lane].releases  # the latest release the writer acquired
                rel = next((w for c_, w in zip(reversed(clocks), reversed(whats), strict=True)
                            if clk <= c_ <= seen), "a later release")
                site: Site = read[1]  # type: ignore[assignment]
                return (f"the wgmma.mma_async at line {site.line} may read these bytes until a "
                        f"wgmma.wait_group of thread {lane} retires its group, but thread {lane} released "
                        f"them by {rel} before that wait, and {_who(m, write[0])} wrote them after "
                        "acquiring that release")
    return None


def _access_of(m: RaceMachine, info: Info) -> RaceAccess:
    aid, site, flags, space, cta, addr, size, what = info
    s: Site = site  # type: ignore[assignment]
    op = what or (("atomic " if flags & ATOMIC else "") + ("write" if flags & WRITE else "read"))
    engine = m.hb.copies.get(aid)
    copy = engine.aid - len(m.threads) if engine is not None else None
    return RaceAccess(_thread_of(m, aid), _who(m, aid), copy, s.line, s.text, op, space,
                      None if cta < 0 else cta, addr, size)

def _thread_of(m: RaceMachine, aid: int) -> int:
    info = m.hb.copies.get(aid)
    return info.thread if info is not None else aid

def _edge(m: RaceMachine, c: Conflict) -> str:
    x, y = c.earlier[0], c.later[0]
    later_s: Site = c.later[1]  # type: ignore[assignment]
    y_copy = m.hb.copies.get(y)
    this = (f"the issue of {_who(m, y)}" if y_copy is not None
            else f"this {'write' if c.later[2] & WRITE else 'read'} (line {later_s.line})")
    earlier_s: Site = c.earlier[1]  # type: ignore[assignment]
    if c.rule == "proxy-fence":
        return (f"the generic write at line {earlier_s.line} ({_who(m, x)}) reaches the async proxy "
                f"only through a fence.proxy.async after it; none happens before {this}")
    if c.rule == "mbarrier-init-visibility":
        return (f"nothing orders the mbarrier.init at line {earlier_s.line} ({_who(m, x)}) before "
                f"{this}: no bar.sync, barrier.cluster or release/acquire pair between them "
                "(another CTA needs a .cluster-scope release such as "
                "fence.mbarrier_init.release.cluster + barrier.cluster.arrive/wait)")
    notes = m.hb.agents[_thread_of(m, y)].notes
    note = notes.get(x, notes.get(_thread_of(m, x)))
    if note is not None:
        return note
    x_copy = m.hb.copies.get(x)
    if x_copy is not None:
        if x_copy.kind == "cp.async":
            if x_copy.tracked is not None:
                bar, line = x_copy.tracked
                return (f"no wait on {bar} for the phase that the cp.async.mbarrier.arrive at line "
                        f"{line} completes precedes {this}")
            return (f"the cp.async at line {x_copy.line} is tracked by no cp.async.mbarrier.arrive "
                    f"(9.7.13.15.16 rule 2) and no cp.async.wait_group/wait_all of thread "
                    f"{x_copy.thread} covers it before {this}")
        if x_copy.barrier is not None:
            return (f"no wait on {x_copy.barrier} for phase {x_copy.phase} (which {_who(m, x)} "
                    f"completes) precedes {this}")
        return (f"no cp.async.bulk.wait_group of thread {x_copy.thread} covers {_who(m, x)} "
                f"before {this}")
    early = y_copy is not None and not c.earlier[2] & WRITE and not _observed(m, x, c.writer)
    if early and y_copy is not None and y_copy.kind == "cp.async":
        read = f"the read at line {earlier_s.line} ({_who(m, x)})"
        if y_copy.tracked is None:
            return (f"the cp.async at line {y_copy.line} is tracked by no cp.async.mbarrier.arrive "
                    f"(9.7.13.15.16 rule 2) and no cp.async.wait_group/wait_all of thread "
                    f"{y_copy.thread} covers it, so nothing orders {read} with the copy landing")
        bar, line = y_copy.tracked
        return (f"{read} comes before the copy lands, and no wait on {bar} for the phase that the "
                f"cp.async.mbarrier.arrive at line {line} completes precedes it")
    if early and y_copy is not None and y_copy.barrier is not None:
        return (f"the read at line {earlier_s.line} ({_who(m, x)}) comes before the copy lands, and no "
                f"wait on {y_copy.barrier} for phase {y_copy.phase} (which the copy "
                "completes) precedes it")
    rel = m.hb.agents[x].release_after(c.clk)
    if rel is None:
        before = m.hb.agents[x].releases[1]
        last = f" (its last release, {before[-1]}, comes before the access)" if before else ""
        return (f"no release by {_who(m, x)} after its access at line {earlier_s.line} precedes "
                f"{this}{last}")
    return f"{_who(m, x)} releases its access only by {rel}; no acquire of it precedes {this}"

def _observed(m: RaceMachine, reader: int, writer: tuple[Info, int] | None) -> bool:
    """Whether the reader had seen the write before its read (it read the old data legitimately)."""
    return writer is not None and m.hb.agents[reader].vc.get(writer[0][0], 0) >= writer[1]
