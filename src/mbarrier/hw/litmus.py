"""The litmus description: a case is data (JSON), never code.

A case runs in one thread-block cluster of `ctas` CTAs (a plain CTA when 1) with `threads` threads each
and `barriers` mbarrier objects per CTA (zeroed at kernel start). Its `ops` run in order, one step
each: the threads `threads` = [lo, hi) of CTA `cta` execute the step's operation at the same time,
then every thread of the cluster meets at a barrier (`__syncthreads`, or `barrier.cluster` in a
cluster) before the next step. Operations that return a value are observed: state tokens, wait
results, pending counts, the raw 64-bit word (read after `mbarrier.inval`), checksums of copied data,
and, for `timed` waits, nanoseconds (%globaltimer) and cycles (clock64).

A case whose `ub` is set does something the PTX ISA leaves undefined at op `ub.op`; the model must
raise the Violation of rule `ub.rule` there, and the hardware's behaviour is recorded for the docs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any

from mbarrier.spec.limits import MAX_THREADS_PER_CTA

#: Operation name -> the optional fields it accepts (besides op, cta, threads, bar).
OP_FIELDS: dict[str, frozenset[str]] = {
    "init": frozenset({"count"}),
    "inval": frozenset(),
    "arrive": frozenset({"count", "expect_tx", "no_complete", "token", "target"}),
    "arrive_drop": frozenset({"count", "expect_tx", "no_complete", "token", "target"}),
    "expect_tx": frozenset({"tx", "target"}),
    "complete_tx": frozenset({"tx", "target"}),
    "test_wait": frozenset({"token", "parity", "timed"}),
    "try_wait": frozenset({"token", "parity", "hint", "timed"}),
    # A bounded loop of try_wait until True or `ns` nanoseconds have passed (default 2 ms).
    "poll_wait": frozenset({"token", "parity", "ns"}),
    "pending_count": frozenset({"token"}),
    # An ordinary ld.shared.b64 of the object's 8 bytes.
    "load": frozenset(),
    # cp.async.ca.shared.global of 16 bytes from the pattern buffer to the shared buffer at `offset`.
    "cp_async": frozenset({"offset"}),
    "cp_async_arrive": frozenset({"noinc"}),
    # cp.async.bulk global -> shared::cluster of `bytes` at `offset`, completing bytes on the barrier.
    "bulk_copy": frozenset({"bytes", "offset", "target"}),
    # Every thread: cp.async.wait_all, then `ns` nanoseconds (default 20 us) for asynchronous
    # arrive-on and complete-tx operations to land. The model performs them here, in issue order.
    "settle": frozenset({"ns"}),
    # The sum of the 32-bit words of the shared buffer [offset, offset + bytes), mod 2^64.
    "checksum": frozenset({"bytes", "offset"}),
}

#: Operations that produce one observed value per executing thread.
VALUE_OPS = frozenset({"test_wait", "try_wait", "poll_wait", "pending_count", "load", "checksum"})
ARRIVE_OPS = frozenset({"arrive", "arrive_drop"})
WAIT_OPS = frozenset({"test_wait", "try_wait", "poll_wait"})

#: Size of the shared buffer that cp.async and cp.async.bulk write (bytes), and of the global pattern.
SHARED_BUFFER_BYTES = 16384
CLUSTER_SIZES = (1, 2, 4)


def pattern_word(i: int) -> int:
    """The 32-bit word i of the global source buffer that copies read (host fills it)."""
    return (i * 2654435761 + 12345) & 0xFFFFFFFF


def pattern_checksum(offset: int, nbytes: int) -> int:
    """What `checksum` observes after [offset, offset + nbytes) was copied from the same offset."""
    return sum(pattern_word(i) for i in range(offset // 4, (offset + nbytes) // 4)) & ((1 << 64) - 1)


class CaseError(ValueError):
    """A malformed litmus description; the message names the case and the op."""


@dataclass(frozen=True, slots=True)
class Op:
    op: str
    cta: int = 0
    threads: tuple[int, int] = (0, 1)
    bar: int = 0
    target: int | None = None
    count: int | None = None
    expect_tx: int | None = None
    no_complete: bool = False
    tx: int | None = None
    token: str | None = None
    parity: int | None = None
    hint: int | None = None
    timed: bool = False
    ns: int | None = None
    noinc: bool = False
    bytes: int | None = None
    offset: int = 0

    @property
    def owner(self) -> int:
        """The CTA whose barrier (or shared buffer) the operation touches."""
        return self.cta if self.target is None else self.target

    @property
    def remote(self) -> bool:
        """Whether the operation goes through a shared::cluster address (mapa), even to its own CTA."""
        return self.target is not None

    @property
    def nthreads(self) -> int:
        return self.threads[1] - self.threads[0]

    @property
    def observes(self) -> bool:
        """Whether each executing thread produces a value (a token for a local arrive)."""
        return self.op in VALUE_OPS or (self.op in ARRIVE_OPS and not self.remote)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op}
        for f in fields(self)[1:]:
            value = getattr(self, f.name)
            if value != f.default:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True, slots=True)
class Ub:
    rule: str
    op: int


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    group: str
    title: str
    ops: tuple[Op, ...]
    ctas: int = 1
    threads: int = 32
    barriers: int = 1
    ub: Ub | None = None
    #: Run in a process of its own: it may trap or hang.
    isolate: bool = False
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "group": self.group,
            "title": self.title,
            "ctas": self.ctas,
            "threads": self.threads,
            "barriers": self.barriers,
        }
        if self.ub is not None:
            out["ub"] = {"rule": self.ub.rule, "op": self.ub.op}
        if self.isolate:
            out["isolate"] = True
        if self.notes:
            out["notes"] = self.notes
        out["ops"] = [op.to_dict() for op in self.ops]
        return out


_CASE_KEYS = frozenset(
    {"id", "group", "title", "ctas", "threads", "barriers", "ub", "isolate", "notes", "ops"}
)
_OP_COMMON = frozenset({"op", "cta", "thread", "threads", "bar"})


def _int(where: str, name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise CaseError(f"{where}: {name} must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def op_from_dict(d: Mapping[str, Any], where: str, case: Case | None = None) -> Op:
    name = d.get("op")
    if name not in OP_FIELDS:
        raise CaseError(f"{where}: unknown operation {name!r}; known: {', '.join(sorted(OP_FIELDS))}")
    extra = set(d) - _OP_COMMON - OP_FIELDS[name]
    if extra:
        raise CaseError(f"{where}: {name} takes no field(s) {', '.join(sorted(extra))}")
    kw: dict[str, Any] = {}
    if "thread" in d and "threads" in d:
        raise CaseError(f"{where}: give either thread or threads, not both")
    if "thread" in d:
        t = _int(where, "thread", d["thread"], 0, MAX_THREADS_PER_CTA - 1)
        kw["threads"] = (t, t + 1)
    elif "threads" in d:
        span = d["threads"]
        if not isinstance(span, list | tuple) or len(span) != 2:
            raise CaseError(f"{where}: threads must be [lo, hi], got {span!r}")
        lo = _int(where, "threads[0]", span[0], 0, MAX_THREADS_PER_CTA - 1)
        hi = _int(where, "threads[1]", span[1], lo + 1, MAX_THREADS_PER_CTA)
        kw["threads"] = (lo, hi)
    u32 = (1 << 32) - 1
    for key in ("cta", "bar", "target"):
        if key in d:
            kw[key] = _int(where, key, d[key], 0, 3)
    for key in ("count", "expect_tx", "tx", "hint", "ns", "parity"):
        if key in d:
            kw[key] = _int(where, key, d[key], 0, u32)
    for key in ("bytes", "offset"):
        if key in d:
            kw[key] = _int(where, key, d[key], 0, SHARED_BUFFER_BYTES)
    for key in ("no_complete", "timed", "noinc"):
        if key in d:
            if not isinstance(d[key], bool):
                raise CaseError(f"{where}: {key} must be true or false")
            kw[key] = d[key]
    if "token" in d:
        if not isinstance(d["token"], str) or not d["token"].isidentifier():
            raise CaseError(f"{where}: token must be an identifier, got {d['token']!r}")
        kw["token"] = d["token"]
    op = Op(op=name, **kw)
    _check_op(op, where)
    return op


def _check_op(op: Op, where: str) -> None:
    if op.op in WAIT_OPS and (op.token is None) == (op.parity is None):
        raise CaseError(f"{where}: {op.op} takes exactly one of token and parity")
    if op.op == "pending_count" and op.token is None:
        raise CaseError(f"{where}: pending_count needs a token")
    if op.op in ("init", "expect_tx", "complete_tx") and (op.count if op.op == "init" else op.tx) is None:
        raise CaseError(f"{where}: {op.op} needs {'count' if op.op == 'init' else 'tx'}")
    if op.op in ARRIVE_OPS:
        if op.expect_tx is not None and (op.count is not None or op.no_complete):
            raise CaseError(f"{where}: {op.op} with expect_tx takes no count and no no_complete")
        if op.no_complete and op.count is None:
            raise CaseError(f"{where}: {op.op} with no_complete needs a count")
        if op.remote and (op.token is not None or op.no_complete):
            raise CaseError(f"{where}: a shared::cluster {op.op} returns no token and has no .noComplete")
    if op.op in ("bulk_copy", "checksum") and (op.bytes is None or op.bytes % 16 or op.offset % 16):
        raise CaseError(f"{where}: {op.op} needs bytes, with bytes and offset multiples of 16")
    if op.op in ("bulk_copy", "checksum", "cp_async") and op.offset + (op.bytes or 16) > SHARED_BUFFER_BYTES:
        raise CaseError(f"{where}: {op.op} runs past the {SHARED_BUFFER_BYTES}-byte shared buffer")


def case_from_dict(d: Mapping[str, Any]) -> Case:
    cid = d.get("id")
    if not isinstance(cid, str) or not cid:
        raise CaseError(f"a case needs a string id, got {cid!r}")
    where = f"case {cid}"
    extra = set(d) - _CASE_KEYS
    if extra:
        raise CaseError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
    for key in ("group", "title"):
        if not isinstance(d.get(key), str):
            raise CaseError(f"{where}: {key} must be a string")
    ctas = d.get("ctas", 1)
    if ctas not in CLUSTER_SIZES:
        raise CaseError(f"{where}: ctas must be one of {CLUSTER_SIZES}, got {ctas!r}")
    threads = _int(where, "threads", d.get("threads", 32), 1, MAX_THREADS_PER_CTA)
    barriers = _int(where, "barriers", d.get("barriers", 1), 1, 4)
    raw_ops = d.get("ops")
    if not isinstance(raw_ops, list) or not raw_ops:
        raise CaseError(f"{where}: ops must be a non-empty list")
    ops = tuple(op_from_dict(o, f"{where} op {i}") for i, o in enumerate(raw_ops))
    ub = None
    if d.get("ub") is not None:
        u = d["ub"]
        if not isinstance(u, Mapping) or set(u) != {"rule", "op"}:
            raise CaseError(f"{where}: ub must be {{'rule': ..., 'op': ...}}")
        ub = Ub(rule=str(u["rule"]), op=_int(where, "ub.op", u["op"], 0, len(ops) - 1))
    case = Case(
        id=cid,
        group=d["group"],
        title=d["title"],
        ops=ops,
        ctas=ctas,
        threads=threads,
        barriers=barriers,
        ub=ub,
        isolate=bool(d.get("isolate", False)),
        notes=str(d.get("notes", "")),
    )
    _check_case(case)
    return case


def _check_case(case: Case) -> None:
    defined: set[tuple[int, int, str]] = set()
    for i, op in enumerate(case.ops):
        where = f"case {case.id} op {i}"
        if op.cta >= case.ctas or op.owner >= case.ctas:
            raise CaseError(f"{where}: CTA out of range for a cluster of {case.ctas}")
        if op.threads[1] > case.threads:
            raise CaseError(f"{where}: threads {list(op.threads)} past the block of {case.threads}")
        if op.bar >= case.barriers:
            raise CaseError(f"{where}: barrier {op.bar} past the {case.barriers} per CTA")
        if op.op in ARRIVE_OPS and op.token is not None:
            defined.add((op.cta, op.threads[0], op.token))
        elif op.token is not None and (op.cta, op.threads[0], op.token) not in defined:
            raise CaseError(
                f"{where}: token {op.token!r} was not set by an earlier arrive of the same threads"
            )


def load_cases(data: Iterable[Mapping[str, Any]]) -> list[Case]:
    cases = [case_from_dict(d) for d in data]
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise CaseError(f"duplicate case id {c.id!r}")
        seen.add(c.id)
    return cases


def catalogue() -> list[Case]:
    """The shipped case catalogue (src/mbarrier/hw/data/cases.json, built by tools/make_cases.py)."""
    text = resources.files("mbarrier.hw").joinpath("data/cases.json").read_text(encoding="utf-8")
    return load_cases(json.loads(text)["cases"])


@dataclass(frozen=True, slots=True)
class Slot:
    """Where an op's observations live in the kernel's output array."""

    base: int
    width: int  # values per thread: 1, or 3 for timed waits (value, ns, cycles)


@dataclass(frozen=True, slots=True)
class Layout:
    slots: dict[int, Slot] = field(default_factory=dict)
    size: int = 0

    @property
    def done_slot(self) -> int:
        """The last slot: set when the kernel ran to its end."""
        return self.size - 1


def layout(case: Case) -> Layout:
    slots: dict[int, Slot] = {}
    n = 0
    for i, op in enumerate(case.ops):
        if op.observes:
            width = 3 if op.timed else 1
            slots[i] = Slot(n, width)
            n += width * op.nthreads
    return Layout(slots, n + 1)
