"""Spin-waits: a thread at a test_wait/try_wait that would fail now, whose failure leads back to the same
wait through local instructions only, is blocked (the checker's rule, `explore.check`): it is enabled
only when the wait would succeed, or raise. `Spins.blocked` tells which barrier such a thread spins on,
probing the wait on a copy of the object and running the failure path on a scratch copy of the thread.

The same holds for a spin on a flag in memory (`Spins.flag`): a thread at a load (`ld.acquire`,
`ld.relaxed`, `ld.volatile` or weak, of global or shared memory) whose value read now leads back to the
load through local instructions only, with every register live there as it was, and whose read would
leave the state as it is (race tracking: this very read is recorded since the bytes were last written,
`Machine.reread_changes_nothing`). Its step is then a step from the state to itself: skipping it loses no
state, violation or race, and only a write to the flag's bytes (or a change of their history, which only
a write makes) can change that. So the thread is blocked until one comes (`FlagSpin`); where nothing can
write them any more it spins forever: a deadlock (a hang), not an enabled thread. CUTLASS's split-K and
stream-K reductions wait so (`ld.global.acquire.gpu` on a workspace flag, `cutlass/barrier.h`). So does
a lock's `atom.cas` (or `atom.exch`) that writes back the value it finds (`FlagSpin.rmw`): it is the
last access of those bytes, by this atom at this clock, and not a release (which ticks the thread's
clock); any other agent's access of the bytes, a read too, changes their history, so any may release it."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from mbarrier.core.barrier import Barrier
from mbarrier.core.violations import Violation
from mbarrier.explore.code import BRANCH, LOCAL, MB, Code, Ins, success_reads
from mbarrier.explore.liveregs import LiveRegs
from mbarrier.sim.address import (
    CTA_BITS,
    OWN,
    is_local_generic,
    is_param_generic,
    is_shared_generic,
    shared_address,
)
from mbarrier.sim.errors import SimError
from mbarrier.sim.machine import Cta, Machine, Thread, TokenWord
from mbarrier.sim.machine.memory import atom_value


def holds(t: Thread, x: Ins) -> bool:
    """Whether x's guard holds for t now (an instruction without a guard always runs)."""
    return x.guard is None or bool(t.regs[x.guard[0]]) != x.guard[1]


SPINS_KEPT = 1024
WAITS = ("test_wait", "try_wait")


@dataclass(frozen=True)
class FlagSpin:
    """A thread spinning on a flag in memory: the load at `pc` of `size` bytes at `addr` in CTA `cta`'s
    shared memory (None: global memory), which reads `value` and comes back to itself. Blocked until
    something writes those bytes."""

    pc: int
    cta: int | None
    addr: int
    size: int
    rmw: bool = False    # an atom writing back what it read: any access of the flag may release it
    # Not blocked yet: its read would change the race history (the first since the flag's last write),
    # so it is enabled for that one step, after which it is blocked (`Frozen.futures`: that step is its
    # whole future until the flag is written).
    first: bool = False
    value: int = field(default=0, compare=False)

    def where(self) -> str:
        """The flag's bytes in words: `global 0x7f0000001000` or `shared 0x40 of CTA 1`."""
        return f"global {self.addr:#x}" if self.cta is None else f"shared {self.addr:#x} of CTA {self.cta}"


Spin = tuple[int, int] | FlagSpin  # what a blocked thread spins on: an mbarrier (cta, offset) or a flag


class _Reader:
    """The machine as one probed load sees it: the load reads memory as the machine's own would, with no
    other effect (no race tracking), and what it read is kept (`read`: cta or None, address, size)."""

    def __init__(self, m: Machine) -> None:
        self.m = m
        self.read: tuple[Cta | None, int, int] | None = None
        self.rmw = False      # the access was an atom
        self.changed = False  # which would have written a value other than the one it found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.m, name)

    def ld_global(self, t: Thread, addr: int, size: int) -> int:
        self.read = (None, addr, size)
        return Machine.ld_global(self.m, t, addr, size)

    def ld_cta(self, t: Thread, addr: int, size: int) -> int:
        self.read = (t.cta, addr, size)
        return Machine.ld_cta(self.m, t, addr, size)

    def ld_cluster(self, t: Thread, addr: int, size: int) -> int:
        cta, off = self.m._cta_of(t, addr)
        self.read = (cta, off, size)
        return Machine.ld_cluster(self.m, t, addr, size)

    def atom(self, t: Thread, space: str, addr: int, size: int, op: str, kind: str, b: int, c: int) -> int:
        if space in ("cta", "cluster") or space == "generic" and is_shared_generic(addr):
            cta, off = self.m._cta_of(t, addr, space)
            self.read = (cta, off, size)
            old = Machine._sload(self.m, cta, off, size)
        elif space == "global" or space == "generic" and not is_param_generic(addr) \
                and not is_local_generic(addr):
            self.read = (None, addr, size)
            old = self.m.gmem.load(addr, size)
        else:
            return Machine.atom(self.m, t, space, addr, size, op, kind, b, c)  # raises
        self.rmw = True
        self.changed = atom_value(op, kind, old, b, c, 8 * size) & ((1 << 8 * size) - 1) != old
        return old

    def ld_gen(self, t: Thread, addr: int, size: int) -> int:
        if is_shared_generic(addr) or is_local_generic(addr) or is_param_generic(addr):
            return Machine.ld_gen(self, t, addr, size)  # type: ignore[arg-type]
        return self.ld_global(t, addr, size)


class Spins:
    """The spin-waits of one machine's threads (the failure paths' answers are cached by pc and registers)."""

    def __init__(self, m: Machine, codes: dict[str, Code]) -> None:
        self.m = m
        self.codes = codes
        # The latest SPINS_KEPT answers: new register values come with new states, so an unbounded cache
        # would grow with the search.
        self._cache: OrderedDict[tuple[object, ...], bool] = OrderedDict()
        self._regs = LiveRegs()
        self._memo: dict[int, list[Any]] = {}  # by thread: [its snapshot entry, its `_site`, spins back]
        self._success: dict[int, tuple[Ins, frozenset[int]]] = {}  # by wait

    def _ins(self, t: Thread) -> Ins:
        return self.codes[t.func.name].ins[t.pc]

    def wait_target(self, t: Thread, x: Ins) -> tuple[int, int, Barrier | None] | None:
        """(cta index, offset, barrier) a wait names; None when resolving it would raise."""
        a = x.addr
        if a is None:
            return None
        base: Any = t.regs[a.base] if a.base is not None else 0   # a register holds any value
        v = (int(base) + a.offset) & a.mask
        found = shared_address(a.space, v)
        if found is None:
            return None
        rank, off = found
        if off >> CTA_BITS:  # outside the shared::cta window
            return None
        if rank != OWN:
            ctas = t.cta.cluster.ctas
            if rank >= len(ctas) or ctas[rank] is not t.cta:
                return None
        return t.cta.index, off, t.cta.barriers.get(off)

    def spins_back(self, t: Thread, x: Ins, first: bool = True) -> bool:
        """Would a False result of the wait at t.pc lead back to it through local instructions only, writing
        no register the thread reads after a success? Runs the thread's local steps on a scratch copy of
        its registers (the machine is not touched). `first`: or hand over to a spin-wait on the same
        (`_hands_over`), as a first try does."""
        if x.wait_dst is None:
            return False
        if x.retry_at is not None:
            return True  # a first try: failing, the thread goes on to a spin on the same (`Ins.retry_at`)
        shadow = _scratch(t, x.pc + 1)
        shadow.regs[x.wait_dst] = False
        for _ in range(10_000):
            if shadow.pc == x.pc:
                # Blocked, the thread runs no failed try: what a try writes must not be read after success.
                changed = {i for i, (a, b) in enumerate(zip(t.regs, shadow.regs, strict=True))
                           if type(a) is not type(b) or a != b}
                # Nor its local memory: a try that stores there (ld.local/st.local are local steps) is no
                # spin the checker may skip.
                return not changed - {x.wait_dst} & self._after(self.codes[t.func.name], x) \
                    and shadow.local == t.local
            y = self._ins(shadow)
            if first and y.kind == MB and y.mb_op in WAITS and y.spin_local and holds(shadow, y):
                return self._hands_over(t, x, shadow, y)
            if not self._step_local(shadow):
                return False
        return True  # a local loop that never returns: the thread hangs there just the same

    def _step_local(self, shadow: Thread) -> bool:
        """Run a scratch thread's next instruction where it is local (or its guard is off); False where it
        is not, or raises."""
        y = self._ins(shadow)
        if not (y.kind in (LOCAL, BRANCH) or not holds(shadow, y)):
            return False
        try:
            shadow.code[shadow.pc](self.m, shadow)
        except (SimError, Violation):
            return False
        return True

    def _hands_over(self, t: Thread, x: Ins, at: Thread, y: Ins) -> bool:
        """Whether wait x, which thread t stands at, is a first try that hands over to spin-wait y, where
        its failure path brought the scratch thread `at`: `code._first_try` on the thread's registers (so
        a branch on a register the thread knows, CUTLASS's `@%p bra` around a `brkpt` between its
        `try_wait` and its spin loop, goes its one way). Both wait on the same barrier with the same
        parity or token, y spins back (without a hand-over of its own), and a success at x and one at y
        reach the same next visible instruction with the same live registers: blocked at x until it
        would succeed, the thread does what it does when it fails there first and succeeds at y."""
        here, there = self._site(t), self._site(at)
        if here is None or there is None or here[1:] != there[1:] or not self.spins_back(at, y, False):
            return False
        a, b = _succeed(self, t, x), _succeed(self, at, y)
        if a is None or b is None or a.pc != b.pc:
            return False
        live = self.codes[t.func.name].live[a.pc]
        return all(type(a.regs[r]) is type(b.regs[r]) and a.regs[r] == b.regs[r] for r in live) \
            and a.local == b.local

    def _after(self, code: Code, x: Ins) -> frozenset[int]:
        """The registers read after the wait x succeeds before being written (`code.success_reads`)."""
        found = self._success.get(id(x))
        if found is None or found[0] is not x:
            found = self._success[id(x)] = (x, success_reads(code, x))
        return found[1]

    def blocked(self, t: Thread, probes: dict[tuple[int, str, object], bool | None] | None = None,
                entry: object = None) -> tuple[int, int] | None:
        """The (cta, offset) of the barrier a thread spins on without success, or None if it can step.
        `probes`: the answers of waits already probed in this state (many threads wait alike). `entry`:
        the thread's entry in a snapshot the machine equals now (`explore.snapshot`): the same entry
        means the same thread state, so what depends on the thread alone is taken from the last state
        asked (most threads stand still from one state to the next)."""
        memo = self._memo.get(t.aid) if entry is not None else None
        if memo is None or memo[0] is not entry:
            memo = [entry, self._site(t), None]
            if entry is not None:
                self._memo[t.aid] = memo
        site = memo[1]
        if site is None:
            return None
        x, cta, off, kind, value = site
        b = t.cta.barriers.get(off)
        if b is None:
            return None
        pk = (id(b), kind, id(value.token) if kind == "token" else value)
        if probes is not None and pk in probes:
            ok: bool | None = probes[pk]
        else:
            probe = b.copy()
            try:
                if kind == "parity":
                    ok = probe.try_wait(parity=value)
                elif kind == "token":
                    ok = probe.try_wait(value.token)
                else:
                    ok = probe.try_wait(int(value))
            except (Violation, TypeError, ValueError):
                ok = None  # it raises: the thread can step (into the violation)
            if probes is not None:
                probes[pk] = ok
        if ok is None or ok:
            return None
        if memo[2] is None:
            code = self.codes[t.func.name]  # the answer reads only the registers live at the wait
            key = (t.func.name, t.pc) + self._regs.of(code)[1][t.pc](t)
            spin = self._cache.get(key)
            if spin is None:
                spin = self._cache[key] = self.spins_back(t, x)
                if len(self._cache) > SPINS_KEPT:
                    self._cache.popitem(last=False)
            memo[2] = spin
        return (cta, off) if memo[2] else None

    def flag(self, t: Thread) -> FlagSpin | None:
        """The flag a thread spins on without success (`FlagSpin`, module docstring), or None if it can
        step: it is not at a load some local path leads back to (`Ins.spin_load`), its guard is off, the
        load would raise, change memory, or read a value that lets the thread out. `FlagSpin.first`: its
        read would change the race history, so it can step once before it blocks."""
        x = self._ins(t)
        if not x.spin_load or not holds(t, x):
            return None
        reader = _Reader(self.m)
        shadow = _scratch(t, t.pc)
        try:
            t.code[t.pc](reader, shadow)
        except (SimError, Violation):
            return None
        if reader.read is None or shadow.pc != t.pc + 1 or reader.changed:
            return None
        cta, addr, size = reader.read
        first = not self.m.reread_changes_nothing(t, cta, addr, size, reader.rmw)
        code = self.codes[t.func.name]
        value = self.m.gmem.load(addr, size) if cta is None else \
            int.from_bytes(cta.smem[addr:addr + size], "little")
        key = ("flag", t.func.name, t.pc, value) + self._regs.of(code)[1][t.pc](t)
        back = self._cache.get(key)
        if back is None:
            back = self._cache[key] = self._comes_back(t, shadow)
            if len(self._cache) > SPINS_KEPT:
                self._cache.popitem(last=False)
        return FlagSpin(t.pc, None if cta is None else cta.index, addr, size, reader.rmw, first, value) \
            if back else None

    def flag_ahead(self, t: Thread) -> FlagSpin | None:
        """`flag` for a thread that may stand anywhere in its spin (a run stopped between two steps): asked
        at the next instruction its local steps bring it to, on a scratch copy."""
        if t.frames:
            return None
        shadow = _scratch(t, t.pc)
        for _ in range(10_000):
            if shadow.pc >= len(shadow.code):
                return None
            y = self._ins(shadow)
            if y.kind not in (LOCAL, BRANCH) and holds(shadow, y):
                return self.flag(shadow)
            try:
                shadow.code[shadow.pc](self.m, shadow)
            except (SimError, Violation):
                return None
        return None

    def _comes_back(self, t: Thread, shadow: Thread) -> bool:
        """Whether the scratch thread, just past t's load, comes back to it through local instructions only
        with every register live there as t holds it (and the same local memory)."""
        for _ in range(10_000):
            if shadow.pc == t.pc:
                return all(type(t.regs[r]) is type(shadow.regs[r]) and t.regs[r] == shadow.regs[r]
                           for r in self.codes[t.func.name].live[t.pc]) and shadow.local == t.local
            if shadow.pc >= len(shadow.code) or not self._step_local(shadow):
                return False
        return False

    def _site(self, t: Thread) -> tuple[Ins, int, int, str, Any] | None:
        """What a thread's spin-wait asks, from the thread alone: (the wait, cta, offset, "parity" /
        "token" / "word", the value it waits with); None when it stands at no wait that can block (not a
        wait, its guard off, an address that raises, a parity that is no integer: the wait raises)."""
        x = self._ins(t)
        if x.kind != MB or x.mb_op not in ("test_wait", "try_wait") or not holds(t, x):
            return None
        target = self.wait_target(t, x)
        if target is None:
            return None
        cta, off, _ = target
        slot, const = x.wait_arg
        value: Any = t.regs[slot] if slot is not None else const
        if x.wait_parity:
            try:
                return x, cta, off, "parity", int(value) & 0xFFFFFFFF
            except (TypeError, ValueError):
                return None  # the wait raises: the thread can step (into the violation)
        if isinstance(value, TokenWord):
            return x, cta, off, "token", value
        return x, cta, off, "word", value


def _scratch(t: Thread, pc: int) -> Thread:
    """A copy of thread t at pc with its own registers, local memory and copy groups, to run local steps
    on (ld.local and st.local are local steps: PTX ISA 5.1.5; so is a commit of its copies' group)."""
    shadow = Thread.__new__(Thread)
    for name in ("aid", "func", "code", "cta", "warp", "lane", "tid", "time", "effects", "status", "cc",
                 "last_fail", "wait", "cl_arrived", "cl_gen", "ridx", "wg"):
        setattr(shadow, name, getattr(t, name))
    shadow.regs = list(t.regs)
    shadow.local = bytearray(t.local)
    shadow.cp_open, shadow.bulk_open = list(t.cp_open), list(t.bulk_open)
    shadow.cp_groups, shadow.bulk_groups = [list(g) for g in t.cp_groups], [list(g) for g in t.bulk_groups]
    shadow.frames = list(t.frames)
    shadow.pc = pc
    return shadow


def _succeed(spins: Spins, t: Thread, x: Ins) -> Thread | None:
    """A scratch copy of t after wait x (at t.pc) returns True, run through branches and functions of
    registers up to the next other instruction whose guard holds (None: a step raises, or it never gets
    there)."""
    assert x.wait_dst is not None
    shadow = _scratch(t, x.pc + 1)
    shadow.regs[x.wait_dst] = True
    for _ in range(10_000):
        if shadow.pc >= len(shadow.code):
            return None
        y = spins._ins(shadow)
        if not holds(shadow, y):
            shadow.pc += 1
            continue
        if not (y.kind == BRANCH or y.kind == LOCAL and y.pure):
            return shadow
        try:
            shadow.code[shadow.pc](spins.m, shadow)
        except (SimError, Violation):
            return None
    return None
