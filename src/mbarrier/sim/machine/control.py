"""Control of the machine: exits, calls and returns, trap, the CTA's named barriers (bar.sync/bar.arrive),
the cluster barrier, warp collectives, fences, the carry flag and the per-thread clocks."""

from __future__ import annotations

from mbarrier.sim import warpgroup
from mbarrier.sim.address import CODE_BASE
from mbarrier.sim.compile import SPECIAL_CONSTANTS
from mbarrier.sim.errors import KernelFault, Unsupported
from mbarrier.sim.machine.agents import (
    BLOCKED,
    EXITED,
    Cluster,
    Collective,
    Cta,
    Finish,
    NamedBarrier,
    Thread,
    Warp,
    _live_lanes,
    warp_gone,
)
from mbarrier.sim.machine.copies import CopyOps
from mbarrier.sim.printf import format_printf
from mbarrier.sim.waits import AtBar, AtCluster, InCollective
from mbarrier.spec.checks import TRAP

NSPECIAL = len(SPECIAL_CONSTANTS)


class ControlOps(CopyOps):
    """Exits, calls, barriers, collectives, fences, the condition code and the clocks."""

    def carry(self, t: Thread) -> int:
        """CC.CF for addc/subc/madc: an error where no .cc instruction of this thread has written it
        since it started or since its latest call or return (the ISA leaves it undefined there)."""
        if t.cc is None:
            raise KernelFault("the instruction reads the carry flag CC.CF, which no add.cc/sub.cc/mad.cc (or "
                           "addc/subc/madc with .cc) of this thread has written since it started or since "
                           "its latest call or return: its value is undefined (PTX ISA 9.7.2)")
        return t.cc

    def clock(self, t: Thread, bits: int) -> int:
        t.time += 1
        return (t.time * 16) & ((1 << bits) - 1)

    def timer(self, t: Thread, bits: int) -> int:
        t.time += 1
        return (t.time * 1000) & ((1 << bits) - 1)

    def activemask(self, t: Thread) -> int:
        assert t.warp is not None
        return sum(1 << th.lane for th in t.warp.threads if th.status != EXITED)

    def fence(self, t: Thread) -> None:
        """fence/membar: memory here is sequentially consistent; `sim.races` gives fences their meaning."""

    def exit(self, t: Thread) -> None:
        t.status = EXITED
        t.wait = None
        self._remove(t)
        cta = t.cta
        cta.live -= 1
        cta.cluster.live -= 1
        for ident in list(cta.bars):
            self._bar_check(cta, ident)
        self._cluster_check(cta.cluster)
        w = t.warp
        if w is not None:
            for key, entry in list(w.pending.items()):
                entry.need = _live_lanes(w, key[1])
                if len(entry.parts) >= entry.need:
                    self._coll_done(w, key, entry)
            warpgroup.exited(t, warp_gone)

    def call(self, t: Thread, name: str, moves_in: list[tuple[int, int, int]],
             moves_out: list[tuple[int, int, int]]) -> None:
        """Enter a .func: copy the arguments into its parameters, give it fresh registers (the special
        registers stay), and remember where to return."""
        callee = self.functions[name]
        if any(f.name == name for f, _, _, _ in t.frames) or t.func.name == name:
            raise Unsupported(f"recursive call to {name}: its frame in local memory is already in use")
        mem = t.local
        for src, dst, n in moves_in:
            mem[dst:dst + n] = mem[src:src + n]
        t.frames.append((t.func, t.regs, t.pc, moves_out))
        t.cc = None  # CC is not preserved across calls (PTX ISA 9.7.2)
        regs: list[object] = [0] * callee.nregs
        regs[:NSPECIAL] = t.regs[:NSPECIAL]
        t.func, t.code, t.regs, t.pc = callee, callee.code, regs, 0

    def call_indirect(self, t: Thread, addr: int, args: list[tuple[int, int]],
                      rets: list[tuple[int, int]]) -> None:
        """A call through a function pointer: the address names the function (see launch.CODE_BASE)."""
        i = addr - CODE_BASE
        name = self.code_names[i] if 0 <= i < len(self.code_names) else None
        if name is None or name not in self.functions:
            raise KernelFault(f"indirect call to {addr:#x}, which is not the address of a function with a "
                              "body")
        frame = self.frames[name]
        if len(args) != len(frame.params) or len(rets) != len(frame.returns):
            raise KernelFault(f"indirect call to {name} with {len(args)} arguments and {len(rets)} results; "
                           f"it takes {len(frame.params)} and returns {len(frame.returns)}")
        moves_in = [(a[0], p[1], min(a[1], p[2])) for a, p in zip(args, frame.params, strict=True)]
        moves_out = [(p[1], x[0], min(x[1], p[2])) for x, p in zip(rets, frame.returns, strict=True)]
        self.call(t, name, moves_in, moves_out)

    def vprintf(self, t: Thread, args: list[tuple[int, int]], rets: list[tuple[int, int]]) -> None:
        """printf: the text goes to `output` as (thread, text); the call returns the arguments used."""
        fmt_addr = self.ld_local(t, args[0][0], 8)
        buf = self.ld_local(t, args[1][0], 8)
        text, used = format_printf(cstring_at(self, t, fmt_addr), lambda a, n: self.ld_gen(t, a, n), buf)
        self.output.append((t.aid, text))
        for address, size in rets:
            self.st_local(t, address, min(size, 4), used)

    def ret(self, t: Thread) -> None:
        if not t.frames:
            self.exit(t)
            return
        func, regs, pc, moves_out = t.frames.pop()
        mem = t.local
        for src, dst, n in moves_out:
            mem[dst:dst + n] = mem[src:src + n]
        t.cc = None
        t.func, t.code, t.regs, t.pc = func, func.code, regs, pc

    def trap(self, t: Thread) -> None:
        raise KernelFault("trap: the kernel aborted", TRAP)

    def bar(self, t: Thread, ident: int, count: int | None, wait: bool) -> None:
        """bar.sync / bar.arrive: threads count one each; without a count, every live thread of the CTA."""
        if ident > 15:
            raise KernelFault(f"barrier {ident}: bar.sync takes barriers 0..15")
        cta = t.cta
        nb = cta.bars.get(ident)
        if nb is None:
            nb = cta.bars[ident] = NamedBarrier()
        if count is not None:
            nb.count = count
        t.effects += 1
        nb.arrived.append(t)
        if wait:
            self.block(t, AtBar(ident))
        self._bar_check(cta, ident)

    def _bar_check(self, cta: Cta, ident: int) -> None:
        nb = cta.bars[ident]
        need = nb.count if nb.count is not None else cta.live
        if nb.arrived and len(nb.arrived) >= need:
            del cta.bars[ident]
            here = AtBar(ident)
            for th in nb.arrived:
                if th.status == BLOCKED and th.wait == here:
                    self.unblock(th)

    def cluster_arrive(self, t: Thread) -> None:
        if t.cl_arrived:
            raise KernelFault("barrier.cluster.arrive twice without a barrier.cluster.wait between")
        cl = t.cta.cluster
        t.cl_arrived = True
        t.cl_gen = cl.phase
        t.effects += 1
        cl.count += 1
        self._cluster_check(cl)

    def cluster_wait(self, t: Thread) -> None:
        if not t.cl_arrived:
            raise KernelFault("barrier.cluster.wait without a barrier.cluster.arrive before it")
        cl = t.cta.cluster
        if cl.phase > t.cl_gen:
            t.cl_arrived = False
            return
        self.block(t, AtCluster(cl.index))

    def _cluster_check(self, cl: Cluster) -> None:
        if cl.count and cl.count >= cl.live:
            cl.phase += 1
            cl.count = 0
            here = AtCluster(cl.index)
            for cta in cl.ctas:
                for th in cta.threads:
                    if th.status == BLOCKED and th.wait == here:
                        th.cl_arrived = False
                        self.unblock(th)

    def coll(self, t: Thread, kind: str, mask: int, arg: object, finish: Finish | None) -> None:
        """A warp collective: it completes when every live lane of `mask` has reached it."""
        w = t.warp
        assert w is not None
        if not mask >> t.lane & 1:
            raise KernelFault(f"{kind}: the executing lane {t.lane} is not in membermask {mask:#x}")
        key = (kind, mask)
        entry = w.pending.get(key)
        if entry is None:
            entry = w.pending[key] = Collective(finish, _live_lanes(w, mask))
        entry.parts[t.lane] = (t, arg)
        t.effects += 1
        if len(entry.parts) < entry.need:
            self.block(t, InCollective(kind, mask))
        else:
            self._coll_done(w, key, entry)

    def _coll_done(self, w: Warp, key: tuple[str, int], entry: Collective) -> None:
        del w.pending[key]
        if entry.finish is not None:
            entry.finish(entry.parts, self)  # type: ignore[arg-type]
        for th, _ in entry.parts.values():
            if th.status == BLOCKED:
                self.unblock(th)


def cstring_at(m: ControlOps, t: Thread, addr: int, limit: int = 4096) -> str:
    data = bytearray()
    while len(data) < limit:
        byte = m.ld_gen(t, addr + len(data), 1)
        if byte == 0:
            break
        data.append(byte)
    return data.decode("utf-8", errors="replace")
