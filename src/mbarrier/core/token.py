"""State tokens returned by arrive and arrive_drop (PTX ISA 9.7.13.15.13, 9.7.13.15.17)."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.core import encoding


@dataclass(frozen=True, slots=True)
class Token:
    """The opaque 64-bit `state` an arrive returns, with the provenance the model keeps beside it.

    `word` is the value the sm_90 instruction writes to its destination register. `object_id` and
    `phase` are what the hardware cannot see but the model uses to flag undefined waits: the token's
    barrier (one id per initialization) and the full phase number it was taken in.
    """

    word: int
    object_id: int
    phase: int
    no_complete: bool

    @property
    def parity(self) -> int:
        return encoding.token_parity(self.word)

    def __repr__(self) -> str:
        flag = ", noComplete" if self.no_complete else ""
        return f"Token({self.word:#018x}, phase={self.phase}{flag})"
