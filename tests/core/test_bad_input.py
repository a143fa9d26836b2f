"""Bad input from Python gets a clear error, never a silent wrong answer: TypeError for the wrong kind
of value (bools included: True is not a count), ValueError for numbers no PTX operand can hold
(negative, wider than 32 bits for counts and parity, wider than 64 bits for words), and the right
Violation for a value PTX could pass but the manual leaves undefined. None of them changes the
barrier."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mbarrier as mb

Call = Callable[[mb.Barrier], object]


def ready(count: int = 3) -> mb.Barrier:
    b = mb.Barrier("in")
    b.init(count)
    return b


def unchanged(b: mb.Barrier, exc: type[Exception], call: Call, match: str | None = None) -> None:
    word, key = b.word, b.key()
    with pytest.raises(exc, match=match):
        call(b)
    assert (b.word, b.key()) == (word, key)


WRONG_TYPES: dict[str, Call] = {
    "init(str)": lambda b: b.init("3"),                         # type: ignore[arg-type]
    "init(float)": lambda b: b.init(3.0),                       # type: ignore[arg-type]
    "init(None)": lambda b: b.init(None),                       # type: ignore[arg-type]
    "init(bool)": lambda b: b.init(True),
    "arrive(count=str)": lambda b: b.arrive(count="1"),         # type: ignore[arg-type]
    "arrive(count=float)": lambda b: b.arrive(count=1.0),       # type: ignore[arg-type]
    "arrive(count=bool)": lambda b: b.arrive(True),
    "arrive(expect_tx=bool)": lambda b: b.arrive(expect_tx=True),
    "arrive(no_complete=1)": lambda b: b.arrive(count=1, no_complete=1),  # type: ignore[arg-type]
    "arrive_drop(no_complete=str)": lambda b: b.arrive_drop(count=1, no_complete="y"),  # type: ignore
    "expect_tx(bool)": lambda b: b.expect_tx(True),
    "complete_tx(float)": lambda b: b.complete_tx(2.0),          # type: ignore[arg-type]
    "cp_async_arrive(noinc=1)": lambda b: b.cp_async_arrive(noinc=1),  # type: ignore[arg-type]
    "test_wait(str)": lambda b: b.test_wait("tok"),              # type: ignore[arg-type]
    "test_wait(float)": lambda b: b.test_wait(1.0),              # type: ignore[arg-type]
    "test_wait(bool)": lambda b: b.test_wait(True),
    "try_wait(parity=bool)": lambda b: b.try_wait(parity=True),
    "try_wait(parity=str)": lambda b: b.try_wait(parity="0"),    # type: ignore[arg-type]
    "test_wait(token and parity)": lambda b: b.test_wait(0, parity=0),
    "test_wait()": lambda b: b.test_wait(),
    "try_wait(None, parity=None)": lambda b: b.try_wait(None, parity=None),
    "arrive(count and expect_tx)": lambda b: b.arrive(count=1, expect_tx=8),
    "arrive(expect_tx, no_complete)": lambda b: b.arrive(expect_tx=8, no_complete=True),
    "arrive(no_complete without count)": lambda b: b.arrive(no_complete=True),
    "arrive_drop(no_complete without count)": lambda b: b.arrive_drop(no_complete=True),
}


@pytest.mark.parametrize("case", WRONG_TYPES)
def test_wrong_types_raise_type_error(case: str) -> None:
    for b in (ready(), mb.Barrier("raw")):       # checked before anything else, valid object or not
        unchanged(b, TypeError, WRONG_TYPES[case])


OUT_OF_OPERAND: dict[str, Call] = {
    "init(-1)": lambda b: b.init(-1),
    "init(2^32)": lambda b: b.init(1 << 32),
    "arrive(count=-1)": lambda b: b.arrive(count=-1),
    "arrive(count=2^32)": lambda b: b.arrive(count=1 << 32),
    "arrive(expect_tx=-5)": lambda b: b.arrive(expect_tx=-5),
    "arrive_drop(count=-2)": lambda b: b.arrive_drop(count=-2),
    "expect_tx(-1)": lambda b: b.expect_tx(-1),
    "complete_tx(-1)": lambda b: b.complete_tx(-1),         # not a silent expect_tx(1)
    "complete_tx(2^40)": lambda b: b.complete_tx(1 << 40),
    "test_wait(parity=-1)": lambda b: b.test_wait(parity=-1),
    "try_wait(parity=2^32)": lambda b: b.try_wait(parity=1 << 32),
    "test_wait(-1)": lambda b: b.test_wait(-1),
    "test_wait(2^64)": lambda b: b.test_wait(1 << 64),
}


@pytest.mark.parametrize("case", OUT_OF_OPERAND)
def test_numbers_no_operand_can_hold_raise_value_error(case: str) -> None:
    unchanged(ready(), ValueError, OUT_OF_OPERAND[case])


def test_init_refusal_on_a_valid_object_checks_the_operand_first() -> None:
    unchanged(ready(), ValueError, lambda b: b.init(-1))
    unchanged(ready(), mb.InitOnValid, lambda b: b.init(5))


def test_token_from_another_barrier() -> None:
    other = ready()
    tok = other.arrive()
    unchanged(ready(), mb.WaitForeignToken, lambda b: b.test_wait(tok), match="another mbarrier object")


def test_token_from_before_inval_and_init() -> None:
    b = ready(1)
    tok = b.arrive()
    b.test_wait(tok)
    b.inval()
    b.init(1)
    unchanged(b, mb.WaitForeignToken, lambda b: b.try_wait(tok), match="invalidated and initialized")


def test_token_from_a_copy_that_ran_ahead() -> None:
    b = ready(1)
    ahead = b.copy()
    ahead.arrive()
    ahead.test_wait(parity=0)
    tok = ahead.arrive()                        # phase 1 on the copy; the original is still at 0
    unchanged(b, mb.WaitForeignToken, lambda b: b.test_wait(tok), match="has not reached")


def test_token_of_the_original_is_valid_on_its_copy() -> None:
    b = ready(2)
    tok = b.arrive()
    c = b.copy()
    c.arrive()
    assert c.test_wait(tok) and not b.test_wait(tok)


def test_bare_int_token_is_its_parity_only() -> None:
    """An int carries no provenance, as a register on the GPU: only its parity bit is read, so another
    barrier's or a stale token cannot be told apart (docs/semantics.md). Pass the Token to be checked."""
    a, b = ready(1), ready(1)
    foreign = a.arrive().word                   # parity 0
    assert b.test_wait(foreign) is False        # read as "has b's phase 0 completed?"
    old = b.arrive()
    assert b.test_wait(foreign) is True and b.test_wait(old.word) is True
    b.arrive()
    b.test_wait(parity=1)
    assert b.phase == 2
    assert b.test_wait(old.word) is False       # two phases old: undefined, undetectable from an int
    with pytest.raises(mb.WaitStaleToken):
        b.test_wait(old)                        # the Token knows its phase


@pytest.mark.parametrize(("value", "exc"), [("x", TypeError), (True, TypeError), (1.0, TypeError),
                                            (-1, ValueError), (1 << 64, ValueError)])
def test_pending_count_bad_input(value: object, exc: type[Exception]) -> None:
    with pytest.raises(exc):
        mb.pending_count(value)  # type: ignore[arg-type]


def test_barrier_name_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="name"):
        mb.Barrier(5)  # type: ignore[arg-type]
    assert mb.Barrier("n").name == "n" and mb.Barrier().name is None


@pytest.mark.parametrize(("word", "exc"), [("0x0", TypeError), (True, TypeError), (1.5, TypeError),
                                           (-1, ValueError), (1 << 64, ValueError)])
def test_from_word_bad_input(word: object, exc: type[Exception]) -> None:
    with pytest.raises(exc):
        mb.Barrier.from_word(word)  # type: ignore[arg-type]


@pytest.mark.parametrize(("call", "match"), [
    (lambda b: b.arrive(count=1, expect_tx=8), "takes no count"),
    (lambda b: b.arrive_drop(expect_tx=8, no_complete=True), "no .expect_tx.noComplete form"),
    (lambda b: b.arrive_drop(no_complete=True), "requires a count operand"),
    (lambda b: b.test_wait(0, parity=0), "exactly one"),
    (lambda b: b.cp_async_arrive(noinc="no"), "noinc must be True or False"),
])
def test_form_errors_say_what_is_wrong(call: Call, match: str) -> None:
    """Forms the PTX syntax does not have (9.7.13.15.13/.14/.15/.16) are refused with the reason."""
    unchanged(ready(), TypeError, call, match=match)


ANY_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70), st.floats(),
                      st.text(max_size=3), st.just(b"\x01"), st.just([1]), st.integers(0, 8))
OPERAND_CALLS: dict[str, Callable[[mb.Barrier, object], object]] = {
    "init": lambda b, v: b.init(v),                                      # type: ignore[arg-type]
    "arrive": lambda b, v: b.arrive(v),                                  # type: ignore[arg-type]
    "arrive_drop": lambda b, v: b.arrive_drop(v),                        # type: ignore[arg-type]
    "arrive(no_complete)": lambda b, v: b.arrive(v, no_complete=True),   # type: ignore[arg-type]
    "arrive(expect_tx=)": lambda b, v: b.arrive(expect_tx=v),            # type: ignore[arg-type]
    "expect_tx": lambda b, v: b.expect_tx(v),                            # type: ignore[arg-type]
    "complete_tx": lambda b, v: b.complete_tx(v),                        # type: ignore[arg-type]
    "test_wait(parity=)": lambda b, v: b.test_wait(parity=v),            # type: ignore[arg-type]
    "try_wait(token)": lambda b, v: b.try_wait(v),                       # type: ignore[arg-type]
}


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(sorted(OPERAND_CALLS)), ANY_VALUE, st.booleans())
def test_any_python_value_is_refused_or_a_valid_operand(op: str, value: object, initialized: bool) -> None:
    """Whatever Python value reaches an operand, the call either treats it as the PTX operand it can be
    (an int that fits: 32 bits, or 64 for a state word; None where the operand is optional) or refuses
    it: never a silent coercion."""
    b = ready(2) if initialized else mb.Barrier("raw")
    if op == "init" and initialized:
        b.inval()
    word, key = b.word, b.key()
    width = 64 if op == "try_wait(token)" else 32
    omitted = value is None and op in ("arrive", "arrive_drop", "arrive(expect_tx=)")   # the default
    fits = omitted or isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << width
    try:
        OPERAND_CALLS[op](b, value)
    except (TypeError, ValueError):
        assert not fits, (op, value)
        assert (b.word, b.key()) == (word, key)
        return
    except mb.Violation:
        assert fits, (op, value)
        assert (b.word, b.key()) == (word, key)
        return
    assert fits, f"{op}({value!r}) was accepted"


@pytest.mark.parametrize("field", ["phase", "pending", "expected", "tx", "valid", "word"])
def test_state_is_read_only(field: str) -> None:
    """README, "The Python API": `b.phase, b.pending, b.expected, b.tx, b.valid` and `b.word` are
    read-only; the state changes only through the operations, which check it."""
    b = ready()
    with pytest.raises(AttributeError):
        setattr(b, field, 0)
    with pytest.raises(AttributeError):
        b.arrive().word = 0  # type: ignore[misc]
