"""The asynchronous copies of the machine: cp.async and its groups, cp.async.mbarrier.arrive,
cp.async.bulk (into shared memory with complete-tx, multicast, shared::cta to shared::cluster, to global
with bulk groups), st.async/red.async. Issuing one creates an engine agent; `finish_async` is its one
step: the bytes land, then the mbarrier side effect (9.7.13.15.5.2, 9.7.13.15.15)."""

from __future__ import annotations

from mbarrier.sim import tensorcopy
from mbarrier.sim.address import PARAM_GENERIC, is_param_generic, is_shared_generic, mapped
from mbarrier.sim.errors import KernelFault, MemoryFault, Unsupported
from mbarrier.sim.machine.agents import (
    ARRIVALS,
    BLOCKED,
    DONE,
    RUNNABLE,
    WAITING_DEPS,
    Copy,
    Thread,
    short_state,
)
from mbarrier.sim.machine.mbarrier import MbarrierOps
from mbarrier.sim.machine.memory import atom_value
from mbarrier.sim.tensorcopy import Plan, PlanError
from mbarrier.sim.tensormap import TensorMap, TensorMapError, decode
from mbarrier.sim.waits import ForCopies
from mbarrier.spec.checks import EXIT_INFLIGHT
from mbarrier.spec.tensormap import FLUSHED_REDUCTIONS, SHARED_BOX_ALIGN, TENSOR_MAP_ALIGN, TENSOR_MAP_SIZE

#: The response of a clusterlaunchcontrol.try_cancel that canceled nothing, in the simulator's own layout
#: (the ISA calls it opaque): bit 0 is "canceled", bits 32-63, 64-95 and 96-127 the first CTA's ctaid x,
#: y and z (undefined after a failed request: all ones). `sim.isa.launchcontrol` decodes it.
CANCEL_FAILED = ((1 << 96) - 1) << 32


class CopyOps(MbarrierOps):
    """Copies in flight as agents: issue, groups, waits, landing."""

    def _new_copy(self, kind: str, t: Thread) -> Copy:
        c = Copy(self.next_aid, kind, t)
        self.next_aid += 1
        self.inflight.append(c)
        t.effects += 1
        return c

    def cp_async(self, t: Thread, dst: int, src: int, size: int, src_size: int) -> None:
        if size not in (4, 8, 16) or src_size > size:
            raise KernelFault(f"cp.async of {size} bytes (source {src_size}): cp-size must be 4, 8 or 16 and "
                           "src-size at most cp-size")
        if dst % size or src % size:
            raise MemoryFault(f"cp.async of {size} bytes from {src:#x} to shared {dst:#x}: addresses must be "
                              f"aligned to {size}")
        c = self._new_copy("cp.async", t)
        c.dst_cta, c.dst = t.cta, dst
        c.src = ("global", None, src)
        c.size, c.src_size = size, src_size
        self._guard(t.cta, dst, size, "cp.async")
        t.cp_open.append(c)
        self._add(c)

    def cp_commit(self, t: Thread) -> None:
        t.cp_groups.append(t.cp_open)
        t.cp_open = []

    def bulk_commit(self, t: Thread) -> None:
        t.bulk_groups.append(t.bulk_open)
        t.bulk_open = []

    def cp_wait(self, t: Thread, n: int, which: str) -> None:
        """cp.async.wait_group / cp.async.bulk.wait_group: block until at most n recent groups pend."""
        groups = t.cp_groups if which == "cp.async" else t.bulk_groups
        while groups and all(c.status == DONE for c in groups[0]):
            groups.pop(0)
        if len(groups) > n:
            self.block(t, ForCopies(which, n))

    def cp_mb_arrive(self, t: Thread, space: str, addr: int, noinc: bool) -> None:
        cta, off, b = self._mbar(t, space, addr, "cp.async.mbarrier.arrive", True)
        before = short_state(b) if self.tracing else None
        b.cp_async_arrive(noinc=noinc)
        self._changed(cta, off, b, before)
        a = self._new_copy("cp.async.mbarrier.arrive", t)
        a.bar_cta, a.bar_off = cta, off
        t.cp_open = [c for c in t.cp_open if c.status != DONE]
        for c in [c for g in t.cp_groups for c in g] + t.cp_open:
            if c.status != DONE:
                c.watchers.append(a)
                a.deps += 1
        if a.deps:
            a.status = WAITING_DEPS
        else:
            self._add(a)

    def bulk_copy(self, t: Thread, dst_space: str, src_space: str, dst: int, src: int, size: int,
                  bar: int, cta_mask: int | None = None) -> None:
        """cp.async.bulk into shared memory, completing `size` bytes of tx on the mbarrier; with
        `.multicast::cluster`, into the same offsets of every CTA of `cta_mask` (one engine each)."""
        if size % 16 or dst % 16 or src % 16:
            raise MemoryFault(f"cp.async.bulk of {size} bytes from {src:#x} to {dst:#x}: size and addresses "
                              "must be multiples of 16")
        if cta_mask is not None:
            ctas = t.cta.cluster.ctas
            for rank in range(16):
                if cta_mask >> rank & 1:
                    if rank >= len(ctas):
                        raise KernelFault(f"cp.async.bulk multicast to CTA rank {rank}, but the cluster has "
                                       f"{len(ctas)} CTAs")
                    self.bulk_copy(t, "cluster", src_space, mapped(dst, rank), src, size, mapped(bar, rank))
            return
        c = self._new_copy("cp.async.bulk", t)
        c.dst_cta, c.dst = (t.cta, dst) if dst_space == "cta" else self._cta_of(t, dst)
        c.src = ("global", None, src) if src_space == "global" else ("shared", t.cta, src)
        c.size = c.src_size = size
        bar_cta, bar_off = self._cta_of(t, bar)
        if bar_cta is not c.dst_cta:
            raise KernelFault(f"cp.async.bulk: the mbarrier (CTA {bar_cta.name}) must be in the CTA of the "
                           f"destination (CTA {c.dst_cta.name})")
        c.bar_cta, c.bar_off = bar_cta, bar_off
        self._add(c)

    def st_async(self, t: Thread, dst: int, value: int, size: int, bar: int, op: str | None,
                 kind: str) -> None:
        """st.async / red.async (.shared::cluster, .mbarrier::complete_tx::bytes): the value is taken now;
        an engine writes (or reduces) it later and completes `size` bytes of tx on the mbarrier."""
        c = self._new_copy("st.async" if op is None else f"red.async.{op}.{kind}", t)
        c.dst_cta, c.dst = self._cta_of(t, dst)
        c.src = ("value", None, value)
        c.size = c.src_size = size
        c.bar_cta, c.bar_off = self._cta_of(t, bar)
        if c.bar_cta is not c.dst_cta:
            raise KernelFault(f"{c.kind}: the mbarrier (CTA {c.bar_cta.name}) must be in the CTA of the "
                           f"destination (CTA {c.dst_cta.name})")
        self._add(c)

    def tc_commit(self, t: Thread, space: str, addr: int, cta_mask: int | None) -> None:
        """tcgen05.commit.mbarrier::arrive::one (PTX ISA 9.7.16.12.5): an arrive-on (count 1) once the
        thread's earlier asynchronous tcgen05 operations complete. The simulator executes none, so none
        is tracked: the arrive-on is an agent runnable at once. With .multicast::cluster, one on the
        mbarrier at the same offset of each CTA of `cta_mask`."""
        what = "tcgen05.commit"
        cta, off, _ = self._mbar(t, space, addr, what, False)
        targets = [cta]
        if cta_mask is not None:
            ctas = t.cta.cluster.ctas
            if cta_mask >> len(ctas):
                raise KernelFault(f"{what} multicast to ctaMask {cta_mask:#x}, but the cluster has "
                                  f"{len(ctas)} CTAs")
            targets = [c for rank, c in enumerate(ctas) if cta_mask >> rank & 1]
        for target in targets:
            if target.live == 0:
                raise MemoryFault(f"{what} arrives on the mbarrier at offset {off:#x} of CTA {target.name}, "
                                  "whose threads have all exited: its shared memory is gone")
            a = self._new_copy(what, t)
            a.bar_cta, a.bar_off = target, off
            self._add(a)

    def try_cancel(self, t: Thread, space: str, addr: int, bar: int, everywhere: bool) -> None:
        """clusterlaunchcontrol.try_cancel (PTX ISA 9.7.12.21.1): an engine writes the 16-byte response
        at [addr] later and completes 16 bytes of tx on [mbar]; with .multicast::cluster::all, at the same
        offsets of every CTA of the cluster. Every cluster of the grid runs from the start, so the
        response is always `CANCEL_FAILED` (no cluster is left whose launch could be canceled)."""
        what = "clusterlaunchcontrol.try_cancel"
        cta, off = self._cta_of(t, addr, space)
        if cta is not t.cta:
            raise MemoryFault(f"{what}: the response address {addr:#x} is not in the shared::cta window")
        if off % 16:
            raise MemoryFault(f"{what}: the response address {addr:#x} is not 16-byte aligned")
        self._guard(cta, off, 16, what)
        _, bar_off, _ = self._mbar(t, space, bar, what, True)
        for target in t.cta.cluster.ctas if everywhere else [t.cta]:
            c = self._new_copy(what, t)
            c.dst_cta, c.dst = target, off
            c.src = ("value", None, CANCEL_FAILED)
            c.size = c.src_size = 16
            c.bar_cta, c.bar_off = target, bar_off
            self._add(c)

    def bulk_store(self, t: Thread, dst: int, src: int, size: int) -> None:
        if size % 16 or dst % 16 or src % 16:
            raise MemoryFault(f"cp.async.bulk of {size} bytes from shared {src:#x} to {dst:#x}: size and "
                              "addresses must be multiples of 16")
        c = self._new_copy("cp.async.bulk.store", t)
        c.src = ("shared", t.cta, src)
        c.dst = dst
        c.size = c.src_size = size
        t.bulk_open.append(c)
        self._add(c)

    def bulk_reduce(self, t: Thread, dst: int, src: int, size: int, op: str, ty: str) -> None:
        """cp.reduce.async.bulk .global.shared::cta.bulk_group: as bulk_store, but the engine reduces each
        element of type `ty` into global memory with `op` (sim.tensorcopy.reduce_element)."""
        if size % 16 or dst % 16 or src % 16:
            raise MemoryFault(f"cp.reduce.async.bulk of {size} bytes from shared {src:#x} to {dst:#x}: size "
                              "and addresses must be multiples of 16")
        c = self._new_copy(f"cp.reduce.async.bulk.{op}.{ty}", t)
        c.src = ("shared", t.cta, src)
        c.dst = dst
        c.size = c.src_size = size
        t.bulk_open.append(c)
        self._add(c)

    # -- tensor copies (sim.tensorcopy) ------------------------------------------------------------
    def tensor_map(self, t: Thread, addr: int, what: str) -> TensorMap:
        """The tensor map at this generic address (.param, .const or .global: PTX ISA 5.5.7), as the
        copy reads it when issued."""
        if addr % TENSOR_MAP_ALIGN:
            raise MemoryFault(f"{what}: the tensor map at {addr:#x} is not {TENSOR_MAP_ALIGN}-byte aligned")
        if is_shared_generic(addr):
            raise KernelFault(f"{what}: the tensor map's address {addr:#x} is in shared memory; it must be "
                              "in .param, .const or .global memory (PTX ISA 5.5.7)")
        if is_param_generic(addr):
            data = self.params.read(addr - PARAM_GENERIC, TENSOR_MAP_SIZE)
        else:
            data = self.gmem.read(addr, TENSOR_MAP_SIZE)
        try:
            tm = decode(bytes(data))
        except TensorMapError as e:
            raise Unsupported(f"{what}: {e} (a launch describes its tensor maps by their encode calls: "
                              "docs/launch.md)") from None
        try:  # a launch's maps are valid; tensormap.replace can make one that is not
            tm.validate()
        except TensorMapError as e:
            if e.error == "unsupported":
                raise Unsupported(f"{what}: {e}") from None
            raise KernelFault(f"{what}: the tensor map at {addr:#x} is not a valid one: {e}") from None
        return tm

    def _plan(self, t: Thread, tm_addr: int, coords: tuple[int, ...], offsets: tuple[int, ...] | None,
              what: str) -> Plan:
        tm = self.tensor_map(t, tm_addr, what)
        try:
            if offsets is None:
                return tensorcopy.tile_plan(tm, coords)
            return tensorcopy.im2col_plan(tm, coords, offsets)
        except PlanError as e:
            if e.unsupported:
                raise Unsupported(f"{what}: {e}") from None
            raise KernelFault(f"{what}: {e}") from None

    def tensor_load(self, t: Thread, dst_space: str, dst: int, tm_addr: int, coords: tuple[int, ...],
                    offsets: tuple[int, ...] | None, bar: int, cta_mask: int | None) -> None:
        """cp.async.bulk.tensor global -> shared (PTX ISA 9.7.9.25.5.2): an engine writes the box (its
        bytes from the tensor map read now, the global data when it lands) and completes the box's bytes
        of tx on the mbarrier; with `.multicast::cluster`, into the same offsets (data and mbarrier) of
        every CTA of `cta_mask`, one engine each."""
        what = "cp.async.bulk.tensor"
        plan = self._plan(t, tm_addr, coords, offsets, what)
        if dst % SHARED_BOX_ALIGN:
            raise MemoryFault(f"{what}: shared destination {dst:#x} is not {SHARED_BOX_ALIGN}-byte aligned "
                              "(the H100 faults with a misaligned address)")
        targets: list[tuple[int, int]] = [(dst, bar)]
        if cta_mask is not None:
            ctas = t.cta.cluster.ctas
            targets = []
            for rank in range(16):
                if cta_mask >> rank & 1:
                    if rank >= len(ctas):
                        raise KernelFault(f"{what} multicast to CTA rank {rank}, but the cluster has "
                                          f"{len(ctas)} CTAs")
                    targets.append((mapped(dst, rank), mapped(bar, rank)))
        for d, b in targets:
            c = self._new_copy(what, t)
            c.dst_cta, c.dst = (t.cta, d) if dst_space == "cta" and cta_mask is None else self._cta_of(t, d)
            c.src = ("tensor", None, 0)
            c.plan = plan
            c.size = c.src_size = plan.box_bytes
            bar_cta, c.bar_off = self._cta_of(t, b)
            if bar_cta is not c.dst_cta:
                raise KernelFault(f"{what}: the mbarrier (CTA {bar_cta.name}) must be in the CTA of the "
                                  f"destination (CTA {c.dst_cta.name})")
            c.bar_cta = bar_cta
            if c.dst + plan.footprint > c.dst_cta.size:
                raise MemoryFault(f"{what}: the box's {plan.footprint} bytes at shared offset {c.dst:#x} run "
                                  f"past the {c.dst_cta.size} bytes of CTA {c.dst_cta.name}")
            span = plan.shared_span(c.dst)
            self._guard(c.dst_cta, span[0], min(span[1], c.dst_cta.size) - span[0], what)
            self._add(c)

    def tensor_prefetch(self, t: Thread, tm_addr: int, coords: tuple[int, ...],
                        offsets: tuple[int, ...] | None) -> None:
        """cp.async.bulk.prefetch.tensor (PTX ISA 9.7.9.25.5.4): reads the tensor map and plans the box,
        so that it faults where the H100 does; moves nothing."""
        self._plan(t, tm_addr, coords, offsets, "cp.async.bulk.prefetch.tensor")

    def tensor_store(self, t: Thread, tm_addr: int, coords: tuple[int, ...], src: int,
                     red: str | None) -> None:
        """cp.async.bulk.tensor shared::cta -> global (tile mode, `.bulk_group`), or
        cp.reduce.async.bulk.tensor with `.redOp` `red`: an engine reads the box when it lands and writes
        (or reduces into) the elements inside the tensor; the thread's bulk group tracks it."""
        what = "cp.async.bulk.tensor" if red is None else f"cp.reduce.async.bulk.tensor.{red}"
        plan = self._plan(t, tm_addr, coords, None, what)
        if red is not None:
            try:
                tensorcopy.reduction_type(red, plan.tm)
            except PlanError as e:
                raise KernelFault(f"{what}: {e}") from None
        if src % SHARED_BOX_ALIGN:
            raise MemoryFault(f"{what}: shared source {src:#x} is not {SHARED_BOX_ALIGN}-byte aligned (the "
                              "H100 faults with a misaligned address)")
        if src + plan.footprint > t.cta.size:
            raise MemoryFault(f"{what}: the box's {plan.footprint} bytes at shared offset {src:#x} run past "
                              f"the {t.cta.size} bytes of CTA {t.cta.name}")
        c = self._new_copy(what + ".store" if red is None else what, t)
        c.src = ("shared", t.cta, src)
        c.plan = plan
        c.size = c.src_size = plan.box_bytes
        t.bulk_open.append(c)
        self._add(c)

    def _land_tensor(self, c: Copy) -> None:
        plan = c.plan
        assert plan is not None
        if c.src[0] == "tensor":  # a load: global (or fill) -> the box in shared memory
            cta = c.dst_cta
            assert cta is not None
            for p in plan.pieces:
                data = plan.loaded(self.gmem.read(p.gaddr, p.n)) if p.gaddr >= 0 else plan.fill_bytes(p.n)
                at = plan.shared(c.dst, p)
                self._guard(cta, at, p.n, c.kind)
                cta.smem[at:at + p.n] = data
            return
        scta, base = c.src[1], c.src[2]
        assert scta is not None
        red = c.kind.rpartition(".")[2] if c.kind.startswith("cp.reduce") else None
        ty = tensorcopy.reduction_type(red, plan.tm) if red else ""
        ftz = plan.tm.tensorDataType in FLUSHED_REDUCTIONS
        for p in plan.pieces:
            if p.gaddr < 0:
                continue  # a store writes only the elements inside the tensor
            at = plan.shared(base, p)
            self._guard(scta, at, p.n, c.kind + " source")
            data = bytes(scta.smem[at:at + p.n])
            if red is not None:
                old = self.gmem.read(p.gaddr, p.n)
                e = plan.esize
                data = b"".join(tensorcopy.reduce_element(
                    red, ty, int.from_bytes(old[i:i + e], "little"), int.from_bytes(data[i:i + e], "little"),
                    ftz).to_bytes(e, "little") for i in range(0, p.n, e))
            self.gmem.write(p.gaddr, data)

    def finish_async(self, c: Copy) -> None:
        """One engine step: the copy lands (and signals), or the pending arrive-on happens."""
        for cta in (c.dst_cta, c.bar_cta, c.src[1]):
            if cta is not None and cta.live == 0:
                raise MemoryFault(f"{c.name} completes in CTA {cta.name}, whose threads have all exited: its "
                                  "shared memory is gone (wait for the copy before the CTA exits)",
                                  EXIT_INFLIGHT)
        if c.kind in ARRIVALS:
            assert c.bar_cta is not None
            b = self.barrier_at(c.bar_cta, c.bar_off)
            before = short_state(b) if self.tracing else None
            b.async_arrive(c.kind)
            self._changed(c.bar_cta, c.bar_off, b, before)
        elif c.plan is not None:
            self._land_tensor(c)
            if c.bar_cta is not None:
                b = self.barrier_at(c.bar_cta, c.bar_off)
                before = short_state(b) if self.tracing else None
                b.complete_tx(c.size)
                self._changed(c.bar_cta, c.bar_off, b, before)
        else:
            kind, scta, saddr = c.src
            if kind == "global":
                data = self.gmem.read(saddr, c.src_size) + bytes(c.size - c.src_size)
            elif kind == "value":
                value = saddr
                if c.kind.startswith("red.async."):
                    assert c.dst_cta is not None
                    _, _, op, sign = c.kind.split(".")
                    old = self._sload(c.dst_cta, c.dst, c.size)
                    value = atom_value(op, sign, old, value, 0, 8 * c.size)
                data = (value & ((1 << (8 * c.size)) - 1)).to_bytes(c.size, "little")
            else:
                assert scta is not None
                self._guard(scta, saddr, c.size, c.kind + " source")
                data = bytes(scta.smem[saddr:saddr + c.size])
                if c.kind.startswith("cp.reduce.async.bulk."):
                    data = _reduced(c.kind, self.gmem.read(c.dst, c.size), data)
            if c.dst_cta is None:
                self.gmem.write(c.dst, data)
            else:
                self._guard(c.dst_cta, c.dst, c.size, c.kind)
                c.dst_cta.smem[c.dst:c.dst + c.size] = data
            if c.bar_cta is not None:
                cta, off = c.bar_cta, c.bar_off
                b = self.barrier_at(cta, off)
                before = short_state(b) if self.tracing else None
                b.complete_tx(c.size)
                self._changed(cta, off, b, before)
        c.status = DONE
        self._remove(c)
        self.inflight.remove(c)
        for w in c.watchers:
            w.deps -= 1
            if w.deps == 0:
                w.status = RUNNABLE
                self._add(w)
        t = c.thread
        why = t.wait
        if t.status == BLOCKED and isinstance(why, ForCopies):
            groups = t.cp_groups if why.which == "cp.async" else t.bulk_groups
            while groups and all(x.status == DONE for x in groups[0]):
                groups.pop(0)
            if len(groups) <= why.pending:
                self.unblock(t)


def _reduced(kind: str, old: bytes, new: bytes) -> bytes:
    """The bytes of a bulk reduction (kind cp.reduce.async.bulk.OP.TYPE): each element of `old` (global)
    combined with the one of `new` (shared)."""
    op, ty = kind.split(".")[-2:]
    e = int(ty[1:]) // 8
    return b"".join(tensorcopy.reduce_element(op, ty, int.from_bytes(old[i:i + e], "little"),
                                              int.from_bytes(new[i:i + e], "little")).to_bytes(e, "little")
                    for i in range(0, len(new), e))
