"""Symmetry reduction and dead-register masking (explore.symmetry, explore.liveness): the same verdicts with
and without it, no merge where lanes or warps are not interchangeable, real merges where they are, and
findings whose schedules replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mbarrier import examples, sim
from mbarrier.cli import main
from mbarrier.examples import family
from mbarrier.examples.cases import CASES
from mbarrier.explore import snapshot
from mbarrier.explore.check import Explorer, Options, check
from mbarrier.explore.liveness import Liveness, Residual
from mbarrier.explore.symmetry import lane_sensitive
from mbarrier.ptx import ast
from mbarrier.sim.machine import Thread

CORPUS = Path(sim.__file__).parent.parent / "examples" / "corpus"
HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _module(tmp_path: Path, body: str, decls: str = "") -> ast.Module:
    p = tmp_path / "k.ptx"
    p.write_text(HEAD + ".visible .entry k()\n{\n\t.reg .pred %p<8>;\n\t.reg .b32 %r<16>;\n"
                 + decls + body + "}\n")
    return sim.load(p)


def _options(**kw: object) -> Options:
    """Options with sleep sets off where the checker has them, so that state counts compare symmetry alone
    (the checker switches sleep sets off under symmetry)."""
    if "sleep" in Options.__dataclass_fields__:
        kw.setdefault("sleep", False)
    kw.setdefault("symmetry", True)  # opt-in in the checker (Options.symmetry)
    return Options(**kw)  # type: ignore[arg-type]


def _verdicts(mod: ast.Module, block: int, **kw: object) -> tuple[object, ...]:
    out = []
    for sym in (True, False):
        r = check(mod, grid=1, block=block, options=_options(symmetry=sym, **kw))  # type: ignore[arg-type]
        out.append((r.verdict, sorted({(f.kind, f.rule) for f in r.findings}), r.stats.states,
                    r.stats.symmetric_merges, r.mode))
    return tuple(out)


# -- same verdicts with and without symmetry --------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.ptx")), ids=lambda p: p.stem)
def test_corpus_same_verdict_and_finding_kinds(path: Path) -> None:
    import re
    m = re.search(r"--grid (\S+) --block (\S+)(?: --cluster (\S+))?", path.read_text())
    assert m is not None
    from mbarrier.cli.run import parse_dims
    launch = {"grid": parse_dims(m[1], "grid"), "block": parse_dims(m[2], "block"),
              "cluster": parse_dims(m[3], "cluster")}
    mod = sim.load(path)
    on, off = (check(mod, **launch, options=_options(races=False, symmetry=s))  # type: ignore[arg-type]
               for s in (True, False))
    assert on.verdict == off.verdict
    assert {(f.kind, f.rule) for f in on.findings} == {(f.kind, f.rule) for f in off.findings}
    assert on.stats.states <= off.stats.states
    assert "symmetry" in on.mode and "symmetry" not in off.mode


@pytest.mark.parametrize("bug", family.BUGS)
def test_family_bugs_same_verdict_and_finding_kinds(tmp_path: Path, bug: str) -> None:
    p = tmp_path / "f.ptx"
    p.write_text(family.ring_ptx(1, 2, 1, 2, bug=bug))
    (v1, k1, n1, _, _), (v2, k2, n2, _, _) = _verdicts(sim.load(p), 3, races=False)
    assert (v1, k1) == (v2, k2) and v1 == "finding"
    assert n1 <= n2


# -- no merge where threads are not interchangeable --------------------------------------------------------
def test_bug_only_lane_3_triggers_after_its_identity_is_read_late(tmp_path: Path) -> None:
    # Lanes 0-2 are alike (their identity decides nothing once thread 0 has initialized); lane 3 reads
    # %tid.x after the wait and then waits for a phase no one completes.
    mod = _module(tmp_path, """	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 mbarrier.init.shared::cta.b64 [bar], 4;
	bar.sync 0;
	mbarrier.arrive.shared::cta.b64 _, [bar];
W:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra W;
	mov.u32 %r2, %tid.x;
	setp.eq.u32 %p3, %r2, 3;
	@!%p3 bra DONE;
STUCK:
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 1;
	@!%p4 bra STUCK;
DONE:
	exit;
""")
    on, off = _verdicts(mod, 4)
    assert on[:2] == off[:2] == ("finding", [("deadlock", "deadlock")])
    r = check(mod, grid=1, block=4, options=Options(symmetry=True))
    assert r.findings[0].waiters[0].thread == 3


TICKET = """	.shared .align 8 .b64 bar;
	.shared .align 4 .b32 ctr;
	atom.shared.add.u32 %r1, [ctr], 1;
	shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;
	setp.eq.u32 %p1, %r2, 3;
	@%p1 mbarrier.arrive.shared::cta.b64 _, [bar];
	exit;
"""


def test_shfl_keeps_lanes_apart_and_the_lane_0_last_bug_is_found(tmp_path: Path) -> None:
    # Each lane takes a ticket; shfl gives everyone lane 0's; only when lane 0 came last (ticket 3) does
    # anyone arrive on the never-initialized barrier. Sorting lanes would merge "lane 0 came last" with
    # "lane 1 came last" and could miss it.
    mod = _module(tmp_path, TICKET)
    assert lane_sensitive(mod) == "shfl.sync.idx.b32 at line 11"
    on, off = _verdicts(mod, 4, races=False)
    assert on[0] == off[0] == "finding" and on[1] == off[1]
    assert "whole warps of a CTA only (lanes told apart by shfl.sync.idx.b32 at line 11)" in on[4]


def test_the_lane_guard_is_what_keeps_the_ticket_bug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The counterfactual: with lane sorting forced on despite the shfl, the bug is lost. So the guard in
    # `lane_sensitive` is load-bearing, not decoration. (The search alone: random walks would find the bug.)
    mod = _module(tmp_path, TICKET)
    monkeypatch.setattr("mbarrier.explore.symmetry.lane_sensitive", lambda module: None)
    r = check(mod, grid=1, block=4, options=Options(races=False, symmetry=True, walks=0))
    assert r.verdict == "verified" and r.stats.symmetric_merges > 0


@pytest.mark.parametrize("text,why", [
    ("bar.warp.sync 3;", "bar.warp.sync at line"),
    ("vote.sync.ballot.b32 %r3, %p1, -1;", "vote.sync.ballot.b32 at line"),
    ("vote.sync.all.pred %p2, %p1, 3;", "vote.sync.all.pred at line"),
    ("elect.sync %r3|%p2, -1;", "elect.sync at line"),
    ("activemask.b32 %r3;", "activemask.b32 at line"),
    ("bar.warp.sync -1;", None),
    ("vote.sync.all.pred %p2, %p1, 0xffffffff;", None),
    ("bar.sync 0;", None),
])
def test_lane_sensitive_instructions(tmp_path: Path, text: str, why: str | None) -> None:
    mod = _module(tmp_path, f"\tsetp.eq.u32 %p1, %r1, 0;\n\t{text}\n\texit;\n")
    found = lane_sensitive(mod)
    assert (found is None) if why is None else (found is not None and found.startswith(why))


def test_partial_mask_warp_sync_same_verdict(tmp_path: Path) -> None:
    # Lanes 0 and 1 meet at a bar.warp.sync of mask 0x3, then arrive; the barrier expects 3: deadlock.
    mod = _module(tmp_path, """	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 mbarrier.init.shared::cta.b64 [bar], 3;
	bar.sync 0;
	setp.lt.u32 %p2, %r1, 2;
	@!%p2 bra DONE;
	bar.warp.sync 3;
	mbarrier.arrive.shared::cta.b64 _, [bar];
W:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
	@!%p3 bra W;
DONE:
	exit;
""")
    on, off = _verdicts(mod, 4)
    assert on[:2] == off[:2] == ("finding", [("deadlock", "deadlock")])
    assert "lanes told apart by bar.warp.sync at line" in on[4]


def test_per_lane_barrier_addresses(tmp_path: Path) -> None:
    # Even lanes use bars[0] (expects 2), odd lanes bars[1] (expects 3: a planted bug): the odd lanes
    # deadlock. Lanes merge only with the lane that uses the same barrier.
    mod = _module(tmp_path, """	.shared .align 8 .b64 bars[2];
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 mbarrier.init.shared::cta.b64 [bars], 2;
	@%p1 mbarrier.init.shared::cta.b64 [bars+8], 3;
	bar.sync 0;
	and.b32 %r2, %r1, 1;
	shl.b32 %r3, %r2, 3;
	mov.u32 %r4, bars;
	add.u32 %r5, %r4, %r3;
	mbarrier.arrive.shared::cta.b64 _, [%r5];
W:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r5], 0;
	@!%p2 bra W;
	exit;
""")
    on, off = _verdicts(mod, 4)
    assert on[:2] == off[:2] == ("finding", [("deadlock", "deadlock")])
    r = check(mod, grid=1, block=4)  # type: ignore[arg-type]
    assert {w.thread for w in r.findings[0].waiters} == {1, 3}


WARPS = """	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 mbarrier.init.shared::cta.b64 [bar], 2;
	bar.sync 0;
	and.b32 %r2, %r1, 31;
	setp.ne.u32 %p2, %r2, 0;
	@%p2 exit;
	shfl.sync.idx.b32 %r3, %r2, 0, 31, 1;
	mbarrier.arrive.shared::cta.b64 _, [bar];
W:
	mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
	@!%p3 bra W;
{TAIL}
	exit;
"""
WARP_ID_LATE = """	mov.u32 %r4, %warpid;
	setp.eq.u32 %p4, %r4, 1;
	@!%p4 bra OUT;
STUCK:
	mbarrier.try_wait.parity.shared::cta.b64 %p5, [bar], 1;
	@!%p5 bra STUCK;
OUT:"""


def _after_one_step_of(mod: ast.Module, firsts: tuple[int, ...]) -> list[tuple[object, object]]:
    """Keys (canonical, plain) of the states where, after bar.sync, only thread `first` has stepped."""
    m = sim.launch(mod, grid=1, block=64)
    e = Explorer(m, mod, _options(races=False))
    assert e.symmetry is not None
    aids: list[int] = []
    for t in m.threads:
        e.eager(t, aids)
    # Thread 0 initializes; every arrival at bar.sync runs eagerly (`explore.wholebar`), thread 0's last.
    e.fire([m.threads[0]], aids)
    assert not any(t.wait for t in m.threads)  # everyone is past bar.sync
    start = snapshot.save(m, e.tokens)
    out = []
    for first in firsts:
        snapshot.restore(m, start)
        e.fire([m.threads[first]], aids)
        out.append(e.symmetry.key(snapshot.save(m, e.tokens)))
    return out


def test_whole_warps_merge_when_lanes_cannot(tmp_path: Path) -> None:
    # Lane 0 of each of two warps arrives and waits; the shfl (lane-position-sensitive) rules out sorting
    # lanes, but the two warps are exchanged whole: "warp 0's lane 0 went first" and "warp 1's lane 0
    # went first" are one state.
    mod = _module(tmp_path, WARPS.replace("{TAIL}", ""))
    assert lane_sensitive(mod) is not None
    (c0, p0), (c32, p32) = _after_one_step_of(mod, (0, 32))
    assert p0 != p32 and c0 == c32


def test_warps_that_read_their_warp_id_late_do_not_merge(tmp_path: Path) -> None:
    # The same, but warp 1 reads %warpid after the wait and then waits for a phase that never comes: the
    # two states have different futures, and different keys.
    mod = _module(tmp_path, WARPS.replace("{TAIL}", WARP_ID_LATE))
    (c0, _), (c32, _) = _after_one_step_of(mod, (0, 32))
    assert c0 != c32


def test_alike_threads_that_partial_order_reduction_must_order_merge(tmp_path: Path) -> None:
    # Each thread takes a ticket from a shared counter (dependent steps: every order is explored) and
    # drops it; then all meet on an mbarrier. Alike threads: symmetry keeps counts, not orders.
    mod = _module(tmp_path, """	.shared .align 8 .b64 bar;
	.shared .align 4 .b32 ctr;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 mbarrier.init.shared::cta.b64 [bar], 4;
	bar.sync 0;
	atom.shared.add.u32 %r2, [ctr], 1;
	mbarrier.arrive.shared::cta.b64 _, [bar];
W:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra W;
	exit;
""")
    for races in (False, True):
        on, off = _verdicts(mod, 4, races=races)
        assert on[0] == off[0] == "verified"
        assert on[3] > 0 and 4 * on[2] < off[2]


# -- dead registers --------------------------------------------------------------------------------------
def test_liveness_dead_registers_and_fixed_guards(tmp_path: Path) -> None:
    mod = _module(tmp_path, """	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	mov.u32 %r2, 7;
	@%p1 bra A;
	st.shared.u32 [0], %r2;
A:
	mov.u32 %r2, 9;
	st.shared.u32 [4], %r2;
	exit;
""", "\t.shared .align 4 .b32 w[2];\n")
    m = sim.launch(mod, grid=1, block=2)
    e = Explorer(m, mod, Options())
    lv = Liveness(mod.functions[0], e.code)
    from mbarrier.sim.compile import SPECIAL_SLOT
    tid = SPECIAL_SLOT["%tid.x"]
    assert tid in lv.live(0, m.threads[0].regs)        # read by the first instruction
    regs = list(m.threads[0].regs)
    # At pc 3 (the guarded branch) %p1 is fixed: thread 0 (p1 true) skips the store, so %r2 is dead.
    r2 = e.code.ins[2].defs
    p1 = e.code.ins[1].defs
    (p1_slot,), (r2_slot,) = tuple(p1), tuple(r2)
    regs[p1_slot] = True
    assert r2_slot not in lv.live(3, regs) and p1_slot in lv.live(3, regs)
    regs[p1_slot] = False
    assert r2_slot in lv.live(3, regs)
    assert tid not in lv.live(3, regs)                  # the identity is dead after the setp


def test_residual_signature_ignores_values_that_decide_nothing(tmp_path: Path) -> None:
    # %r2 = tid * 4 feeds a store only when tid == 0: threads 1..3 have one signature, thread 0 another.
    mod = _module(tmp_path, """	mov.u32 %r1, %tid.x;
	shl.b32 %r2, %r1, 2;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra A;
	st.shared.u32 [%r2], %r1;
A:
	exit;
""", "\t.shared .align 4 .b32 w[4];\n")
    m = sim.launch(mod, grid=1, block=4)
    e = Explorer(m, mod, Options())
    res = Residual(mod.functions[0], e.code, m.threads[0], m)
    keys = [res.key(0, t.regs) for t in m.threads]
    assert keys[1] == keys[2] == keys[3] != keys[0]


# -- the ring buffer: lanes and consumer warps do merge ---------------------------------------------------
def test_ring_buffer_lanes_and_consumer_warps_merge() -> None:
    # nvcc's ring buffer (5 warps; 2..4 consume and do nothing lane-specific but lane 0's arrive). Run it
    # (lowest thread first) until the 128 consumer lanes can all pass their first wait, then take each
    # enabled move once: far fewer canonical states than plain ones; lanes 1.. of warps 2..4 went to one
    # state, lanes of warp 1 (each stores its own out[lane]) did not.
    mod = sim.load(examples.path("ring_buffer"))
    m = CASES["ring_buffer"].launch(mod)
    e = Explorer(m, mod, _options(races=False))
    assert e.symmetry is not None and e.symmetry.lanes
    aids: list[int] = []
    for t in m.threads:
        e.eager(t, aids)
    while True:
        agents, _ = e.enabled()
        waits = [a for a in agents if isinstance(a, Thread) and e.ins(a).op == "mbarrier.try_wait"]
        if sum(a.aid >= 32 for a in waits) == 128:
            break
        e.fire([agents[0]], aids)
    start = snapshot.save(m, e.tokens)
    keys = {}
    for a in agents:
        snapshot.restore(m, start)
        e.fire([a], [])
        keys[a.aid] = e.symmetry.key(snapshot.save(m, e.tokens))
    canonical, plain = {hash(k[0]) for k in keys.values()}, {hash(k[1]) for k in keys.values()}
    assert len(plain) == len(keys) >= 128 and len(canonical) < len(plain) / 3
    assert keys[65][0] == keys[66][0] == keys[97][0] == keys[159][0] != keys[64][0] == keys[96][0]
    assert len({hash(keys[a][0]) for a in range(32, 64)}) == 32


# -- reporting and replay ---------------------------------------------------------------------------------
def test_cli_reports_merges_and_a_finding_found_with_symmetry_replays(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Lanes 0-2 merge while lane 3, after the wait, arrives four more times: a phase it did not wait for.
    _module(tmp_path, """	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 mbarrier.init.shared::cta.b64 [bar], 4;
	bar.sync 0;
	mbarrier.arrive.shared::cta.b64 _, [bar];
W:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra W;
	setp.eq.u32 %p3, %r1, 3;
	@%p3 mbarrier.arrive.shared::cta.b64 _, [bar];
	@%p3 mbarrier.arrive.shared::cta.b64 _, [bar];
	@%p3 mbarrier.arrive.shared::cta.b64 _, [bar];
	@%p3 mbarrier.arrive.shared::cta.b64 _, [bar];
	@%p3 mbarrier.arrive.shared::cta.b64 _, [bar];
	exit;
""")
    p = tmp_path / "k.ptx"
    assert main(["check", str(p), "--grid", "1", "--block", "4", "--json", "--symmetry"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["stats"]["symmetric_merges"] > 0 and "symmetry: lanes of a warp" in out["mode"]
    finding = out["findings"][0]
    sched = tmp_path / "s.txt"
    sched.write_text(finding["schedule"])
    assert main(["run", str(p), "--grid", "1", "--block", "4", "--schedule", f"@{sched}"]) == 1
    assert finding["rule"] in capsys.readouterr().out
    assert main(["check", str(p), "--grid", "1", "--block", "4", "--json", "--no-symmetry"]) == 1
    off = json.loads(capsys.readouterr().out)
    assert off["stats"]["symmetric_merges"] == 0 and "symmetry" not in off["mode"]
    assert off["findings"][0]["rule"] == finding["rule"]
    assert main(["check", str(p), "--grid", "1", "--block", "4", "--symmetry"]) == 1
    assert "symmetric merges" in capsys.readouterr().out
