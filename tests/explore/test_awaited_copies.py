"""What a thread blocked at a copy wait waits for (`footprints.awaited`): the landings of its own copies of
that kind. A cp.async copy's landing JOINs `("cp", aid)`, a bulk copy's `("bulk", aid)`
(`footprints.copy_items`); a thread blocked at `cp.async.bulk.wait_group` (9.7.9.25.4.3) named
`("cp", aid)`, so the stubborn closure never took in the bulk copies that release it."""

from __future__ import annotations

from pathlib import Path

from mbarrier import sim
from mbarrier.explore.footprints import READ, awaited, conflict, copy_items, matches
from mbarrier.sim.machine import Copy, Thread
from mbarrier.sim.waits import ForCopies

from .helpers import load

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
	.reg .b64 %rd<4>;
	.shared .align 16 .b8 buf[64];
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	fence.proxy.async.shared::cta;
	cp.async.bulk.global.shared::cta.bulk_group [%rd1], [buf], 64;
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 0;
	ret;
}
"""


def test_a_bulk_wait_awaits_its_bulk_copies(tmp_path: Path) -> None:
    module = load(tmp_path, KERNEL)
    m = sim.launch(module, grid=1, block=1, args={"out": 0x10000})
    t: Thread = m.threads[0]
    for _ in range(100):  # run the thread until it blocks at its wait, its copy in flight
        if t.wait is not None:
            break
        m.step(t)
    assert isinstance(t.wait, ForCopies) and t.wait.which == "bulk"
    copies = [c for c in m.inflight if isinstance(c, Copy)]
    assert copies
    waits = awaited(m, t, None)
    assert all(mode == READ for _, mode in waits)
    for c in copies:  # each landing that may release the thread conflicts with what it waits for
        lands = copy_items(c, m)
        assert any(conflict(mode, m2) and matches(obj, o2) for obj, mode in waits for o2, m2 in lands)
