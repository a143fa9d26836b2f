"""A second, independent model of the mbarrier object, used as the oracle of the property tests.

It keeps the counts only in the sm_90 64-bit word and does every operation as field arithmetic in the
hardware layout (mbarrier.core.encoding, measured: docs/hardware.md), never decoding the word into plain
numbers:

    bit 63       phase parity
    bits 62..43  pending arrival count, negated (20-bit two's complement)
    bit 42       zero
    bits 41..21  tx-count, negated (21-bit two's complement)
    bits 20..1   expected arrival count, negated (20-bit two's complement)
    bit 0        zero

Beside the word it keeps only what undefined-behaviour detection needs and the hardware does not store:
whether the memory holds a valid object, how many phases have completed (to tell stale tokens), whether
the preceding phase has been waited for (9.7.13.15.4), and how many times the memory was initialized.

It shares no code with `mbarrier.core` on purpose: agreement between the two is the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

WORD = (1 << 64) - 1
UPPER_WORD = WORD ^ ((1 << 32) - 1)
PHASE_BIT = 1 << 63
PENDING = (43, (1 << 20) - 1)
TX = (21, (1 << 21) - 1)
EXPECTED = (1, (1 << 20) - 1)
#: A negated 20-bit count field n holds 2^20 - count (0 for count 0).
WRAP20 = 1 << 20
#: tx-count magnitude limit, 9.7.13.15.2.
TX_LIMIT = (1 << 20) - 1
NO_COMPLETE_BIT = 1


class Undefined(Exception):
    """The operation breaks rule `rule` (an id of spec.rules); the model is left unchanged."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


def get(word: int, field: tuple[int, int]) -> int:
    shift, mask = field
    return (word >> shift) & mask


def put(word: int, field: tuple[int, int], value: int) -> int:
    shift, mask = field
    return (word & ~(mask << shift) & WORD) | ((value & mask) << shift)


def signed21(raw: int) -> int:
    return raw - (1 << 21) if raw & (1 << 20) else raw


@dataclass(frozen=True)
class WordToken:
    """A token as the word model sees it: the register value plus where and when it was taken."""

    word: int
    generation: int
    phases: int
    foreign: bool = False


class WordModel:
    def __init__(self) -> None:
        self.word = 0          # the memory: all zero until the first init
        self.valid = False
        self.phases = 0        # completed phases of the current object
        self.waited = True     # the preceding phase has had a wait that returned True
        self.generation = 0

    # -- helpers -----------------------------------------------------------------------------------
    def _need_valid(self) -> None:
        if not self.valid:
            raise Undefined("uninitialized")

    def _settle(self, word: int) -> None:
        """Store the word; complete the phase when the pending and tx fields are both zero."""
        if get(word, PENDING) == 0 and get(word, TX) == 0:
            word ^= PHASE_BIT
            word = put(word, PENDING, get(word, EXPECTED))   # same negated representation
            self.phases += 1
            self.waited = False
        self.word = word

    @staticmethod
    def _add_tx(word: int, delta: int) -> int:
        """tx-count += delta, done on the negated field."""
        negated = signed21(get(word, TX)) - delta
        if not -TX_LIMIT <= negated <= TX_LIMIT:
            raise Undefined("tx-count-range")
        return put(word, TX, negated)

    # -- operations --------------------------------------------------------------------------------
    def init(self, count: int) -> None:
        if self.valid:
            raise Undefined("init-on-valid")
        if not 1 <= count < WRAP20:
            raise Undefined("init-count-range")
        negated = WRAP20 - count
        self.word = (negated << PENDING[0]) | (negated << EXPECTED[0])
        self.valid = True
        self.phases = 0
        self.waited = True
        self.generation += 1

    def inval(self) -> None:
        self._need_valid()
        self.valid = False      # the word stays: it is what memory holds now

    def expect_tx(self, count: int) -> None:
        self._need_valid()
        self._settle(self._add_tx(self.word, count))

    def complete_tx(self, count: int) -> None:
        self._need_valid()
        self._settle(self._add_tx(self.word, -count))

    def arrive(self, count: int | None = None, expect_tx: int | None = None, no_complete: bool = False,
               drop: bool = False) -> WordToken:
        self._need_valid()
        n = 1 if count is None else count
        if not 1 <= n < WRAP20:
            raise Undefined("arrive-count-range")
        if not self.waited:
            raise Undefined("phase-not-waited")
        word = self.word if expect_tx is None else self._add_tx(self.word, expect_tx)
        negated_pending = get(word, PENDING)
        # negated_pending = 2^20 - pending, or 0 when pending is 0: n > pending exactly when this holds.
        if negated_pending == 0 or negated_pending + n > WRAP20:
            raise Undefined("pending-underflow")
        if drop:
            negated_expected = get(word, EXPECTED)
            if negated_expected + n >= WRAP20:      # expected - n < 1
                raise Undefined("expected-underflow")
            word = put(word, EXPECTED, negated_expected + n)
        word = put(word, PENDING, negated_pending + n)
        if no_complete and get(word, PENDING) == 0 and get(word, TX) == 0:
            raise Undefined("no-complete-completes")
        token = WordToken((self.word & UPPER_WORD) | (NO_COMPLETE_BIT if no_complete else 0),
                          self.generation, self.phases)
        self._settle(word)
        return token

    def cp_async_arrive(self, noinc: bool) -> None:
        self._need_valid()
        if noinc:
            return
        negated_pending = get(self.word, PENDING)
        if negated_pending == 1:                     # pending is 2^20 - 1 already
            raise Undefined("pending-overflow")
        self.word = put(self.word, PENDING, negated_pending - 1)

    def async_arrive(self) -> None:
        self.arrive()

    def wait_parity(self, parity: int) -> bool:
        self._need_valid()
        if parity not in (0, 1):
            raise Undefined("wait-parity-value")
        return self._waited_if(self.word >> 63 != parity)

    def wait_token(self, token: WordToken) -> bool:
        self._need_valid()
        if token.foreign or token.generation != self.generation or token.phases > self.phases:
            raise Undefined("wait-foreign-token")
        if token.phases < self.phases - 1:
            raise Undefined("wait-stale-token")
        return self._waited_if(token.word >> 63 != self.word >> 63)

    def wait_word(self, token_word: int) -> bool:
        """A bare 64-bit register: only its parity bit means anything."""
        self._need_valid()
        return self._waited_if(token_word >> 63 != self.word >> 63)

    def _waited_if(self, done: bool) -> bool:
        if done:
            self.waited = True
        return done


def pending_count(token_word: int) -> int:
    if not token_word & NO_COMPLETE_BIT:
        raise Undefined("pending-count-token")
    return (WRAP20 - get(token_word, PENDING)) & PENDING[1]
