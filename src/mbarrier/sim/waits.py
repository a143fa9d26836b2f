"""Why a thread is not runnable: the reasons the machine blocks or parks a thread for (`Thread.wait`).

Each reason names what releases the thread: the CTA barrier it waits at, the cluster barrier, the warp
collective (its kind and membermask), its groups of asynchronous copies, or the mbarrier it spins on
(parked: the wait's instruction, the object, and the operand it waits with). Reasons are values: two
threads waiting for the same thing have equal reasons, and the checker's state keys hold them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class AtBar:
    """At bar.sync/barrier.sync `ident` of its CTA."""

    ident: int


@dataclass(frozen=True, slots=True)
class AtCluster:
    """At barrier.cluster.wait of cluster `cluster`."""

    cluster: int


@dataclass(frozen=True, slots=True)
class InCollective:
    """In a warp collective (`kind`: "bar.warp.sync", "vote.all", ...) over the lanes of `mask`."""

    kind: str
    mask: int


@dataclass(frozen=True, slots=True)
class ForCopies:
    """At cp.async.wait_group/wait_all (`which` "cp.async") or cp.async.bulk.wait_group ("bulk"): until
    at most `pending` of its most recent groups are incomplete."""

    which: str
    pending: int


@dataclass(frozen=True, slots=True)
class OnMbarrier:
    """Parked on the mbarrier at shared offset `off` of CTA `cta` by the wait at `pc`, until the object's
    phase or validity changes. `parity` and `value` (the wait's operand) say what it waits for; they are
    left out of comparisons, which the object's state already decides."""

    pc: int
    cta: int
    off: int
    parity: bool = field(default=False, compare=False)
    value: object = field(default=0, compare=False)


Wait = AtBar | AtCluster | InCollective | ForCopies | OnMbarrier


def wants(parity: bool, value: object, word: bool = True) -> str:
    """What a wait with this operand waits for: "parity 0", the completion of the phase of an arrive's
    token (with the token's word unless `word` is False: threads waiting for one phase differ only there),
    or of a state word that no arrive of this run returned."""
    if parity:
        return f"parity {int(value) & 1}"  # type: ignore[call-overload]
    token = getattr(value, "token", None)
    if token is not None:
        which = f"token {int(value):#018x}" if word else "its arrive's token"  # type: ignore[call-overload]
        return f"the completion of phase {token.phase} ({which})"
    return f"the phase of token {int(value):#018x}"  # type: ignore[call-overload]
