"""Footprints: what an agent's next step, and everything it may still do, touches, for partial-order
reduction (`explore.por`), sleep sets (`explore.sleep`), the frozen futures (`explore.frozen`) and the
deadlock explanation (`explore.deadlock`).

A *footprint item* is `(object, mode)`. Objects: `("mb", cta, offset)` an mbarrier, `("sm", cta, chunk)` 16
bytes of shared memory, `("gm", chunk)` 16 bytes of global memory, `("bar", cta)` the CTA's bar.sync
barriers as whole-CTA meetings, `("bid", cta, id)` one of them by id (counted arrivals), `("cl", cluster)`
the cluster barrier, `("mbv", cta, offset)` whether an mbarrier is a valid object, `("warp", cta, warp)` a
warp's collectives, `("cp", aid)` and `("bulk", aid)` the cp.async and bulk copies a thread issued, `("cpx",
aid)` its cp.async copies no arrive-on tracks, `("wg", cta, warp)` the wgmma.mma_async operations a warp has
in flight, `("live", cta)` whether a CTA still runs. `None` in place of a CTA or an offset means "any" (an
address the analysis cannot know). Modes: READ, WRITE, JOIN for arrivals at bar.sync, the cluster barrier
and warp collectives, which commute with each other (the arrived set is the same in any order) but not with
reads of it, exits or counted bars, and LEAVE for what an exit does to those and to its CTA's liveness
(exits commute with each other), and WHOLE for an arrival without a thread count on a barrier id (these
commute with each other, not with counted arrivals there), XJ for an arrive.expect_tx (it commutes with
plain arrivals and other arrive.expect_tx, `of_ins`), and TX for a copy's complete-tx where it commutes
with plain arrivals and with the other TX landings (`landing_mode`), and a twin store's landing writes its
destination in its twin key's mode (`explore.twins`): it commutes with its twins' landings only.

Two items conflict when their objects may be the same and their modes are not both READ, both JOIN,
both LEAVE, both WHOLE, both XJ or both TX, nor JOIN and XJ, nor JOIN and TX. Waits are READs of their
mbarrier, so waits commute with each other; plain arrivals are JOINs; every other mbarrier operation is a
WRITE (or an XJ, or a TX). Operations on different barriers or bytes never conflict.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from mbarrier.explore.code import (
    ATOM,
    BAR,
    BULK,
    BULK_STORE,
    CLUSTER,
    CP_ASYNC,
    CP_MB,
    CP_WAIT,
    EXIT,
    LOAD,
    MATRIX,
    MB,
    MMA,
    STORE,
    WARP,
    WARP_READ,
    Addr,
    Code,
    Ins,
)
from mbarrier.explore.joins import ROW_BYTES, completes, inside, matrix_rows, own_row, warpgroup_lanes
from mbarrier.explore.spin import FlagSpin, Spin
from mbarrier.explore.twins import runs, twin_mode, twin_writes
from mbarrier.explore.values import Env, value
from mbarrier.sim import mma
from mbarrier.sim.address import CTA_MASK, OWN, PARAM_GENERIC, is_param_generic, shared_address
from mbarrier.sim.errors import SimError
from mbarrier.sim.machine import ARRIVALS, Copy, Machine, Thread
from mbarrier.sim.mma import Form
from mbarrier.sim.tensorcopy import Plan, PlanError, box_plan, tensor_extent, tile_plan
from mbarrier.sim.tensormap import TensorMap, TensorMapError, decode
from mbarrier.sim.waits import AtBar, AtCluster, ForCopies, InCollective, OnMbarrier
from mbarrier.spec.tensormap import TENSOR_MAP_SIZE

READ, WRITE, JOIN, LEAVE, WHOLE, TX, XJ, LAST = 0, 1, 2, 3, 4, 5, 6, 7
# The pairs of different modes that commute (products 10, 12 and those of LAST, 7 to 42: no other pair
# has one of them). LAST: the seed's update of an mbarrier that completes its phase, if at all, only
# after every update outside the stubborn set (`explore.quiet`): it conflicts with reads (waits) only.
_COMMUTING = frozenset({JOIN * TX, JOIN * XJ, *(LAST * m for m in (WRITE, JOIN, LEAVE, WHOLE, TX, XJ))})
Item = tuple[tuple[object, ...], int]
Future = dict[object, list[Item]]


def group(items: Iterable[Item]) -> Future:
    out: Future = {}
    for it in dict.fromkeys(items):
        out.setdefault(it[0][0], []).append(it)
    return out


def conflict(a: int, b: int) -> bool:
    """Whether items of modes a and b on the same object conflict. Beyond the modes above, a twin store's
    landing writes its destination in a mode of its own per twin key (`explore.twins`, from `TWIN` = 64
    up: its products with any mode are 0 or at least 64, in no commuting pair): it commutes with the
    same mode only, as TX with TX."""
    if a == b:
        return a == WRITE  # TX with TX too commutes (`landing_mode`), and a twin mode with itself
    return a * b not in _COMMUTING


class Footprints:
    """Footprints of agents' next operations and of everything they may still do."""

    def __init__(self, m: Machine, code: Code) -> None:
        self.m = m
        self.code = code

    # -- addresses -----------------------------------------------------------------------------------
    def _value(self, t: Thread, a: Addr, pc: int, future: bool, env: Env | None = None) -> int | None:
        """An address; in the future, known when its base register is fixed or `env` (the register
        values at that instruction, `explore.values`) knows it."""
        if a.base is None:
            return a.offset
        v = t.regs[a.base] if not future else value(self.code, t, pc, env, a.base)
        if not isinstance(v, int):
            return None
        return (v + a.offset) & a.mask

    def _shared(self, t: Thread, space: str, v: int | None) -> tuple[int | None, int | None] | None:
        """(cta index, offset) of a shared address, None when it is not shared; unknowns as None."""
        if v is None:
            return (t.cta.index, None) if space == "cta" else (None, None)
        found = shared_address(space, v)
        if found is None:
            return None
        rank, off = found
        if rank == OWN:
            return t.cta.index, off
        ctas = t.cta.cluster.ctas
        return (ctas[rank].index, off) if rank < len(ctas) else (None, None)

    def _mem(self, t: Thread, a: Addr | None, size: int | None, mode: int, pc: int,
             future: bool, env: Env | None = None, box: Plan | None = None) -> list[Item]:
        """The bytes at an address operand (`box`: a tensor load's box, which spans whole swizzle
        patterns of shared memory from it)."""
        if a is None:
            return [(("sm", None, None, None), mode), (("gm", None, None), mode)]
        v = self._value(t, a, pc, future, env)
        if a.space == "global":
            return _chunks("gm", None, v, size, mode)
        sh = self._shared(t, a.space, v)
        if sh is None:
            return _chunks("gm", None, v, size, mode)
        items = _landing(sh[0], sh[1], size, box, mode)
        if a.space == "generic" and v is None:
            items.append((("gm", None, None), mode))
        if sh[0] != t.cta.index:
            items.append((("live", sh[0]), READ))
        return items

    def barrier_items(self, t: Thread, a: Addr | None, mode: int, pc: int, future: bool,
                      env: Env | None = None) -> list[Item]:
        """The mbarrier an address names (and the liveness of its CTA when it is another's)."""
        if a is None:
            return [(("mb", None, None), mode)]
        v = self._value(t, a, pc, future, env)
        sh = self._shared(t, a.space, v)
        if sh is None:
            return [(("mb", None, None), mode)]
        items: list[Item] = [(("mb", sh[0], sh[1]), mode)]
        if sh[0] != t.cta.index:
            items.append((("live", sh[0]), READ))
        return items

    # -- one instruction -----------------------------------------------------------------------------
    def of_ins(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None = None) -> list[Item]:
        k = x.kind
        cta = t.cta.index
        if k == MB:
            # Plain arrivals commute with each other: the counts add up the same in any order, and
            # when one of them would complete the phase in between, both orders raise a violation
            # (the later one underflows pending or arrives before the phase was waited for). So do
            # arrive.expect_tx (XJ) with them and with each other: each lowers the pending count by one
            # (and raises the tx-count), so neither order completes the phase in between while two
            # arrivals are pending, and with one pending the later one raises a violation in both
            # orders (9.7.13.15.6, 9.7.13.15.4). Not with a complete-tx (XJ conflicts with TX): a copy
            # that landed early leaves the tx-count at minus the bytes an arrive.expect_tx brings.
            mode = READ if x.mb_op in ("test_wait", "try_wait") else JOIN if x.mb_plain else \
                XJ if x.mb_expect and x.mb_op in ("arrive", "arrive_drop") else WRITE
            items = self.barrier_items(t, x.addr, mode, pc, future, env)
            if x.mb_op in ("init", "inval"):
                items += self._mem(t, x.addr, 8, WRITE, pc, future, env)
                items += _validity(self.barrier_items(t, x.addr, WRITE, pc, future, env))
            return items
        if k == LOAD:
            return self._mem(t, x.addr, x.size, READ, pc, future, env)
        if k == STORE:
            return self._mem(t, x.addr, x.size, WRITE, pc, future, env)
        if k == ATOM:
            if x.op in ("atom", "red"):
                return self._mem(t, x.addr, x.size, WRITE, pc, future, env)
            if x.trap:  # it ends the launch with a finding whatever the others do: it reads its strings
                return [(("gm", None, None), READ)]
            return [(("any",), WRITE)]
        if k == BAR:
            return self._bar(t, x, pc, future, env)
        if k == CLUSTER:
            if x.sync_all == "cluster":
                # barrier.cluster.wait commutes with every other step: it blocks until the phase its
                # thread arrived in completes (then the completion releases it) or passes because it
                # has (the same state, the same acquired clock), and it faults, without a prior arrive,
                # in any order (only the thread itself sets that).
                return []
            return [(("cl", t.cta.cluster.index), JOIN)]
        if k == WARP:
            return [(("warp", cta, t.aid // 32), JOIN)]
        if k == WARP_READ:
            return [(("warp", cta, t.aid // 32), READ)]
        if k == MMA:
            return self._mma(t, x, pc, future, env)
        if k == MATRIX:
            return self._matrix(t, x, pc, future, env)
        if k == EXIT:
            # Exits commute with each other (LEAVE): each lowers the live counts the bar.sync, cluster
            # and warp-collective checks compare with, and those releases are monotone, so two exits
            # end in the same state in either order; the CTA dies at whichever exit is last.
            return [(("bar", cta), LEAVE), (("cl", t.cta.cluster.index), LEAVE),
                    (("warp", cta, t.aid // 32), LEAVE), (("live", cta), LEAVE), (("cpx", t.aid), READ),
                    (("wg", cta, t.aid // 32), READ)]
        if k == CP_WAIT:
            return [(("cp", t.aid), READ), (("bulk", t.aid), READ)]
        if k == CP_ASYNC:
            return (self._mem(t, x.addr, x.size, WRITE, pc, future, env)
                    + self._mem(t, x.addr2, x.size, READ, pc, future, env)
                    + [(("cp", t.aid), JOIN)])
        # A thread's copies: `("cp", aid)` its cp.async copies (and the issue of an arrive-on watching
        # them; the pending arrive-on itself is in no group, `copy_items`), `("bulk", aid)`
        # its bulk copies, `("cpx", aid)` its cp.async copies that no arrive-on tracks. Issuing a copy
        # and a copy landing are JOINs: they commute with each other (a landing touches only its own
        # copy's status, an issue only appends to the open group). What observes them READs: the
        # wait_group/wait_all instructions both, an exit only the untracked cp.async ones (it checks
        # those; bulk copies into a dying CTA are the "live" object's business).
        # cp.async.mbarrier.arrive watches the copies not yet landed: issued before or after one of them
        # lands, its arrive-on ends runnable at the same point (when the last of them lands), and the
        # landed copy is forgotten either way (`explore.snapshot` leaves landed copies out of the
        # state), so it JOINs too.
        if k == CP_MB:
            if not x.noinc:  # the issue raises the pending count: it can keep a phase from completing
                return self.barrier_items(t, x.bar, WRITE, pc, future, env) + [(("cp", t.aid), JOIN)]
            # .noinc: the issue only checks that the object is valid (9.7.13.15.15: no change to its
            # counts); the arrive-on it leaves behind (an agent of its own) is a plain arrival.
            # tcgen05.commit is alike (no increment, an arrive-on left behind), in every CTA of its
            # ctaMask with .multicast::cluster.
            items = _validity(self._arrivals(t, x, READ, pc, future, env)) + [(("cp", t.aid), JOIN)]
            if future:
                items += self._arrivals(t, x, JOIN, pc, future, env)
            return items
        if k == BULK:
            if not future and not x.multicast:
                # The issue itself only appends the copy to its thread's open group: the destination,
                # the source and the mbarrier are the copy's, when it lands (`copy_items`,
                # `left_behind`); a future issue stands for that landing too.
                box = self.tensor_box(t, x, pc, future, env)
                size = box.box_bytes if box is not None else self.copy_size(t, x, pc, future, env)
                dst = self._mem(t, x.addr, size, WRITE, pc, future, env, box)
                return [it for it in dst if it[0][0] == "live"] + [(("bulk", t.aid), JOIN)]
            return self._bulk_landing(t, x, pc, future, env) + [(("bulk", t.aid), JOIN)]
        if k == BULK_STORE:
            if not future:
                # The issue only appends the copy to its thread's open bulk group: its engine reads the
                # source and writes the destination when it lands (`copy_items`, `left_behind`). A tensor
                # store reads its map now: read-only in kernel parameter memory (`tensor_box`), else
                # global memory.
                box = self.tensor_box(t, x, pc, future, env)
                mapped = [] if x.tmap is None or box is not None else self._mem(
                    t, x.tmap, TENSOR_MAP_SIZE, READ, pc, future, env)
                return mapped + [(("bulk", t.aid), JOIN)]
            return self._bulk_landing(t, x, pc, future, env) + [(("bulk", t.aid), JOIN)]
        return []

    def _bulk_landing(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None) -> list[Item]:
        """What the bulk copy (load or store, tensor or not) that x issues does when it lands: it writes
        its destination (with a load's mbarrier, in every CTA a multicast names) and reads its source."""
        box = self.tensor_box(t, x, pc, future, env)
        size = box.box_bytes if box is not None else self.copy_size(t, x, pc, future, env)
        if x.kind == BULK_STORE:
            if x.tmap is None:
                dst = self._mem(t, x.addr, size, WRITE, pc, future, env)
            else:  # the box's elements, anywhere in the tensor where the map is not known
                dst = self._box_bytes(t, x, box, WRITE, pc, future, env) if box is not None \
                    else [(("gm", None, None), WRITE)]
            return dst + self._mem(t, x.addr2, size, READ, pc, future, env, box)
        if box is not None:
            src = self._box_bytes(t, x, box, READ, pc, future, env)  # the box's elements (its map: read-only)
        else:
            src = self._mem(t, x.addr2, size, READ, pc, future, env) if x.reads_source else []
        if x.multicast:
            dst = self._multicast(t, x, size, pc, future, env, box)
        else:
            dst = self._mem(t, x.addr, size, WRITE, pc, future, env, box) + self.barrier_items(
                t, x.bar, WRITE, pc, future, env)
        return dst + src

    def _box_bytes(self, t: Thread, x: Ins, box: Plan, mode: int, pc: int, future: bool, env: Env | None
                   ) -> list[Item]:
        """The global bytes a tensor copy of this box touches: each run of its elements at its coordinates
        where they are known (now, or at the future node of `env`; `tensorcopy.tile_plan`), else anywhere
        in the tensor. A persistent kernel's CTAs store their tiles at coordinates known from the tile
        index: with the whole tensor, one CTA's future stores conflicted with every store of the others."""
        if x.coords is None:
            return _tensor(box, mode)
        coords = []
        for found in x.coords:
            v = self.operand(t, found, pc, future, env)
            if v is None:
                return _tensor(box, mode)
            coords.append(v - (1 << 32) if v >> 31 else v)  # coordinates are signed (.s32)
        plan = _placed(box.tm, tuple(coords))
        return _tensor(box, mode) if plan is None else _elements(plan, mode)

    def _bar(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None) -> list[Item]:
        """bar.sync/bar.arrive. Without a thread count (every live thread of the CTA): a JOIN of the CTA's
        bar.sync (exits LEAVE it, as they lower the count it needs) and WHOLE on its id (these commute with
        each other, not with counted arrivals on the id). With a count, only the id `("bid", cta, id)`:
        exits do not change what a counted barrier needs. Counted arrivals on one id commute when neither
        completes the barrier before the other arrives (then both orders release the same threads):
        now, when at least two arrivals are still missing (JOIN, else WRITE); in a future, JOIN, and the
        stubborn set (`explore.por`) makes a current JOIN a WRITE unless the arrivals all futures hold
        cannot complete the barrier with it. Unknown id or count: WRITE on every id."""
        cta = t.cta.index
        ident = self.operand(t, x.bar_id, pc, future, env)
        if not x.counted:
            return [(("bar", cta), JOIN), (("bid", cta, ident), WHOLE)]
        count = self.operand(t, x.bar_count, pc, future, env)
        if ident is None or count is None:
            return [(("bar", cta), WRITE), (("bid", cta, None), WRITE)]
        if future:
            return [(("bid", cta, ident), JOIN)]
        nb = t.cta.bars.get(ident)
        if nb is not None and nb.count != count:  # its arrivals so far took another count, or none
            return [(("bar", cta), WRITE), (("bid", cta, ident), WRITE)]
        arrived = len(nb.arrived) if nb is not None else 0
        return [(("bid", cta, ident), JOIN if arrived + 2 <= count else WRITE)]

    def _multicast(self, t: Thread, x: Ins, size: int | None, pc: int, future: bool, env: Env | None,
                   box: Plan | None = None) -> list[Item]:
        """A .multicast::cluster copy's landings: the same offsets (of its destination and its mbarrier) in
        every CTA of the cluster its ctaMask names (every CTA of the cluster where the mask is not known;
        a rank beyond the cluster faults at the issue), each with that CTA's liveness."""
        ctas = t.cta.cluster.ctas
        mask = self.operand(t, x.mask_arg, pc, future, env)
        ranks = [r for r in range(len(ctas)) if mask is None or mask >> r & 1]
        dst, bar = (self._value(t, a, pc, future, env) if a is not None else None for a in (x.addr, x.bar))
        items: list[Item] = []
        for r in ranks:
            cta = ctas[r].index
            items += _landing(cta, None if dst is None else dst & CTA_MASK, size, box, WRITE)
            items.append((("mb", cta, None if bar is None else bar & CTA_MASK), WRITE))
            if cta != t.cta.index:
                items.append((("live", cta), READ))
        return items

    def _arrivals(self, t: Thread, x: Ins, mode: int, pc: int, future: bool, env: Env | None) -> list[Item]:
        """The mbarriers an asynchronous arrive-on instruction reaches (with their CTAs' liveness)."""
        if not x.multicast:
            return self.barrier_items(t, x.bar, mode, pc, future, env)
        landings = self._multicast(t, x, None, pc, future, env)
        return [(obj, mode if obj[0] == "mb" else m) for obj, m in landings if obj[0] in ("mb", "live")]

    def barriers_of(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None
                    ) -> list[tuple[int | None, int | None]]:
        """The mbarriers (cta, offset; None where unknown) a copy instruction completes tx on."""
        if x.multicast:
            items = self._multicast(t, x, None, pc, future, env)
        else:
            items = self.barrier_items(t, x.bar, WRITE, pc, future, env)
        return [(obj[1], obj[2]) for obj, _ in items if obj[0] == "mb"]  # type: ignore[misc]

    def operand(self, t: Thread, found: tuple[int | None, int] | None, pc: int, future: bool,
                 env: Env | None) -> int | None:
        """A 32-bit value operand: its constant, or its register's value now or where known in a future."""
        if found is None:
            return None
        slot, const = found
        if slot is None:
            return const & 0xFFFFFFFF
        v = t.regs[slot] if not future else value(self.code, t, pc, env, slot)
        return v & 0xFFFFFFFF if isinstance(v, int) and not isinstance(v, bool) else None

    def _mma(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None) -> list[Item]:
        """wgmma.mma_async and wgmma.wait_group are warp collectives: a lane's arrival JOINs the warp's.
        Only the arrival that completes one does more (the others commute with everything else): at
        mma_async it issues the operation, whose engine reads the CTA's shared memory and completes to the
        warp (`("wg", cta, warp)`: the operations in flight of its lanes); at wait_group it reads whether
        they have completed. In the future any arrival may be the last. The engine's bytes are those its
        descriptors name (`_engine_reads`; every lane gives the same descriptors, else the issue faults in
        any order), or anywhere in the CTA's shared memory where they are not known."""
        cta, warp = t.cta.index, t.aid // 32
        items: list[Item] = [(("warp", cta, warp), JOIN)]
        if not future and not completes(t, x.op):
            return items
        if x.op == "wgmma.wait_group":
            return items + [(("wg", cta, warp), READ)]
        spans = self._engine_reads(t, x, pc, future, env)
        reads: list[Item] = ([(("sm", cta, None, None), READ)] if spans is None
                             else [(("sm", cta, lo, hi), READ) for lo, hi in spans])
        return items + reads + [(("live", cta), READ), (("wg", cta, warp), JOIN)]

    def _engine_reads(self, t: Thread, x: Ins, pc: int, future: bool,
                      env: Env | None) -> tuple[tuple[int, int], ...] | None:
        """The shared-memory byte ranges the wgmma.mma_async x will read, from its descriptors' values (now,
        or at the future node of `env`, evaluated from pc as every future operand is); None where a
        descriptor is not known or not modelled."""
        if x.mma is None:
            return None
        descs: list[int | None] = []
        for arg in x.descs:
            if arg is None:
                descs.append(None)
                continue
            slot, const = arg
            v = const if slot is None else t.regs[slot] if not future else value(self.code, t, pc, env, slot)
            if not isinstance(v, int) or isinstance(v, bool):
                return None
            descs.append(v & 0xFFFFFFFFFFFFFFFF)
        a, b = descs
        if b is None or (a is None) != (x.mma.desc_a is None):
            return None
        linear = t.aid - t.cta.threads[0].aid  # a CTA's threads are consecutive agents (`sim.launch`)
        return _engine_spans(x.mma.form, x.mma.trans_a, x.mma.trans_b, a, b, mma.warp_row0(linear))

    def _matrix(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None) -> list[Item]:
        """ldmatrix/stmatrix: a lane's arrival JOINs its warp's collective; the arrival that completes it
        reads (writes) every lane's rows: now the 16-byte rows its lanes gave (`joins.matrix_rows`); in a
        future the row this lane gives there (`joins.own_row`), or somewhere in the CTA's shared memory
        where that is not known. A row belongs to the lane whose address names it: the completion reads or
        writes it only after that lane arrived, so whoever completes the meeting, the row is in the future
        of the lane that gives it (a lane already waiting inside the meeting starts its future at it,
        `values.future_start`), and while that lane has not arrived, the meeting cannot complete."""
        cta = t.cta.index
        items: list[Item] = [(("warp", cta, t.aid // 32), JOIN)]
        mode, a = (WRITE if x.stores else READ), x.addr
        own = future or inside(t, x.op)  # a lane waiting inside, as its future starts: its own row
        if not own and not completes(t, x.op):
            return items
        if a is None:
            rows = None
        elif own:
            rows = own_row(t, x, self._value(t, a, pc, future, env), a.space, self._shared)
        else:
            rows = matrix_rows(t, x, self._value(t, a, pc, False), a.space, self._shared)
        return items + ([(("sm", cta, None, None), mode)] if rows is None
                        else [(("sm", c, lo, lo + ROW_BYTES), mode) for c, lo in rows])

    def copy_size(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None) -> int | None:
        """A bulk copy's size: its immediate, or its register's value where known (nvcc puts it in one);
        a tensor load's, the bytes of its box where known (`tensor_box`)."""
        if x.tmap is not None:
            box = self.tensor_box(t, x, pc, future, env)
            return None if box is None else box.box_bytes
        if x.size is not None:
            return x.size
        found = x.size_arg
        if found is None:
            return None
        slot, const = found
        if slot is None:
            return const
        v = t.regs[slot] if not future else value(self.code, t, pc, env, slot)
        return v if isinstance(v, int) else None

    def tensor_box(self, t: Thread, x: Ins, pc: int, future: bool, env: Env | None) -> Plan | None:
        """A tensor load's box (`tensorcopy.box_plan`: its bytes and its span whatever the coordinates)
        where its tensor map lies in kernel parameter memory at a known address: kernel parameters are
        read-only (PTX ISA 5.1.6.1), so the copy reads the map there now. None otherwise (a map in global
        memory may change before the copy reads it: tensormap.replace, stores)."""
        if x.tmap is None:
            return None
        v = self._value(t, x.tmap, pc, future, env)
        if v is None or not is_param_generic(v):
            return None
        try:
            data = bytes(self.m.params.read(v - PARAM_GENERIC, TENSOR_MAP_SIZE))
        except SimError:
            return None  # the issue faults
        return _box(data)

    # -- agents --------------------------------------------------------------------------------------
    def current(self, a: Thread | Copy) -> list[Item]:
        """The footprint of the agent's next step (exact: addresses from its registers now)."""
        if isinstance(a, Copy):
            return copy_items(a, self.m)
        return self.of_ins(a, self.code.ins[a.pc], a.pc, False)

    def left_behind(self, t: Thread) -> list[Item]:
        """What the thread's next step leaves to happen later as an agent of its own and its current
        footprint leaves out (a future holds it): the arrive-on of a cp.async.mbarrier.arrive.noinc, the
        landing of a bulk copy it issues (a multicast issue's footprint holds its landings already).
        Without the landing, a thread about to issue a tensor store had a future that never wrote the
        tensor: a reader's closure left the issuer out and the reader never saw the stored data."""
        x = self.code.ins[t.pc]
        if x.kind == CP_MB and x.noinc:
            return self._arrivals(t, x, JOIN, t.pc, False, None)
        if x.kind == BULK_STORE or (x.kind == BULK and not x.multicast):
            return self._bulk_landing(t, x, t.pc, False, None)
        return []

    def reachable(self, t: Thread, pc: int, cut: frozenset[str] = frozenset()) -> list[int]:
        """Instructions reachable after pc, following guards that read fixed registers, not past a
        barrier of a kind in `cut` (the barrier itself is included)."""
        code = self.code
        seen: set[int] = set()
        stop = self.meets(t, code.ins[pc], pc, None) in cut
        todo = [] if stop else list(self.successors(t, pc, pc))
        while todo:
            j = todo.pop()
            if j in seen:
                continue
            seen.add(j)
            x = code.ins[j]
            if self.meets(t, x, pc, None) in cut and self.guard_may(t, x, pc):
                if x.guard is None or code.fixed(pc, x.guard[0]):
                    continue
            todo.extend(self.successors(t, j, pc))
        return [j for j in seen if self.guard_may(t, code.ins[j], pc)]

    def meets(self, t: Thread, x: Ins, pc: int, env: Env | None) -> str | None:
        """Whose every thread x waits for ("cta", "warp", "cluster"; None: not all of them): its
        `sync_all`, or "warp" for a warp collective whose membermask register holds 0xffffffff there
        (nvcc keeps `-1` in a register), which then meets as the immediate full mask does."""
        if x.sync_all is not None or x.lanes_arg is None:
            return x.sync_all
        return "warp" if self.operand(t, (x.lanes_arg, 0), pc, True, env) == 0xFFFFFFFF else None

    def guard_may(self, t: Thread, x: Ins, pc: int, env: Env | None = None) -> bool:
        """Whether x's guard may hold (its register's value from pc on, where known)."""
        if x.guard is None:
            return True
        g = value(self.code, t, pc, env, x.guard[0])
        return g is None or bool(g) != x.guard[1]

    def successors(self, t: Thread, j: int, pc: int, env: Env | None = None) -> tuple[int, ...]:
        """Where control may go after instruction j (one way when its guard is known)."""
        x = self.code.ins[j]
        succ = self.code.succ[j]
        if x.guard is None or len(succ) < 2:
            return succ
        g = value(self.code, t, pc, env, x.guard[0])
        if g is None:
            return succ
        return succ[:1] if bool(g) != x.guard[1] else succ[1:]


def copy_items(c: Copy, m: Machine, kept: dict[int, tuple[Copy, list[Item]]] | None = None) -> list[Item]:
    """What an in-flight copy (or a pending cp.async arrive-on) does when it lands. A wgmma.mma_async
    reads the bytes of its operands and completes to its warp (which the warp's wgmma.wait_group
    reads). `m`: the machine it is in flight in (`copy_state`). `kept`: what depends only on the copy's
    fixed fields (`_copy_bytes`: set at its issue, never changed while it is in flight; a state restored
    from a snapshot keeps the copy object, `explore.snapshot`), by copy, kept between calls: a tensor
    load's box span and a wgmma's operand ranges were half of a CuTe GEMM's closure time."""
    if kept is None:
        fixed = _copy_bytes(c)
    else:
        found = kept.get(id(c))
        if found is None or found[0] is not c:
            if len(kept) >= COPIES_KEPT:
                kept.clear()
            found = kept[id(c)] = (c, _copy_bytes(c))
        fixed = found[1]
    if c.mma is not None or c.kind in ARRIVALS:
        return list(fixed)
    untracked, mode, twin = copy_state(c, m)
    items: list[Item] = [(("cp" if c.kind == "cp.async" else "bulk", c.thread.aid), JOIN)]
    if untracked:
        items.append((("cpx", c.thread.aid), JOIN))
    if twin is None:
        items += fixed
    else:  # its destination in its twin mode, the rest as ever (a store's only WRITEs are its destination's)
        items += [it for it in fixed if it[1] != WRITE] + twin_writes(c, twin)
    if mode is not None:
        assert c.bar_cta is not None
        items.append((("mb", c.bar_cta.index, c.bar_off), mode))
    return items


def copy_state(c: Copy, m: Machine) -> tuple[bool, int | None, int | None]:
    """What `copy_items` reads of a copy beyond its fixed fields: whether it is a cp.async no
    cp.async.mbarrier.arrive watches yet (untracked: what its thread's exit checks; a copy only ever
    becomes tracked, so a tracked one's landing commutes with the exit), its barrier's landing mode
    (`landing_mode`; None: no barrier, or a wgmma or pending arrive-on, whose items are all fixed) and
    a twin store's mode for its destination (`twins.twin_mode`; None: WRITE)."""
    if c.mma is not None or c.kind in ARRIVALS:
        return False, None, None
    return (c.kind == "cp.async" and not c.watchers,
            None if c.bar_cta is None else landing_mode(c, m.inflight), twin_mode(c, m))


# Copies whose fixed items `copy_items` keeps (cleared when full).
COPIES_KEPT = 4096


def _copy_bytes(c: Copy) -> list[Item]:
    """The items of `copy_items` that read only the copy's fixed fields: for a wgmma or a pending arrive-on
    all of them; for a copy the bytes it reads and writes (and the liveness of their CTAs)."""
    if c.mma is not None:
        assert c.dst_cta is not None
        cta = c.dst_cta.index
        # No liveness item: no lane of its warp exits before it lands (that exit is the finding
        # exit-with-copies-in-flight), so its CTA is alive when it does.
        out: list[Item] = [(("wg", cta, c.thread.aid // 32), JOIN)]
        return out + [(("sm", cta, lo, hi), READ) for lo, hi in c.mma.reads]
    if c.kind in ARRIVALS:
        # A pending arrive-on (cp.async.mbarrier.arrive's, tcgen05.commit's) arrives in its barrier's CTA,
        # which must still run (else exit-with-copies-in-flight): it does not commute with an exit that
        # may be that CTA's last. It is in none of its thread's copy groups, so no wait_group or wait_all
        # waits for it, and it changes no other arrive-on's dependencies: nothing that reads the
        # thread's copies (`("cp", aid)`) observes it.
        assert c.bar_cta is not None
        return [(("mb", c.bar_cta.index, c.bar_off), JOIN), (("live", c.bar_cta.index), READ)]
    items: list[Item] = []
    kind, scta, saddr = c.src
    if kind == "global":
        items += _chunks("gm", None, saddr, c.src_size, READ)
    elif kind == "tensor" and c.plan is not None:
        items += _elements(c.plan, READ)  # a tensor load reads its box there
    elif kind == "shared":
        assert scta is not None
        # (st.async/red.async carry a value.) It reads the CTA's shared memory when it lands, so that CTA
        # must still run (else exit-with-copies-in-flight, `finish_async`): a bulk store not waited for
        # does not commute with an exit that may be its CTA's last.
        items += _shared_bytes(c, scta.index, saddr, READ) + [(("live", scta.index), READ)]
    if c.dst_cta is not None:
        items += _shared_bytes(c, c.dst_cta.index, c.dst, WRITE) + [(("live", c.dst_cta.index), READ)]
    elif c.plan is None:
        items += _chunks("gm", None, c.dst, c.size, WRITE)
    else:  # a tensor store writes its box's elements there
        items += _elements(c.plan, WRITE)
    return items


def _elements(plan: Plan, mode: int) -> list[Item]:
    """The global bytes of a placed box: its runs of elements, or their span where there are more than
    MAX_RUNS of them (a box of many rows: each row a conflict query's item)."""
    found = runs(plan)
    if len(found) <= MAX_RUNS:
        return [(("gm", lo, hi), mode) for lo, hi in found]
    return [(("gm", found[0][0], found[-1][1]), mode)]


def landing_mode(c: Copy, inflight: list[Copy]) -> int:
    """TX where the copy's complete-tx commutes with every sequence of plain arrivals on its barrier, else
    WRITE. A phase completes when the pending count and the tx-count are both 0 (9.7.13.15.6): arrivals
    never complete it while the tx-count is not 0, and the landing never completes it while an arrival is
    pending, so the two orders of an arrival and the landing differ only where the tx-count is 0 before
    both (the arrival may then complete the phase and the bytes fall into the next one). The operations
    that may move the tx-count before this copy lands, outside a stubborn set that holds this copy or a
    plain arrival on the barrier, are arrive.expect_tx (XJ conflicts with TX, but not with JOIN: they
    only raise it) and the landings of the other copies in flight to the barrier (complete_tx and
    expect_tx are WRITEs; a copy issued later is a WRITE in its issuer's future). So the tx-count cannot
    be 0 when this copy lands if it is now above the bytes of every other copy in flight to the barrier.
    Two TX landings commute too: while either is in flight the tx-count stays above 0 whatever else lands
    (each one's own bound), so neither completes the phase before the other lands; both fall into the same
    phase in either order, and the state after both is the same (their bytes, the tx-count, the clocks the
    completion releases). Two multicast halves on one `full` armed for both are such a pair."""
    assert c.bar_cta is not None
    b = c.bar_cta.barriers.get(c.bar_off)
    if b is None or not b.valid or c.size <= 0:
        return WRITE
    others = sum(o.size for o in inflight if o is not c and o.bar_cta is c.bar_cta and o.bar_off == c.bar_off
                 and o.kind not in ARRIVALS and o.mma is None)
    return TX if b.tx > others else WRITE


def _validity(items: list[Item]) -> list[Item]:
    """The validity of the mbarriers `items` name (`("mbv", cta, offset)`): what init and inval change and
    cp.async.mbarrier.arrive.noinc's issue reads; arrivals and waits leave it alone."""
    return [(("mbv",) + obj[1:], mode) if obj[0] == "mb" else (obj, mode) for obj, mode in items]


@lru_cache(maxsize=64)
def _box(data: bytes) -> Plan | None:
    """The box of the tensor map in these bytes; None where the copy's issue raises instead."""
    try:
        tm = decode(data)
        tm.validate()
        return box_plan(tm)
    except (TensorMapError, PlanError):
        return None


def _shared_bytes(c: Copy, cta: int, off: int, mode: int) -> list[Item]:
    """The shared bytes a copy in flight reads or writes from offset `off`: its size, or for a tensor
    copy its box's span (whole swizzle patterns: a swizzled box spans more than its bytes)."""
    if c.plan is not None:
        lo, hi = c.plan.shared_span(off)
        return _chunks("sm", cta, lo, hi - lo, mode)
    return _chunks("sm", cta, off, c.size, mode)


MAX_RUNS = 64  # a placed box's runs kept apart as items (`_elements`); more: their span


@lru_cache(maxsize=4096)
def _placed(tm: TensorMap, coords: tuple[int, ...]) -> Plan | None:
    """The box of a tiled map at these coordinates; None where the copy's issue raises instead."""
    try:
        return tile_plan(tm, coords)
    except PlanError:
        return None


def _tensor(box: Plan, mode: int) -> list[Item]:
    """The global bytes a copy of this box may touch, whatever its coordinates (`tensor_extent`)."""
    span = tensor_extent(box.tm)
    return _chunks("gm", None, None if span is None else span[0], None if span is None else span[1] - span[0],
                   mode)


def _landing(cta: int | None, off: int | None, size: int | None, box: Plan | None, mode: int) -> list[Item]:
    """The shared bytes a copy writes from offset `off` of a CTA: `size` of them, or a tensor box's span."""
    if box is not None and off is not None:
        lo, hi = box.shared_span(off)
        return _chunks("sm", cta, lo, hi - lo, mode)
    return _chunks("sm", cta, off, size, mode)


def _chunks(space: str, cta: int | None, addr: int | None, size: int | None, mode: int) -> list[Item]:
    """A byte range [lo, hi) of shared (per CTA) or global memory; None bounds mean "anywhere"."""
    if addr is None or size is None:
        return [((space, cta, None, None) if space == "sm" else (space, None, None), mode)]
    hi = addr + max(size, 1)
    return [(("sm", cta, addr, hi) if space == "sm" else ("gm", addr, hi), mode)]


def matches(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    if a[0] == "any" or b[0] == "any":
        return True
    if a[0] != b[0]:
        return False
    if a[0] == "sm":
        if a[1] is not None and b[1] is not None and a[1] != b[1]:
            return False
        return a[2] is None or b[2] is None or (a[2] < b[3] and b[2] < a[3])  # type: ignore[operator]
    if a[0] == "gm":
        return a[1] is None or b[1] is None or (a[1] < b[2] and b[1] < a[2])  # type: ignore[operator]
    return all(x is None or y is None or x == y for x, y in zip(a[1:], b[1:], strict=True))


def flag_read(f: FlagSpin) -> list[Item]:
    """What releases a thread spinning on a flag (`explore.spin.FlagSpin`): a write of the flag, or for
    an atom's spin any access of it (a read changes the bytes' history the atom would rewrite)."""
    return _chunks("gm" if f.cta is None else "sm", f.cta, f.addr, f.size, WRITE if f.rmw else READ)


def conflicts(items: Iterable[Item], future: Future) -> bool:
    anything = future.get("any")
    for obj, mode in items:
        if anything or obj[0] == "any":
            if obj[0] == "any" and not future:
                continue
            return True
        for obj2, mode2 in future.get(obj[0], ()):
            if conflict(mode, mode2) and matches(obj, obj2):
                return True
    return False


def awaited(m: Machine, a: Thread | Copy, mb: Spin | None) -> list[Item]:
    """What a blocked agent waits for, as READ items: whoever may write them could unblock it."""
    if isinstance(a, Copy):
        if a.mma is not None:  # the warp's earlier operation completing
            return [(("wg", a.thread.cta.index, a.thread.aid // 32), READ)]
        return [(("cp", a.thread.aid), READ)]
    if isinstance(mb, FlagSpin):  # a write of the flag's bytes
        return flag_read(mb)
    if mb is not None:
        return [(("mb", mb[0], mb[1]), READ)]
    w = a.wait
    if isinstance(w, OnMbarrier):
        return [(("mb", w.cta, w.off), READ)]
    if isinstance(w, AtBar):
        nb = a.cta.bars.get(w.ident)
        if nb is not None and nb.count is not None:  # counted: arrivals at its id release it, not exits
            return [(("bid", a.cta.index, w.ident), READ)]
        return [(("bar", a.cta.index), READ), (("bid", a.cta.index, w.ident), READ)]
    if isinstance(w, AtCluster):
        return [(("cl", a.cta.cluster.index), READ)]
    if isinstance(w, InCollective):
        return [(("warp", a.cta.index, a.aid // 32), READ)]
    if isinstance(w, ForCopies):
        if w.which == "wgmma.mma_async":
            # Its wait_group returns once every warp's share of the operations it retires is done
            # (`sim.machine.wgmma._complete`): any warp of its warpgroup may release it.
            return [(("wg", a.cta.index, th.aid // 32), READ) for th in warpgroup_lanes(a)[::32]]
        # Its copies' landings release it: cp.async ones JOIN `("cp", aid)`, bulk ones `("bulk", aid)`.
        return [(("cp" if w.which == "cp.async" else "bulk", a.aid), READ)]
    return [(("any",), READ)]


@lru_cache(maxsize=4096)
def _engine_spans(form: Form, trans_a: bool, trans_b: bool, desc_a: int | None, desc_b: int,
                  row0: int) -> tuple[tuple[int, int], ...] | None:
    """`sim.mma.engine_chunks` as byte ranges, for descriptor values; None where one is not modelled."""
    b = mma.decode(desc_b)
    a = None if desc_a is None else mma.decode(desc_a)
    if not mma.modelled(b) or (a is not None and not mma.modelled(a)):
        return None
    return mma.spans(mma.engine_chunks(form, trans_a, trans_b, a, b, row0))
