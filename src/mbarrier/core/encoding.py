"""The sm_90 64-bit layout of the mbarrier object and of its state token (measured on an H100:
docs/hardware.md, "Object layout" and "State tokens").

bit 63       phase parity
bits 62..43  pending arrival count, negated (20-bit two's complement)
bit 42       zero
bits 41..21  tx-count, negated (21-bit two's complement)
bits 20..1   expected arrival count, negated (20-bit two's complement)
bit 0        zero
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

PHASE_SHIFT: Final = 63
PENDING_SHIFT: Final = 43
TX_SHIFT: Final = 21
EXPECTED_SHIFT: Final = 1
MASK20: Final = (1 << 20) - 1
MASK21: Final = (1 << 21) - 1
RESERVED_BITS: Final = (1 << 42) | 1
WORD_MASK: Final = (1 << 64) - 1

#: A .noComplete token sets bit 0 (measured on sm_90).
TOKEN_NO_COMPLETE_BIT: Final = 1
#: Only the upper 32 bits of a token are the object's state; bit 0 marks .noComplete.
TOKEN_MEANINGFUL_MASK: Final = (WORD_MASK ^ ((1 << 32) - 1)) | TOKEN_NO_COMPLETE_BIT


@dataclass(frozen=True, slots=True)
class Fields:
    """The four fields the word stores; the phase is stored as its parity only."""

    parity: int
    pending: int
    tx: int
    expected: int


def encode(parity: int, pending: int, tx: int, expected: int) -> int:
    """The 64-bit object word for these field values (counts must already be in range)."""
    return (
        ((parity & 1) << PHASE_SHIFT)
        | (((-pending) & MASK20) << PENDING_SHIFT)
        | (((-tx) & MASK21) << TX_SHIFT)
        | (((-expected) & MASK20) << EXPECTED_SHIFT)
    )


def decode(word: int) -> Fields:
    """The fields of a 64-bit object word. Raises ValueError for words no valid object has."""
    if not isinstance(word, int) or isinstance(word, bool):
        raise TypeError(f"an mbarrier word is a 64-bit int, not {type(word).__name__}")
    if not 0 <= word <= WORD_MASK:
        raise ValueError(f"an mbarrier word is a 64-bit unsigned integer, got {word:#x}")
    if word & RESERVED_BITS:
        raise ValueError(f"word {word:#018x} sets bit 42 or bit 0, which the sm_90 layout keeps zero")
    pending = (-(word >> PENDING_SHIFT)) & MASK20
    tx_raw = (-(word >> TX_SHIFT)) & MASK21
    tx = tx_raw - (1 << 21) if tx_raw >= (1 << 20) else tx_raw
    expected = (-(word >> EXPECTED_SHIFT)) & MASK20
    return Fields(parity=word >> PHASE_SHIFT, pending=pending, tx=tx, expected=expected)


def token_word(object_word_before: int, no_complete: bool) -> int:
    """The state token an arrive returns: the object's upper word before the arrive-on."""
    upper = object_word_before & (WORD_MASK ^ ((1 << 32) - 1))
    return upper | (TOKEN_NO_COMPLETE_BIT if no_complete else 0)


def token_parity(word: int) -> int:
    """The phase parity a token captured."""
    return (word >> PHASE_SHIFT) & 1


def token_pending(word: int) -> int:
    """The pending count a token captured (what mbarrier.pending_count returns)."""
    return (-(word >> PENDING_SHIFT)) & MASK20


def token_is_no_complete(word: int) -> bool:
    return bool(word & TOKEN_NO_COMPLETE_BIT)
