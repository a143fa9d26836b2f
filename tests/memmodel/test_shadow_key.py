"""The shadow memory's key is kept incrementally across copies (sim/hb.py `Shadow.keyed`): it must
always equal the key computed from the cells from scratch, whatever the order of accesses and copies."""

from __future__ import annotations

from random import Random

from mbarrier.sim.hb import ATOMIC, THREAD, WRITE, Conflict, Shadow


def _scratch(s: Shadow) -> frozenset[object]:
    return frozenset((a, c[0], c[1], frozenset((r, v[0]) for r, v in c[3].items()))  # type: ignore
                     for a, c in s.cells.items())


def test_incremental_key_equals_the_key_from_scratch() -> None:
    rng = Random(5)
    for _ in range(40):
        live = Shadow()
        copies: list[Shadow] = []
        for step in range(200):
            me = rng.randrange(4)
            flags = THREAD | (WRITE if rng.random() < 0.5 else 0) | (ATOMIC if rng.random() < 0.7 else 0)
            vc = {t: rng.randrange(step + 1) for t in range(4)}
            info = (0, None, flags, "st", 0, 0, 0, "")
            try:
                live.access(rng.randrange(16), rng.choice((1, 4)), vc, me, step, info)  # type: ignore[arg-type]
            except Conflict:
                pass
            r = rng.random()
            if r < 0.2:
                copies.append(live.clone())
            elif r < 0.3 and copies:
                live = rng.choice(copies).clone()  # a checker restore
            if rng.random() < 0.3:
                assert live.key() == _scratch(live)
        for c in copies:  # snapshots are never changed by later accesses of the live copy
            assert c.key() == _scratch(c)
        assert live.key() == _scratch(live)
