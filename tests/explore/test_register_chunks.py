"""A thread's entry in a checker snapshot keeps its registers in chunks of `snapshot.REG_CHUNK` slots and
shares with the thread's previous entry the chunks a step left unchanged (a CUTLASS kernel of 1,400
registers per thread kept 11 KB per changed thread and state). Restoring gives back every register, and
a search takes the same states and transitions whatever the chunk size (a file of at most
`REG_CHUNK` slots stays one tuple)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier import examples, sim
from mbarrier.examples.shapes import SHAPES
from mbarrier.explore import snapshot
from mbarrier.explore.check import Options, check_machine

from .helpers import load

# Each step writes one register of a thread that holds several: %r150, then %r150 again, then %r2.
WIDE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .b32 %r<200>;
	mov.u32 %r150, %tid.x;
	add.u32 %r150, %r150, 7;
	mov.u32 %r2, 5;
	ret;
}
"""


def test_a_step_shares_the_register_chunks_it_did_not_write(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "REG_CHUNK", 1)   # a chunk per register: what is shared shows
    m = sim.launch(load(tmp_path, WIDE), grid=1, block=2)
    t = m.threads[0]
    snaps = [snapshot.save(m, {})]
    for _ in range(3):
        m.step(t)
        snaps.append(snapshot.save(m, {}, snaps[-1], {0}))
    chunks = [snapshot.thread_states(s)[0][0][1] for s in snaps]
    assert len(chunks[0]) == len(t.regs) >= 2
    new = [[i for i, (a, b) in enumerate(zip(x, y, strict=True)) if a is not b]
           for x, y in zip(chunks, chunks[1:], strict=False)]
    assert [len(n) for n in new] == [0, 1, 1], new   # mov %r150, 0 writes what was 0; then one each
    assert new[1] != new[2]
    # Restoring an earlier snapshot gives back its registers exactly.
    now = list(t.regs)
    snapshot.restore(m, snaps[0], snaps[-1])
    assert list(t.regs) == snapshot.flat_regs(chunks[0]) != now
    snapshot.restore(m, snaps[-1], snaps[0])
    assert list(t.regs) == now


@pytest.mark.parametrize("name", ["ring_rolled", "warpgroup_bug_count"])
def test_the_search_is_the_same_whatever_the_chunk_size(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    s = SHAPES[name].sized(2)

    def search() -> tuple[object, ...]:
        r = check_machine(s.launch(), sim.load(s.path), Options(walks=0, max_states=3_000))
        st = r.stats
        return r.verdict, st.states, st.transitions, st.enabled, [(f.kind, f.line) for f in r.findings]

    monkeypatch.setattr(snapshot, "REG_CHUNK", 4)         # these kernels' files in many chunks
    chunked = search()
    monkeypatch.setattr(snapshot, "REG_CHUNK", 1 << 20)   # one tuple: the whole register file
    assert search() == chunked


def test_a_chunk_is_shared_only_when_it_holds_the_same_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    # A token word equals another of the same bits and 1 == 1.0: sharing equal chunks put back the
    # earlier objects on restore (a stale token for the current one: 93 states, not 78).
    mod = sim.load(examples.HERE / "corpus" / "stale_token.ptx")

    def search() -> tuple[object, ...]:
        r = check_machine(sim.launch(mod, grid=1, block=2), mod,
                          Options(reductions=False, races=False, sleep=False))
        return r.verdict, r.stats.states, r.stats.transitions

    monkeypatch.setattr(snapshot, "REG_CHUNK", 1)
    assert search() == ("finding", 78, 134)
