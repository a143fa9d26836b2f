"""Why a deadlocked state cannot move: each waiting thread, what it waits for, and who could still help."""

from __future__ import annotations

from typing import Any

from mbarrier.explore.code import BULK, CP_MB, MB, Code
from mbarrier.explore.por import READ, AllFootprints
from mbarrier.explore.results import Waiter
from mbarrier.sim.machine import EXITED, PARKED, Copy, Machine, Thread


def _wants(x_parity: bool, value: object) -> str:
    if x_parity:
        return f"parity {int(value) & 1}"  # type: ignore[call-overload]
    tok = getattr(value, "token", None)
    if tok is not None:
        return f"the completion of phase {tok.phase} (token {int(value):#018x})"  # type: ignore[call-overload]
    return f"the phase of token {int(value):#018x}"  # type: ignore[call-overload]


def explain(m: Machine, codes: dict[str, Code], fp: AllFootprints, spinning: dict[int, tuple[int, int]]
            ) -> tuple[list[Waiter], dict[str, list[str]], str]:
    """The waiting threads of a deadlocked machine, who could still arrive on the barriers they wait on,
    and the finding's message. `spinning`: the threads the checker found spinning (thread -> barrier)."""
    waiters: list[Waiter] = []
    barriers: dict[tuple[int, int], str] = {}
    for t in m.threads:
        if t.status == EXITED:
            continue
        if t.aid in spinning or (t.status == PARKED and t.wait is not None and t.wait[0] == "mbarrier"):
            if t.aid in spinning:
                cta_i, off = spinning[t.aid]
                pc = t.pc
            else:
                assert t.wait is not None
                pc, cta_i, off = t.wait[1], t.wait[2].index, t.wait[3]  # type: ignore[attr-defined, assignment]
            x = codes[t.func.name].ins[pc]
            cta = m.ctas[cta_i]
            b = cta.barriers.get(off)
            slot, const = x.wait_arg
            value = t.regs[slot] if slot is not None else const
            sym = cta.symbols(off)
            site = t.func.sites[pc]
            waiters.append(Waiter(t.aid, t.name, site.line, site.text, "mbarrier", sym, f"{off:#x}", cta.name,
                                  _wants(x.wait_parity, value), b.copy() if b is not None else None))
            barriers[(cta_i, off)] = sym
            continue
        w: tuple[Any, ...] = t.wait or ("running",)
        site = t.func.sites[max(t.pc - 1, 0)]
        if w[0] == "bar":
            nb = t.cta.bars.get(w[1])
            n = len(nb.arrived) if nb else 0
            need = nb.count if nb and nb.count is not None else t.cta.live
            detail = f"waits at bar.sync {w[1]}: {n} of {need} threads arrived"
        elif w[0] == "cluster":
            cl = t.cta.cluster
            detail = f"waits at barrier.cluster.wait: {cl.count} of {cl.live} threads of the cluster arrived"
        elif w[0] == "warp":
            detail = f"waits in {w[1]} (membermask {w[2]:#010x}) for lanes that will not come"
        elif w[0] == "cp.wait":
            detail = f"waits for its {w[1]} groups to complete"
        else:
            site = t.func.sites[t.pc]
            detail = "cannot step"
        waiters.append(Waiter(t.aid, t.name, site.line, site.text, str(w[0]), detail=detail))
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
        for j in sorted(set(fp._reachable(a, a.pc)) | {a.pc}):
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
