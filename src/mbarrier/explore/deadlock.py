"""Why a deadlocked state cannot move: each waiting thread, what it waits for, which mbarrier phase
starves (`explore.stuck`, the words `mbarrier run` prints for a stuck run too), and who could still help."""

from __future__ import annotations

from mbarrier.explore.code import BULK, CP_MB, MB, Code
from mbarrier.explore.footprints import READ
from mbarrier.explore.por import AllFootprints
from mbarrier.explore.results import Waiter
from mbarrier.explore.stuck import Starved, blocked, cause, starved
from mbarrier.explore.who import Layout, plural, ranges
from mbarrier.sim.machine import EXITED, Copy, Machine, Thread
from mbarrier.sim.waits import OnMbarrier, Wait


def explain(m: Machine, codes: dict[str, Code], fp: AllFootprints, spinning: dict[int, tuple[int, int]]
            ) -> tuple[list[Waiter], dict[str, list[str]], list[Starved], str]:
    """The waiting threads of a deadlocked machine, who could still arrive on the barriers they wait on,
    the starved mbarrier phases (likeliest cause first) and the finding's message. `spinning`: the threads
    the checker found spinning (thread -> barrier), which the machine has not parked."""
    waiters: list[Waiter] = []
    waits: list[tuple[Thread, Wait | None]] = []
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
        waits.append((t, w))
        if isinstance(w, OnMbarrier):
            assert why.barrier is not None
            barriers[(w.cta, w.off)] = why.barrier
        waiters.append(Waiter(t.aid, t.name, why.site.line, why.site.text, why.what, why.barrier, why.address,
                              why.cta, why.wants, why.state, why.reason))
    layout = Layout.of(m)
    arrivers: dict[str, list[str]] = {}
    for (cta_i, off), sym in barriers.items():
        arrivers[sym] = _who_could_arrive(m, fp, cta_i, off, {w.thread for w in waiters}, layout)
    found = starved(m, waits)
    n = len(waiters)
    what = sorted({w.barrier for w in waiters if w.barrier} | {w.what for w in waiters if not w.barrier})
    message = f"{n} thread{'s' if n != 1 else ''} wait{'s' if n == 1 else ''} forever (on {', '.join(what)})"
    headline = cause(m, found, layout)
    if headline:
        message += f": {headline}"
    return waiters, arrivers, found, message


def _who_could_arrive(m: Machine, fps: AllFootprints, cta_i: int, off: int, waiting: set[int],
                      layout: Layout) -> list[str]:
    """Agents whose remaining code may still write this barrier (arrive, expect_tx, complete_tx, ...),
    threads alike (at the same line, waiting or not, reaching the same lines) together."""
    copies: list[str] = []
    calls: list[int] = []
    alike: dict[tuple[int, bool, tuple[str, ...]], list[int]] = {}
    for a in [t for t in m.threads if t.status != EXITED] + list(m.inflight):
        if isinstance(a, Copy):
            if a.bar_cta is not None and a.bar_cta.index == cta_i and a.bar_off == off:
                copies.append(f"{a.name} (in flight)")
            continue
        assert isinstance(a, Thread)
        if a.frames:
            calls.append(a.aid)
            continue
        lines = []
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
            key = (a.func.sites[a.pc].line, a.aid in waiting, tuple(dict.fromkeys(lines)))
            alike.setdefault(key, []).append(a.aid)
    said = [(first, f"{layout.threads(range(first, last + 1))} (inside a call: anything)")
            for first, last in ranges(calls)]
    for (line, stuck, reached), ids in alike.items():
        for first, last in ranges(ids):
            run = [i for i in ids if first <= i <= last]
            verb = plural(run, "waits itself", "wait themselves")
            said.append((first, f"{layout.threads(run)} at line {line}{' but ' + verb if stuck else ''} "
                                f"({plural(run, 'its', 'their')} code still reaches {', '.join(reached)})"))
    return [text for _, text in sorted(said)] + copies
