"""Warpgroup MMA on the machine (PTX ISA 9.7.15): wgmma.mma_async as a warp collective that starts an
engine agent, wgmma.fence, commit_group and wait_group, and the register rules of 9.7.15.7. The model and
the thread's bookkeeping are `sim.wgmmastate`; the arithmetic `sim.mma`."""

from __future__ import annotations

from dataclasses import replace

from mbarrier.sim import mma
from mbarrier.sim.errors import KernelFault, MemoryFault, Unsupported
from mbarrier.sim.machine.agents import (
    BLOCKED,
    DONE,
    RUNNABLE,
    WAITING_DEPS,
    Collective,
    Copy,
    Cta,
    Thread,
    Warp,
)
from mbarrier.sim.machine.control import ControlOps
from mbarrier.sim.waits import ForCopies
from mbarrier.sim.wgmmastate import MmaIssue, MmaOp, owned, owned_a
from mbarrier.spec import wgmma as wgspec
from mbarrier.spec.checks import EXIT_INFLIGHT, WGMMA_ALIGNED, WGMMA_FENCE, WGMMA_REGISTER_INFLIGHT

WGMMA = "wgmma.mma_async"
WAIT = "wgmma.wait_group"


class WgmmaOps(ControlOps):
    """wgmma.mma_async and its groups; an ordinary access to the registers it owns (`wg_touch`)."""

    def finish_async(self, c: Copy) -> None:
        if c.mma is not None:
            self.wg_land(c)
            return
        super().finish_async(c)

    def exit(self, t: Thread) -> None:
        """A thread may not leave while its warp's wgmma.mma_async can still read shared memory."""
        for c in t.wg.pending():
            if c.status != DONE:
                raise MemoryFault(f"{t.name} exits while the wgmma.mma_async issued at line {c.site.line} is "
                                  "in flight: it may still read shared memory and write the thread's "
                                  f"registers (wait for it with wgmma.wait_group, {wgspec.WAIT_SECTION})",
                                  EXIT_INFLIGHT)
        super().exit(t)

    def _coll_done(self, w: Warp, key: tuple[str, int], entry: Collective) -> None:
        if key[0] == WAIT:
            self._wg_waited(w, key, entry)
            return
        super()._coll_done(w, key, entry)
        if key[0] == WGMMA:
            self.wg_issue(entry.parts)

    def wg_touch(self, t: Thread, slots: tuple[int, ...]) -> None:
        """An ordinary instruction about to access registers that wgmma.mma_async operations of its function
        name: refused while an operation not retired owns one (9.7.15.7.3), remembered for the fence rule
        (9.7.15.7.1)."""
        if self.threads[t.aid] is not t:
            return  # a probe on a scratch copy of the thread (the checker's value analysis): no effect
        wg = t.wg
        site = t.func.sites[t.pc]
        inflight = [s for s in slots if s in wg.busy]
        if inflight:
            c = next(c for c in wg.pending() if owned([c]) & set(inflight))
            raise KernelFault(f"line {site.line}: `{site.text}` accesses {_regs(t, inflight)}, which the "
                              f"wgmma.mma_async at line {c.site.line} still owns: no wgmma.wait_group has "
                              f"retired its group ({wgspec.WAIT_SECTION})", WGMMA_REGISTER_INFLIGHT)
        if not wg.touched.issuperset(slots):
            t.wg = wg.touch(frozenset(slots), site.line)

    def wg_fence(self, t: Thread) -> None:
        """wgmma.fence (9.7.15.7.1): orders the thread's earlier register accesses before later
        wgmma.mma_async."""
        wg = t.wg
        if not wg.fenced or wg.touched or wg.accs:
            t.wg = replace(wg, fenced=True, touched=frozenset(), accs=(), lines=())

    def wg_commit(self, t: Thread) -> None:
        """wgmma.commit_group (9.7.15.7.2): the uncommitted operations become a group (possibly empty)."""
        wg = t.wg
        t.wg = replace(wg, open=(), groups=wg.groups + (wg.open,))

    def wg_wait(self, t: Thread, n: int, here: int) -> None:
        """wgmma.wait_group N (9.7.15.7.3): the warp's lanes meet (.sync); then each retires its groups
        but the N most recent (`_wg_waited`)."""
        t.pc = here + 1
        self.coll(t, WAIT, 0xFFFFFFFF, (n, here), None)

    def _wg_waited(self, w: Warp, key: tuple[str, int], entry: Collective) -> None:
        """Every lane reached wgmma.wait_group: if the groups to retire have completed, their accumulators
        go into each lane's registers and the lanes move on; else they wait at the instruction until the
        operations complete (`wg_land` releases them) and then meet there again."""
        del w.pending[key]
        lanes = [t for _, (t, _) in sorted(entry.parts.items())]
        arg = entry.parts[min(entry.parts)][1]
        n: int
        here: int
        n, here = arg  # type: ignore[misc]
        if any(a != arg for _, a in entry.parts.values()):
            site = lanes[0].func.sites[here]
            raise KernelFault(f"line {site.line}: the lanes of a warp are at different wgmma.wait_group "
                              f"instructions ({wgspec.WAIT_SECTION}: .sync.aligned)", WGMMA_ALIGNED)
        if not _complete(lanes[0], n) or not all(x.status == DONE for t in lanes for x in _to_retire(t, n)):
            for t in lanes:
                t.pc = here
                if t.status == BLOCKED:
                    t.wait = ForCopies(WGMMA, n)
                else:
                    self.block(t, ForCopies(WGMMA, n))
            return
        for t in lanes:
            self._wg_retire(t, n)
        for t in lanes:
            if t.status == BLOCKED:
                self.unblock(t)

    def _wg_retire(self, t: Thread, n: int) -> list[Copy]:
        """`t`'s wgmma.wait_group n retires its groups but the n most recent (completed): their
        accumulators go into its registers, which are the thread's again. Returns the operations."""
        wg = t.wg
        k = max(0, len(wg.groups) - n)
        retire = [c for g in wg.groups[:k] for c in g]
        if not retire and not k:
            return retire
        results = dict(wg.results)
        for c in retire:
            issue = c.mma
            assert issue is not None
            if issue.function != t.func.name:
                raise Unsupported(f"wgmma.wait_group in {t.func.name} retires a wgmma.mma_async issued "
                                  f"in {issue.function}: its registers are another function's")
            for slot, value in zip(issue.op.d_slots, results.pop(c), strict=True):
                t.regs[slot] = value
        groups = wg.groups[k:]
        t.wg = replace(wg, groups=groups, results=tuple(results.items()),
                       busy=owned([c for g in groups for c in g] + list(wg.open)))
        return retire

    def wgmma(self, t: Thread, op: MmaOp, desc_a: int | None, desc_b: int, scale_d: bool) -> None:
        """wgmma.mma_async: the warp's lanes meet (a warp collective); the last to arrive issues it."""
        self.coll(t, WGMMA, 0xFFFFFFFF, (op, desc_a, desc_b, bool(scale_d)), None)

    def wg_issue(self, parts: dict[int, tuple[Thread, object]]) -> Copy:
        """The warp's wgmma.mma_async, all lanes arrived: check the warpgroup rules, read the register
        operands, and start the engine that will read shared memory and compute."""
        lanes = [parts[i][0] for i in sorted(parts)]
        t0 = lanes[0]
        site = t0.func.sites[t0.pc - 1]  # the collective moved pc past the instruction
        arg = parts[min(parts)][1]
        op: MmaOp
        desc_a: int | None
        desc_b: int
        scale_d: bool
        op, desc_a, desc_b, scale_d = arg  # type: ignore[misc]
        where = f"line {site.line}: `{site.text}`"
        cta = t0.cta
        linear = cta.threads.index(t0)
        first = linear // (32 * wgspec.WARPS_PER_GROUP) * 32 * wgspec.WARPS_PER_GROUP
        if len(parts) != 32 or len(cta.threads) < first + 32 * wgspec.WARPS_PER_GROUP:
            raise KernelFault(f"{where}: wgmma.mma_async is executed by the whole warpgroup (4 warps of 32 "
                              f"threads); here {len(parts)} lanes of a warp of a CTA of {len(cta.threads)} "
                              f"threads", WGMMA_ALIGNED)
        for lane, (_, other) in parts.items():
            if other != arg:
                raise KernelFault(f"{where}: lane {lane} gives other operands than lane {min(parts)} "
                                  "(descriptors, scale-d) or is at another wgmma.mma_async", WGMMA_ALIGNED)
        chain = self._wg_rules(lanes, op, where)
        a_regs = _lane_regs(lanes, op.a_slots) if op.a_slots else None
        meta = None
        if op.meta_slots:
            meta = tuple(v for (v,) in _lane_regs(lanes, op.meta_slots))
            why = mma.metadata_error(op.form, list(meta), op.selector)
            if why is not None:
                raise KernelFault(f"{where}: {why}")
        d_in = _lane_regs(lanes, op.d_slots) if scale_d and chain is None else None
        c = self._new_copy(WGMMA, t0)
        c.site = site
        c.dst_cta = cta
        row0 = mma.warp_row0(linear)
        form = op.form
        b = self._descriptor(c, desc_b)
        chunks = mma.engine_chunks(form, op.trans_a, op.trans_b,
                                   None if desc_a is None else self._descriptor(c, desc_a), b, row0)
        c.mma = MmaIssue(op, desc_a, desc_b, scale_d, a_regs, d_in, chain, row0, t0.func.name,
                         tuple(t.aid for t in lanes), reads=mma.spans(chunks), seq=t0.wg.issued, meta=meta)
        earlier = [x for x in t0.wg.pending() if x.status != DONE]
        shape = op.form.shape
        for t in lanes:
            wg = t.wg
            accs = dict(wg.accs)
            accs.update((s, shape) for s in op.d_slots)
            t.wg = replace(wg, open=wg.open + (c,), accs=tuple(sorted(accs.items())),
                           busy=wg.busy | set(op.d_slots) | set(op.in_slots), issued=wg.issued + 1)
        if earlier:  # the warp's operations complete in issue order
            earlier[-1].watchers.append(c)
            c.deps = 1
            c.status = WAITING_DEPS
        else:
            self._add(c)
        return c

    def _wg_rules(self, lanes: list[Thread], op: MmaOp, where: str) -> Copy | None:
        """The register rules of 9.7.15.7.1 and 9.7.15.7.3 for each lane; the earlier operation whose
        accumulator this one continues (same registers, same shape), if one is not retired."""
        chain: Copy | None = None
        shape = op.form.shape
        for t in lanes:
            wg = t.wg
            if not wg.fenced:
                raise KernelFault(f"{where}: {t.name} runs wgmma.mma_async with no wgmma.fence before it "
                                  f"({wgspec.FENCE_SECTION}: before the first wgmma.mma_async)", WGMMA_FENCE)
            touched = dict(wg.lines)
            accs = dict(wg.accs)
            for s in op.d_slots + op.in_slots:
                if s in touched:
                    raise KernelFault(f"{where}: {t.name} accessed {_regs(t, [s])} at line {touched[s]} "
                                      "with no wgmma.fence between that access and this wgmma.mma_async, "
                                      f"which reads it ({wgspec.FENCE_SECTION})", WGMMA_FENCE)
                if s in accs and (s in op.in_slots or accs[s] != shape):
                    raise KernelFault(f"{where}: {_regs(t, [s])} was the accumulator of a wgmma.mma_async of "
                                      f"shape {accs[s]} since the latest wgmma.fence; only accumulators of "
                                      f"the same shape need none between ({wgspec.FENCE_SECTION})",
                                      WGMMA_FENCE)
            hit = [s for s in op.in_slots if s in wg.busy]
            hit += [s for s in op.d_slots if s in owned_a(wg.pending())]
            prior = None
            for c in reversed(wg.pending()):
                assert c.mma is not None
                if set(c.mma.op.d_slots) & set(op.d_slots):
                    prior = c
                    break
            if prior is not None:
                assert prior.mma is not None
                if prior.mma.op.d_slots != op.d_slots or prior.mma.op.form.shape != shape:
                    hit += [s for s in op.d_slots if s in wg.busy]
            if hit:
                raise KernelFault(f"{where}: {t.name}'s {_regs(t, hit)} still belong to a wgmma.mma_async "
                                  f"that no wgmma.wait_group has retired ({wgspec.WAIT_SECTION})",
                                  WGMMA_REGISTER_INFLIGHT)
            chain = prior
        return chain

    def wg_land(self, c: Copy) -> None:
        """The engine of a wgmma.mma_async: reads the shared-memory matrices now, computes, and leaves each
        lane's accumulator for the wgmma.wait_group that retires it."""
        issue = c.mma
        assert issue is not None
        cta = c.dst_cta
        assert cta is not None
        if cta.live == 0:
            raise MemoryFault(f"{c.name} reads the shared memory of CTA {cta.name}, whose threads have all "
                              "exited (wait for it with wgmma.wait_group)", EXIT_INFLIGHT)
        op, form = issue.op, issue.op.form
        chunks: list[int] = []

        def read(at: int) -> bytes:
            self._guard(cta, at, 16, "wgmma.mma_async's read")
            chunks.append(at)
            return bytes(cta.smem[at:at + 16])

        if issue.a_regs is not None:
            a = mma.a_from_registers(list(issue.a_regs))
        else:
            assert issue.desc_a is not None
            rows = range(issue.row0, issue.row0 + 16)
            a, _ = mma.gather(self._descriptor(c, issue.desc_a), rows, op.trans_a,
                              wgspec.ELEMENT_BITS[form.atype], read)
        if issue.meta is not None:
            a = mma.unpack_sparse(form, a, list(issue.meta), op.selector)
        b, _ = mma.gather(self._descriptor(c, issue.desc_b), range(form.n), op.trans_b,
                          wgspec.ELEMENT_BITS[form.btype], read, form.b_bytes)
        lanes = [self.threads[aid] for aid in issue.lanes]
        d = None
        if issue.scale_d:
            if issue.d_in is not None:
                regs = list(issue.d_in)
            else:
                prior = issue.chain
                regs = [dict(t.wg.results).get(prior) or tuple(t.regs[s] for s in op.d_slots)  # type: ignore
                        for t in lanes]
            d = mma.d_to_matrix(form, regs)
        out = mma.matrix_to_d(form, mma.multiply(form, a, b, d, op.scale_a, op.scale_b))
        self._wg_reads(c, cta, chunks)
        for t, values in zip(lanes, out, strict=True):
            t.wg = replace(t.wg, results=t.wg.results + ((c, values),))
        c.status = DONE
        self._remove(c)
        self.inflight.remove(c)
        for w in c.watchers:
            w.deps -= 1
            if w.deps == 0:
                w.status = RUNNABLE
                self._add(w)
        for t in _warpgroup(lanes[0]):  # a sibling warp's wait may have waited for this share
            why = t.wait
            if t.status == BLOCKED and isinstance(why, ForCopies) and why.which == WGMMA:
                if _complete(t, why.pending) and all(x.status == DONE for x in _to_retire(t, why.pending)):
                    self.unblock(t)

    def _descriptor(self, c: Copy, desc: int) -> mma.Descriptor:
        d = mma.decode(desc)
        if not mma.modelled(d):
            raise Unsupported(f"{c.name}: a matrix descriptor with base offset {d.base_offset} (a swizzle "
                              "pattern not aligned to its repeat): how the hardware applies it is not "
                              f"recorded yet ({wgspec.DESCRIPTOR_SECTION})")
        return d

    def _wg_reads(self, c: Copy, cta: Cta, chunks: list[int]) -> None:
        """The 16-byte chunks of shared memory an engine read (race tracking records them)."""


def _to_retire(t: Thread, n: int) -> list[Copy]:
    """The operations of `t`'s groups but the n most recent: what wgmma.wait_group n retires."""
    groups = t.wg.groups
    return [c for g in groups[:max(0, len(groups) - n)] for c in g]


def _warpgroup(t: Thread) -> list[Thread]:
    """The threads of `t`'s warpgroup (9.7.15.1: four contiguous warps)."""
    threads = t.cta.threads
    size = 32 * wgspec.WARPS_PER_GROUP
    first = threads.index(t) // size * size
    return threads[first:first + size]


def shares(t: Thread, c: Copy) -> list[Copy | None]:
    """The other warps' shares of the warpgroup operation whose share in `t`'s warp is `c` (their
    wgmma.mma_async of the same rank), where still pending in those warps; None for a share not issued
    yet. A share retired by its own warp is left out (it completed)."""
    assert c.mma is not None
    seq = c.mma.seq
    out: list[Copy | None] = []
    group = _warpgroup(t)
    for w in range(0, len(group), 32):
        s = group[w]
        if s.warp is t.warp:
            continue
        if s.wg.issued <= seq:
            out.append(None)
            continue
        out.extend(x for x in s.wg.pending() if x.mma is not None and x.mma.seq == seq)
    return out


def _complete(t: Thread, n: int) -> bool:
    """Whether the warpgroup operations of the groups `t`'s wgmma.wait_group n retires have completed in
    every warp: a warpgroup MMA is one operation and its completion one event (measured on an H200:
    docs/simulator.md, "Warpgroup MMA"), so one warp's wait_group returns only once all four shares
    are done (the hardware holds each warp at mma_async until all four issued)."""
    return all(x is not None and x.status == DONE for c in _to_retire(t, n) for x in shares(t, c))


def _lane_regs(lanes: list[Thread], slots: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(t.regs[s]) for s in slots) for t in lanes)  # type: ignore[call-overload]


def _regs(t: Thread, slots: list[int]) -> str:
    names = [t.func.reg_names.get(s, f"slot {s}") for s in slots]
    return ("register " if len(names) == 1 else "registers ") + ", ".join(names)


