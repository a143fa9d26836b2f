"""The model replays a litmus case and is compared with what the GPU recorded.

Defined behaviour must agree exactly: every state token's meaningful bits (upper 32 bits and bit 0),
every wait result, pending count, raw word and checksum, and the kernel must run to its end. A case
with `ub` must make the model raise the Violation of that rule at that op; the ops before it are
defined and compared, and what the hardware did afterwards is only documented (docs/hardware.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mbarrier.core import encoding, violations
from mbarrier.core.barrier import Barrier, pending_count
from mbarrier.core.token import Token
from mbarrier.hw.litmus import ARRIVE_OPS, WAIT_OPS, Case, Op, pattern_word

AGREE = "agree"
UNDEFINED_FLAGGED = "undefined_flagged"
DISAGREE = "disagree"

Value = int | bool
UPPER_WORD = encoding.WORD_MASK ^ 0xFFFFFFFF


@dataclass
class ModelRun:
    """What the model observes per op (one value per executing thread, in thread order)."""

    obs: dict[int, list[Value]] = field(default_factory=dict)
    violation: violations.Violation | None = None
    violation_op: int | None = None
    barriers: dict[tuple[int, int], Barrier] = field(default_factory=dict)


class _Machine:
    def __init__(self, case: Case) -> None:
        self.case = case
        self.bars = {
            (c, b): Barrier(f"cta{c}.bar{b}") for c in range(case.ctas) for b in range(case.barriers)
        }
        self.tokens: dict[tuple[int, int, str], Token] = {}
        # Asynchronous effects issued but not yet landed; `settle` performs them in issue order.
        self.pending: list[Callable[[], None]] = []
        self.copied: dict[int, set[int]] = {c: set() for c in range(case.ctas)}  # 32-bit word indices

    def _copy(self, cta: int, words: range) -> Callable[[], None]:
        return lambda: self.copied[cta].update(words)

    def run_op(self, op: Op) -> list[Value] | None:
        if op.op in ARRIVE_OPS and not op.no_complete and op.nthreads > 1:
            return self.warp_arrive(op)
        out: list[Value] = []
        for t in range(*op.threads):
            v = self.step(op, t)
            if v is not None:
                out.append(v)
        return out if op.observes else None

    def warp_arrive(self, op: Op) -> list[Value] | None:
        """Measured on sm_90: the lanes of a converged warp that execute one arrive (arrive_drop,
        .expect_tx, with or without count; not .noComplete) make a single arrive-on with the summed
        count and expect-tx, and every lane gets the same token: the state before the warp's arrival.
        """
        b = self.bars[(op.owner, op.bar)]
        fn = b.arrive if op.op == "arrive" else b.arrive_drop
        out: list[Value] = []
        lo, hi = op.threads
        for warp in range(lo // 32, (hi - 1) // 32 + 1):
            lanes = range(max(lo, 32 * warp), min(hi, 32 * warp + 32))
            if op.expect_tx is not None:
                tok = fn(expect_tx=op.expect_tx * len(lanes))
                if len(lanes) > 1:
                    fn(len(lanes) - 1)
            else:
                tok = fn((op.count or 1) * len(lanes))
            for t in lanes:
                if op.token is not None:
                    self.tokens[(op.cta, t, op.token)] = tok
                out.append(tok.word)
        return None if op.remote else out

    def step(self, op: Op, t: int) -> Value | None:
        b = self.bars[(op.owner, op.bar)]
        if op.op == "init":
            assert op.count is not None
            b.init(op.count)
        elif op.op == "inval":
            b.inval()
        elif op.op in ARRIVE_OPS:
            fn = b.arrive if op.op == "arrive" else b.arrive_drop
            tok = fn(op.count, expect_tx=op.expect_tx, no_complete=op.no_complete)
            if op.token is not None:
                self.tokens[(op.cta, t, op.token)] = tok
            return None if op.remote else tok.word
        elif op.op == "expect_tx":
            assert op.tx is not None
            b.expect_tx(op.tx)
        elif op.op == "complete_tx":
            assert op.tx is not None
            b.complete_tx(op.tx)
        elif op.op in WAIT_OPS:
            wait = b.test_wait if op.op == "test_wait" else b.try_wait
            if op.token is not None:
                return wait(self.tokens[(op.cta, t, op.token)])
            return wait(parity=op.parity)
        elif op.op == "pending_count":
            assert op.token is not None
            return pending_count(self.tokens[(op.cta, t, op.token)])
        elif op.op == "load":
            if b.valid:
                # The simulator's rule: an ordinary access to a valid object (9.7.13.15).
                raise violations.NonMbarrierAccess(
                    f"load on {b.describe()}: an ordinary ld.shared of a valid mbarrier object "
                    f"({violations.NonMbarrierAccess('').section})"
                )
            return b.word
        elif op.op == "cp_async":
            self.pending.append(self._copy(op.cta, range(op.offset // 4, op.offset // 4 + 4)))
        elif op.op == "cp_async_arrive":
            b.cp_async_arrive(noinc=op.noinc)
            self.pending.append(b.async_arrive)
        elif op.op == "bulk_copy":
            assert op.bytes is not None
            words = range(op.offset // 4, (op.offset + op.bytes) // 4)
            nbytes = op.bytes

            def land(c: int = op.owner) -> None:
                self.copied[c].update(words)
                b.complete_tx(nbytes)

            self.pending.append(land)
        elif op.op == "settle":
            if t == op.threads[0]:
                todo, self.pending = self.pending, []
                for effect in todo:
                    effect()
        elif op.op == "checksum":
            assert op.bytes is not None
            done = self.copied[op.cta]
            return (
                sum(pattern_word(i) for i in range(op.offset // 4, (op.offset + op.bytes) // 4) if i in done)
                & encoding.WORD_MASK
            )
        else:  # litmus.OP_FIELDS and the replay must list the same operations
            raise NotImplementedError(f"replay: no model for operation {op.op!r} (case {self.case.id})")
        return None


def model_run(case: Case) -> ModelRun:
    """Run the case on the model, stopping at the first Violation."""
    m = _Machine(case)
    run = ModelRun(barriers=m.bars)
    for i, op in enumerate(case.ops):
        try:
            values = m.run_op(op)
        except violations.Violation as v:
            run.violation, run.violation_op = v, i
            break
        if values is not None:
            run.obs[i] = values
    return run


# -- comparison ------------------------------------------------------------------------------------


def decode_value(op: Op, raw: object) -> Value:
    """A recorded value back to an int or bool (tokens, words and checksums are hex strings)."""
    if op.op in WAIT_OPS:
        if not isinstance(raw, bool):
            raise ValueError(f"a wait result must be true/false, got {raw!r}")
        return raw
    if isinstance(raw, str):
        return int(raw, 16)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    raise ValueError(f"unexpected recorded value {raw!r}")


def _comparable(op: Op, values: list[Value]) -> list[Value]:
    if op.op in ARRIVE_OPS:
        # A token's upper 32 bits are the object's state. Its low word is not: a plain token's is what
        # the destination register held before (measured: the count operand, the barrier's address,
        # older values); a .noComplete token's has bit 0 set (1 from one lane, 0xffffffff from a full
        # warp). Warps arrive in any order: compare multisets.
        mask = encoding.TOKEN_MEANINGFUL_MASK if op.no_complete else UPPER_WORD
        return sorted(int(v) & mask for v in values)
    if op.op == "pending_count":
        return sorted(int(v) for v in values)
    return list(values)


@dataclass(frozen=True)
class Verdict:
    case_id: str
    kind: str  # AGREE, UNDEFINED_FLAGGED or DISAGREE
    reasons: tuple[str, ...] = ()


def hw_values(case: Case, result: Mapping[str, Any], i: int) -> list[Value] | None:
    ob = result.get("obs", {}).get(str(i))
    if ob is None:
        return None
    return [decode_value(case.ops[i], v) for v in ob["values"]]


def compare(case: Case, result: Mapping[str, Any]) -> Verdict:
    """Compare one recorded hardware result with the model's replay of its case."""
    run = model_run(case)
    reasons: list[str] = []
    limit = len(case.ops) if case.ub is None else case.ub.op
    if case.ub is None:
        if run.violation is not None:
            reasons.append(
                f"the model raised {run.violation.rule} at op {run.violation_op} of a defined case: "
                f"{run.violation}"
            )
            limit = run.violation_op or 0
        if result.get("outcome") != "ok":
            reasons.append(
                f"the kernel did not run to its end on the GPU: {result.get('outcome')}: "
                f"{result.get('error')}"
            )
    else:
        if run.violation is None:
            reasons.append(f"the model raised nothing; expected {case.ub.rule} at op {case.ub.op}")
        elif run.violation_op != case.ub.op or run.violation.rule != case.ub.rule:
            reasons.append(
                f"the model raised {run.violation.rule} at op {run.violation_op}; expected "
                f"{case.ub.rule} at op {case.ub.op}"
            )
            limit = min(limit, run.violation_op or 0)
    if result.get("outcome") == "ok" or case.ub is None:
        for i in range(limit):
            if i not in run.obs:
                continue
            op = case.ops[i]
            got = hw_values(case, result, i)
            if got is None:
                if result.get("outcome") == "ok":
                    reasons.append(f"op {i} ({op.op}): no hardware observation recorded")
                continue
            want = run.obs[i]
            if _comparable(op, got) != _comparable(op, want):
                reasons.append(f"op {i} ({op.op}): GPU {show(op, got)}, model {show(op, want)}")
    if reasons:
        return Verdict(case.id, DISAGREE, tuple(reasons))
    return Verdict(case.id, AGREE if case.ub is None else UNDEFINED_FLAGGED)


def show(op: Op, values: list[Value]) -> str:
    def one(v: Value) -> str:
        if isinstance(v, bool):
            return str(v)
        if op.op in ARRIVE_OPS or op.op in ("load", "checksum"):
            return f"{int(v):#018x}"
        return str(v)

    shown = [one(v) for v in values[:4]]
    more = f", ... ({len(values)} values)" if len(values) > 4 else ""
    return "[" + ", ".join(shown) + more + "]"
