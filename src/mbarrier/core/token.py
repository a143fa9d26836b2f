"""State tokens returned by arrive and arrive_drop (PTX ISA 9.7.13.15.13, 9.7.13.15.14, 9.7.13.15.17)."""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.core import encoding


@dataclass(frozen=True, slots=True)
class Token:
    """The opaque 64-bit `state` an arrive returns, with the provenance the model keeps beside it.

    `word` is the value the sm_90 instruction writes to its destination register. The other fields
    are what the hardware cannot see but the model uses to flag undefined waits (9.7.13.15.16):
    `barrier_id` names the 8 bytes of memory the object lives in, `generation` which initialization
    of that memory the token came from (so a token from before an inval + init is caught), and
    `phase` the full phase number the arrive saw.
    """

    word: int
    barrier_id: int
    generation: int
    phase: int
    no_complete: bool

    @property
    def parity(self) -> int:
        return encoding.token_parity(self.word)

    def __repr__(self) -> str:
        flag = ", noComplete" if self.no_complete else ""
        return f"Token({self.word:#018x}, phase={self.phase}{flag})"
