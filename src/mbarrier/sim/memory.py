"""Global memory as sparse, lazily backed buffers, the buffer specs a launch takes, and the kernel's
parameter memory.

Each buffer owns a 4 GiB slot of the address space (see `address`); only the 4 KiB pages that were
written are backed, so a large or unbounded buffer costs nothing until it is used.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mbarrier.sim.address import BUFFER_SLOT_BITS, GLOBAL_BASE
from mbarrier.sim.errors import KernelFault, MemoryFault
from mbarrier.spec.checks import PARAM_STORE

PAGE_BITS = 12
PAGE = 1 << PAGE_BITS
_ZERO_PAGE = bytes(PAGE)


@dataclass(frozen=True)
class Buffer:
    """A global buffer to pass as a pointer argument: `size` bytes, the first of them `data` (the rest
    zero). `Buffer(4096)`, `Buffer.of_ints([1, 2, 3])`."""

    size: int
    data: bytes = b""
    name: str = ""

    def __post_init__(self) -> None:
        if self.size < 0 or len(self.data) > self.size:
            raise ValueError(f"buffer of {self.size} bytes cannot hold {len(self.data)} bytes of data")

    @classmethod
    def of_ints(cls, values: Iterable[int], width: int = 4, size: int | None = None) -> Buffer:
        """Little-endian integers of `width` bytes each (negative values in two's complement)."""
        mask = (1 << (8 * width)) - 1
        data = b"".join((v & mask).to_bytes(width, "little") for v in values)
        return cls(len(data) if size is None else size, data)


class Region:
    """One buffer: its base address, its size and its backed pages."""

    __slots__ = ("base", "size", "name", "pages")

    def __init__(self, base: int, size: int, name: str) -> None:
        self.base = base
        self.size = size
        self.name = name
        self.pages: dict[int, bytearray] = {}

    def copy(self) -> Region:
        r = Region(self.base, self.size, self.name)
        r.pages = {k: bytearray(v) for k, v in self.pages.items()}
        return r

    def read(self, offset: int, size: int) -> bytes:
        out = bytearray()
        while size:
            page, within = offset >> PAGE_BITS, offset & (PAGE - 1)
            n = min(size, PAGE - within)
            backed = self.pages.get(page)
            out += (_ZERO_PAGE if backed is None else backed)[within:within + n]
            offset += n
            size -= n
        return bytes(out)

    def write(self, offset: int, data: bytes) -> None:
        pos = 0
        while pos < len(data):
            page, within = offset >> PAGE_BITS, offset & (PAGE - 1)
            n = min(len(data) - pos, PAGE - within)
            backed = self.pages.get(page)
            if backed is None:
                backed = self.pages[page] = bytearray(PAGE)
            backed[within:within + n] = data[pos:pos + n]
            offset += n
            pos += n


class GlobalMemory:
    """All global buffers of a launch, found in O(1) from an address."""

    __slots__ = ("regions",)

    def __init__(self) -> None:
        self.regions: list[Region] = []

    def copy(self) -> GlobalMemory:
        g = GlobalMemory()
        g.regions = [r.copy() for r in self.regions]
        return g

    def allocate(self, size: int, name: str, data: bytes = b"") -> int:
        if size > 1 << BUFFER_SLOT_BITS:
            raise ValueError(f"buffer {name!r}: {size} bytes is more than a 4 GiB slot")
        base = GLOBAL_BASE + (len(self.regions) << BUFFER_SLOT_BITS)
        region = Region(base, size, name)
        if data:
            region.write(0, data)
        self.regions.append(region)
        return base

    def region(self, addr: int, size: int) -> tuple[Region, int]:
        k = (addr - GLOBAL_BASE) >> BUFFER_SLOT_BITS
        if 0 <= k < len(self.regions):
            r = self.regions[k]
            offset = addr - r.base
            if offset + size <= r.size:
                return r, offset
            raise MemoryFault(f"a {size}-byte access at {addr:#x} runs past the end of buffer {r.name!r} "
                              f"({r.size} bytes, offset {offset})")
        raise MemoryFault(f"address {addr:#x} is in no global buffer")

    def load(self, addr: int, size: int) -> int:
        r, offset = self.region(addr, size)
        within = offset & (PAGE - 1)
        if within + size <= PAGE:
            page = r.pages.get(offset >> PAGE_BITS)
            if page is None:
                return 0
            return int.from_bytes(page[within:within + size], "little")
        return int.from_bytes(r.read(offset, size), "little")

    def store(self, addr: int, size: int, value: int) -> None:
        r, offset = self.region(addr, size)
        data = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        within = offset & (PAGE - 1)
        page = r.pages.get(offset >> PAGE_BITS)
        if page is not None and within + size <= PAGE:
            page[within:within + size] = data
        else:
            r.write(offset, data)

    def read(self, addr: int, size: int) -> bytes:
        r, offset = self.region(addr, size)
        return r.read(offset, size)

    def write(self, addr: int, data: bytes) -> None:
        r, offset = self.region(addr, len(data))
        r.write(offset, data)

    def key(self) -> tuple[object, ...]:
        return tuple((r.base, tuple(sorted((k, bytes(v)) for k, v in r.pages.items() if any(v))))
                     for r in self.regions)


class ParamMemory:
    """The kernel parameters of a launch (PTX ISA 5.1.6.1): one read-only block of bytes that every
    thread shares, each parameter at its offset. Addresses are offsets into the block (`.param`
    addresses; the generic window adds `address.PARAM_GENERIC`)."""

    __slots__ = ("data", "names")

    def __init__(self, data: bytes, names: dict[str, tuple[int, int]]) -> None:
        self.data = data
        self.names = names  # parameter name -> (offset, size)

    def _where(self, addr: int) -> str:
        for name, (off, size) in self.names.items():
            if off <= addr < off + size:
                return f"{name}+{addr - off}" if addr > off else name
        return f"{addr:#x}"

    def load(self, addr: int, size: int) -> int:
        if addr < 0 or addr + size > len(self.data):
            raise MemoryFault(f"a {size}-byte load at .param address {addr:#x} is outside the "
                              f"{len(self.data)} bytes of the kernel's parameters")
        return int.from_bytes(self.data[addr:addr + size], "little")

    def read(self, addr: int, size: int) -> bytes:
        self.load(addr, size)
        return self.data[addr:addr + size]

    def store(self, addr: int, size: int, what: str = "a store") -> None:
        """Kernel parameters are read-only (PTX ISA 5.1.6.1): any write is the kernel's fault."""
        raise KernelFault(f"{what} of {size} bytes to kernel parameter {self._where(addr)} (.param address "
                          f"{addr:#x}): kernel parameters are read-only", PARAM_STORE)
