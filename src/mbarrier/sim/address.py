"""The simulator's address map: where each state space lives in the generic address space.

The PTX ISA fixes the windows' existence, not their numbers; these are the simulator's choice:

* `.shared::cta` addresses are byte offsets into the executing CTA's shared memory, below 2^24.
* `.shared::cluster` addresses: an address below 2^24 is the executing CTA's own shared memory (the
  `.shared::cta` window lies inside the `.shared::cluster` window); `mapa` gives `(rank + 1) << 24 | offset`
  for the CTA of rank `rank` in the cluster.
* `.local` addresses are offsets into the executing thread's local memory (every function has a fixed
  region of it: see `compile.Frame`).
* kernel parameter (`.param::entry`) addresses are byte offsets into the launch's parameter memory: each
  parameter at its declaration's alignment after the one before, as the CUDA driver lays them out.
* generic addresses: the shared window starts at SHARED_GENERIC (generic = SHARED_GENERIC + the 32-bit
  `.shared::cluster` address); the local window at LOCAL_GENERIC (each thread sees its own); the kernel
  parameter window at PARAM_GENERIC (`cvta.param`); global buffer k starts at GLOBAL_BASE + k * 2^32.
"""

from __future__ import annotations

from typing import Final

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
