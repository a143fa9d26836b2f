"""The simulator's address map: where each state space lives in the generic address space.

The PTX ISA fixes the windows' existence, not their numbers; these are the simulator's choice:

* `.shared::cta` addresses are byte offsets into the executing CTA's shared memory, below 2^24.
* `.shared::cluster` addresses: an address below 2^24 is the executing CTA's own shared memory (the
  `.shared::cta` window lies inside the `.shared::cluster` window); `mapa` gives `(rank + 1) << 24 | offset`
  for the CTA of rank `rank` in the cluster.
* `.local` addresses are offsets into the executing thread's local memory (every function has a fixed
  region of it: see `frames.Frame`).
* kernel parameter (`.param::entry`) addresses are byte offsets into the launch's parameter memory: each
  parameter at its declaration's alignment after the one before, as the CUDA driver lays them out.
* An address operand wraps as PTX ISA 6.4.1 says (`address_mask`): `[%r+384]` with a 32-bit register
  is taken modulo 2^32, and any address of a 32-bit state space is truncated to 32 bits.
* generic addresses: the shared window starts at SHARED_GENERIC (generic = SHARED_GENERIC + the 32-bit
  `.shared::cluster` address); the local window at LOCAL_GENERIC (each thread sees its own); the kernel
  parameter window at PARAM_GENERIC (`cvta.param`); global buffer k starts at GLOBAL_BASE + k * 2^32.
"""

from __future__ import annotations

from typing import Final

from mbarrier.spec.limits import ADDRESS_BITS

CTA_BITS: Final = 24
CTA_MASK: Final = (1 << CTA_BITS) - 1
SHARED_GENERIC: Final = 0x7000_0000_0000
SHARED_WINDOW: Final = 1 << 32
LOCAL_GENERIC: Final = 0x6000_0000_0000
PARAM_GENERIC: Final = 0x5000_0000_0000
PARAM_WINDOW: Final = 1 << 32
#: A function's name in an initializer (a table of function pointers) stands for CODE_BASE + its index.
CODE_BASE: Final = 0x8000_0000_0000
LOCAL_WINDOW: Final = 1 << 32
GLOBAL_BASE: Final = 0x10_0000_0000
BUFFER_SLOT_BITS: Final = 32


def is_shared_generic(addr: int) -> bool:
    return SHARED_GENERIC <= addr < SHARED_GENERIC + SHARED_WINDOW


def cluster_address(rank: int, offset: int) -> int:
    """The `.shared::cluster` address of `offset` in the shared memory of the CTA of this rank."""
    return ((rank + 1) << CTA_BITS) | offset


def is_local_generic(addr: int) -> bool:
    return LOCAL_GENERIC <= addr < LOCAL_GENERIC + LOCAL_WINDOW


def is_param_generic(addr: int) -> bool:
    return PARAM_GENERIC <= addr < PARAM_GENERIC + PARAM_WINDOW


#: The simulator's names of the state spaces an address operand is in, as the PTX ISA spells them.
SPACE_NAMES: Final = {"cta": ".shared::cta", "cluster": ".shared::cluster", "local": ".local",
                      "param": ".param", "global": ".global", "generic": "generic"}


def address_mask(space: str, reg_bits: int | None = None) -> int:
    """The mask an address of this state space wraps at, held in a register of `reg_bits` bits (None: a
    constant or a variable's address): the narrower of the two widths (spec.limits.ADDRESS_BITS)."""
    bits = ADDRESS_BITS[SPACE_NAMES[space]]
    return (1 << (bits if reg_bits is None else min(bits, reg_bits))) - 1


#: `shared_address`'s rank for the executing CTA's own shared memory.
OWN = -1


def shared_address(space: str, addr: int) -> tuple[int, int] | None:
    """What an address of state space `space` ("cta", "cluster" or "generic") names in shared memory:
    (rank of the CTA in the cluster, or OWN for the executing CTA; the offset in its shared memory), or
    None for a generic address outside the shared window. A `.shared::cta` address is the executing
    CTA's offset as it is (one past the 2^24 window is the caller's to refuse); a `.shared::cluster`
    address below 2^24 too; above, `(rank + 1) << 24 | offset` (see `cluster_address`). The one decoder
    of shared addresses: the machine, the race tracker and the checker's footprints all read it."""
    if space == "generic":
        if not SHARED_GENERIC <= addr < SHARED_GENERIC + SHARED_WINDOW:
            return None
        addr -= SHARED_GENERIC
    elif space == "cta":
        return OWN, addr
    hi = addr >> CTA_BITS
    return (OWN, addr) if hi == 0 else (hi - 1, addr & CTA_MASK)


def mapped(addr: int, rank: int) -> int:
    """The `.shared::cluster` address of the same offset as `.shared::cluster` address `addr`, in the
    shared memory of the CTA of rank `rank` (mapa; the targets of a multicast copy)."""
    found = shared_address("cluster", addr)
    assert found is not None  # a .shared::cluster address always names a CTA
    return cluster_address(rank, found[1])
