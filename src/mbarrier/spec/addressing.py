"""The module's address size as ptxas 13.0 (V13.0.88) judges it, as data (measured; the PTX ISA
says only that `.address_size` is 32 or 64, 11.3.3, and that 32-bit addressing is deprecated).

ptxas looks at it only in a module without any other error (after its per-line checks and its
pass over names), in these words:

- every generic or `.global` address narrower than the module's `.address_size` warns "Program
  uses {bits}-bit address on line '{line}' which is conflicting with .address_size {size}";
- without `.address_size` the narrowest such address sets it, and one narrower than 64 bits warns
  "64 Bit host architecture (--machine) being used mismatches with .address_size of {bits} bits";
  `.address_size 32` itself warns that with 32;
- a module whose address size is then 32 bits (`.address_size 32`, or a 32-bit address the
  narrowest of all) ends in a fatal error worded by the target (`ABI_32_FATAL`); a narrowest
  address of 16 bits is only warned about.

What counts as an address (measured): the `[...]` operand of the memory instructions below when
they name no state space or `.global`, of the `mbarrier.*` instructions that take an address when
they name no state space (the generic form), a 32- or 16-bit `cvta` (any state space), and a
`.global` variable moved into a 32- or 16-bit register (`mov.u32 %r1, gvar`, no offset). Not:
`cp.async` and the bulk copies, `mapa`, `prefetch.tensormap`, `tensormap.replace`,
`fence.proxy.tensormap`, `cp.async.mbarrier.arrive`, a `.shared`, `.local`, `.const` or `.param`
access.
"""

from __future__ import annotations

from typing import Final

#: Opcodes whose address operand counts when the instruction names no state space or `.global`.
MEMORY_OPCODES: Final[frozenset[str]] = frozenset(
    {"ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu", "discard", "applypriority"})

#: Opcodes whose address operand counts only in their generic form (no state space written).
GENERIC_ONLY_OPCODES: Final[frozenset[str]] = frozenset({"mbarrier"})

#: `mbarrier.*` instructions without an address operand.
NO_ADDRESS_PATHS: Final[frozenset[str]] = frozenset({".pending_count"})

#: The sizes of `cvta` and `mov` that are an address of that many bits.
NARROW_TYPES: Final[dict[str, int]] = {".u32": 32, ".b32": 32, ".s32": 32, ".u16": 16, ".b16": 16,
                                       ".s16": 16}

WARN_CONFLICT: Final = ("Program uses {bits}-bit address on line '{line}' which is conflicting with "
                        ".address_size {size}")
WARN_HOST: Final = ("64 Bit host architecture (--machine) being used mismatches with .address_size of "
                    "{bits} bits")

#: The fatal error of a 32-bit module: before sm_90, and from sm_90 on.
ABI_32_FATAL: Final[tuple[str, str]] = (
    "32-Bit compilation is no longer supported",
    "32-Bit ABI (--machine 32 or 32-Bit addressing) is not supported on sm_90 or higher architectures.",
)
#: The first target of the second wording.
ABI_32_FATAL_FROM_SM: Final = 90
