"""The mbarrier object: state, operations and their undefined behaviour (PTX ISA 9.7.13.15).

Every operation checks all of its preconditions before it changes anything, so a Violation leaves the
barrier exactly as it was.
"""

from __future__ import annotations

import itertools
from typing import NoReturn

from mbarrier.core import encoding, violations
from mbarrier.core.token import Token
from mbarrier.spec import limits
from mbarrier.spec.rules import rule

#: One id per Barrier (per 8 bytes of memory); copies keep it, so tokens stay valid on a copy.
_barrier_ids = itertools.count(1)


def _u32(value: object, what: str) -> int:
    """An operand the PTX ISA types as a 32-bit unsigned integer; Python-level errors otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{what} must not be negative (it is a 32-bit unsigned operand), got {value}")
    if value > limits.U32_MAX:
        raise ValueError(f"{what} must fit in 32 bits (it is a 32-bit unsigned operand), got {value}")
    return value


def _flag(value: object, what: str) -> bool:
    """A qualifier given as a Python flag: only True or False, so a typo cannot pass as truthy."""
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be True or False, not {value!r}")
    return value


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class _Op:
    """An operation and its arguments as a message shows them, formatted only when a message is built:
    waits and arrives run millions of times in the simulator, and almost never fail."""

    __slots__ = ("name", "positional", "keywords")

    def __init__(self, name: str, *positional: object, **keywords: object) -> None:
        self.name = name
        self.positional = positional
        self.keywords = keywords

    def __str__(self) -> str:
        shown = [f"{v:#x}" if isinstance(v, int) else repr(v) for v in self.positional]
        shown += [f"{k}={v}" for k, v in self.keywords.items() if v is not None and v is not False]
        return f"{self.name}({', '.join(shown)})"



class Barrier:
    """One 8-byte mbarrier object in shared memory.

    A new Barrier is uninitialized memory (all zero bits); `init` makes it a valid object.
    """

    __slots__ = ("name", "_valid", "_phase", "_pending", "_expected", "_tx", "_waited", "_memory",
                 "_barrier_id", "_generation")

    def __init__(self, name: str | None = None) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"a barrier's name must be a str or None, not {type(name).__name__}")
        self.name = name
        self._valid = False
        self._phase = 0
        self._pending = 0
        self._expected = 0
        self._tx = 0
        # Whether the phase before the current one has had a wait that returned True (9.7.13.15.4).
        self._waited = True
        # What an ordinary load of the 8 bytes would return while the object is not valid.
        self._memory = 0
        self._barrier_id = next(_barrier_ids)
        # How many times this memory has been initialized: tells a token of an earlier object apart.
        self._generation = 0

    # -- read-only state ---------------------------------------------------------------------------
    @property
    def valid(self) -> bool:
        return self._valid

    @property
    def phase(self) -> int:
        """The current phase number (0, 1, 2, ...); the hardware stores only its parity."""
        return self._phase

    @property
    def pending(self) -> int:
        return self._pending

    @property
    def expected(self) -> int:
        return self._expected

    @property
    def tx(self) -> int:
        return self._tx

    @property
    def waited(self) -> bool:
        """Whether a wait has observed the last completed phase (arrive-on checks it, 9.7.13.15.4)."""
        return self._waited

    @property
    def word(self) -> int:
        """The 64-bit object exactly as sm_90 stores it (memory contents when not valid)."""
        if not self._valid:
            return self._memory
        return encoding.encode(self._phase, self._pending, self._tx, self._expected)

    @classmethod
    def from_word(cls, word: int, name: str | None = None) -> Barrier:
        """A valid barrier holding the state this 64-bit word encodes (the phase number is its parity)."""
        fields = encoding.decode(word)
        if fields.expected < limits.EXPECTED_MIN:
            raise ValueError(f"word {word:#018x} encodes expected count 0, which no valid object has "
                             f"(9.7.13.15.2)")
        if not limits.TX_MIN <= fields.tx <= limits.TX_MAX:
            raise ValueError(f"word {word:#018x} encodes tx-count {fields.tx}, outside "
                             f"[-(2^20-1), 2^20-1] (9.7.13.15.2)")
        if fields.pending == 0 and fields.tx == 0:
            raise ValueError(f"word {word:#018x} encodes pending count 0 and tx-count 0: that phase has "
                             f"completed, so no object rests in this state (9.7.13.15.6)")
        b = cls(name)
        b._valid = True
        b._generation = 1
        b._phase = fields.parity
        b._pending = fields.pending
        b._expected = fields.expected
        b._tx = fields.tx
        return b

    def copy(self) -> Barrier:
        """An independent barrier in the same state (tokens of this one stay valid on the copy)."""
        b = Barrier(self.name)
        for slot in Barrier.__slots__[1:]:
            setattr(b, slot, getattr(self, slot))
        return b

    def key(self) -> tuple[object, ...]:
        """A hashable snapshot of the whole observable state, for the checker's state hashing.

        Two copies of one barrier with equal keys have the same future: a valid object is its counts,
        full phase number, wait bookkeeping and generation; an invalid one is its memory and generation
        (the memory left from an earlier inval does not matter while the object is valid).
        """
        if not self._valid:
            return (False, self._memory, self._generation)
        return (True, self._phase, self._pending, self._expected, self._tx, self._waited,
                self._generation)

    def describe(self) -> str:
        """The barrier and its state in words, as violation messages show it."""
        label = f"barrier {self.name!r}" if self.name else "barrier"
        if not self._valid:
            return f"{label} (not a valid object)"
        parts = [f"{label} at phase {self._phase} with {_plural(self._pending, 'pending arrival')}",
                 f"expected {self._expected}"]
        if self._tx:
            parts.append(f"tx-count {self._tx}")
        return ", ".join(parts)

    def __repr__(self) -> str:
        if not self._valid:
            return f"Barrier(valid=False, word={self.word:#018x})"
        return (f"Barrier(phase={self._phase}, pending={self._pending}, expected={self._expected}, "
                f"tx={self._tx}, word={self.word:#018x})")

    # -- errors ------------------------------------------------------------------------------------
    def _fail(self, cls: type[violations.Violation], op: _Op | str, reason: str) -> NoReturn:
        section = rule(cls.rule).section
        raise cls(f"{op} on {self.describe()}: {reason} ({section})")

    def _require_valid(self, op: _Op | str) -> None:
        if not self._valid:
            what = "was invalidated" if self._generation else "was never initialized"
            self._fail(violations.Uninitialized, op, f"the object {what}; only mbarrier.init may touch it")

    # -- lifecycle (9.7.13.15.3, .9, .10) -----------------------------------------------------------
    def init(self, count: int) -> None:
        op = _Op("init", count=count)
        count = _u32(count, "init count")
        if self._valid:
            self._fail(violations.InitOnValid, op, "the location already holds a valid object; "
                       "invalidate it with mbarrier.inval first")
        if not limits.INIT_COUNT_MIN <= count <= limits.INIT_COUNT_MAX:
            self._fail(violations.InitCountRange, op,
                       f"the count must be in [{limits.INIT_COUNT_MIN}, 2^20-1]")
        self._valid = True
        self._generation += 1
        self._phase = 0
        self._pending = count
        self._expected = count
        self._tx = 0
        self._waited = True

    def inval(self) -> None:
        self._require_valid("inval()")
        # sm_90 writes the cached object back on inval: the memory then holds the last state's word.
        self._memory = self.word
        self._valid = False

    # -- tx-count (9.7.13.15.5, .11, .12) -----------------------------------------------------------
    def expect_tx(self, count: int) -> None:
        op = _Op("expect_tx", count=count)
        count = _u32(count, "expect_tx count")
        self._require_valid(op)
        tx = self._checked_tx(op, self._tx + count)
        self._tx = tx
        self._complete_if_done()

    def complete_tx(self, count: int) -> None:
        op = _Op("complete_tx", count=count)
        count = _u32(count, "complete_tx count")
        self._require_valid(op)
        tx = self._checked_tx(op, self._tx - count)
        self._tx = tx
        self._complete_if_done()

    def _checked_tx(self, op: _Op | str, tx: int) -> int:
        if not limits.TX_MIN <= tx <= limits.TX_MAX:
            self._fail(violations.TxCountRange, op,
                       f"the tx-count would become {tx}, outside [-(2^20-1), 2^20-1]")
        return tx

    def _complete_if_done(self) -> bool:
        """9.7.13.15.6: the phase completes when pending and tx-count are both zero."""
        if self._pending == 0 and self._tx == 0:
            self._phase += 1
            self._pending = self._expected
            self._waited = False
            return True
        return False

    # -- arrive-on (9.7.13.15.7, .13, .14, .15) -----------------------------------------------------
    def arrive(self, count: int | None = None, *, expect_tx: int | None = None,
               no_complete: bool = False) -> Token:
        """mbarrier.arrive{.expect_tx}{.noComplete}: returns the state token."""
        op = _Op("arrive", count=count, expect_tx=expect_tx, no_complete=no_complete)
        return self._arrive(op, count, expect_tx, no_complete, drop=False)

    def arrive_drop(self, count: int | None = None, *, expect_tx: int | None = None,
                    no_complete: bool = False) -> Token:
        """mbarrier.arrive_drop: lowers the expected count for all later phases, then arrives."""
        op = _Op("arrive_drop", count=count, expect_tx=expect_tx, no_complete=no_complete)
        return self._arrive(op, count, expect_tx, no_complete, drop=True)

    def cp_async_arrive(self, *, noinc: bool = False) -> None:
        """The immediate part of cp.async.mbarrier.arrive{.noinc} (9.7.13.15.15).

        Without .noinc the pending count rises by one now; the arrive-on itself comes later, when the
        thread's earlier cp.async operations complete: the simulator then calls `async_arrive()`.
        """
        op = _Op("cp.async.mbarrier.arrive", noinc=noinc)
        noinc = _flag(noinc, "noinc")
        self._require_valid(op)
        if noinc:
            return
        if self._pending + 1 > limits.PENDING_MAX:
            self._fail(violations.PendingOverflow, op,
                       f"the pending count would become {self._pending + 1}, above 2^20-1")
        self._pending += 1

    def async_arrive(self, source: str = "cp.async.mbarrier.arrive") -> None:
        """The asynchronous arrive-on (count 1) that a completed cp.async.mbarrier.arrive performs (or
        tcgen05.commit's, PTX ISA 9.7.16.12.5: `source` names the instruction)."""
        self._arrive(f"async arrive-on ({source})", 1, None, False, drop=False)

    def _arrive(self, op: _Op | str, count: int | None, expect_tx: int | None, no_complete: bool,
                drop: bool) -> Token:
        no_complete = _flag(no_complete, "no_complete")
        if expect_tx is not None and count is not None:
            raise TypeError(f"{op}: .expect_tx arrives with count 1; it takes no count (9.7.13.15.13)")
        if expect_tx is not None and no_complete:
            raise TypeError(f"{op}: there is no .expect_tx.noComplete form (9.7.13.15.13)")
        if no_complete and count is None:
            raise TypeError(f"{op}: the .noComplete form requires a count operand (9.7.13.15.13)")
        n = 1 if count is None else _u32(count, "arrive count")
        tx_add = None if expect_tx is None else _u32(expect_tx, "expect_tx count")
        self._require_valid(op)
        if not limits.ARRIVE_COUNT_MIN <= n <= limits.ARRIVE_COUNT_MAX:
            self._fail(violations.ArriveCountRange, op,
                       f"the count must be in [{limits.ARRIVE_COUNT_MIN}, 2^20-1]")
        if not self._waited:
            self._fail(violations.PhaseNotWaited, op,
                       f"no test_wait/try_wait returned True for phase {self._phase - 1} before this "
                       f"arrive-on in phase {self._phase}")
        tx = self._tx if tx_add is None else self._checked_tx(op, self._tx + tx_add)
        if n > self._pending:
            self._fail(violations.PendingUnderflow, op, "the count exceeds the pending count")
        expected = self._expected
        if drop:
            expected -= n
            if expected < limits.EXPECTED_MIN:
                self._fail(violations.ExpectedUnderflow, op,
                           f"the expected count would drop to {expected}, below 1")
        if no_complete and self._pending == n and tx == 0:
            self._fail(violations.NoCompleteCompletes, op, ".noComplete must not complete the phase, "
                       "but this arrival is the last one the phase waits for")
        # The token is the object before the whole instruction, .expect_tx part included (9.7.13.15.13).
        token = Token(encoding.token_word(self.word, no_complete), self._barrier_id, self._generation,
                      self._phase, no_complete)
        self._tx = tx
        self._expected = expected
        self._pending -= n
        self._complete_if_done()
        return token

    # -- waits (9.7.13.15.16) -----------------------------------------------------------------------
    def test_wait(self, token: Token | int | None = None, *, parity: int | None = None) -> bool:
        """mbarrier.test_wait: True iff the phase the token or parity names has completed."""
        return self._wait("test_wait", token, parity)

    def try_wait(self, token: Token | int | None = None, *, parity: int | None = None) -> bool:
        """mbarrier.try_wait: as test_wait; the hardware may suspend the thread for a while first."""
        return self._wait("try_wait", token, parity)

    def wait_result(self, token: Token | int | None = None, *, parity: int | None = None) -> bool | None:
        """What test_wait/try_wait would return now, without its effect on the object (a True result
        marks the phase waited for); None where it would raise (a violation, or operands it rejects)."""
        try:
            return self.copy()._wait("test_wait", token, parity)
        except (violations.Violation, TypeError, ValueError):
            return None

    def _wait(self, name: str, token: Token | int | None, parity: int | None) -> bool:
        if (token is None) == (parity is None):
            raise TypeError(f"{name} takes either a token or parity=, exactly one")
        if parity is not None:
            op = _Op(name, parity=parity)
            parity = _u32(parity, f"{name} parity")
            self._require_valid(op)
            if parity not in limits.PARITY_VALUES:
                self._fail(violations.WaitParityValue, op, "phaseParity must be 0 or 1")
            done = parity != self._phase & 1
        elif isinstance(token, Token):
            op = _Op(name, token)
            self._require_valid(op)
            self._check_provenance(op, token)
            if token.phase < self._phase - 1:
                self._fail(violations.WaitStaleToken, op,
                           f"the token is from phase {token.phase}, older than the immediately "
                           f"preceding phase {self._phase - 1}")
            done = token.phase < self._phase
        elif isinstance(token, int) and not isinstance(token, bool):
            op = _Op(name, token)
            if not 0 <= token <= encoding.WORD_MASK:
                raise ValueError(f"{name}: a state token is a 64-bit unsigned value, got {token}")
            self._require_valid(op)
            # A bare word carries only the parity, as on hardware.
            done = encoding.token_parity(token) != self._phase & 1
        else:
            raise TypeError(f"{name}: the state must be a Token or a 64-bit int, not "
                            f"{type(token).__name__}")
        if done:
            self._waited = True
        return done

    def _check_provenance(self, op: _Op | str, token: Token) -> None:
        """9.7.13.15.16: the token must come from an arrive on this very object (not an earlier one)."""
        if token.barrier_id != self._barrier_id:
            self._fail(violations.WaitForeignToken, op,
                       "the token was returned by an arrive on another mbarrier object")
        if token.generation != self._generation:
            self._fail(violations.WaitForeignToken, op,
                       "the token was returned by an arrive on the object this memory held before it "
                       "was invalidated and initialized again")
        if token.phase > self._phase:
            self._fail(violations.WaitForeignToken, op,
                       f"the token is from phase {token.phase}, which this object has not reached "
                       f"(it comes from a copy that ran ahead)")


def pending_count(token: Token | int) -> int:
    """mbarrier.pending_count (9.7.13.15.17): the pending count before the arrive, from the token alone."""
    if isinstance(token, Token):
        word = token.word
    elif isinstance(token, int) and not isinstance(token, bool):
        if not 0 <= token <= encoding.WORD_MASK:
            raise ValueError(f"pending_count: a state token is a 64-bit unsigned value, got {token}")
        word = token
    else:
        raise TypeError(f"pending_count: the state must be a Token or a 64-bit int, not "
                        f"{type(token).__name__}")
    if not encoding.token_is_no_complete(word):
        section = rule(violations.PendingCountToken.rule).section
        raise violations.PendingCountToken(
            f"pending_count({word:#018x}): the state is not the result of an arrive.noComplete or "
            f"arrive_drop.noComplete, so its pending count is undefined ({section})")
    return encoding.token_pending(word)
