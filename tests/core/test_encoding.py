"""The sm_90 encoding of the object (measured on an H100: docs/hardware.md, "Object layout"): `b.word`,
`Barrier.from_word` and the token words, checked field by field and against the measured example."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mbarrier as mb

MAX = (1 << 20) - 1
UPPER = ((1 << 64) - 1) ^ ((1 << 32) - 1)


def ready(count: int) -> mb.Barrier:
    b = mb.Barrier("enc")
    b.init(count)
    return b


def test_measured_example() -> None:
    """init(32) then one arrive -> 0x7fff0800001fffc0 (measured on an H100: record enc-arrive1-32)."""
    b = ready(32)
    b.arrive()
    assert b.word == 0x7FFF0800001FFFC0


def test_init_one() -> None:
    assert ready(1).word == 0x7FFFF800001FFFFE


def test_each_field_in_its_bits() -> None:
    b = ready(1)
    base = b.word
    b.expect_tx(1)                               # tx field (41..21) = -1: all 21 bits set
    assert b.word ^ base == ((1 << 21) - 1) << 21
    b.complete_tx(1)
    b.arrive()                                   # phase 1: only bit 63 differs
    assert b.word ^ base == 1 << 63
    c = ready(2)
    d = ready(3)
    assert (c.word ^ d.word) & ~((MAX << 43) | (MAX << 1)) == 0      # counts only in their fields
    assert (c.word >> 43) & MAX == (-2) & MAX and (c.word >> 1) & MAX == (-2) & MAX
    assert c.word & ((1 << 42) | 1) == 0                             # bits 42 and 0 stay zero


def test_word_of_memory_that_is_not_an_object() -> None:
    b = mb.Barrier("raw")
    assert b.word == 0                           # the model's fresh memory is zero
    b.init(5)
    b.arrive(expect_tx=16)
    last = b.word
    b.inval()
    assert b.word == last                        # inval writes the cached object back


def test_token_words() -> None:
    """Upper 32 bits: the object's before the arrive; low bits zero, but bit 0 for .noComplete."""
    b = ready(4)
    before = b.word
    t = b.arrive(expect_tx=2048)                 # tx bits 41..32 change: the token shows the old ones
    assert t.word == before & UPPER and t.word & ((1 << 32) - 1) == 0
    before = b.word
    n = b.arrive_drop(count=1, no_complete=True)
    assert n.word == (before & UPPER) | 1 and n.no_complete and not t.no_complete


fields = st.tuples(st.integers(0, 1), st.integers(0, MAX), st.integers(-MAX, MAX), st.integers(1, MAX))


def compose(parity: int, pending: int, tx: int, expected: int) -> int:
    tx_field = -tx & ((1 << 21) - 1)
    return (parity << 63) | ((-pending & MAX) << 43) | (tx_field << 21) | ((-expected & MAX) << 1)


@settings(max_examples=300, derandomize=True, database=None)
@given(fields)
def test_from_word_round_trips(f: tuple[int, int, int, int]) -> None:
    parity, pending, tx, expected = f
    word = compose(*f)
    if pending == 0 and tx == 0:
        with pytest.raises(ValueError, match="completed"):
            mb.Barrier.from_word(word)
        return
    b = mb.Barrier.from_word(word, "w")
    assert (b.phase, b.pending, b.tx, b.expected, b.valid, b.name) == (parity, pending, tx, expected, True,
                                                                       "w")
    assert b.word == word


@pytest.mark.parametrize("bit", [0, 42])
def test_from_word_rejects_reserved_bits(bit: int) -> None:
    with pytest.raises(ValueError, match="bit 42 or bit 0"):
        mb.Barrier.from_word(ready(3).word | 1 << bit)


def test_from_word_rejects_expected_zero() -> None:
    with pytest.raises(ValueError, match="expected count 0"):
        mb.Barrier.from_word(ready(3).word & ~(MAX << 1))
    with pytest.raises(ValueError):
        mb.Barrier.from_word(0)


def test_from_word_rejects_tx_minus_two_to_the_twenty() -> None:
    word = ready(3).word | (1 << 20) << 21       # negated tx field 0x100000: tx -2^20
    with pytest.raises(ValueError, match="tx-count -1048576"):
        mb.Barrier.from_word(word)


def test_from_word_object_works() -> None:
    b = mb.Barrier.from_word(0x7FFF0800001FFFC0)
    assert (b.phase, b.pending, b.expected, b.tx) == (0, 31, 32, 0)
    t = b.arrive(count=31)
    assert b.phase == 1 and b.test_wait(t)
    with pytest.raises(mb.InitOnValid):
        b.init(1)


def test_repr_shows_state_and_word() -> None:
    b = mb.Barrier("r")
    assert repr(b) == "Barrier(valid=False, word=0x0000000000000000)"
    b.init(32)
    b.arrive()
    assert repr(b) == "Barrier(phase=0, pending=31, expected=32, tx=0, word=0x7fff0800001fffc0)"
