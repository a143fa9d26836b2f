"""Property tests: `mb.Barrier` against the independent word-level model of `word_model.py`.

On every random sequence of operations the two must agree: the 64-bit word after each operation, the
token words, wait results and pending counts (9.7.13.15.2-17). Where the word model says an operation
is undefined, Barrier must raise that rule's Violation with the catalogue's section, leave word and
key() unchanged, and say in its message which operation, which barrier and what state.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import mbarrier as mb
from mbarrier.spec.rules import rule

from .word_model import PENDING, TX, Undefined, WordModel, WordToken, get, pending_count, signed21

MAX = (1 << 20) - 1
# Deterministic (derandomize) for CI; no "explain" phase: on these long programs it takes minutes.
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    suppress_health_check=[HealthCheck.too_slow])

# Small counts make phases complete often; the rarer edges make the range rules fire.
counts = st.sampled_from([1, 1, 1, 1, 2, 2, 3, 4, 0, MAX, MAX + 1])
tx_counts = st.sampled_from([16, 16, 16, 16, 16, 32, 0, MAX, MAX + 1])
arrive_forms = st.one_of(
    st.just(("plain",)),
    st.just(("plain",)),
    st.just(("plain",)),
    st.tuples(st.just("count"), counts),
    st.tuples(st.just("count"), counts),
    st.tuples(st.just("tx"), tx_counts),
    st.tuples(st.just("nc"), counts),
)
wait_refs = st.one_of(
    st.tuples(st.just("parity"), st.sampled_from([0, 1, 0, 1, 2, 3])),
    st.tuples(st.just("token"), st.integers(0, 50)),
    st.tuples(st.just("word"), st.integers(0, 50)),
    st.just(("foreign",)),
)
#: How often each kind is drawn: arrivals and waits dominate so that many phases complete.
WEIGHTS = {"arrive": 10, "wait": 8, "expect_tx": 1, "complete_tx": 2, "cp_async": 2, "async": 2,
           "pending_count": 1, "inval": 1, "init": 1, "finish": 3}


def _build(raw: tuple[Any, ...]) -> tuple[Any, ...]:
    kind, drop, form, count, tx, wait, ref, flag, index = raw
    return {
        "arrive": ("arrive", drop, form),
        "wait": ("wait", wait, ref),
        "expect_tx": ("expect_tx", tx),
        "complete_tx": ("complete_tx", tx),
        "cp_async": ("cp_async", flag),
        "async": ("async",),
        "pending_count": ("pending_count", index),
        "inval": ("inval",),
        "init": ("init", count),
        "finish": ("finish",),
    }[kind]


# Every operand is drawn for every operation and the kind picks what it needs: a plain map, no
# flatmap, so failing examples shrink quickly.
operations = st.tuples(
    st.sampled_from([k for k, w in WEIGHTS.items() for _ in range(w)]),
    st.sampled_from([False, False, False, False, True]), arrive_forms, counts, tx_counts,
    st.sampled_from(["test_wait", "try_wait"]), wait_refs, st.booleans(), st.integers(0, 50),
).map(_build)
programs = st.tuples(st.sampled_from([1, 1, 2, 2, 3, 4]), st.lists(operations, min_size=10, max_size=60))


@dataclass
class Pair:
    """A Barrier token and the word model's view of the same token."""

    real: mb.Token
    model: WordToken


OP_NAMES = {"init": "init(", "inval": "inval(", "expect_tx": "expect_tx(", "complete_tx": "complete_tx(",
            "cp_async": "cp.async.mbarrier.arrive(", "async": "async arrive-on"}


class Harness:
    def __init__(self) -> None:
        self.b = mb.Barrier("prop")
        self.m = WordModel()
        self.tokens: list[Pair] = []
        other = mb.Barrier("other")
        other.init(2)
        self.foreign = Pair(other.arrive(), WordToken(0, 0, 0, foreign=True))

    def step(self, op: tuple[Any, ...]) -> None:
        if op[0] == "finish":
            for part in self.finish():
                self.step(part)
            return
        needs_token = op[0] == "pending_count" or op[0] == "wait" and op[2][0] in ("token", "word")
        if needs_token and not self.tokens:
            return
        before_word, before_key = self.b.word, self.b.key()
        try:
            expected = self.model_step(op)
        except Undefined as u:
            self.expect_violation(op, u.rule, before_word, before_key)
            return
        got = self.real_step(op)
        if isinstance(got, mb.Token):
            assert isinstance(expected, WordToken)
            assert got.word == expected.word, (op, hex(got.word), hex(expected.word))
            self.tokens.append(Pair(got, expected))
        else:
            assert got == expected, (op, got, expected)
        self.check_state(op)

    def finish(self) -> list[tuple[Any, ...]]:
        """The operations that complete the current phase and wait for it: many phases get done."""
        if not self.m.valid:
            return [("init", 2)]
        word = self.m.word
        pending = (-get(word, PENDING)) & PENDING[1]
        tx = -signed21(get(word, TX))
        ops: list[tuple[Any, ...]] = []
        if tx:
            ops.append(("complete_tx", tx) if tx > 0 else ("expect_tx", -tx))
        if pending:
            ops.append(("arrive", False, ("count", pending)))
        return [*ops, ("wait", "try_wait", ("parity", word >> 63))]

    # The word model's answer: a WordToken for arrives, bools for waits, ints for pending counts.
    def model_step(self, op: tuple[Any, ...]) -> object:
        m, kind = self.m, op[0]
        if kind == "init":
            return m.init(op[1])
        if kind == "inval":
            return m.inval()
        if kind == "expect_tx":
            return m.expect_tx(op[1])
        if kind == "complete_tx":
            return m.complete_tx(op[1])
        if kind == "cp_async":
            return m.cp_async_arrive(op[1])
        if kind == "async":
            return m.async_arrive()
        if kind == "arrive":
            count, tx, nc = self.form(op[2])
            return m.arrive(count, tx, nc, drop=op[1])
        if kind == "wait":
            ref = op[2]
            if ref[0] == "parity":
                return m.wait_parity(ref[1])
            if ref[0] == "foreign":
                return m.wait_token(self.foreign.model)
            pair = self.tokens[ref[1] % len(self.tokens)]
            return m.wait_token(pair.model) if ref[0] == "token" else m.wait_word(pair.real.word)
        if kind == "pending_count":
            return pending_count(self.pick(op[1]).model.word)
        raise AssertionError(op)

    def real_step(self, op: tuple[Any, ...]) -> object:
        b, kind = self.b, op[0]
        if kind == "init":
            return b.init(op[1])
        if kind == "inval":
            return b.inval()
        if kind == "expect_tx":
            return b.expect_tx(op[1])
        if kind == "complete_tx":
            return b.complete_tx(op[1])
        if kind == "cp_async":
            return b.cp_async_arrive(noinc=op[1])
        if kind == "async":
            return b.async_arrive()
        if kind == "arrive":
            count, tx, nc = self.form(op[2])
            fn = b.arrive_drop if op[1] else b.arrive
            return fn(count, expect_tx=tx, no_complete=nc)
        if kind == "wait":
            fn = getattr(b, op[1])
            ref = op[2]
            if ref[0] == "parity":
                return fn(parity=ref[1])
            if ref[0] == "foreign":
                return fn(self.foreign.real)
            pair = self.tokens[ref[1] % len(self.tokens)]
            return fn(pair.real) if ref[0] == "token" else fn(pair.real.word)
        if kind == "pending_count":
            return mb.pending_count(self.pick(op[1]).real)
        raise AssertionError(op)

    def pick(self, index: int) -> Pair:
        """A token for pending_count: an even index prefers the .noComplete ones (the valid case)."""
        no_complete = [p for p in self.tokens if p.real.no_complete]
        pool = no_complete if index % 2 == 0 and no_complete else self.tokens
        return pool[index // 2 % len(pool)]

    @staticmethod
    def form(form: tuple[Any, ...]) -> tuple[int | None, int | None, bool]:
        if form[0] == "plain":
            return None, None, False
        if form[0] == "count":
            return form[1], None, False
        if form[0] == "tx":
            return None, form[1], False
        return form[1], None, True

    def check_state(self, op: tuple[Any, ...]) -> None:
        b, m = self.b, self.m
        assert b.word == m.word, (op, hex(b.word), hex(m.word))
        assert b.valid == m.valid
        if b.valid:
            assert b.phase == m.phases
            assert b.phase & 1 == b.word >> 63
            again = mb.Barrier.from_word(b.word)
            assert again.word == b.word
            assert (again.pending, again.expected, again.tx) == (b.pending, b.expected, b.tx)
            assert b.copy().key() == b.key()

    def expect_violation(self, op: tuple[Any, ...], rule_id: str, word: int, key: tuple[object, ...]
                         ) -> None:
        cls = mb.VIOLATION_CLASSES[rule_id]
        try:
            self.real_step(op)
        except mb.Violation as v:
            assert type(v) is cls, (op, type(v).__name__, rule_id, str(v))
            assert v.rule == rule_id and v.section == rule(rule_id).section
            assert self.b.word == word and self.b.key() == key, f"{op} changed the barrier"
            self.check_message(op, str(v))
            return
        raise AssertionError(f"{op} did not raise {cls.__name__}")

    def check_message(self, op: tuple[Any, ...], message: str) -> None:
        b = self.b
        if op[0] == "pending_count":
            assert message.startswith("pending_count(")
            return
        name = op[1] if op[0] == "wait" else ("arrive_drop(" if op[0] == "arrive" and op[1] else
                                               "arrive(" if op[0] == "arrive" else OP_NAMES[op[0]])
        assert message.startswith(name), (name, message)
        assert "barrier 'prop'" in message
        if b.valid:
            assert f"at phase {b.phase} with {b.pending} pending arrival" in message, message
            assert f"expected {b.expected}" in message, message
        else:
            assert "(not a valid object)" in message, message
        assert message.endswith(")") and "(9.7.13.15" in message, message


@SETTINGS
@given(programs)
def test_barrier_agrees_with_the_word_model(program: tuple[int, list[tuple[Any, ...]]]) -> None:
    first_count, ops = program
    h = Harness()
    h.step(("init", first_count))
    for op in ops:
        h.step(op)


@settings(SETTINGS, max_examples=100)
@given(st.lists(operations, max_size=25))
def test_from_uninitialized_memory(ops: list[tuple[Any, ...]]) -> None:
    """The same agreement from raw memory, where the first operations may precede any init."""
    h = Harness()
    for op in ops:
        h.step(op)


@settings(SETTINGS, max_examples=60)
@given(programs, st.integers(0, 60))
def test_copy_has_the_same_future(program: tuple[int, list[tuple[Any, ...]]], cut: int) -> None:
    """Barrier.copy() (the checker's snapshot): after any prefix, the copy and the original answer every
    later operation alike, tokens of the original included, and keep equal key()s."""
    first_count, ops = program
    h = Harness()
    h.step(("init", first_count))
    for op in ops[:cut]:
        h.step(op)
    twin = Harness()
    twin.b, twin.m, twin.tokens, twin.foreign = h.b.copy(), copy.deepcopy(h.m), list(h.tokens), h.foreign
    assert twin.b.key() == h.b.key()
    for op in ops[cut:]:
        h.step(op)
        twin.step(op)
        assert twin.b.key() == h.b.key() and twin.b.word == h.b.word
