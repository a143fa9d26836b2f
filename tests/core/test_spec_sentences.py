"""One test per normative sentence of PTX ISA 9.7.13.15-9.7.13.15.17 that concerns the object's state.

Each docstring quotes the sentence and names its section. Sentences about addresses, address spaces,
memory ordering or PTX syntax are the simulator's and the parser's (their rules are in the catalogue
with checked_by="sim"); the examples of the manual are replayed in test_spec_examples.py.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import mbarrier as mb
from mbarrier.spec import limits

MAX = (1 << 20) - 1


def fresh(count: int = 3, name: str = "b") -> mb.Barrier:
    b = mb.Barrier(name)
    b.init(count)
    return b


def complete_phase(b: mb.Barrier) -> None:
    """All pending arrivals of the current phase (no tx outstanding), then a successful wait."""
    before = b.phase
    b.arrive(count=b.pending)
    assert b.phase == before + 1
    assert b.test_wait(parity=before & 1)


#: Every operation other than init, as a call on a barrier (9.7.13.15: "any mbarrier operation").
OPERATIONS: dict[str, Callable[[mb.Barrier], object]] = {
    "inval": lambda b: b.inval(),
    "expect_tx": lambda b: b.expect_tx(16),
    "complete_tx": lambda b: b.complete_tx(16),
    "arrive": lambda b: b.arrive(),
    "arrive(count)": lambda b: b.arrive(count=1),
    "arrive(expect_tx)": lambda b: b.arrive(expect_tx=16),
    "arrive(no_complete)": lambda b: b.arrive(count=1, no_complete=True),
    "arrive_drop": lambda b: b.arrive_drop(),
    "arrive_drop(expect_tx)": lambda b: b.arrive_drop(expect_tx=16),
    "test_wait(parity)": lambda b: b.test_wait(parity=0),
    "try_wait(parity)": lambda b: b.try_wait(parity=1),
    "test_wait(word)": lambda b: b.test_wait(0),
    "cp_async_arrive": lambda b: b.cp_async_arrive(),
    "cp_async_arrive(noinc)": lambda b: b.cp_async_arrive(noinc=True),
    "async_arrive": lambda b: b.async_arrive(),
}


# -- 9.7.13.15 -------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPERATIONS)
def test_operation_on_uninitialized_object_is_undefined(op: str) -> None:
    """9.7.13.15: "Performing any mbarrier operation except mbarrier.init on an uninitialized mbarrier
    object results in undefined behavior." """
    b = mb.Barrier("raw")
    with pytest.raises(mb.Uninitialized, match="was never initialized") as e:
        OPERATIONS[op](b)
    assert e.value.section == "9.7.13.15"
    assert not b.valid and b.word == 0


def test_init_on_initialized_object_is_undefined() -> None:
    """9.7.13.15: "Performing any non-mbarrier or mbarrier.init operations on an initialized mbarrier
    object results in undefined behavior." (the init half; ordinary accesses are the simulator's)"""
    b = fresh(3)
    b.arrive()
    before = b.key()
    with pytest.raises(mb.InitOnValid):
        b.init(3)
    assert b.key() == before


def test_arrive_does_not_wait_for_the_phase() -> None:
    """9.7.13.15: "mbarrier operations enable threads to perform useful work after the arrival at the
    mbarrier and before waiting for the mbarrier to complete." """
    b = fresh(2)
    tok = b.arrive()                     # returns at once, the phase still incomplete
    assert b.phase == 0 and not b.test_wait(tok)
    b.arrive()
    assert b.test_wait(tok)


# -- 9.7.13.15.1 -----------------------------------------------------------------------------------

def test_object_is_one_b64() -> None:
    """9.7.13.15.1: "An mbarrier object is an opaque object with the following type and alignment
    requirements: .b64, 8 bytes, .shared": the whole state fits the 64-bit word."""
    assert limits.OBJECT_SIZE * 8 == 64 and limits.OBJECT_ALIGN == 8
    b = fresh(MAX)
    b.expect_tx(MAX)
    b.arrive_drop(count=MAX - 1)       # tx-count at its maximum, expected and pending at 1
    assert 0 <= b.word < 1 << 64
    again = mb.Barrier.from_word(b.word)
    assert (again.pending, again.expected, again.tx) == (b.pending, b.expected, b.tx) == (1, 1, MAX)


# -- 9.7.13.15.2 -----------------------------------------------------------------------------------

def test_object_keeps_phase_pending_expected_and_tx() -> None:
    """9.7.13.15.2: "An opaque mbarrier object keeps track of the following information: Current
    phase ..., Count of pending arrivals for the current phase ..., Count of expected arrivals for the
    next phase ..., Count of pending asynchronous memory operations (or transactions) ... tx-count." """
    b = fresh(5)
    b.arrive_drop(count=2)   # expected for the next phase 3, pending 3 now
    b.expect_tx(40)
    assert (b.phase, b.pending, b.expected, b.tx) == (0, 3, 3, 40)
    b.arrive()
    assert (b.phase, b.pending, b.expected, b.tx) == (0, 2, 3, 40)


def test_phase_is_defined_by_the_expected_number_of_arrive_ons() -> None:
    """9.7.13.15.2: "An mbarrier object progresses through a sequence of phases where each phase is
    defined by threads performing an expected number of arrive-on operations." """
    b = fresh(3)
    for phase in range(3):
        for _ in range(2):
            b.arrive()
        assert b.phase == phase
        b.arrive()
        assert b.phase == phase + 1
        assert b.test_wait(parity=phase & 1)


def test_expected_count_range() -> None:
    """9.7.13.15.2: "Expected arrival count | 1 | 2^20 - 1" """
    assert fresh(1).expected == 1 and fresh(MAX).expected == MAX
    with pytest.raises(mb.InitCountRange):
        mb.Barrier().init(0)
    with pytest.raises(mb.InitCountRange):
        mb.Barrier().init(MAX + 1)
    with pytest.raises(mb.ExpectedUnderflow) as e:
        fresh(2).arrive_drop(count=2)    # would leave expected 0
    assert e.value.section == "9.7.13.15.2"


def test_pending_count_range() -> None:
    """9.7.13.15.2: "Pending arrival count | 0 | 2^20 - 1" """
    b = fresh(1)
    b.expect_tx(8)
    b.arrive()
    assert b.pending == 0 and b.phase == 0      # 0 is reachable: the phase waits for its bytes
    with pytest.raises(mb.PendingUnderflow):
        b.arrive()
    top = fresh(MAX)
    assert top.pending == MAX
    with pytest.raises(mb.PendingOverflow):
        top.cp_async_arrive()


def test_tx_count_range() -> None:
    """9.7.13.15.2: "tx-count | -(2^20 - 1) | 2^20 - 1" """
    b = fresh(1)
    b.expect_tx(MAX)
    assert b.tx == MAX
    with pytest.raises(mb.TxCountRange):
        b.expect_tx(1)
    b.complete_tx(2 * MAX)
    assert b.tx == -MAX
    with pytest.raises(mb.TxCountRange):
        b.complete_tx(1)


# -- 9.7.13.15.3 -----------------------------------------------------------------------------------

def test_object_must_be_initialized_prior_to_use() -> None:
    """9.7.13.15.3: "The mbarrier object must be initialized prior to use." """
    b = mb.Barrier()
    assert not b.valid
    with pytest.raises(mb.Uninitialized):
        b.arrive()
    b.init(1)
    assert b.valid and b.arrive().word >> 63 == 0


def test_object_may_perform_a_sequence_of_synchronizations() -> None:
    """9.7.13.15.3: "An mbarrier object may be used to perform a sequence of such synchronizations." """
    b = fresh(2)
    for _ in range(10):
        complete_phase(b)
    assert b.phase == 10 and b.pending == 2


def test_object_must_be_invalidated_to_repurpose_its_memory() -> None:
    """9.7.13.15.3: "An mbarrier object must be invalidated to repurpose its memory for any purpose,
    including repurposing it for another mbarrier object." """
    b = fresh(2)
    with pytest.raises(mb.InitOnValid):
        b.init(5)
    b.inval()
    b.init(5)
    assert (b.phase, b.pending, b.expected) == (0, 5, 5)


# -- 9.7.13.15.4 -----------------------------------------------------------------------------------

def test_phase_counts_the_synchronizations() -> None:
    """9.7.13.15.4: "The phase of an mbarrier object is the number of times the mbarrier object has been
    used to synchronize threads and asynchronous operations." """
    b = fresh(1)
    for k in range(6):
        assert b.phase == k
        if k % 2:
            b.arrive(expect_tx=4)       # a synchronization with an asynchronous operation
            b.complete_tx(4)
        else:
            b.arrive()
        b.try_wait(parity=k & 1)
    assert b.phase == 6


def test_threads_arrive_to_complete_and_wait_to_check_the_current_phase() -> None:
    """9.7.13.15.4: "In each phase {0, 1, 2, ...}, threads perform in program order: arrive-on operations
    to complete the current phase and test_wait / try_wait operations to check for the completion of
    the current phase." """
    b = fresh(2)
    t0 = b.arrive()
    assert not b.test_wait(t0) and not b.try_wait(t0)
    t1 = b.arrive()
    assert b.test_wait(t0) and b.try_wait(t1)


def test_object_is_reinitialized_on_phase_completion() -> None:
    """9.7.13.15.4: "An mbarrier object is automatically reinitialized upon completion of the current
    phase for immediate use in the next phase." """
    b = fresh(3)
    b.arrive(expect_tx=10)
    b.arrive(count=2)
    b.complete_tx(10)
    assert (b.phase, b.pending, b.expected, b.tx) == (1, 3, 3, 0)
    b.test_wait(parity=0)
    b.arrive()                           # immediately usable
    assert b.pending == 2


def test_current_phase_incomplete_prior_phases_complete() -> None:
    """9.7.13.15.4: "The current phase is incomplete and all prior phases are complete." """
    b = fresh(1)
    t0 = b.arrive(expect_tx=1)
    assert not b.test_wait(t0) and not b.test_wait(parity=0)
    b.complete_tx(1)
    assert b.test_wait(t0) and b.test_wait(parity=0) and not b.test_wait(parity=1)


def test_each_phase_needs_a_successful_wait_before_the_next_arrive_on() -> None:
    """9.7.13.15.4: "For each phase of the mbarrier object, at least one test_wait or try_wait operation
    must be performed which returns True for waitComplete before an arrive-on operation in the
    subsequent phase." """
    b = fresh(1, "x")
    b.arrive()
    before = b.key()
    with pytest.raises(mb.PhaseNotWaited) as e:
        b.arrive()
    assert b.key() == before
    assert str(e.value) == ("arrive() on barrier 'x' at phase 1 with 1 pending arrival, expected 1: no "
                            "test_wait/try_wait returned True for phase 0 before this arrive-on in "
                            "phase 1 (9.7.13.15.4)")
    assert b.test_wait(parity=0)
    b.arrive()
    assert b.phase == 2


def test_a_wait_that_returns_false_does_not_count() -> None:
    """9.7.13.15.4: the wait must be one "which returns True for waitComplete"."""
    b = fresh(1)
    b.arrive()
    assert not b.test_wait(parity=1)     # phase 1 itself: incomplete, False
    with pytest.raises(mb.PhaseNotWaited):
        b.arrive()


@pytest.mark.parametrize("arrive_on", ["arrive", "arrive_drop", "arrive(expect_tx)", "async_arrive"])
def test_every_kind_of_arrive_on_needs_the_wait(arrive_on: str) -> None:
    """9.7.13.15.4 with 9.7.13.15.7: arrive, arrive_drop, their .expect_tx forms and the asynchronous
    arrive-on of cp.async.mbarrier.arrive are all arrive-on operations."""
    b = fresh(2)
    b.arrive(count=2)
    with pytest.raises(mb.PhaseNotWaited):
        OPERATIONS[arrive_on](b)


@pytest.mark.parametrize("op", ["expect_tx", "complete_tx", "cp_async_arrive", "cp_async_arrive(noinc)"])
def test_operations_that_are_not_arrive_ons_need_no_wait(op: str) -> None:
    """9.7.13.15.4: the rule is about arrive-on operations; expect-tx, complete-tx and the immediate
    pending increment of cp.async.mbarrier.arrive are not arrive-ons."""
    b = fresh(1)
    b.arrive()
    OPERATIONS[op](b)
    assert b.phase == 1


# -- 9.7.13.15.5 -----------------------------------------------------------------------------------

def test_tx_count_tracks_outstanding_transactions() -> None:
    """9.7.13.15.5: "tx-count tracks the number of asynchronous transactions, in units specified by the
    asynchronous memory operation, that are outstanding and yet to be complete." """
    b = fresh(1)
    b.arrive(expect_tx=3 * 128)
    for left in (256, 128):
        b.complete_tx(128)
        assert b.tx == left and b.phase == 0
    b.complete_tx(128)
    assert b.phase == 1


def test_tx_count_set_to_the_total_and_each_completion_progresses() -> None:
    """9.7.13.15.5: "The tx-count of an mbarrier object must be set to the total amount of asynchronous
    memory operations ... to be tracked by the current phase. Upon completion of each of the
    asynchronous operations, the complete-tx operation will be performed on the mbarrier object and
    thus progress the mbarrier towards the completion of the current phase." """
    b = fresh(2)
    b.expect_tx(100)
    b.expect_tx(28)          # the total: two copies
    b.arrive(count=2)
    b.complete_tx(100)
    assert (b.phase, b.tx) == (0, 28)
    b.complete_tx(28)
    assert b.phase == 1


def test_expect_tx_increases_the_tx_count() -> None:
    """9.7.13.15.5.1: "The expect-tx operation, with an expectCount argument, increases the tx-count of
    an mbarrier object by the value specified by expectCount." """
    b = fresh(1)
    b.expect_tx(7)
    b.expect_tx(0)
    b.expect_tx(5)
    assert b.tx == 12 and b.pending == 1


def test_complete_tx_decrements_and_may_complete() -> None:
    """9.7.13.15.5.2: "tx-count is decremented by completeCount." "If the current phase has been
    completed then the mbarrier transitions to the next phase." """
    b = fresh(1)
    b.arrive(expect_tx=64)
    b.complete_tx(14)
    assert (b.tx, b.phase) == (50, 0)
    b.complete_tx(50)
    assert (b.tx, b.phase, b.pending) == (0, 1, 1)


# -- 9.7.13.15.6 -----------------------------------------------------------------------------------

def test_completion_needs_pending_zero_and_tx_zero() -> None:
    """9.7.13.15.6: "An mbarrier object completes the current phase when all of the following conditions
    are met: The count of the pending arrivals has reached zero. The tx-count has reached zero." """
    b = fresh(1)
    b.expect_tx(32)
    b.arrive()
    assert (b.pending, b.tx, b.phase) == (0, 32, 0)       # pending zero alone: not complete
    b.complete_tx(32)
    assert b.phase == 1
    b.test_wait(parity=0)
    c = fresh(2)
    c.complete_tx(16)
    c.arrive(count=2)
    assert (c.pending, c.tx, c.phase) == (0, -16, 0)      # tx-count must be exactly zero
    c.expect_tx(16)
    assert c.phase == 1


def test_phase_transition_is_atomic() -> None:
    """9.7.13.15.6: "When an mbarrier object completes the current phase, the following actions are
    performed atomically: The mbarrier object transitions to the next phase. The pending arrival count
    is reinitialized to the expected arrival count." """
    b = fresh(4)
    b.arrive(count=3)
    tok = b.arrive()                   # the completing arrive: its token still shows phase 0
    assert tok.parity == 0
    assert (b.phase, b.pending) == (1, 4)   # no state with pending 0 is ever visible


# -- 9.7.13.15.7 -----------------------------------------------------------------------------------

def test_arrive_on_decrements_pending_by_count() -> None:
    """9.7.13.15.7: "the pending arrival count is decremented by count. If the count argument is not
    specified, then it defaults to 1." """
    b = fresh(10)
    b.arrive()
    assert b.pending == 9
    b.arrive(count=4)
    assert b.pending == 5
    b.arrive(1)
    assert b.pending == 4


def test_arrive_on_potentially_completes_the_phase() -> None:
    """9.7.13.15.7: "If the current phase has been completed then the mbarrier transitions to the next
    phase." """
    b = fresh(2)
    b.arrive()
    assert b.phase == 0
    b.arrive()
    assert b.phase == 1


def test_asynchronous_instruction_signals_an_arrive_on() -> None:
    """9.7.13.15.7: "Signals the arrival of the executing thread OR completion of the asynchronous
    instruction which signals the arrive-on operation initiated by the executing thread"."""
    b = fresh(2)
    b.cp_async_arrive(noinc=True)
    b.arrive()
    assert b.pending == 1
    b.async_arrive()                   # the copies completed: the arrive-on, count 1
    assert b.phase == 1


# -- 9.7.13.15.9 mbarrier.init ---------------------------------------------------------------------

def test_init_count_is_a_32_bit_unsigned_operand() -> None:
    """9.7.13.15.9: "initializes the mbarrier object ... with the unsigned 32-bit integer count." """
    with pytest.raises(ValueError, match="32-bit unsigned"):
        mb.Barrier().init(-1)
    with pytest.raises(ValueError, match="32 bits"):
        mb.Barrier().init(1 << 32)
    with pytest.raises(mb.InitCountRange):         # a u32, but out of the object's range
        mb.Barrier().init((1 << 32) - 1)


def test_init_sets_phase_expected_pending_and_tx() -> None:
    """9.7.13.15.9: "Initialization of the mbarrier object involves: Initializing the current phase to
    0. Initializing the expected arrival count to count. Initializing the pending arrival count to
    count. Initializing the tx-count to 0." (also after an inval at an odd phase with bytes pending)"""
    b = fresh(2)
    complete_phase(b)
    b.expect_tx(9)
    b.inval()
    b.init(7)
    assert (b.phase, b.expected, b.pending, b.tx) == (0, 7, 7, 0)


@pytest.mark.parametrize("count", [0, MAX + 1, (1 << 32) - 1])
def test_init_count_range(count: int) -> None:
    """9.7.13.15.9: "The valid range of values for the operand count is [1, ..., 2^20 - 1]." """
    b = mb.Barrier("r")
    with pytest.raises(mb.InitCountRange) as e:
        b.init(count)
    assert e.value.section == "9.7.13.15.9" and not b.valid


def test_init_on_valid_object_must_be_preceded_by_inval() -> None:
    """9.7.13.15.9: "The behavior of performing an mbarrier.init operation on a memory location
    containing a valid mbarrier object is undefined; invalidate the mbarrier object using
    mbarrier.inval first" """
    b = fresh(2, "m")
    with pytest.raises(mb.InitOnValid, match="invalidate it with mbarrier.inval first") as e:
        b.init(2)
    assert e.value.section == "9.7.13.15.9"
    b.inval()
    b.init(2)


# -- 9.7.13.15.10 mbarrier.inval -------------------------------------------------------------------

def test_inval_invalidates() -> None:
    """9.7.13.15.10: "mbarrier.inval invalidates the mbarrier object at the location specified by the
    address operand addr." """
    b = fresh(2)
    b.inval()
    assert not b.valid


@pytest.mark.parametrize("op", OPERATIONS)
def test_operation_on_invalidated_object_is_undefined(op: str) -> None:
    """9.7.13.15.10: "Performing any mbarrier operation except mbarrier.init on a memory location that
    does not contain a valid mbarrier object, results in undefined behaviour." """
    b = fresh(2)
    b.inval()
    before = (b.word, b.key())
    with pytest.raises(mb.Uninitialized, match="was invalidated"):
        OPERATIONS[op](b)
    assert (b.word, b.key()) == before


# -- 9.7.13.15.11 / .12 -----------------------------------------------------------------------------

def test_expect_tx_count_is_a_32_bit_unsigned_operand() -> None:
    """9.7.13.15.11: "The 32-bit unsigned integer operand txCount specifies the expectCount argument to
    the expect-tx operation." A u32 beyond the tx-count range is undefined, not wrapped."""
    b = fresh(1)
    with pytest.raises(ValueError):
        b.expect_tx(1 << 32)
    with pytest.raises(mb.TxCountRange):
        b.expect_tx((1 << 32) - 1)
    assert b.tx == 0


def test_complete_tx_only_simulates_a_completion() -> None:
    """9.7.13.15.12: "mbarrier.complete_tx does not involve any asynchronous memory operations and only
    simulates the completion of an asynchronous memory operation and its side effect of signaling to
    the mbarrier object." """
    b = fresh(1)
    b.arrive(expect_tx=8)
    b.complete_tx(8)
    assert b.phase == 1 and b.tx == 0


# -- 9.7.13.15.13 mbarrier.arrive ------------------------------------------------------------------

def test_expect_tx_part_comes_before_the_arrive_on() -> None:
    """9.7.13.15.13: "The optional qualifier .expect_tx specifies that an expect-tx operation is
    performed prior to the arrive-on operation." The arrive-on then sees the raised tx-count."""
    b = fresh(1)
    b.complete_tx(64)                  # the bytes landed first: tx-count -64
    b.arrive(expect_tx=64)             # expect-tx brings it to 0, then the arrive-on completes
    assert b.phase == 1
    c = fresh(1)
    c.arrive(expect_tx=64)             # here the arrive-on leaves the phase waiting for the bytes
    assert (c.phase, c.pending, c.tx) == (0, 0, 64)


def test_expect_tx_form_arrives_with_count_one() -> None:
    """9.7.13.15.13: "When both qualifiers .arrive and .expect_tx are specified, then the count argument
    of the arrive-on operation is assumed to be 1." """
    b = fresh(3)
    b.arrive(expect_tx=10)
    assert b.pending == 2
    with pytest.raises(TypeError, match="count 1"):
        b.arrive(count=2, expect_tx=10)


def test_no_complete_must_not_complete_the_phase() -> None:
    """9.7.13.15.13: "A mbarrier.arrive operation with .noComplete qualifier must not cause the mbarrier
    to complete its current phase, otherwise the behavior is undefined." """
    b = fresh(3, "nc")
    b.arrive(count=2, no_complete=True)          # not the last arrival: fine
    before = b.key()
    with pytest.raises(mb.NoCompleteCompletes) as e:
        b.arrive(count=1, no_complete=True)
    assert b.key() == before and e.value.section == "9.7.13.15.13"
    c = fresh(1)
    c.expect_tx(4)
    c.arrive(count=1, no_complete=True)          # the bytes are outstanding: it does not complete
    assert c.phase == 0


@pytest.mark.parametrize("count", [0, MAX + 1])
@pytest.mark.parametrize("method", ["arrive", "arrive_drop"])
def test_arrive_count_range(method: str, count: int) -> None:
    """9.7.13.15.13/.14: "The value of the operand count must be in the range as specified in Contents
    of the mbarrier object." (docs/semantics.md: the arrival count range is [1, 2^20 - 1])"""
    b = fresh(MAX)
    with pytest.raises(mb.ArriveCountRange):
        getattr(b, method)(count=count)
    getattr(b, method)(count=MAX - 1)


def test_state_captures_the_phase_before_the_arrive_on() -> None:
    """9.7.13.15.13: "mbarrier.arrive operation on an mbarrier object located in .shared::cta returns an
    opaque 64-bit register capturing the phase of the mbarrier object prior to the arrive-on
    operation in the destination operand state." (also when that arrive-on completes the phase)"""
    b = fresh(2)
    assert b.arrive().parity == 0
    assert b.arrive().parity == 0 and b.phase == 1
    b.test_wait(parity=0)
    t = b.arrive()
    assert (t.parity, t.phase) == (1, 1)


def test_state_contents_are_the_upper_word_before_the_arrive() -> None:
    """9.7.13.15.13: "Contents of the state operand are implementation specific." On sm_90
    (docs/semantics.md, 5): the object's upper 32 bits before the arrive, low bits zero but bit 0 for
    .noComplete."""
    b = fresh(32)
    before = b.word
    t = b.arrive()
    assert t.word == before & ~((1 << 32) - 1)
    assert b.word == 0x7FFF0800001FFFC0        # init(32), one arrive: record enc-arrive1-32
    before = b.word
    n = b.arrive(count=3, no_complete=True)
    assert n.word == (before & ~((1 << 32) - 1)) | 1


# -- 9.7.13.15.14 mbarrier.arrive_drop -------------------------------------------------------------

def test_arrive_drop_decrements_expected_then_arrives() -> None:
    """9.7.13.15.14: "Decrements the expected arrival count of the mbarrier object by the value specified
    by the 32-bit integer operand count. If count operand is not specified, it defaults to 1. Performs
    an arrive-on operation on the mbarrier object. The operand count specifies the count argument to
    the arrive-on operation." """
    b = fresh(6)
    b.arrive_drop()
    assert (b.expected, b.pending) == (5, 5)
    b.arrive_drop(count=3)
    assert (b.expected, b.pending) == (2, 2)


def test_arrive_drop_decrement_lasts_for_all_later_phases() -> None:
    """9.7.13.15.14: "The decrement done in the expected arrivals count of the mbarrier object will be
    for all the subsequent phases of the mbarrier object." """
    b = fresh(4)
    b.arrive_drop()
    b.arrive(count=3)
    assert b.test_wait(parity=0)
    for _ in range(3):
        assert (b.pending, b.expected) == (3, 3)
        complete_phase(b)


def test_arrive_drop_expect_tx_comes_first_and_counts_one() -> None:
    """9.7.13.15.14: ".expect_tx specifies that an expect-tx operation is performed prior to the
    arrive_drop operation, i.e. the decrement of arrival count and arrive-on operation. ... When both
    qualifiers .arrive_drop and .expect_tx are specified, then the count argument of the arrive-on
    operation is assumed to be 1." """
    b = fresh(3)
    b.complete_tx(20)
    b.arrive(count=2)
    b.arrive_drop(expect_tx=20)       # expect-tx to 0, expected 3 -> 2, arrive-on 1: completes
    assert (b.phase, b.expected, b.pending, b.tx) == (1, 2, 2, 0)


def test_arrive_drop_no_complete_must_not_complete() -> None:
    """9.7.13.15.14: "A mbarrier.arrive_drop with .noComplete qualifier must not complete the mbarrier,
    otherwise the behavior is undefined." """
    b = fresh(4)
    b.arrive_drop(count=1, no_complete=True)     # not the last arrival: fine
    b.arrive(count=2)
    with pytest.raises(mb.NoCompleteCompletes):
        b.arrive_drop(count=1, no_complete=True)
    assert (b.expected, b.pending, b.phase) == (3, 1, 0)


def test_a_thread_can_drop_itself_out() -> None:
    """9.7.13.15.14: "A thread that wants to either exit or opt out of participating in the arrive-on
    operation can use mbarrier.arrive_drop to drop itself from the mbarrier." """
    b = fresh(3)
    b.arrive_drop()                   # this thread exits
    b.arrive(count=2)
    b.test_wait(parity=0)
    b.arrive(count=2)                 # the two that stayed complete every later phase alone
    assert b.phase == 2


def test_arrive_drop_state_captures_the_phase_before() -> None:
    """9.7.13.15.14: "returns an opaque 64-bit register capturing the phase of the mbarrier object prior
    to the arrive-on operation in the destination operand state." """
    b = fresh(2)
    b.arrive()
    t = b.arrive_drop()
    assert t.parity == 0 and b.phase == 1 and b.test_wait(t)


# -- 9.7.13.15.15 cp.async.mbarrier.arrive ---------------------------------------------------------

def test_cp_async_arrive_is_asynchronous() -> None:
    """9.7.13.15.15: "Causes an arrive-on operation to be triggered by the system on the mbarrier object
    upon the completion of all prior cp.async operations initiated by the executing thread. ... The
    arrive-on operation is asynchronous to execution of cp.async.mbarrier.arrive." """
    b = fresh(1)
    b.cp_async_arrive(noinc=True)
    assert (b.phase, b.pending) == (0, 1)      # nothing arrived yet
    b.async_arrive()
    assert b.phase == 1


def test_cp_async_arrive_increments_pending_first() -> None:
    """9.7.13.15.15: "When .noinc modifier is not specified, the pending count of the mbarrier object is
    incremented by 1 prior to the asynchronous arrive-on operation. This results in a zero-net change
    for the pending count from the asynchronous arrive-on operation during the current phase." """
    b = fresh(2)
    b.cp_async_arrive()
    assert b.pending == 3
    b.arrive()
    b.arrive()
    assert (b.phase, b.pending) == (0, 1)      # the copies hold the phase open
    b.async_arrive()
    assert b.phase == 1


def test_cp_async_arrive_pending_must_stay_in_range() -> None:
    """9.7.13.15.15: "The pending count of the mbarrier object after the increment should not exceed
    the limit as mentioned in Contents of the mbarrier object. Otherwise, the behavior is undefined." """
    b = fresh(MAX - 1)
    b.cp_async_arrive()
    assert b.pending == MAX
    with pytest.raises(mb.PendingOverflow) as e:
        b.cp_async_arrive()
    assert b.pending == MAX and e.value.section == "9.7.13.15.15"


def test_cp_async_arrive_noinc_must_be_accounted_in_init() -> None:
    """9.7.13.15.15: "When the .noinc modifier is specified, the increment to the pending count of the
    mbarrier object is not performed. Hence the decrement of the pending count done by the asynchronous
    arrive-on operation must be accounted for in the initialization of the mbarrier object." """
    good = fresh(2)                     # accounts for the thread's arrive and the copies' arrive-on
    good.cp_async_arrive(noinc=True)
    assert good.pending == 2
    good.arrive()
    assert good.phase == 0              # the copies hold the phase open
    good.async_arrive()
    assert good.phase == 1
    bad = fresh(1)                      # accounts for the thread's arrive only
    bad.cp_async_arrive(noinc=True)
    bad.arrive()                        # completes phase 0 before the copies did
    assert bad.phase == 1
    with pytest.raises(mb.PhaseNotWaited):
        bad.async_arrive()              # the copies' arrive-on lands in phase 1, unwaited


# -- 9.7.13.15.16 test_wait / try_wait -------------------------------------------------------------

def test_waits_test_the_current_or_preceding_phase() -> None:
    """9.7.13.15.16: "The test_wait and try_wait operations test for the completion of the current or
    the immediately preceding phase of an mbarrier object" """
    b = fresh(1)
    t0 = b.arrive()
    b.try_wait(t0)
    t1 = b.arrive(expect_tx=2)
    assert b.test_wait(t0) is True           # phase 0: the immediately preceding one
    assert b.test_wait(t1) is False          # phase 1: the current one


def test_test_wait_is_non_blocking_and_changes_nothing() -> None:
    """9.7.13.15.16: "mbarrier.test_wait is a non-blocking instruction which tests for the completion of
    the phase." """
    b = fresh(2)
    t = b.arrive()
    before = b.key()
    assert b.test_wait(t) is False
    assert b.key() == before


def test_try_wait_answers_as_test_wait() -> None:
    """9.7.13.15.16: "mbarrier.try_wait is a potentially blocking instruction which tests for the
    completion of the phase. If the phase is not complete, the executing thread may be suspended."
    The suspension only costs time: the answer is test_wait's (the checker models the loop)."""
    b = fresh(2)
    t = b.arrive()
    assert b.try_wait(t) is b.test_wait(t) is False
    assert b.try_wait(parity=0) is False
    b.arrive()
    assert b.try_wait(t) is b.test_wait(t) is True


def test_state_operand_must_come_from_the_same_object() -> None:
    """9.7.13.15.16: "Specified by the 64-bit unsigned integer operand state, which was returned by an
    mbarrier.arrive instruction on the same mbarrier object during the current or the immediately
    preceding phase." (another object; the same memory after inval + init; two phases back)"""
    a, b = fresh(2, "a"), fresh(2, "b")
    with pytest.raises(mb.WaitForeignToken, match="another mbarrier object"):
        b.test_wait(a.arrive())
    t = b.arrive()
    b.arrive()
    b.test_wait(t)
    b.arrive(count=2)
    before = b.key()
    with pytest.raises(mb.WaitStaleToken, match="from phase 0, older than the immediately preceding"):
        b.test_wait(t)
    assert b.key() == before
    b.inval()
    b.init(2)
    with pytest.raises(mb.WaitForeignToken, match="invalidated and initialized again"):
        b.try_wait(t)


def test_parity_names_the_current_or_preceding_phase() -> None:
    """9.7.13.15.16: "Indicated by the 32-bit unsigned integer operand phaseParity, which is the integer
    parity of either the current phase or the immediately preceding phase of the mbarrier object."
    "An even phase has integer parity 0 and an odd phase has integer parity of 1." """
    b = fresh(1)
    for phase in range(4):
        assert b.test_wait(parity=phase & 1) is False           # the current phase
        assert b.test_wait(parity=1 - (phase & 1)) is True      # the preceding one
        b.arrive()


@pytest.mark.parametrize("parity", [2, 3, (1 << 32) - 1])
def test_parity_values_are_0_and_1(parity: int) -> None:
    """9.7.13.15.16: "So the valid values of phaseParity operand are 0 and 1." """
    b = fresh(1)
    with pytest.raises(mb.WaitParityValue) as e:
        b.try_wait(parity=parity)
    assert e.value.section == "9.7.13.15.16"


def test_waits_are_valid_for_two_phases_only() -> None:
    """9.7.13.15.16: "The test_wait and try_wait operations are valid only for: the current incomplete
    phase, for which waitComplete returns False. the immediately preceding phase, for which
    waitComplete returns True." """
    b = fresh(1)
    t0 = b.arrive(expect_tx=1)
    assert b.test_wait(t0) is False
    b.complete_tx(1)
    assert b.test_wait(t0) is True
    b.arrive()
    with pytest.raises(mb.WaitStaleToken):
        b.test_wait(t0)


def test_parity_waits_need_the_phase_tracked() -> None:
    """9.7.13.15.16: "Note: the use of the .parity variants of the instructions requires tracking the
    phase of an mbarrier object throughout its lifetime." A parity names a phase only up to two: the
    caller who lost track gets an answer about another phase (docs/semantics.md)."""
    b = fresh(1)
    for _ in range(2):
        b.arrive()
        b.test_wait(parity=(b.phase - 1) & 1)
    assert b.phase == 2
    assert b.test_wait(parity=0) is False     # meant phase 0 (complete), answered for phase 2


# -- 9.7.13.15.17 mbarrier.pending_count -----------------------------------------------------------

@pytest.mark.parametrize("method", ["arrive", "arrive_drop"])
def test_pending_count_needs_a_no_complete_state(method: str) -> None:
    """9.7.13.15.17: "The state operand is a 64-bit register that must be the result of a prior
    mbarrier.arrive.noComplete or mbarrier.arrive_drop.noComplete instruction. Otherwise, the behavior
    is undefined." """
    b = fresh(4)
    plain = getattr(b, method)()
    with pytest.raises(mb.PendingCountToken) as e:
        mb.pending_count(plain)
    assert e.value.section == "9.7.13.15.17"
    with pytest.raises(mb.PendingCountToken):
        mb.pending_count(plain.word)
    assert mb.pending_count(getattr(b, method)(count=1, no_complete=True)) == 3


def test_pending_count_is_the_count_before_the_arrive_on() -> None:
    """9.7.13.15.17: "The destination register count is a 32-bit unsigned integer representing the
    pending count of the mbarrier object prior to the arrive-on operation from which the state register
    was obtained." It works from the register alone, as on hardware."""
    b = fresh(MAX)
    t = b.arrive_drop(count=5, no_complete=True)
    assert mb.pending_count(t) == MAX and mb.pending_count(t.word) == MAX
    b.cp_async_arrive()
    assert mb.pending_count(b.arrive(count=1, no_complete=True)) == MAX - 5 + 1


def test_expect_tx_form_is_one_atomic_update() -> None:
    """9.7.13.15.13 with 9.7.13.15.6 (docs/semantics.md, 3): the expect-tx part and the arrive-on are one
    update; completion is evaluated after both, so with no arrival pending the arrive-on underflows even
    when the expect-tx part alone would bring the tx-count to zero."""
    b = fresh(1)
    b.complete_tx(8)
    b.arrive()                          # pending 0, tx-count -8: not complete
    before = b.key()
    with pytest.raises(mb.PendingUnderflow):
        b.arrive(expect_tx=8)
    assert b.key() == before
    b.expect_tx(8)                      # the plain expect-tx does complete it
    assert b.phase == 1
