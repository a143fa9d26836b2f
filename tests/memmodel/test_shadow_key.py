"""The shadow memory's key is kept incrementally across copies (sim/hb.py: each cell's readers sum and
part of the key made with the cell, each page's hash recomputed only for the pages changed since, their
sum updated page by page): it must always equal the key computed from the cells from scratch, whatever
the order of accesses and copies, and a copy must never see the later changes of another."""

from __future__ import annotations

from random import Random

from mbarrier.sim.hb import ATOMIC, PAGE_BITS, THREAD, WRITE, Conflict, Shadow

MASK = (1 << 64) - 1


Epochs = frozenset[tuple[int, int]]


def _cells(s: Shadow) -> dict[int, tuple[int, int, Epochs, Epochs | None]]:
    return {a: (c[0], c[1], frozenset((r, v[0]) for r, v in c[3].items()),
                frozenset((t[0], t[1]) for t in c[4][2]) if c[4] is not None and c[4][2] else None)
            for a, c in s.items()}


def _scratch(s: Shadow) -> int:
    """The key by its definition: the sum over pages of (page, hash of the set of its cells' (address,
    part)), a cell's part the hash of (writers, the sum of its reads' hashes): the writer's epoch, or
    with twins the set of the write's and the twins' epochs."""
    pages: dict[int, set[tuple[int, int]]] = {}
    for a, (w, k, reads, twins) in _cells(s).items():
        readers = sum(hash(r) & MASK for r in reads) & MASK
        writers: object = (w, k) if twins is None else twins | {(w, k)}
        pages.setdefault(a >> PAGE_BITS, set()).add((a, hash((writers, readers))))
    return sum(hash((p, hash(frozenset(cells)))) for p, cells in pages.items()) & MASK


def test_incremental_key_equals_the_key_from_scratch() -> None:
    rng = Random(5)
    for _ in range(40):
        live = Shadow()
        copies: list[tuple[Shadow, dict[int, tuple[object, ...]]]] = []
        for step in range(200):
            me = rng.randrange(4)
            flags = THREAD | (WRITE if rng.random() < 0.5 else 0) | (ATOMIC if rng.random() < 0.7 else 0)
            vc = {t: rng.randrange(step + 1) for t in range(4)}
            info = (0, None, flags, "st", 0, 0, 0, "")
            try:
                live.access(rng.randrange(160), rng.choice((1, 4, 80)), vc, me, step,
                            info)  # type: ignore[arg-type]
            except Conflict:
                pass
            r = rng.random()
            if r < 0.2:
                copy = live.clone()
                copies.append((copy, _cells(copy)))
            elif r < 0.3 and copies:
                live = rng.choice(copies)[0].clone()  # a checker restore
            if rng.random() < 0.3:
                assert live.key() == _scratch(live)
        for c, cells in copies:  # snapshots are never changed by later accesses of the live copy
            assert _cells(c) == cells and c.key() == _scratch(c)
        assert live.key() == _scratch(live)
