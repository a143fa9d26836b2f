"""Why a deadlocked state cannot move: each waiting thread, what it waits for, and who could still help."""

from __future__ import annotations

from mbarrier.explore.code import BULK, CP_MB, MB, Code
from mbarrier.explore.footprints import READ
from mbarrier.explore.por import AllFootprints
from mbarrier.explore.results import Waiter
from mbarrier.explore.stuck import blocked
from mbarrier.sim.machine import EXITED, Copy, Machine, Thread
from mbarrier.sim.waits import OnMbarrier


def explain(m: Machine, codes: dict[str, Code], fp: AllFootprints, spinning: dict[int, tuple[int, int]]
            ) -> tuple[list[Waiter], dict[str, list[str]], str]:
    """The waiting threads of a deadlocked machine, who could still arrive on the barriers they wait on,
    and the finding's message. `spinning`: the threads the checker found spinning (thread -> barrier),
    which the machine has not parked."""
    waiters: list[Waiter] = []
    barriers: dict[tuple[int, int], str] = {}
    for t in m.threads:
        if t.status == EXITED:
            continue
        wait: OnMbarrier | None = None
        if t.aid in spinning:
            x = codes[t.func.name].ins[t.pc]
            slot, const = x.wait_arg
            value = t.regs[slot] if slot is not None else const
            wait = OnMbarrier(t.pc, *spinning[t.aid], x.wait_parity, value)
        why = blocked(m, t, wait)
        w = wait if wait is not None else t.wait
        if isinstance(w, OnMbarrier):
            assert why.barrier is not None
            barriers[(w.cta, w.off)] = why.barrier
        waiters.append(Waiter(t.aid, t.name, why.site.line, why.site.text, why.what, why.barrier, why.address,
                              why.cta, why.wants, why.state, why.reason))
    arrivers: dict[str, list[str]] = {}
    for (cta_i, off), sym in barriers.items():
        arrivers[sym] = _who_could_arrive(m, fp, cta_i, off, {w.thread for w in waiters})
    n = len(waiters)
    what = sorted({w.barrier for w in waiters if w.barrier} | {w.what for w in waiters if not w.barrier})
    message = f"{n} thread{'s' if n != 1 else ''} wait{'s' if n == 1 else ''} forever (on {', '.join(what)})"
    for sym, who in arrivers.items():
        if not who:
            message += f"; no thread or copy can arrive on {sym} any more"
    gone = [t.aid for t in m.threads if t.status == EXITED]
    if gone and any(w.state is not None and w.state.valid and w.state.pending > 0 for w in waiters):
        ids = ", ".join(map(str, gone[:8])) + (", ..." if len(gone) > 8 else "")
        message += (f"; thread{'s' if len(gone) > 1 else ''} {ids} exited while arrivals are still pending "
                    "(a thread counted in the expected arrivals must mbarrier.arrive_drop before it leaves)")
    return waiters, arrivers, message


def _who_could_arrive(m: Machine, fps: AllFootprints, cta_i: int, off: int, waiting: set[int]) -> list[str]:
    """Agents whose remaining code may still write this barrier (arrive, expect_tx, complete_tx, ...)."""
    out: list[str] = []
    for a in [t for t in m.threads if t.status != EXITED] + list(m.inflight):
        if isinstance(a, Copy):
            if a.bar_cta is not None and a.bar_cta.index == cta_i and a.bar_off == off:
                out.append(f"{a.name} (in flight)")
            continue
        assert isinstance(a, Thread)
        lines = []
        if a.frames:
            out.append(f"{a.name} (inside a call: anything)")
            continue
        fp = fps.fps[a.func.name]
        for j in sorted(set(fp.reachable(a, a.pc)) | {a.pc}):
            x = fp.code.ins[j]
            if x.kind not in (MB, CP_MB, BULK):
                continue
            for obj, mode in fp.of_ins(a, x, a.pc, True):
                if mode != READ and obj[0] == "mb" and obj[1] in (None, cta_i) and obj[2] in (None, off):
                    lines.append(f"line {x.line}")
                    break
        if lines:
            stuck = " but waits itself" if a.aid in waiting else ""
            out.append(f"{a.name} at line {a.func.sites[a.pc].line}{stuck} (its code still reaches "
                       f"{', '.join(dict.fromkeys(lines))})")
    return out
