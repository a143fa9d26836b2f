"""Memory operations of the machine: shared memory of the CTA and of the cluster (PTX ISA 5.1.5, the
distributed shared memory of a cluster), global, local and parameter memory, generic addresses, atomics,
and the address conversions and queries (cvta.to, mapa, getctarank, isspacep). An ordinary access to a
valid mbarrier object is undefined (9.7.13.15): `_guard` refuses it."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from mbarrier.core import violations
from mbarrier.sim.address import (
    LOCAL_GENERIC,
    OWN,
    PARAM_GENERIC,
    SHARED_GENERIC,
    is_local_generic,
    is_param_generic,
    is_shared_generic,
    mapped,
    shared_address,
)
from mbarrier.sim.errors import KernelFault, MemoryFault, Unsupported
from mbarrier.sim.floatbits import f32_bits, f32_value, f64_bits, f64_value
from mbarrier.sim.machine.agents import Cta, Thread, _violation
from mbarrier.sim.machine.base import MachineBase
from mbarrier.sim.tensormap import TensorMapError, replace_field
from mbarrier.spec.checks import REMOTE_EXITED
from mbarrier.spec.tensormap import TENSOR_MAP_ALIGN, TENSOR_MAP_SIZE


class MemoryOps(MachineBase):
    """Loads, stores and atomics in every state space."""

    def _cta_of(self, t: Thread, addr: int, space: str = "cluster") -> tuple[Cta, int]:
        """The CTA and offset a shared address names (`.shared::cluster` unless `space` says; a generic
        one must be in the shared window)."""
        found = shared_address(space, addr)
        if found is None:
            raise MemoryFault(f"generic address {addr:#x} is not in the shared window")
        rank, off = found
        if rank == OWN:
            return t.cta, off
        ctas = t.cta.cluster.ctas
        if rank >= len(ctas):
            raise MemoryFault(f"shared::cluster address {addr:#x} names CTA rank {rank}, but the cluster "
                              f"has {len(ctas)} CTAs")
        cta = ctas[rank]
        if cta.live == 0 and cta is not t.cta:
            _gone(cta, addr)
        return cta, off

    def _guard(self, cta: Cta, off: int, size: int, what: str) -> None:
        if off + size > cta.size:
            raise MemoryFault(f"{what} of {size} bytes at shared offset {off:#x} is outside the "
                              f"{cta.size} bytes of shared memory of CTA {cta.name}")
        if cta.words:
            w = off & ~7
            while w < off + size:
                if w in cta.words:
                    b = cta.barriers[w]
                    raise _violation(violations.NonMbarrierAccess,
                                     f"{what} of {size} bytes at shared offset {off:#x} touches the valid "
                                     f"mbarrier object at {w:#x}: {b.describe()}; only mbarrier "
                                     "instructions may access it until mbarrier.inval")
                w += 8

    def _sload(self, cta: Cta, off: int, size: int) -> int:
        self._guard(cta, off, size, "a load")
        return int.from_bytes(cta.smem[off:off + size], "little")

    def _sstore(self, cta: Cta, off: int, size: int, value: int) -> None:
        self._guard(cta, off, size, "a store")
        cta.smem[off:off + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def reread_changes_nothing(self, t: Thread, cta: Cta | None, addr: int, size: int, rmw: bool = False
                               ) -> bool:
        """Whether thread t's load at its pc of `size` bytes at `addr` (in CTA `cta`'s shared memory; None:
        global memory) would leave the state as it is, all but the registers it writes; `rmw`: its atom,
        which writes back the value it finds (the caller knows). Memory stays as it is; race tracking
        says more (`sim.races.RaceMachine`)."""
        return True

    def ld_cta(self, t: Thread, addr: int, size: int) -> int:
        t.effects += 1
        cta = t.cta
        words = cta.words
        # The common case inline: in bounds, touching no valid mbarrier (accesses are at most 16 bytes).
        if addr + size > cta.size or (words and ((addr & ~7) in words or ((addr + size - 1) & ~7) in words
                                                 or (addr & ~7) + 8 in words)):
            self._guard(cta, addr, size, "a load")
        return int.from_bytes(cta.smem[addr:addr + size], "little")

    def st_cta(self, t: Thread, addr: int, size: int, value: int) -> None:
        t.effects += 1
        cta = t.cta
        words = cta.words
        if addr + size > cta.size or (words and ((addr & ~7) in words or ((addr + size - 1) & ~7) in words
                                                 or (addr & ~7) + 8 in words)):
            self._guard(cta, addr, size, "a store")
        cta.smem[addr:addr + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def ld_cluster(self, t: Thread, addr: int, size: int) -> int:
        t.effects += 1
        cta, off = self._cta_of(t, addr)
        return self._sload(cta, off, size)

    def st_cluster(self, t: Thread, addr: int, size: int, value: int) -> None:
        t.effects += 1
        cta, off = self._cta_of(t, addr)
        self._sstore(cta, off, size, value)

    def ld_global(self, t: Thread, addr: int, size: int) -> int:
        return self.gmem.load(addr, size)

    def st_global(self, t: Thread, addr: int, size: int, value: int) -> None:
        t.effects += 1
        self.gmem.store(addr, size, value)

    def ld_local(self, t: Thread, addr: int, size: int) -> int:
        if addr + size > len(t.local):
            raise MemoryFault(f"a load of {size} bytes at local address {addr:#x} is outside the "
                              f"{len(t.local)} bytes of the thread's local memory")
        return int.from_bytes(t.local[addr:addr + size], "little")

    def st_local(self, t: Thread, addr: int, size: int, value: int) -> None:
        if addr + size > len(t.local):
            raise MemoryFault(f"a store of {size} bytes at local address {addr:#x} is outside the "
                              f"{len(t.local)} bytes of the thread's local memory")
        t.local[addr:addr + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def ld_param(self, t: Thread, addr: int, size: int) -> int:
        """A kernel parameter through its .param address: read-only memory, so no effect to count."""
        return self.params.load(addr, size)

    def st_param(self, t: Thread, addr: int, size: int, value: int) -> None:
        self.params.store(addr, size)

    def ld_gen(self, t: Thread, addr: int, size: int) -> int:
        if is_shared_generic(addr):
            return self.ld_cluster(t, addr - SHARED_GENERIC, size)
        if is_local_generic(addr):
            return self.ld_local(t, addr - LOCAL_GENERIC, size)
        if is_param_generic(addr):
            return self.params.load(addr - PARAM_GENERIC, size)
        t.effects += 1
        return self.gmem.load(addr, size)

    def st_gen(self, t: Thread, addr: int, size: int, value: int) -> None:
        if is_shared_generic(addr):
            self.st_cluster(t, addr - SHARED_GENERIC, size, value)
        elif is_local_generic(addr):
            self.st_local(t, addr - LOCAL_GENERIC, size, value)
        elif is_param_generic(addr):
            self.params.store(addr - PARAM_GENERIC, size)
        else:
            self.st_global(t, addr, size, value)

    def tensormap_replace(self, t: Thread, space: str, addr: int, field: str, ordinal: int,
                          value: int) -> None:
        """tensormap.replace.tile (PTX ISA, tensormap.replace): one field of the 128-byte tensor map at
        a .global or .shared::cta address (generic: in one of those windows, else undefined) is replaced;
        a weak access of the whole object, read and written by the executing thread."""
        what = f"tensormap.replace.tile.{field}"
        if space == "generic":
            found = shared_address("generic", addr)
            if is_param_generic(addr) or is_local_generic(addr) or (found is not None and found[0] != OWN):
                raise KernelFault(f"{what}: generic address {addr:#x} is in neither the .global nor the "
                                  ".shared::cta window (PTX ISA: undefined)")
            space, addr = ("cta", found[1]) if found is not None else ("global", addr)
        if addr % TENSOR_MAP_ALIGN:
            raise MemoryFault(f"{what}: the tensor map at {addr:#x} is not {TENSOR_MAP_ALIGN}-byte aligned")
        load, store = (self.ld_cta, self.st_cta) if space == "cta" else (self.ld_global, self.st_global)
        data = load(t, addr, TENSOR_MAP_SIZE).to_bytes(TENSOR_MAP_SIZE, "little")
        try:
            new = replace_field(data, field, ordinal, value)
        except TensorMapError as e:
            if e.error in ("unsupported", "not-a-tensor-map"):
                raise Unsupported(f"{what}: {e}") from None
            raise KernelFault(f"{what}: {e}") from None
        store(t, addr, TENSOR_MAP_SIZE, int.from_bytes(new, "little"))

    def atom(self, t: Thread, space: str, addr: int, size: int, op: str, kind: str, b: int, c: int) -> int:
        """atom/red: read-modify-write in one step; returns the old value."""
        load: Callable[[int, int], int]
        store: Callable[[int, int, int], None]
        if space == "generic" and is_param_generic(addr):
            self.params.store(addr - PARAM_GENERIC, size, "an atomic")
        if space in ("cta", "cluster") or space == "generic" and is_shared_generic(addr):
            cta, off = self._cta_of(t, addr, space)
            load = lambda a, n: self._sload(cta, a, n)  # noqa: E731
            store = lambda a, n, v: self._sstore(cta, a, n, v)  # noqa: E731
            addr = off
        else:
            load, store = self.gmem.load, self.gmem.store
        t.effects += 1
        bits = 8 * size
        mask = (1 << bits) - 1
        old = load(addr, size)
        new = atom_value(op, kind, old, b, c, bits)
        store(addr, size, new & mask)
        return old

    def cvta_to(self, t: Thread, space: str, addr: int) -> int:
        """cvta.to.shared / .local / .param: the generic address's offset in its window. The PTX ISA
        leaves the result undefined for an address outside the window: a fault here, where the kernel
        made it, rather than an access that would land anywhere."""
        name, inside, base = {"local": ("local", is_local_generic, LOCAL_GENERIC),
                              "param": ("param", is_param_generic, PARAM_GENERIC)}.get(
                                  space, ("shared", is_shared_generic, SHARED_GENERIC))
        if not inside(addr):
            raise KernelFault(f"cvta.to.{name} of generic address {addr:#x}, which is not in the {name} "
                              "window: the result is undefined (PTX ISA, cvta)")
        return addr - base

    def mapa(self, t: Thread, addr: int, rank: int, generic: bool) -> int:
        n = len(t.cta.cluster.ctas)
        if rank >= n:
            raise MemoryFault(f"mapa to CTA rank {rank}, but the cluster has {n} CTAs")
        if generic:
            if not is_shared_generic(addr):
                raise MemoryFault(f"mapa of generic address {addr:#x}, which is not in the shared window")
            return SHARED_GENERIC + mapped(addr - SHARED_GENERIC, rank)
        return mapped(addr, rank)

    def ctarank(self, t: Thread, addr: int, generic: bool) -> int:
        if generic and not is_shared_generic(addr):
            raise MemoryFault(f"getctarank of generic address {addr:#x}: not in the shared window")
        cta, _ = self._cta_of(t, addr if generic else addr & 0xFFFFFFFF, "generic" if generic else "cluster")
        return cta.rank

    def isspace(self, t: Thread, addr: int, space: str) -> bool:
        if space in ("cta", "cluster"):
            found = shared_address("generic", addr)
            if found is None:
                return False
            return found[0] == OWN or (space == "cluster" and found[0] < len(t.cta.cluster.ctas))
        if space == "local":
            return is_local_generic(addr)
        if space == "param":
            return is_param_generic(addr) and addr - PARAM_GENERIC < len(self.params.data)
        try:
            self.gmem.region(addr, 1)
        except MemoryFault:
            return False
        return True


def _gone(cta: Cta, addr: int) -> NoReturn:
    raise MemoryFault(f"access to shared::cluster address {addr:#x} in CTA {cta.name}, whose threads have "
                      "all exited: its shared memory is gone (a CTA must outlive the remote accesses to it, "
                      "e.g. by a cluster barrier before it exits)", REMOTE_EXITED)

def atom_value(op: str, kind: str, old: int, b: int, c: int, bits: int) -> int:
    if kind == "f":
        fv, fb = (f32_value, f32_bits) if bits == 32 else (f64_value, f64_bits)
        return fb(fv(old) + fv(b)) if op == "add" else b
    sign = 1 << (bits - 1)
    if kind == "s":
        so, sb = (old ^ sign) - sign, (b ^ sign) - sign
    else:
        so, sb = old, b
    mask = (1 << bits) - 1
    match op:
        case "add":
            return old + b
        case "min":
            return min(so, sb)
        case "max":
            return max(so, sb)
        case "and":
            return old & b
        case "or":
            return old | b
        case "xor":
            return old ^ b
        case "exch":
            return b
        case "cas":
            return c if old == b else old
        case "inc":
            return 0 if old >= b else old + 1
        case "dec":
            return b if old == 0 or old > b else old - 1
    return old & mask
