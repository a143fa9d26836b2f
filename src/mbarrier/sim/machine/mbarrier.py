"""The mbarrier operations of the machine (PTX ISA 9.7.13.15): each resolves the object's address (state
space, window, alignment: .1, .8, .9), calls the core `Barrier`, writes its word where sm_90 does, and
releases the threads parked on it when its phase or validity changes."""

from __future__ import annotations

from mbarrier.core import violations
from mbarrier.core.barrier import Barrier, pending_count
from mbarrier.sim.address import CTA_BITS, OWN, shared_address
from mbarrier.sim.machine.agents import (
    PARKED,
    BarrierEvent,
    Cta,
    Thread,
    TokenWord,
    _violation,
    _word,
    short_state,
)
from mbarrier.sim.machine.memory import MemoryOps, _gone
from mbarrier.sim.waits import OnMbarrier


class MbarrierOps(MemoryOps):
    """mbarrier.init, inval, expect_tx, complete_tx, arrive(_drop), test_wait/try_wait, pending_count."""

    def _mbar(self, t: Thread, space: str, addr: int, op: str, local: bool) -> tuple[Cta, int, Barrier]:
        """Resolve an mbarrier address (9.7.13.15.1 alignment, .8 shared::cluster, .9 window)."""
        key = (t.cta.index, space, addr, local)
        hit = self.resolved.get(key)
        if hit is None:
            hit = self.resolved[key] = self._resolve(t, space, addr, op, local)
        if hit[0].live == 0 and hit[0] is not t.cta:
            _gone(hit[0], addr)
        return hit

    def _resolve(self, t: Thread, space: str, addr: int, op: str, local: bool) -> tuple[Cta, int, Barrier]:
        found = shared_address(space, addr)
        if found is None:
            raise _violation(violations.AddressWindow,
                             f"{op} at generic address {addr:#x}, which is not in the shared window")
        rank, off = found
        if off >> CTA_BITS:
            raise _violation(violations.AddressWindow,
                             f"{op}.shared::cta at {addr:#x}, which is outside the shared::cta window")
        ctas = t.cta.cluster.ctas
        if rank >= len(ctas):
            raise _violation(violations.AddressWindow,
                             f"{op} at shared::cluster address {addr & 0xFFFFFFFF:#x}: no CTA of rank {rank} "
                             f"in the cluster of {len(ctas)}")
        cta = t.cta if rank == OWN else ctas[rank]
        if local and cta is not t.cta:
            raise _violation(violations.ClusterOperation,
                             f"{op} on the mbarrier at offset {off:#x} of CTA {cta.name}, another CTA of the "
                             "cluster: only arrive, expect_tx and complete_tx may act on a remote object")
        if off % 8:
            raise _violation(violations.Alignment, f"{op} at shared offset {off:#x}, not 8-byte aligned")
        if off + 8 > cta.size:
            raise _violation(violations.AddressWindow,
                             f"{op} at shared offset {off:#x}, outside the {cta.size} bytes of shared "
                             f"memory of CTA {cta.name}")
        return cta, off, self.barrier_at(cta, off)

    def barrier_at(self, cta: Cta, off: int) -> Barrier:
        """The mbarrier object at this shared offset (uninitialized memory until mbarrier.init)."""
        b = cta.barriers.get(off)
        if b is None:
            where = f"@cta{cta.name}" if len(self.ctas) > 1 else ""
            b = cta.barriers[off] = Barrier(cta.symbols(off) + where)
        return b

    def _changed(self, cta: Cta, off: int, b: Barrier, before: str | None) -> None:
        if before is not None:
            self.events.append(BarrierEvent(b.name or f"{off:#x}", before, short_state(b)))
        entry = self.parked.get((cta.index, off))
        if entry is not None and entry[0] != (b.valid, b.phase):
            del self.parked[(cta.index, off)]
            for w in entry[1]:
                if w.status == PARKED:
                    self.unblock(w)

    def mb_init(self, t: Thread, space: str, addr: int, count: int) -> None:
        cta, off, b = self._mbar(t, space, addr, "mbarrier.init", True)
        before = short_state(b) if self.tracing else None
        b.init(count)
        t.effects += 1
        cta.words.add(off)
        cta.smem[off:off + 8] = b.word.to_bytes(8, "little")
        self._changed(cta, off, b, before)

    def mb_inval(self, t: Thread, space: str, addr: int) -> None:
        cta, off, b = self._mbar(t, space, addr, "mbarrier.inval", True)
        before = short_state(b) if self.tracing else None
        b.inval()
        t.effects += 1
        cta.words.discard(off)
        cta.smem[off:off + 8] = b.word.to_bytes(8, "little")  # sm_90 writes the object back on inval
        self._changed(cta, off, b, before)

    def mb_tx(self, t: Thread, space: str, addr: int, count: int, expect: bool) -> None:
        name = "mbarrier.expect_tx" if expect else "mbarrier.complete_tx"
        cta, off, b = self._mbar(t, space, addr, name, False)
        before = short_state(b) if self.tracing else None
        if expect:
            b.expect_tx(count)
        else:
            b.complete_tx(count)
        t.effects += 1
        self._changed(cta, off, b, before)

    def mb_arrive(self, t: Thread, space: str, addr: int, count: int | None, tx: int | None,
                  no_complete: bool, drop: bool, want: bool) -> int:
        name = "mbarrier.arrive_drop" if drop else "mbarrier.arrive"
        cta, off, b = self._mbar(t, space, addr, name, False)
        if want and cta is not t.cta:
            raise _violation(violations.ClusterArriveResult,
                             f"{name} on the mbarrier of CTA {cta.name} returns a state, but an object in "
                             "another CTA of the cluster cannot return one (the destination must be `_`)")
        before = short_state(b) if self.tracing else None
        fn = b.arrive_drop if drop else b.arrive
        if tx is not None:
            token = fn(expect_tx=tx)
        else:
            token = fn(count, no_complete=no_complete)
        t.effects += 1
        self._changed(cta, off, b, before)
        return _word(token.word, token)

    def mb_wait(self, t: Thread, space: str, addr: int, value: int, parity: bool, is_try: bool) -> bool:
        name = "mbarrier.try_wait" if is_try else "mbarrier.test_wait"
        cta, off, b = self._mbar(t, space, addr, name, True)
        fn = b.try_wait if is_try else b.test_wait
        if parity:
            ok = fn(parity=value)
        elif isinstance(value, TokenWord):
            ok = fn(value.token)
        else:
            ok = fn(int(value))
        if ok:
            t.last_fail = None
            return True
        # A wait's answer depends only on the barrier's phase and validity (and the operand).
        key = (t.func.name, t.pc, cta.index, off, int(value), b.phase, b.valid, t.effects)
        if t.last_fail == key:
            self.parked.setdefault((cta.index, off), ((b.valid, b.phase), []))[1].append(t)
            self.block(t, OnMbarrier(t.pc, cta.index, off, parity, value), PARKED)
        else:
            t.last_fail = key
        return False

    def mb_pending_count(self, t: Thread, value: int) -> int:
        return pending_count(value.token if isinstance(value, TokenWord) else int(value))
