"""Twin bulk stores: copies in flight that write the same bytes from the same staging bytes, whose
landings commute (issue #15).

CUTLASS's TMA-store epilogues issue one `cp.async.bulk.tensor` store from every lane of a warp: 32 copies
of the same box from the same shared-memory bytes, unordered. Their landings write the same global bytes,
so as plain WRITEs each pair conflicts and a stubborn set holding one holds all 32 (and every order of
their landings is explored). Two such landings commute: each reads its source when it lands and writes
the destination with it (`Machine.finish_async`), the source is shared memory and the destination global
memory, so neither landing changes what the other reads, and both write the same values to the same bytes
in either order. With races tracked, the race tracker's history of the destination must come out the same
too (`Shadow.twin_clean`: nothing there but plain async writes of the same values and no read since;
`hb._cell` keys a byte's last write and its twins as one set).

A twin landing's destination items carry a mode of their own per *twin key* (`twin_mode`): what the
landing reads and writes (kind, source CTA and offset, size and destination, or a tensor store's box:
map, coordinates). Equal modes commute (`footprints.conflict`: a mode conflicts with itself only when
it is WRITE); a twin mode conflicts with every other mode, as WRITE does. So the stores of different
sources, a source that changes between the landings (its writer conflicts with the landings' READ of it),
or a destination with other history keep conflicting, and a race on them is still reported.
"""

from __future__ import annotations

from mbarrier.sim.machine import Copy, Machine
from mbarrier.sim.races import RaceMachine
from mbarrier.sim.tensorcopy import Plan

TWIN = 64  # the first twin mode: above every other mode and every product of two (`footprints`)
_MODES: dict[tuple[object, ...], int] = {}  # twin modes by twin key, for the process's life
KEPT = 4096  # answers kept by `twin_mode` and `_mode_of`, each (cleared when full)
_CLEAN: dict[tuple[int, int, bytes], bool] = {}
_COPIES: dict[int, tuple[Copy, int | None]] = {}


def twin_key(c: Copy) -> tuple[object, ...] | None:
    """What a plain bulk store (shared::cta to global, a bulk group's: no mbarrier, no reduction) reads and
    writes when it lands; None for every other copy."""
    kind, scta, saddr = c.src
    if kind != "shared" or scta is None or c.dst_cta is not None or c.bar_cta is not None \
            or c.mma is not None or not c.kind.endswith(".store"):
        return None
    if c.plan is not None:
        return c.kind, scta.index, saddr, c.plan.key
    return c.kind, scta.index, saddr, c.size, c.dst


def _writes(c: Copy) -> list[tuple[int, bytes]]:
    """The global bytes a twin store would write if it landed now: (address, values) runs."""
    _, scta, saddr = c.src
    assert scta is not None
    smem = scta.smem
    if c.plan is None:
        return [(c.dst, bytes(smem[saddr:saddr + c.size]))]
    plan = c.plan
    out = []
    for p in plan.pieces:
        if p.gaddr >= 0:
            at = plan.shared(saddr, p)
            out.append((p.gaddr, bytes(smem[at:at + p.n])))
    return out


def twin_mode(c: Copy, m: Machine) -> int | None:
    """The mode of the copy's destination items where its landing commutes with its twins' (see the
    module), None where it does not (its items then WRITE)."""
    mode = _mode_of(c)
    if mode is None or not isinstance(m, RaceMachine):
        return mode
    # Its twins (32 copies in flight) ask the same, state after state: kept by the shadow's contents and
    # the source's bytes.
    shadow = m.hb.gmem
    _, scta, saddr = c.src
    assert scta is not None
    lo, hi = (saddr, saddr + c.size) if c.plan is None else c.plan.shared_span(saddr)
    asked = (mode, shadow.version, bytes(scta.smem[lo:hi]))
    clean = _CLEAN.get(asked)
    if clean is None:
        if len(_CLEAN) >= KEPT:
            _CLEAN.clear()
        clean = _CLEAN[asked] = all(shadow.twin_clean(addr, data) for addr, data in _writes(c))
    return mode if clean else None


def _mode_of(c: Copy) -> int | None:
    """The mode of the copy's twin key (None: it has none), kept by copy (a copy in flight keeps it)."""
    found = _COPIES.get(id(c))
    if found is not None and found[0] is c:
        return found[1]
    key = twin_key(c)
    mode = None if key is None else _MODES.setdefault(key, TWIN + len(_MODES))
    if len(_COPIES) >= KEPT:
        _COPIES.clear()
    _COPIES[id(c)] = (c, mode)
    return mode


def twin_writes(c: Copy, mode: int) -> list[tuple[tuple[object, ...], int]]:
    """A twin store's destination items (`footprints.copy_items`): a tensor store's, each run of its box's
    elements in global memory rather than their span (the span of a box of rows also covers the rows'
    gaps, where the boxes of the next columns land: CUTLASS's epilogue stores a tile in column slices,
    one bulk group each, whose spans interleave)."""
    if c.plan is None:
        return [(("gm", c.dst, c.dst + c.size), mode)]
    return [(("gm", lo, hi), mode) for lo, hi in runs(c.plan)]


def runs(plan: Plan) -> tuple[tuple[int, int], ...]:
    """[lo, hi) of each run of global bytes a tensor store of this plan writes, merged where they touch;
    kept by plan (a copy keeps its plan while in flight)."""
    found = _RUNS.get(id(plan))
    if found is not None and found[0] is plan:
        return found[1]
    out: list[list[int]] = []
    for g, n in sorted((p.gaddr, p.n) for p in plan.pieces if p.gaddr >= 0):
        if out and out[-1][1] >= g:
            out[-1][1] = max(out[-1][1], g + n)
        else:
            out.append([g, g + n])
    if len(_RUNS) >= RUNS_KEPT:
        _RUNS.clear()
    runs = _RUNS[id(plan)] = (plan, tuple((lo, hi) for lo, hi in out))
    return runs[1]


RUNS_KEPT = 1024  # plans whose runs `runs` keeps (cleared when full)
_RUNS: dict[int, tuple[Plan, tuple[tuple[int, int], ...]]] = {}
