#!/usr/bin/env python3
"""Build the litmus catalogue, src/mbarrier/hw/data/cases.json, from the families below.

The JSON file is the catalogue (data); this script only saves typing: each family is a table of
parameters and one template. Run `python tools/make_cases.py` after editing; a test checks that the
committed JSON is what this script builds.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "src" / "mbarrier" / "hw" / "data" / "cases.json"

M = (1 << 20) - 1  # 2^20 - 1, the largest count of 9.7.13.15.2
COUNTS = [1, 2, 3, 32, 1000, 1 << 19, M]
TXS = [1, 2, 1000, 1 << 19, M]
HINTS = [None, 0, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000]

Op = dict[str, Any]
CASES: list[dict[str, Any]] = []


def case(cid: str, group: str, title: str, ops: list[Op], **kw: Any) -> None:
    ub = kw.pop("ub", None)
    d: dict[str, Any] = {"id": cid, "group": group, "title": title}
    d.update(kw)
    if ub is not None:
        rule, index = ub
        d["ub"] = {"rule": rule, "op": index}
        d.setdefault("isolate", True)
    d["ops"] = ops
    CASES.append(d)


def n_(v: int) -> str:
    """A count as it appears in case ids."""
    return {1 << 19: "2^19", M: "2^20-1", 1 << 20: "2^20", (1 << 20) + 1: "2^20+1"}.get(v, str(v))


def init(n: int, **kw: Any) -> Op:
    return {"op": "init", "count": n, **kw}


def arrive(**kw: Any) -> Op:
    return {"op": "arrive", **kw}


def drop(**kw: Any) -> Op:
    return {"op": "arrive_drop", **kw}


def expect(tx: int, **kw: Any) -> Op:
    return {"op": "expect_tx", "tx": tx, **kw}


def complete(tx: int, **kw: Any) -> Op:
    return {"op": "complete_tx", "tx": tx, **kw}


def test(**kw: Any) -> Op:
    return {"op": "test_wait", **kw}


def try_(**kw: Any) -> Op:
    return {"op": "try_wait", **kw}


def poll(**kw: Any) -> Op:
    return {"op": "poll_wait", **kw}


def pc(token: str, **kw: Any) -> Op:
    return {"op": "pending_count", "token": token, **kw}


def inval(**kw: Any) -> Op:
    return {"op": "inval", **kw}


def load(**kw: Any) -> Op:
    return {"op": "load", **kw}


def settle() -> Op:
    return {"op": "settle"}


END = [inval(), load()]


def encoding() -> None:
    g = "encoding"
    for n in COUNTS:
        case(f"enc-init-{n_(n)}", g, f"init({n_(n)}): the fresh object", [init(n), *END])
        ops = [init(n), arrive(token="a")]
        if n == 1:
            ops.append(test(parity=0))
        case(f"enc-arrive1-{n_(n)}", g, f"init({n_(n)}), one arrive", ops + END)
        case(
            f"enc-complete-{n_(n)}",
            g,
            f"init({n_(n)}), arrive count {n_(n)} completes phase 0",
            [init(n), arrive(count=n, token="a"), test(parity=0), test(token="a"), *END],
        )
        ops = [init(n)]
        for p in range(3):
            ops += [arrive(count=n), test(parity=p % 2)]
        case(f"enc-phase3-{n_(n)}", g, f"init({n_(n)}), three phases completed", ops + END)
        if n >= 3:
            case(
                f"enc-partial-{n_(n)}",
                g,
                f"init({n_(n)}), arrive count {n_(n)}-1",
                [init(n), arrive(count=n - 1), *END],
            )
        if n >= 2:
            case(
                f"enc-phase1-partial-{n_(n)}",
                g,
                f"init({n_(n)}), phase 0 completed, one arrive in phase 1",
                [init(n), arrive(count=n), test(parity=0), arrive(), *END],
            )
    for t in TXS:
        case(f"enc-expect-{n_(t)}", g, f"init(1), expect_tx({n_(t)})", [init(1), expect(t), *END])
        case(
            f"enc-completetx-{n_(t)}",
            g,
            f"init(1), complete_tx({n_(t)}): negative tx-count",
            [init(1), complete(t), *END],
        )
    for n in (3, 1000):
        case(
            f"enc-mixed-{n}",
            g,
            f"init({n}), expect_tx(1000), one arrive",
            [init(n), expect(1000), arrive(), *END],
        )
    case("enc-reinit", g, "init(5), inval, init(7)", [init(5), inval(), init(7), *END])
    case("enc-zero", g, "the zeroed memory before init", [load()])


def tokens() -> None:
    g = "tokens"
    for n in COUNTS[1:]:
        case(
            f"tok-nc-{n_(n)}",
            g,
            f"init({n_(n)}): arrive.noComplete(1) token and pending_count, then arrive",
            [init(n), arrive(count=1, no_complete=True, token="b"), pc("b"), arrive(token="a"), *END],
        )
    case(
        "tok-nc-seq",
        g,
        "init(1000): four .noComplete arrivals read back their pending counts",
        [
            init(1000),
            arrive(count=1, no_complete=True, token="a"),
            pc("a"),
            arrive(count=10, no_complete=True, token="b"),
            pc("b"),
            arrive(count=500, no_complete=True, token="c"),
            pc("c"),
            arrive(count=488, no_complete=True, token="d"),
            pc("d"),
            arrive(token="e"),
            test(token="e"),
            test(token="a"),
            *END,
        ],
    )
    case(
        "tok-nc-phase1",
        g,
        "init(4): a .noComplete token in phase 1",
        [
            init(4),
            arrive(count=4),
            test(parity=0),
            arrive(count=3, no_complete=True, token="b"),
            pc("b"),
            test(token="b"),
            arrive(token="c"),
            test(token="b"),
            test(token="c"),
            *END,
        ],
    )
    for t in (1000, 1 << 11, 1 << 15, 1 << 19, M):
        case(
            f"tok-tx-{n_(t)}",
            g,
            f"init(4), expect_tx({n_(t)}): does the token carry tx-count bits?",
            [
                init(4),
                expect(t),
                arrive(token="a"),
                arrive(count=1, no_complete=True, token="b"),
                pc("b"),
                *END,
            ],
        )
    for t in (1 << 11, M):
        case(
            f"tok-negtx-{n_(t)}",
            g,
            f"init(4), complete_tx({n_(t)}), arrive token",
            [init(4), complete(t), arrive(token="a"), *END],
        )
    for t in (1000, 1 << 11, 1 << 16, 1 << 19, M):
        case(
            f"tok-arrive-expect-{n_(t)}",
            g,
            f"init(2), arrive.expect_tx({n_(t)}): is the token taken before or after the expect-tx?",
            [init(2), arrive(expect_tx=t, token="a"), arrive(token="b"), *END],
        )
    for t in (1 << 11, 1 << 19):
        case(
            f"tok-drop-expect-{n_(t)}",
            g,
            f"init(3), arrive_drop.expect_tx({n_(t)}) token",
            [init(3), drop(expect_tx=t, token="a"), *END],
        )
    case(
        "tok-drop-nc",
        g,
        "init(10): arrive_drop.noComplete(3) token and pending_count",
        [init(10), drop(count=3, no_complete=True, token="a"), pc("a"), arrive(token="b"), *END],
    )
    case(
        "tok-phases",
        g,
        "init(1): tokens of phases 0, 1, 2",
        [
            init(1),
            arrive(token="a"),
            test(token="a"),
            test(parity=0),
            arrive(token="b"),
            test(token="b"),
            test(parity=1),
            arrive(token="c"),
            test(token="c"),
            *END,
        ],
    )
    case(
        "tok-threads",
        g,
        "init(4): tokens of threads in different warps",
        [
            init(4),
            arrive(thread=0, token="a"),
            arrive(thread=5, token="a"),
            arrive(thread=40, token="a"),
            test(thread=40, token="a"),
            *END,
        ],
        threads=64,
    )
    for n in (3, 1000, M):
        case(
            f"tok-ub-pc-plain-{n_(n)}",
            g,
            f"init({n_(n)}): pending_count of a plain token",
            [init(n), arrive(token="a"), pc("a"), *END],
            ub=("pending-count-token", 2),
            isolate=False,
        )
    case(
        "tok-ub-pc-expect",
        g,
        "init(3): pending_count of an arrive.expect_tx token",
        [init(3), arrive(expect_tx=1 << 15, token="a"), pc("a"), *END],
        ub=("pending-count-token", 2),
        isolate=False,
    )


def waits() -> None:
    g = "waits"
    for kind, form, state in itertools.product(
        ("test_wait", "try_wait"), ("token", "parity"), ("open", "done")
    ):
        ops = [init(2), arrive(token="a")]
        if state == "done":
            ops.append(arrive(token="b"))
        w = {"token": "a"} if form == "token" else {"parity": 0}
        ops += [{"op": kind, **w}, *END]
        case(f"wait-{kind.split('_')[0]}-{form}-{state}", g, f"{kind} by {form} on a {state} phase", ops)
    for kind in ("test_wait", "try_wait"):
        case(
            f"wait-{kind.split('_')[0]}-parity1-phase0",
            g,
            f"{kind}.parity 1 in phase 0 (no phase before)",
            [init(2), {"op": kind, "parity": 1}, {"op": kind, "parity": 0}, *END],
        )
    case(
        "wait-preceding-token",
        g,
        "init(2): a phase-0 token tested in phase 1",
        [
            init(2),
            arrive(token="a"),
            arrive(token="b"),
            test(token="a"),
            arrive(token="c"),
            test(token="a"),
            test(token="c"),
            test(parity=0),
            test(parity=1),
            *END,
        ],
    )
    for k in (2, 3, 4, 5):
        ops = [init(1)]
        for p in range(k):
            ops += [arrive(token="a"), test(parity=p % 2), test(parity=(p + 1) % 2), test(token="a")]
        case(f"wait-phases-{k}", g, f"init(1): {k} phases, parity waits both ways", ops + END)
    case(
        "wait-other-warp",
        g,
        "arrivals in warps 0 and 1, waits in warp 1 and by all 64 threads",
        [
            init(2),
            arrive(thread=0),
            arrive(thread=33),
            test(thread=63, parity=0),
            test(threads=[0, 64], parity=0),
            *END,
        ],
        threads=64,
    )
    case(
        "wait-all-open",
        g,
        "1024 threads test an open phase",
        [init(2), arrive(), test(threads=[0, 1024], parity=0), *END],
        threads=1024,
    )
    case(
        "wait-tx-open",
        g,
        "init(1), arrive.expect_tx(64): token waits while bytes are outstanding",
        [
            init(1),
            arrive(expect_tx=64, token="a"),
            test(token="a"),
            complete(32),
            test(token="a"),
            complete(32),
            test(token="a"),
            *END,
        ],
    )


def timing() -> None:
    g = "timing"
    for h in HINTS:
        w = {"parity": 0, "timed": True}
        if h is not None:
            w["hint"] = h
        name = "none" if h is None else str(h)
        case(
            f"time-try-parity-hint-{name}",
            g,
            f"try_wait.parity on an open phase, suspendTimeHint {name}: time until False",
            [init(2), arrive(), try_(**w), try_(**w), try_(**w), *END],
        )
    for h in (None, 1000, 100_000):
        w = {"token": "a", "timed": True}
        if h is not None:
            w["hint"] = h
        name = "none" if h is None else str(h)
        case(
            f"time-try-token-hint-{name}",
            g,
            f"try_wait by token on an open phase, suspendTimeHint {name}",
            [init(2), arrive(token="a"), try_(**w), try_(**w), *END],
        )
    case(
        "time-try-done",
        g,
        "try_wait and test_wait on a completed phase",
        [
            init(1),
            arrive(),
            try_(parity=0, timed=True),
            try_(parity=0, timed=True, hint=1_000_000),
            test(parity=0, timed=True),
            *END,
        ],
    )
    case(
        "time-test-open",
        g,
        "test_wait on an open phase",
        [init(2), arrive(), test(parity=0, timed=True), test(parity=0, timed=True), *END],
    )
    case(
        "time-try-warp",
        g,
        "32 threads try_wait on an open phase at once",
        [init(2), arrive(), try_(threads=[0, 32], parity=0, timed=True), *END],
    )


def arrive_counts() -> None:
    g = "arrive"
    for n, k in ((3, 2), (8, 3), (8, 8), (32, 31), (1000, 999), (1000, 1000), (M, 1 << 19), (M, M)):
        case(
            f"arr-count-{n_(n)}-{n_(k)}",
            g,
            f"init({n_(n)}), arrive count {n_(k)}",
            [init(n), arrive(count=k, token="a"), test(token="a"), test(parity=0), *END],
        )
    for n, k in ((8, 7), (1000, 999), (M, M - 1), (M, 1)):
        case(
            f"arr-nc-{n_(n)}-{k}",
            g,
            f"init({n_(n)}), arrive.noComplete({k}), then the rest",
            [
                init(n),
                arrive(count=k, no_complete=True, token="a"),
                pc("a"),
                test(token="a"),
                arrive(count=n - k, token="b"),
                test(token="a"),
                test(token="b"),
                *END,
            ],
        )
    case(
        "arr-mixed",
        g,
        "init(10): counts 3, 1, 2, noComplete 3, 1",
        [
            init(10),
            arrive(count=3, token="a"),
            arrive(token="b"),
            arrive(count=2, token="c"),
            arrive(count=3, no_complete=True, token="d"),
            pc("d"),
            arrive(token="e"),
            test(token="e"),
            *END,
        ],
    )
    case(
        "arr-two-phases",
        g,
        "init(6): count 6, then 2 + 4 in phase 1",
        [
            init(6),
            arrive(count=6),
            test(parity=0),
            arrive(count=2, token="a"),
            arrive(count=4, token="b"),
            test(parity=1),
            test(token="a"),
            *END,
        ],
    )


def arrive_drop() -> None:
    g = "drop"
    case(
        "drop-basic",
        g,
        "init(4): arrive_drop, then 3 arrivals complete phase 0",
        [init(4), drop(token="a"), arrive(count=3, token="b"), test(parity=0), test(token="a"), *END],
    )
    case(
        "drop-count",
        g,
        "init(5): arrive_drop count 2, arrive count 3",
        [init(5), drop(count=2, token="a"), arrive(count=3), test(parity=0), *END],
    )
    case(
        "drop-completes",
        g,
        "init(3): the arrive_drop completes the phase",
        [init(3), arrive(count=2), drop(token="a"), test(parity=0), test(token="a"), *END],
    )
    case(
        "drop-across",
        g,
        "init(4): one arrive_drop in each of phases 0 and 1",
        [
            init(4),
            drop(),
            arrive(count=3),
            test(parity=0),
            drop(),
            arrive(count=2),
            test(parity=1),
            arrive(count=2),
            test(parity=0),
            *END,
        ],
    )
    case(
        "drop-nc",
        g,
        "init(6): arrive_drop.noComplete(2), arrive count 4",
        [init(6), drop(count=2, no_complete=True, token="a"), pc("a"), arrive(count=4), test(parity=0), *END],
    )
    case(
        "drop-expect",
        g,
        "init(2): arrive_drop.expect_tx(64), arrive, complete_tx(64)",
        [
            init(2),
            drop(expect_tx=64, token="a"),
            arrive(token="b"),
            test(token="b"),
            complete(64),
            test(token="b"),
            *END,
        ],
    )
    case(
        "drop-phase1",
        g,
        "init(3): arrive_drop, arrive count 2, then one arrive in phase 1",
        [init(3), drop(), arrive(count=2), test(parity=0), arrive(), *END],
    )
    case(
        "drop-threads",
        g,
        "init(64): 32 threads arrive_drop, then 32 arrive",
        [
            init(64),
            drop(threads=[0, 32], token="a"),
            arrive(threads=[0, 32], token="b"),
            test(parity=0),
            *END,
        ],
    )
    case(
        "drop-large",
        g,
        "init(2^20-1): arrive_drop count 2^19, arrive the rest",
        [init(M), drop(count=1 << 19), arrive(count=M - (1 << 19)), test(parity=0), *END],
    )


def tx() -> None:
    g = "tx"
    steps = {"E": expect(100), "A": arrive(), "C": complete(100)}
    for order in itertools.permutations("EAC"):
        for pre in (False, True):
            ops = [init(2), arrive()] if pre else [init(1)]
            for s in order:
                ops += [steps[s], test(parity=0)]
            tag = "".join(order)
            case(
                f"tx-order-{tag}{'-init2' if pre else ''}",
                g,
                f"{'init(2) and one arrive' if pre else 'init(1)'}; then {', '.join(order)} "
                "(E expect_tx(100), A arrive, C complete_tx(100)), waiting after each",
                ops + END,
            )
    case(
        "tx-split",
        g,
        "init(1): expect_tx(100), arrive, complete_tx 60 + 40",
        [init(1), expect(100), arrive(), complete(60), test(parity=0), complete(40), test(parity=0), *END],
    )
    for t in (100, M):
        case(
            f"tx-negative-first-{n_(t)}",
            g,
            f"complete_tx({n_(t)}) first, then the last arrive (pending 0, tx negative), "
            f"then expect_tx({n_(t)})",
            [init(1), complete(t), arrive(), test(parity=0), expect(t), test(parity=0), *END],
        )
    case(
        "tx-negative-split",
        g,
        "init(1): complete_tx(50), expect_tx(30), arrive, expect_tx(20)",
        [init(1), complete(50), expect(30), arrive(), test(parity=0), expect(20), test(parity=0), *END],
    )
    case(
        "tx-arrive-expect",
        g,
        "init(1): arrive.expect_tx(256), then complete_tx(256)",
        [init(1), arrive(expect_tx=256, token="a"), test(token="a"), complete(256), test(token="a"), *END],
    )
    case(
        "tx-arrive-expect-0",
        g,
        "init(1): arrive.expect_tx(0) completes at once",
        [init(1), arrive(expect_tx=0, token="a"), test(token="a"), *END],
    )
    case(
        "tx-expect-0",
        g,
        "init(1): expect_tx(0), then arrive",
        [init(1), expect(0), test(parity=0), arrive(), test(parity=0), *END],
    )
    case(
        "tx-balanced-before-arrivals",
        g,
        "init(2): expect_tx(10), complete_tx(10), arrive count 2",
        [init(2), expect(10), complete(10), test(parity=0), arrive(count=2), test(parity=0), *END],
    )
    case(
        "tx-max",
        g,
        "init(1): expect_tx(2^20-1), arrive, complete_tx(2^20-1)",
        [init(1), expect(M), arrive(), test(parity=0), complete(M), test(parity=0), *END],
    )
    case(
        "tx-phases",
        g,
        "init(1): phase 0 by expect/complete, phase 1 completed by arrive.expect_tx",
        [
            init(1),
            arrive(expect_tx=128),
            complete(128),
            test(parity=0),
            complete(64),
            arrive(expect_tx=64),
            test(parity=1),
            *END,
        ],
    )
    case(
        "tx-parallel-complete",
        g,
        "init(1): expect_tx(1000), 10 threads complete_tx(100) at once, arrive",
        [
            init(1),
            expect(1000),
            complete(100, threads=[0, 10]),
            test(parity=0),
            arrive(),
            test(parity=0),
            *END,
        ],
    )
    case(
        "tx-next-phase-expect",
        g,
        "init(1): phase 0 completes, expect_tx(32) in phase 1",
        [init(1), arrive(expect_tx=64), complete(64), test(parity=0), expect(32), *END],
    )
    case(
        "tx-complete-zero",
        g,
        "init(1): complete_tx(0) and expect_tx(0) with an arrival pending",
        [init(1), complete(0), expect(0), test(parity=0), arrive(), test(parity=0), *END],
    )


def threads() -> None:
    g = "threads"
    for n in (32, 128, 1024):
        case(
            f"thr-all-{n}",
            g,
            f"{n} threads arrive on init({n})",
            [
                init(n),
                arrive(threads=[0, n], token="a"),
                test(parity=0),
                test(threads=[0, n], token="a"),
                *END,
            ],
            threads=n,
        )
    case(
        "thr-256x4",
        g,
        "256 threads arrive count 4 on init(1024)",
        [init(1024), arrive(threads=[0, 256], count=4, token="a"), test(parity=0), *END],
        threads=256,
    )
    case(
        "thr-partial-96",
        g,
        "96 threads (3 warps) arrive on init(100)",
        [init(100), arrive(threads=[0, 96], token="a"), test(parity=0), *END],
        threads=96,
    )
    case(
        "thr-nc-1024",
        g,
        "1024 threads arrive.noComplete(1) on init(2048), pending counts",
        [
            init(2048),
            arrive(threads=[0, 1024], count=1, no_complete=True, token="a"),
            pc("a", threads=[0, 1024]),
            arrive(count=1024),
            test(parity=0),
            *END,
        ],
        threads=1024,
    )
    case(
        "thr-complete-tx-1024",
        g,
        "init(1), expect_tx(4096), 1024 threads complete_tx(4), arrive",
        [
            init(1),
            expect(4096),
            complete(4, threads=[0, 1024]),
            test(parity=0),
            arrive(),
            test(parity=0),
            *END,
        ],
        threads=1024,
    )
    case(
        "thr-drop-512",
        g,
        "init(1024): 512 threads arrive_drop, 512 arrive",
        [init(1024), drop(threads=[0, 512]), arrive(threads=[512, 1024]), test(parity=0), *END],
        threads=1024,
    )
    ops = [init(64)]
    for p in range(4):
        ops += [
            arrive(threads=[0, 64], token="a"),
            test(threads=[0, 64], parity=p % 2),
            test(threads=[0, 64], token="a"),
        ]
    case("thr-phases-64", g, "64 threads, four phases, everyone waits", ops + END, threads=64)
    case(
        "thr-expect-64",
        g,
        "64 threads arrive.expect_tx(16) on init(64), one complete_tx(1024)",
        [
            init(64),
            arrive(threads=[0, 64], expect_tx=16, token="a"),
            test(parity=0),
            complete(1024),
            test(parity=0),
            *END,
        ],
        threads=64,
    )


def cluster() -> None:
    g = "cluster"
    for c in (2, 4):
        ops = [init(c)] + [arrive(cta=k, target=0) for k in range(c)] + [poll(parity=0), *END]
        case(f"cl{c}-arrive", g, f"{c} CTAs: one remote arrive each on CTA 0's barrier", ops, ctas=c)
        ops = [init(2 * c)] + [arrive(cta=k, target=0, count=2) for k in range(c)] + [poll(parity=0), *END]
        case(f"cl{c}-arrive-count", g, f"{c} CTAs: remote arrive count 2 each", ops, ctas=c)
        case(
            f"cl{c}-expect-complete",
            g,
            f"{c} CTAs: remote expect_tx, local arrive, remote complete_tx",
            [
                init(1),
                expect(256, cta=1, target=0),
                arrive(),
                test(parity=0),
                complete(256, cta=c - 1, target=0),
                poll(parity=0),
                *END,
            ],
            ctas=c,
        )
        case(
            f"cl{c}-complete-first",
            g,
            f"{c} CTAs: remote complete_tx first, local arrive, remote expect_tx",
            [
                init(1),
                complete(100, cta=c - 1, target=0),
                arrive(),
                test(parity=0),
                expect(100, cta=1, target=0),
                poll(parity=0),
                *END,
            ],
            ctas=c,
        )
        ops = [init(c)] + [arrive(cta=k, target=0, expect_tx=64) for k in range(c)]
        ops += [test(parity=0), complete(64 * c), poll(parity=0), *END]
        case(
            f"cl{c}-arrive-expect",
            g,
            f"{c} CTAs: remote arrive.expect_tx(64) each, local complete_tx",
            ops,
            ctas=c,
        )
        ops = [init(c, cta=k) for k in range(c)]
        ops += [arrive(cta=k, target=t) for k in range(c) for t in range(c)]
        ops += [poll(cta=k, parity=0) for k in range(c)] + [x | {"cta": k} for k in range(c) for x in END]
        case(f"cl{c}-all-to-all", g, f"{c} CTAs: each arrives on every CTA's barrier", ops, ctas=c)
        ops = [init(c), drop(cta=1, target=0)] + [arrive(cta=k, target=0) for k in range(c) if k != 1]
        ops += [poll(parity=0), arrive(count=c - 1), test(parity=1), *END]
        case(f"cl{c}-drop", g, f"{c} CTAs: a remote arrive_drop lowers the expected count", ops, ctas=c)
        ops = [init(32 * c)] + [arrive(cta=k, threads=[0, 32], target=0) for k in range(c)]
        ops += [poll(parity=0), *END]
        case(f"cl{c}-threads", g, f"{c} CTAs x 32 threads: remote arrivals", ops, ctas=c)
        case(
            f"cl{c}-bulk-remote",
            g,
            f"{c} CTAs: CTA {c - 1} bulk-copies into CTA 0, completing its barrier",
            [
                init(1),
                arrive(expect_tx=256),
                {"op": "bulk_copy", "cta": c - 1, "target": 0, "bytes": 256},
                settle(),
                poll(parity=0),
                {"op": "checksum", "bytes": 256},
                *END,
            ],
            ctas=c,
        )
    case(
        "cl2-self",
        g,
        "2 CTAs: arrive through a shared::cluster address of the own CTA",
        [init(2), arrive(target=0), arrive(cta=1, target=0), poll(parity=0), *END],
        ctas=2,
    )


def cp_async() -> None:
    g = "cpasync"
    cp = {"op": "cp_async"}
    cpa = {"op": "cp_async_arrive"}
    cpn = {"op": "cp_async_arrive", "noinc": True}
    csum = {"op": "checksum", "bytes": 16}
    case(
        "cpa-inc",
        g,
        "init(1): cp.async, cp.async.mbarrier.arrive (net zero), arrive",
        [init(1), cp, cpa, settle(), test(parity=0), arrive(), test(parity=0), csum, *END],
    )
    case(
        "cpa-inc-pending",
        g,
        "init(3): after cp.async.mbarrier.arrive landed, pending_count is still 3",
        [
            init(3),
            cp,
            cpa,
            settle(),
            arrive(count=1, no_complete=True, token="a"),
            pc("a"),
            arrive(count=2),
            test(parity=0),
            *END,
        ],
    )
    case(
        "cpa-noinc",
        g,
        "init(2): cp.async, .noinc arrive counts as an arrival",
        [init(2), cp, cpn, settle(), test(parity=0), arrive(), test(parity=0), csum, *END],
    )
    case(
        "cpa-noinc-pending",
        g,
        "init(3): .noinc arrive, then pending_count",
        [
            init(3),
            cp,
            cpn,
            settle(),
            arrive(count=1, no_complete=True, token="a"),
            pc("a"),
            arrive(),
            test(parity=0),
            *END,
        ],
    )
    case(
        "cpa-noinc-completes",
        g,
        "init(1): the .noinc asynchronous arrive completes the phase",
        [init(1), cp, cpn, settle(), test(parity=0), csum, *END],
    )
    case(
        "cpa-threads",
        g,
        "32 threads: cp.async + cp.async.mbarrier.arrive each, then 32 arrivals",
        [
            init(32),
            {"op": "cp_async", "threads": [0, 32]},
            {"op": "cp_async_arrive", "threads": [0, 32]},
            settle(),
            test(parity=0),
            arrive(threads=[0, 32]),
            test(parity=0),
            csum,
            *END,
        ],
    )
    case(
        "cpa-threads-noinc",
        g,
        "init(64): 32 threads .noinc, then 32 arrivals",
        [
            init(64),
            {"op": "cp_async", "threads": [0, 32]},
            {"op": "cp_async_arrive", "threads": [0, 32], "noinc": True},
            settle(),
            test(parity=0),
            arrive(threads=[0, 32]),
            test(parity=0),
            *END,
        ],
    )
    case(
        "cpa-no-copies",
        g,
        "init(1): cp.async.mbarrier.arrive with no cp.async before it",
        [init(1), cpa, settle(), test(parity=0), arrive(), test(parity=0), *END],
    )
    case(
        "cpa-twice",
        g,
        "init(1): two cp.async + cp.async.mbarrier.arrive pairs",
        [
            init(1),
            cp,
            cpa,
            {"op": "cp_async", "offset": 16},
            cpa,
            settle(),
            test(parity=0),
            arrive(),
            test(parity=0),
            {"op": "checksum", "bytes": 32},
            *END,
        ],
    )


def bulk() -> None:
    g = "bulk"
    for b in (16, 256, 4096, 16384):
        case(
            f"bulk-{b}",
            g,
            f"init(1): arrive.expect_tx({b}), cp.async.bulk of {b} bytes",
            [
                init(1),
                arrive(expect_tx=b, token="a"),
                {"op": "bulk_copy", "bytes": b},
                settle(),
                test(token="a"),
                {"op": "checksum", "bytes": b},
                *END,
            ],
        )
    case(
        "bulk-before-expect",
        g,
        "init(1): the bulk copy lands before the expect_tx (tx-count negative)",
        [
            init(1),
            {"op": "bulk_copy", "bytes": 1024},
            settle(),
            test(parity=0),
            arrive(expect_tx=1024),
            test(parity=0),
            {"op": "checksum", "bytes": 1024},
            *END,
        ],
    )
    case(
        "bulk-two",
        g,
        "init(1): expect_tx(2048), two bulk copies, arrive",
        [
            init(1),
            expect(2048),
            {"op": "bulk_copy", "bytes": 1024},
            {"op": "bulk_copy", "bytes": 1024, "offset": 1024},
            settle(),
            test(parity=0),
            arrive(),
            test(parity=0),
            {"op": "checksum", "bytes": 2048},
            *END,
        ],
    )
    case(
        "bulk-short",
        g,
        "init(1): arrive.expect_tx(1024) but 512 bytes copied; complete_tx makes up the rest",
        [
            init(1),
            arrive(expect_tx=1024),
            {"op": "bulk_copy", "bytes": 512},
            settle(),
            poll(parity=0, ns=100_000),
            complete(512),
            test(parity=0),
            {"op": "checksum", "bytes": 512},
            *END,
        ],
    )
    case(
        "bulk-two-arrivals",
        g,
        "init(2): arrive.expect_tx(512), bulk copy, second arrival",
        [
            init(2),
            arrive(expect_tx=512),
            {"op": "bulk_copy", "bytes": 512},
            settle(),
            test(parity=0),
            arrive(thread=1),
            test(parity=0),
            *END,
        ],
    )
    case(
        "bulk-phases",
        g,
        "init(1): one bulk copy completes each of phases 0 and 1",
        [
            init(1),
            arrive(expect_tx=256),
            {"op": "bulk_copy", "bytes": 256},
            settle(),
            test(parity=0),
            arrive(expect_tx=256),
            {"op": "bulk_copy", "bytes": 256, "offset": 256},
            settle(),
            test(parity=1),
            {"op": "checksum", "bytes": 512},
            *END,
        ],
    )


def undefined() -> None:
    g = "ub"
    after = [test(parity=0), test(parity=1), *END]
    for n in (0, 1 << 20, (1 << 20) + 1, 0xFFFFFFFF):
        case(f"ub-init-{n_(n)}", g, f"init({n_(n)})", [init(n), *END], ub=("init-count-range", 0))
    for n in (0, 1 << 20):
        case(
            f"ub-init-{n_(n)}-arrive",
            g,
            f"init({n_(n)}), then arrive and wait",
            [init(n), arrive(token="a"), test(token="a"), *after],
            ub=("init-count-range", 0),
        )
    case(
        "ub-arrive-0",
        g,
        "init(2): arrive count 0",
        [init(2), arrive(count=0, token="a"), *after],
        ub=("arrive-count-range", 1),
    )
    case(
        "ub-arrive-nc-0",
        g,
        "init(2): arrive.noComplete count 0",
        [init(2), arrive(count=0, no_complete=True, token="a"), pc("a"), *after],
        ub=("arrive-count-range", 1),
    )
    case(
        "ub-arrive-2^20",
        g,
        "init(2^20-1): arrive count 2^20",
        [init(M), arrive(count=1 << 20), *after],
        ub=("arrive-count-range", 1),
    )
    for n, k in ((1, 2), (2, 3), (3, 5), (32, 33), (1000, 1 << 19)):
        case(
            f"ub-over-{n_(n)}-{n_(k)}",
            g,
            f"init({n_(n)}): arrive count {n_(k)}, more than pending",
            [init(n), arrive(count=k, token="a"), *after],
            ub=("pending-underflow", 1),
        )
    case(
        "ub-over-partial",
        g,
        "init(3): arrive, then count 3 with 2 pending",
        [init(3), arrive(), arrive(count=3, token="a"), *after],
        ub=("pending-underflow", 2),
    )
    case(
        "ub-over-nc",
        g,
        "init(2): arrive.noComplete count 3",
        [init(2), arrive(count=3, no_complete=True, token="a"), pc("a"), *after],
        ub=("pending-underflow", 1),
    )
    case(
        "ub-overarrive-phases",
        g,
        "init(2): a third arrival in phase 1 with no wait for phase 0",
        [init(2), arrive(), arrive(), arrive(token="a"), *after],
        ub=("phase-not-waited", 3),
    )
    case(
        "ub-overarrive-many",
        g,
        "init(2): seven arrivals, no waits",
        [init(2)] + [arrive() for _ in range(7)] + after,
        ub=("phase-not-waited", 3),
    )
    case(
        "ub-drop-expected-0",
        g,
        "init(1): arrive_drop takes the expected count to 0",
        [init(1), drop(token="a"), *after],
        ub=("expected-underflow", 1),
    )
    case(
        "ub-drop-expected-0-arrive",
        g,
        "init(2): arrive_drop count 2, then wait and arrive",
        [init(2), drop(count=2), test(parity=0), arrive(token="a"), *after],
        ub=("expected-underflow", 1),
    )
    case(
        "ub-drop-over",
        g,
        "init(2): arrive_drop count 3",
        [init(2), drop(count=3), *after],
        ub=("pending-underflow", 1),
    )
    case(
        "ub-tx-over",
        g,
        "init(1): expect_tx(2^20-1) then expect_tx(1)",
        [init(1), expect(M), expect(1), *after],
        ub=("tx-count-range", 2),
    )
    case(
        "ub-tx-over-complete",
        g,
        "init(1): expect_tx(2^20-1), expect_tx(1), complete_tx(2^20), arrive",
        [init(1), expect(M), expect(1), complete(1 << 20), arrive(), *after],
        ub=("tx-count-range", 2),
    )
    case(
        "ub-tx-2^20",
        g,
        "init(1): expect_tx(2^20)",
        [init(1), expect(1 << 20), *after],
        ub=("tx-count-range", 1),
    )
    case(
        "ub-tx-under",
        g,
        "init(1): complete_tx(2^20-1) then complete_tx(1)",
        [init(1), complete(M), complete(1), *after],
        ub=("tx-count-range", 2),
    )
    case(
        "ub-tx-under-2^20",
        g,
        "init(1): complete_tx(2^20), arrive, expect_tx(2^20)",
        [init(1), complete(1 << 20), arrive(), expect(1 << 20), *after],
        ub=("tx-count-range", 1),
    )
    case(
        "ub-tx-u32",
        g,
        "init(1): expect_tx(0xffffffff)",
        [init(1), expect(0xFFFFFFFF), *after],
        ub=("tx-count-range", 1),
    )
    case(
        "ub-arrive-expect-2^20",
        g,
        "init(1): arrive.expect_tx(2^20)",
        [init(1), arrive(expect_tx=1 << 20, token="a"), *after],
        ub=("tx-count-range", 1),
    )
    case(
        "ub-nc-completes",
        g,
        "init(1): arrive.noComplete(1) would complete the phase",
        [init(1), arrive(count=1, no_complete=True, token="a"), pc("a"), test(token="a"), *after],
        ub=("no-complete-completes", 1),
    )
    case(
        "ub-drop-nc-completes",
        g,
        "init(2): arrive, then arrive_drop.noComplete(1) completes",
        [init(2), arrive(), drop(count=1, no_complete=True, token="a"), pc("a"), *after],
        ub=("no-complete-completes", 2),
    )
    case(
        "ub-wait-stale",
        g,
        "init(1): a phase-0 token tested in phase 2",
        [
            init(1),
            arrive(token="a"),
            test(parity=0),
            arrive(token="b"),
            test(parity=1),
            test(token="a"),
            *END,
        ],
        ub=("wait-stale-token", 5),
    )
    case(
        "ub-wait-stale-3",
        g,
        "init(1): a phase-0 token tested in phase 3",
        [
            init(1),
            arrive(token="a"),
            test(parity=0),
            arrive(token="b"),
            test(parity=1),
            arrive(token="c"),
            test(parity=0),
            test(token="a"),
            *END,
        ],
        ub=("wait-stale-token", 7),
    )
    case(
        "ub-wait-parity-2",
        g,
        "init(2): test_wait.parity 2 and 3",
        [init(2), test(parity=2), test(parity=3), arrive(count=2), test(parity=2), test(parity=3), *END],
        ub=("wait-parity-value", 1),
    )
    case(
        "ub-wait-foreign",
        g,
        "two barriers: a token of barrier 0 tested on barrier 1",
        [
            init(2),
            init(2, bar=1),
            arrive(token="a"),
            test(token="a", bar=1),
            arrive(bar=1, count=2),
            test(token="a", bar=1),
            inval(),
            inval(bar=1),
            load(),
            load(bar=1),
        ],
        barriers=2,
        ub=("wait-foreign-token", 3),
    )
    case(
        "ub-uninit-arrive",
        g,
        "arrive on zeroed memory never initialized",
        [arrive(token="a"), test(parity=0), test(parity=1), load()],
        ub=("uninitialized", 0),
    )
    case(
        "ub-uninit-test",
        g,
        "test_wait on zeroed memory",
        [test(parity=0), test(parity=1), load()],
        ub=("uninitialized", 0),
    )
    case("ub-uninit-expect", g, "expect_tx on zeroed memory", [expect(64), load()], ub=("uninitialized", 0))
    case("ub-uninit-inval", g, "inval of zeroed memory", [inval(), load()], ub=("uninitialized", 0))
    case(
        "ub-after-inval",
        g,
        "init(2), inval, then arrive",
        [init(2), inval(), arrive(token="a"), test(parity=0), load()],
        ub=("uninitialized", 2),
    )
    case(
        "ub-init-on-valid",
        g,
        "init(2), arrive, init(5) without inval",
        [init(2), arrive(), init(5), arrive(token="a"), *END],
        ub=("init-on-valid", 2),
    )
    case(
        "ub-pending-overflow",
        g,
        "init(2^20-1): cp.async.mbarrier.arrive raises pending past 2^20-1",
        [
            init(M),
            {"op": "cp_async_arrive"},
            settle(),
            arrive(count=1, no_complete=True, token="a"),
            pc("a"),
            *END,
        ],
        ub=("pending-overflow", 1),
    )
    case(
        "ub-live-load",
        g,
        "ld.shared of a live object after one arrive (stale)",
        [init(3), arrive(), load(), *END],
        ub=("non-mbarrier-access", 2),
        isolate=False,
    )
    case(
        "ub-live-load-fresh",
        g,
        "ld.shared of a live object right after init",
        [init(3), load(), *END],
        ub=("non-mbarrier-access", 1),
        isolate=False,
    )


def warp_probes() -> None:
    """Second run: how warps merge arrivals and waits (found in the first run), and UB at the seams."""
    for n in (2, 16):
        case(
            f"time-try-lanes-{n}",
            "timing",
            f"{n} threads try_wait (no hint) on an open phase at once",
            [init(2), arrive(), try_(threads=[0, n], parity=0, timed=True), *END],
        )
    case(
        "time-try-warp-hint-1000",
        "timing",
        "32 threads try_wait with suspendTimeHint 1000 on an open phase",
        [init(2), arrive(), try_(threads=[0, 32], parity=0, timed=True, hint=1000), *END],
    )
    case(
        "time-try-2warps",
        "timing",
        "64 threads (2 warps) try_wait (no hint) on an open phase",
        [init(2), arrive(), try_(threads=[0, 64], parity=0, timed=True), *END],
        threads=64,
    )
    case(
        "time-test-warp",
        "timing",
        "32 threads test_wait on an open phase at once",
        [init(2), arrive(), test(threads=[0, 32], parity=0, timed=True), *END],
    )
    case(
        "thr-half-warp",
        "threads",
        "16 lanes of one warp arrive on init(32)",
        [init(32), arrive(threads=[0, 16], token="a"), test(parity=0), *END],
    )
    case(
        "thr-straddle",
        "threads",
        "lanes 16..47 (half of two warps) arrive on init(40)",
        [init(40), arrive(threads=[16, 48], token="a"), test(parity=0), *END],
        threads=64,
    )
    case(
        "thr-count-3x32",
        "threads",
        "32 lanes arrive count 3 on init(96): the merged arrival completes",
        [
            init(96),
            arrive(threads=[0, 32], count=3, token="a"),
            test(parity=0),
            test(threads=[0, 32], token="a"),
            *END,
        ],
    )
    case(
        "thr-drop-expect-32",
        "threads",
        "32 lanes arrive_drop.expect_tx(8) on init(33)",
        [
            init(33),
            drop(threads=[0, 32], expect_tx=8, token="a"),
            test(parity=0),
            complete(256),
            arrive(),
            test(parity=0),
            *END,
        ],
    )
    case(
        "thr-nc-32",
        "threads",
        "32 lanes arrive.noComplete(1) on init(64): not merged",
        [
            init(64),
            arrive(threads=[0, 32], count=1, no_complete=True, token="a"),
            pc("a", threads=[0, 32]),
            *END,
        ],
    )
    case(
        "tx-expect-lanes",
        "tx",
        "32 lanes expect_tx(8), then complete_tx(256) and the arrival",
        [
            init(1),
            expect(8, threads=[0, 32]),
            test(parity=0),
            complete(256),
            test(parity=0),
            arrive(),
            test(parity=0),
            *END,
        ],
    )
    case(
        "cl2-warp-expect",
        "cluster",
        "32 lanes of CTA 1 remote arrive.expect_tx(8) on init(32), CTA 0 complete_tx",
        [
            init(32),
            arrive(cta=1, threads=[0, 32], target=0, expect_tx=8),
            test(parity=0),
            complete(256),
            poll(parity=0),
            *END,
        ],
        ctas=2,
    )
    case(
        "ub-over-warp",
        "ub",
        "32 lanes arrive on init(16): the merged count exceeds pending",
        [init(16), arrive(threads=[0, 32], token="a"), test(parity=0), *END],
        ub=("pending-underflow", 1),
    )
    case(
        "ub-over-tx-pending",
        "ub",
        "init(1): expect_tx(10), arrive, then a second arrive with pending 0",
        [init(1), expect(10), arrive(), arrive(token="a"), test(parity=0), *END],
        ub=("pending-underflow", 3),
    )
    case(
        "ub-tx-wrap-back",
        "ub",
        "init(1): expect_tx(2^20-1), expect_tx(1), complete_tx(1), complete_tx(2^20-1), arrive",
        [init(1), expect(M), expect(1), complete(1), complete(M), arrive(), test(parity=0), *END],
        ub=("tx-count-range", 2),
    )
    case(
        "ub-nc-warp-completes",
        "ub",
        "32 lanes arrive.noComplete(1) on init(32): the last one completes",
        [init(32), arrive(threads=[0, 32], count=1, no_complete=True, token="a"), test(parity=0), *END],
        ub=("no-complete-completes", 1),
    )


def build() -> dict[str, Any]:
    CASES.clear()
    for family in (
        encoding,
        tokens,
        waits,
        timing,
        arrive_counts,
        arrive_drop,
        tx,
        threads,
        cluster,
        cp_async,
        bulk,
        undefined,
        warp_probes,
    ):
        family()
    return {
        "comment": "Generated by tools/make_cases.py; the litmus format is described in "
        "src/mbarrier/hw/litmus.py.",
        "cases": list(CASES),
    }


def render() -> str:
    return json.dumps(build(), indent=1) + "\n"


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"{len(CASES)} cases -> {OUT}\n")
