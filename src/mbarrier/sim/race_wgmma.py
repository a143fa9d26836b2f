"""Happens-before of warpgroup MMA (PTX ISA 9.7.15), for the race tracker (`sim.races`): a
wgmma.mma_async's engine is an agent ordered after what each lane of its warp did before the issue; it
reads its shared-memory matrices in the async proxy (9.7.15.4: a generic write reaches it only through
fence.proxy.async); wgmma.wait_group orders the operations it retires before the thread's later
accesses, and with them the other warps' shares of the same warpgroup operation: a warpgroup MMA is one
operation whose completion is one event (docs/memory-model.md; the machine's wait_group returns only
once all four shares are done). Races with its reads are explained in `sim.race_report` (rule
wgmma-operand-inflight)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mbarrier.sim.hb import ASYNC, VC, Agent, Info, join
from mbarrier.sim.machine import Copy, Cta, Thread
from mbarrier.sim.race_report import CopyInfo
from mbarrier.spec.wgmma import WARPS_PER_GROUP

if TYPE_CHECKING:
    from mbarrier.sim.races import RaceMachine


def issued(m: RaceMachine, c: Copy) -> Copy:
    """The engine `c` just issued: its clock is the join of its lanes' (each lane's clock advances)."""
    assert c.mma is not None
    h = m.hb.copy_agent(c, c.thread.aid, m.hb.agent(c.thread.aid).clk)
    vc: VC = {}
    for aid in c.mma.lanes:
        join(vc, m.hb.agent(aid).tick())
    vc[h] = 2
    cag = m.hb.add(Agent(h, vc))
    cag.pvc = m.hb.proxy_fences.visible(vc)
    m.hb.add_copy(h, CopyInfo(c.aid, c.kind, c.thread.aid, c.site.line, None, c.mma.lanes))
    key = _op(m, c)
    m.hb.wg_ops[key] = m.hb.wg_ops.get(key, ()) + (h,)
    return c


def _op(m: RaceMachine, c: Copy) -> tuple[int, int, int]:
    """The warpgroup operation a share belongs to: (CTA, the warpgroup's first thread, rank)."""
    assert c.mma is not None
    first = min(c.mma.lanes) // (32 * WARPS_PER_GROUP) * (32 * WARPS_PER_GROUP)
    return (c.thread.cta.index, first, c.mma.seq)


def read(m: RaceMachine, c: Copy, cta: Cta, chunks: list[int]) -> None:
    """The engine read these 16-byte chunks of `cta`'s shared memory (at its clock 1, async proxy)."""
    cag = m.hb.agents[m.hb.hid[c.aid]]
    shadow = m.hb.shadow(cta.index)
    for at in dict.fromkeys(chunks):
        info: Info = (cag.me, c.site, ASYNC, "shared", cta.index, at, 16, "the read of wgmma.mma_async")
        m._check(shadow, at, 16, cag, info, 1, cag.pvc)


def retired(m: RaceMachine, t: Thread, done: list[Copy]) -> list[Copy]:
    """`t`'s wgmma.wait_group retired these operations: their reads, and those of the other warps' shares
    of the same warpgroup operations (all done: the machine waits for them), happen before its later
    accesses."""
    if done:
        ag = m.hb.agent(t.aid)
        for c in done:
            for aid in m.hb.wg_ops[_op(m, c)]:
                ag.acquire({aid: 2})
    return done
