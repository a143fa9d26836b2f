"""mbarrier operations that cannot complete a phase before the stubborn set's seed moves: they commute
with every step outside the set, so their barrier item conflicts with nothing (`explore.por`).

An arrive-on, expect_tx, complete_tx or a bulk copy's landing changes a barrier's pending count and
tx-count by amounts that add up the same in any order (9.7.13.15.5-.7, .11-.13); only a *phase
completion* (pending count and tx-count both 0, 9.7.13.15.6) between two of them tells the orders apart
(the later one lands in the next phase, with another token and another race clock). The frozen futures
(`explore.frozen`) bound what every agent outside the seed can do before the seed moves: the arrivals
and tx-count moves in their regions, per barrier (`exact`). If those, together with the agent's own
operation now, cannot complete the barrier's current phase, then along any sequence of outside steps
neither order of the operation and an outside step completes it, so both orders reach the same barrier
state with the same tokens and the same joined clocks; no wait's answer changes either (waits ask only
whether a phase completed). The count bounds also rule out the pending-count underflow (9.7.13.15.7)
in either order. Two more conditions:
- an arrive-on reads whether the previous phase was waited for (the checker's phase rule, 9.7.13.15.4),
  which a successful wait outside may set: arrivals qualify only when it is set already (nothing but a
  completion clears it);
- an operation that moves the tx-count must not leave its range (9.7.13.15.5, +-(2^20-1)) in one order
  only: the tx-count now plus the bytes of every move outside (`exact` sums them, `explore.frozen`) and
  its own, at most the largest byte count a thread's instruction names (`Code.tx_amounts`) or the bytes
  a copy writes into the CTA's shared memory, stays inside it (an unknown byte count, or unboundedly
  many moves, keep the item).
The issue of a `cp.async.mbarrier.arrive` without `.noinc` raises the pending count by one (9.7.13.15.15)
and completes nothing. It commutes with every sequence of outside steps when those cannot bring the
pending count to 0 even without it (their arrivals stay below it: no completion and no underflow in
either order) and cannot push it past its maximum with it (the outside increments, `frozen.INC`, and its
own stay within 2^20-1, 9.7.13.15.7).
This is the mbarrier counterpart of `por.Counted` for counted bar.sync barriers.

An update of the seed's own that may complete the phase commutes with the updates outside too, where it
can complete it only *last*: (I) the updates outside cannot complete the phase without it, and (II) with
it they complete it only once every update outside has happened (the arrivals outside and its own make
the pending count exactly, and the tx-count moves outside make exactly what its own leaves: all one way,
or every rise comes with one of those arrivals, `frozen.UP_ALONE`, so that a part holding all of them
holds every rise).
The totals (`exact`) bound what happens outside from above, so a completion at the seed's update after a
part of them would need a part as large as the whole: none. Then along any sequence w of outside steps,
in w·o and in o·w the phase completes at most once, after the last update of the barrier in both, with
the same counts, tokens and joined clocks; only a wait in w could tell the orders apart, so the item
stays a conflict with reads (`footprints.LAST`). DeepGEMM's producer issues a stage's two TMA loads
before its `arrive.expect_tx` for both: with the loads in flight its arrival completes the phase only
after both land, and no longer takes the loads into the set; CUTLASS's producers arm their CTA's
`full` for both halves of a 2-CTA multicast and multicast their half, whose issue stands for its
landings on both CTAs' `full` (each of those items is asked, with the bytes the issue's size operand or
tensor box gives). Only the seed's own update (the totals hold
every other agent's future, its own too), only a plain arrive or an arrive.expect_tx (a `.noComplete`
arrival raises where it completes the phase, so none may be anywhere in the kernel), and only with known
byte counts.

A wait (test_wait/try_wait, 9.7.13.15.16) reads the phase and, where it returns True, marks the phase
before the current one waited for, which an arrive-on then checks (the checker's phase rule,
9.7.13.15.4); a successful one also acquires what the last completed phase released. None of that
changes along a sequence w of outside steps in which the barrier's current phase cannot complete and
the object is not reset (`frozen.may_complete` with the frozen futures' sources: resets count as
completing), so the wait returns the same, raises or not alike, and acquires the same clocks in w·o
and o·w. What remains is its mark: it changes nothing where the mark is set already or the wait fails;
otherwise every agent whose future may update the barrier must pass a wait on it first: a thread
standing at a wait on it that returns True now (in w that wait is its first step, and it sets the mark
before any of its arrivals), or a bulk copy's landing (complete_tx reads no mark); a pending arrive-on,
or any other thread that may arrive, keeps the item (in w·o its arrival before any wait raises, in o·w
not). Then the wait commutes with every sequence of outside steps: its barrier item is left out.
Before, every thread standing at a `cuda::barrier` token wait that would pass conflicted with every
other thread's next-phase arrival in its future: libcu++'s memcpy_async pipeline formed sets of all
128 threads at each stage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mbarrier.core.barrier import Barrier
from mbarrier.explore.code import BULK, CP_MB, MB, Code, Ins
from mbarrier.explore.footprints import LAST, READ, Footprints, Item
from mbarrier.explore.frozen import ARRIVE, INC, INF, TX_DOWN, TX_UP, UP_ALONE, WAITS, Exact, may_complete
from mbarrier.sim.machine import ARRIVALS, EXITED, Copy, Machine, Thread
from mbarrier.sim.machine.agents import TokenWord
from mbarrier.spec import limits


class Quiet:
    """Which agents' barrier operations now cannot complete their phase before the seed moves."""

    def __init__(self, m: Machine, amount: int | None, exact: Exact, seed: Thread | Copy | None = None,
                 last: bool = False, fps: dict[str, Footprints] | None = None) -> None:
        """`amount`: the largest byte count a thread's tx-count operation may name (`tx_bound`); `seed`:
        the agent frozen; `last`: whether its update may be LAST (no `.noComplete` arrival anywhere);
        `fps`: each function's footprints (a bulk copy's issue: the bytes its landings complete)."""
        self.m = m
        self.amount = amount
        self.exact = exact
        self.seed = seed
        self.last = last
        self.fps = fps

    def reseeded(self, seed: Thread | Copy) -> Quiet:
        """The same counts for another seed (whose future holds no source: `por` patches)."""
        return Quiet(self.m, self.amount, self.exact, seed, self.last, self.fps)

    def _have(self, what: int, cta: int, off: int) -> int:
        e = self.exact
        return e.get((what, cta, off), 0) + e.get((what, cta, None), 0) + e.get((what, None, None), 0)

    def silent(self, a: Thread | Copy, code: Code | None, cta: int, off: int) -> bool:
        """Whether agent a's next step, an operation on the barrier at (cta, off), cannot complete its
        phase, with everything outside the seed, before the seed moves (the module docstring)."""
        own = self._own(a, code)
        if own is None:
            return False
        home = self.m.ctas[cta]
        b = home.barriers.get(off)
        if b is None or not b.valid:
            return False
        if own == RAISE:
            return (self._have(ARRIVE, cta, off) < b.pending
                    and b.pending + 1 + self._have(INC, cta, off) <= limits.PENDING_MAX)
        arrivals, up, down, nbytes = own
        if arrivals and not b.waited:
            return False
        ups, downs = self._have(TX_UP, cta, off), self._have(TX_DOWN, cta, off)
        if (up or down) and not self._no_overflow(b.tx, ups + downs, home.size, nbytes):
            return False
        if self._have(ARRIVE, cta, off) + arrivals < b.pending:
            return True
        if b.tx > 0:
            return downs + down == 0
        if b.tx < 0:
            return ups + up == 0
        return False

    def completes_last(self, a: Thread | Copy, code: Code | None, cta: int, off: int) -> bool:
        """Whether the seed's next step, an update of the barrier at (cta, off), completes its phase, if
        at all, only after every update outside, which cannot complete it without it (the module
        docstring)."""
        own = self._own(a, code)
        if own is None or own == RAISE:
            return False
        arrivals, up, down, nbytes = own
        if (up or down) and nbytes is None:
            return False
        home = self.m.ctas[cta]
        b = home.barriers.get(off)
        if b is None or not b.valid or (arrivals and not b.waited):
            return False
        have = self._have
        n_a, n_u, n_d = have(ARRIVE, cta, off), have(TX_UP, cta, off), have(TX_DOWN, cta, off)
        if have(INC, cta, off) or max(n_a, n_u, n_d) >= INF:
            return False
        if (up or down) and not self._no_overflow(b.tx, n_u + n_d, home.size, nbytes):
            return False
        p, tx = b.pending, b.tx
        # Where every rise outside comes with an arrival (arrive.expect_tx), a part of the updates outside
        # that holds every arrival holds every rise: its falls must make the rest.
        tied = have(UP_ALONE, cta, off) == 0
        # (I) the updates outside alone: too few arrivals, too few bytes one way and none the other, or
        # every arrival needed and the falls unable to make the rest
        if not (n_a < p or (n_u == 0 and n_d < tx) or (n_d == 0 and n_u < -tx)
                or (n_a == p and tied and not 0 <= tx + n_u <= n_d)):
            return False
        # (II) the pending count: every arrival outside is needed (or it never reaches 0)
        if n_a + arrivals > p:
            return False
        # the tx-count after its own move: the moves outside bring it to 0 only all together (or never):
        # all one way, or every rise tied to an arrival, all of which are needed
        need = tx + (nbytes or 0) * (up - down)
        if n_u == 0:
            return n_d == need or need < 0 or need > n_d
        if n_d == 0:
            return n_u == -need or need > 0 or -need > n_u
        if tied and n_a + arrivals == p:
            return n_d == need + n_u or not 0 <= need + n_u <= n_d
        return False

    def _own(self, a: Thread | Copy, code: Code | None) -> tuple[int, int, int, int | None] | None:
        """`_own`, with the bytes a bulk copy's issue (its landings) completes where they are known now:
        its size operand, or a tensor load's box (`Footprints.tensor_box`)."""
        own = _own(a, code)
        if own is None or own[3] is not None or not isinstance(a, Thread) or code is None or self.fps is None:
            return own
        x = code.ins[a.pc]
        if x.kind != BULK:
            return own
        fp = self.fps[a.func.name]
        box = fp.tensor_box(a, x, a.pc, False, None)
        return own[:3] + (box.box_bytes if box is not None else fp.copy_size(a, x, a.pc, False, None),)

    def _no_overflow(self, tx: int, moves: int, smem: int, nbytes: int | None) -> bool:
        """Whether no order of the outside moves (`moves`: their bytes together) and this one can leave
        the tx-count's range: this one moves it by `nbytes` where its operand is known now, else by at
        most the largest amount a thread names, or by what a copy writes into the CTA's shared memory (at
        most its size)."""
        if moves >= INF:
            return False
        if nbytes is not None:
            step = nbytes
        elif self.amount is None:
            return False
        else:
            step = max(self.amount, smem)
        return abs(tx) + moves + 2 * step <= limits.TX_MAX

    def wait_quiet(self, a: Thread, x: Ins, cta: int, off: int,
                   writers: Callable[[Item], Iterable[Thread | Copy]]) -> bool:
        """Whether thread a's next step x, a test_wait/try_wait on the barrier at (cta, off), commutes with
        every sequence of steps outside the set (the module docstring). `writers`: the agents but a whose
        futures may change the barrier (a conflict query of its item)."""
        b = self.m.ctas[cta].barriers.get(off)
        if b is None or not b.valid or may_complete(self.m, cta, off, self.exact):
            return False
        result = wait_result(a, x, b)
        if result is None:
            return False
        if not result or b.waited:
            return True
        fps = self.fps
        if fps is None:
            return False
        for w in writers((("mb", cta, off), READ)):
            if isinstance(w, Copy):
                if w.kind in ARRIVALS or w.mma is not None:
                    return False
                continue
            if w.frames or w.status == EXITED:
                return False
            fp = fps[w.func.name]
            y = fp.code.ins[w.pc]
            if not (y.kind == MB and y.mb_op in WAITS and fp.barrier_items(w, y.addr, READ, w.pc, False)
                    == [(("mb", cta, off), READ)] and wait_result(w, y, b)):
                return False
        return True

    def adjust(self, a: Thread | Copy, code: Code | None, items: list[Item],
               writers: Callable[[Item], Iterable[Thread | Copy]] | None = None) -> list[Item]:
        """Agent a's current items without the barrier item of an operation that cannot complete (LAST
        where the seed's completes only last), or of a wait that cannot tell (`wait_quiet`, given
        `writers`). A multicast bulk copy's issue has one per CTA of its mask (its landings'): each is
        asked for its barrier."""
        x = code.ins[a.pc] if isinstance(a, Thread) and code is not None else None
        if x is not None and x.kind == MB and x.mb_op in WAITS:
            if writers is not None and len(items) == 1:
                obj = items[0][0]
                if obj[0] == "mb" and isinstance(obj[1], int) and isinstance(obj[2], int) \
                        and self.wait_quiet(a, x, obj[1], obj[2], writers):  # type: ignore[arg-type]
                    return []
            return items
        every = x is not None and x.kind == BULK
        out: list[Item | None] = list(items)
        changed = False
        for k, (obj, _mode) in enumerate(items):
            if obj[0] != "mb":
                continue
            cta, off = obj[1], obj[2]
            if isinstance(cta, int) and isinstance(off, int):
                if self.silent(a, code, cta, off):
                    out[k], changed = None, True
                elif self.last and a is self.seed and self.completes_last(a, code, cta, off):
                    out[k], changed = (obj, LAST), True
            if not every:
                break
        return [it for it in out if it is not None] if changed else items


def tx_bound(codes: Iterable[Code]) -> int | None:
    """The largest byte count any of the functions' tx-count operations may name (None: one is not
    known, `Code.tx_amounts`)."""
    top = 0
    for c in codes:
        if c.tx_amounts is None:
            return None
        top = max(top, *c.tx_amounts) if c.tx_amounts else top
    return top


# What the issue of a cp.async.mbarrier.arrive without .noinc does: it raises the pending count.
RAISE = (-1, 0, 0, None)


def _own(a: Thread | Copy, code: Code | None) -> tuple[int, int, int, int | None] | None:
    """What agent a's next step does to its barrier: (arrivals, tx-count moves up, moves down, the bytes
    it moves them by where known now), or RAISE; None when it is not an operation this covers (waits,
    init and inval, an unknown count)."""
    if isinstance(a, Copy):
        if a.mma is not None or a.bar_cta is None:
            return None
        return (1, 0, 0, None) if a.kind in ARRIVALS else (0, 0, 1, a.size)
    assert code is not None
    x = code.ins[a.pc]
    if x.kind == CP_MB and not x.noinc and not x.multicast:
        return RAISE
    if x.kind == BULK and x.bar is not None:
        return (0, 0, 1, None)  # the issue: its barrier item stands for the landing's complete_tx
    if x.kind != MB:
        return None
    if x.mb_op in ("expect_tx", "complete_tx"):
        n = _known(a, x.tx_arg)
        return (0, 1, 0, n) if x.mb_op == "expect_tx" else (0, 0, 1, n)
    if x.mb_op not in ("arrive", "arrive_drop"):
        return None
    v = _known(a, x.count)
    if v is None:
        return None
    return (v, 1, 0, _known(a, x.tx_arg)) if x.mb_expect else (v, 0, 0, None)


def wait_result(t: Thread, x: Ins, b: Barrier) -> bool | None:
    """What thread t's wait x on barrier b would return now (`Barrier.wait_result`: None where it would
    raise or its operand is not known), with its operand as the simulator passes it: a parity as 32
    bits, a token register as it holds it (a token word keeps the arrive that made it)."""
    if x.guard is not None:
        g = t.regs[x.guard[0]]
        if not isinstance(g, int) or bool(g) == x.guard[1]:
            return None  # not known, or off: no wait runs
    slot, const = x.wait_arg
    v = const if slot is None else t.regs[slot]
    if isinstance(v, bool) or not isinstance(v, int):
        return None
    if x.wait_parity:
        return b.wait_result(parity=v & 0xFFFFFFFF)
    return b.wait_result(v.token if isinstance(v, TokenWord) else int(v))


def no_complete_free(codes: Iterable[Code]) -> bool:
    """Whether no function holds an arrive with `.noComplete` (which raises where it completes a phase)."""
    return not any(x.kind == MB and x.mb_op in ("arrive", "arrive_drop") and not (x.mb_plain or x.mb_expect)
                   for c in codes for x in c.ins)


def _known(t: Thread, operand: tuple[int | None, int] | None) -> int | None:
    """An operand's value in thread t's registers now (an immediate, or a register holding an integer),
    as the 32-bit count it is; None when absent or not known."""
    if operand is None:
        return None
    slot, const = operand
    v = const if slot is None else t.regs[slot]
    return v & 0xFFFFFFFF if isinstance(v, int) else None
