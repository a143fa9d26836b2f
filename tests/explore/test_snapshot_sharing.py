"""A checker snapshot shares with its parent what the step left unchanged (issue 13: about 120 KB per state
for 2 CTAs of 160 threads, because every snapshot copied the race tracker's whole state), and what it
shares is never changed afterwards by the live machine (copy on write)."""

from __future__ import annotations

from mbarrier import examples, explore, sim
from mbarrier.explore import snapshot
from mbarrier.sim.hb import Shadow
from mbarrier.sim.races import RaceState, track

RING = examples.path("ring_buffer")   # nvcc's 160-thread ring: CTAs share nothing
OTHER = 160                            # the first thread of CTA 1


def _machine() -> sim.Machine:
    m = sim.launch(sim.load(RING), grid=2, block=160)
    track(m)
    return m


def _touch_shared(m: sim.Machine, aid: int) -> None:
    """Step thread `aid` until its shared memory's shadow has history (its mbarrier.init at least)."""
    t = m.threads[aid]
    hb: RaceState = m.hb  # type: ignore[attr-defined]
    for _ in range(200):
        if any(True for _ in hb.smem[t.cta.index].items()):
            return
        m.step(t)
    raise AssertionError("the thread never touched shared memory")


def _content(hb: RaceState) -> object:
    """Everything of a race state, by value, computed from scratch (no cached key)."""
    def shadow(s: Shadow) -> dict[int, object]:
        return {a: (c[0], c[1], c[2], dict(c[3])) for a, c in s.items()}
    return ([shadow(s) for s in hb.smem], shadow(hb.gmem),
            [(a.me, dict(a.vc), a.clk, list(a.releases[0]),
              {k: [list(g) for g in v] for k, v in a.groups.items()}) for a in hb.agents.values()],
            {k: (b.phase, dict(b.acc_cta), dict(b.acc_cluster), dict(b.done_cta), dict(b.done_cluster))
             for k, b in hb.barriers.items()},
            {k: (c.phase, c.tracked) for k, c in hb.copies.items()})


def test_a_step_in_one_cta_leaves_the_other_ctas_state_shared() -> None:
    m = _machine()
    s0 = snapshot.save(m, {})
    _touch_shared(m, 0)
    s1 = snapshot.save(m, {}, s0, {0})
    assert s1[2][1] is s0[2][1]                     # CTA 1: shared memory, barriers, bar.sync state
    assert s1[0][OTHER // snapshot.CHUNK] is s0[0][OTHER // snapshot.CHUNK]   # CTA 1's threads did not move
    assert snapshot.thread_states(s1)[OTHER] is snapshot.thread_states(s0)[OTHER]
    hb0, hb1 = s0[10], s1[10]
    assert hb1.smem[1] is hb0.smem[1] and hb1.gmem is hb0.gmem
    assert hb1.smem[0] is not hb0.smem[0]           # CTA 0's shadow changed: a copy of its own
    assert hb1.agents[OTHER] is hb0.agents[OTHER]   # so did thread 0's agent, not CTA 1's
    assert hb1.agents[0] is not hb0.agents[0]


def test_one_access_makes_one_cell_for_all_its_bytes() -> None:
    m = _machine()
    _touch_shared(m, 0)
    hb: RaceState = m.hb  # type: ignore[attr-defined]
    cells = [c for _, c in hb.smem[0].items()]
    assert len(cells) == 8 and len({id(c) for c in cells}) == 1   # the mbarrier.init: 8 bytes, one cell


def test_the_live_machine_never_changes_what_a_snapshot_holds() -> None:
    m = _machine()
    snaps = [snapshot.save(m, {})]
    _touch_shared(m, 0)
    snaps.append(snapshot.save(m, {}, snaps[-1], {0}))
    _touch_shared(m, OTHER)
    snaps.append(snapshot.save(m, {}, snaps[-1], {OTHER}))
    before = [_content(s[10]) for s in snaps]
    keys = [s[10].key() for s in snaps]
    # The live state changes whatever it can (until the race between the CTAs' stores of `out`: this
    # kernel indexes its output by tid alone).
    r = explore.run(m, explore.RandomScheduler(1))
    assert r.steps > 1000
    assert [_content(s[10]) for s in snaps] == before
    assert [s[10].key() for s in snaps] == keys
    snapshot.restore(m, snaps[1])                    # and so does a machine restored to one of them
    assert explore.run(m, explore.RandomScheduler(2)).steps > 1000
    assert [_content(s[10]) for s in snaps] == before
