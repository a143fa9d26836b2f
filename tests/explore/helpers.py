"""What the checker's tests share: a kernel from its text, a check's outcome, and the differential check
of the reductions (the same launch with and without them)."""

from __future__ import annotations

from pathlib import Path

from mbarrier import sim
from mbarrier.explore.check import CheckResult, Options, check
from mbarrier.ptx import ast


def load(tmp_path: Path, text: str, name: str = "k") -> ast.Module:
    p = tmp_path / f"{name}.ptx"
    p.write_text(text)
    return sim.load(p)


def outcome(r: CheckResult, merge_races: bool = False) -> tuple[str, frozenset[str]]:
    """The verdict and the kinds of findings. `merge_races`: races and violations are one kind (the
    reductions promise every deadlock, and for every reachable violation *some* violation: a race ends its
    path like any violation, so a violation behind a race may be reported as that race alone)."""
    kinds = frozenset(str(f.kind) for f in r.findings)
    if merge_races:
        kinds = frozenset("violation" if k == "race" else k for k in kinds)
    return r.verdict, kinds


def differential(module: ast.Module, *, block: int, grid: int = 1, cluster: int | None = None,
                 args: dict[str | int, object] | None = None, races: bool = True, max_states: int = 100_000,
                 walks: int = 0, merge_races: bool = False, runs: bool = True
                 ) -> tuple[CheckResult, CheckResult]:
    """The same launch checked with and without reductions, every finding kept (so no kind is cut off):
    the search without them completes, both give the same verdict and kinds of findings, and the
    reductions never cost states."""
    on, off = (check(module, grid=grid, block=block, cluster=cluster, args=args, options=Options(
        reductions=red, races=races, max_findings=1000, max_states=max_states, walks=walks, runs=runs))
        for red in (True, False))
    assert off.verdict != "incomplete"
    assert outcome(on, merge_races) == outcome(off, merge_races), (
        [(f.kind, f.rule) for f in on.findings], [(f.kind, f.rule) for f in off.findings])
    assert on.stats.states <= off.stats.states
    return on, off


# The head of a kernel (src, out) with a 64-byte `tile` and `bar` in shared memory: thread 0 initializes
# `bar` with count `{count}` (for format()) and the block meets at `bar.sync 0`, `%p1` set for every thread
# but thread 0; the body under test follows.
TILE_BAR_HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 16 .b8 tile[64];
	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar], {count};
SYNC:
	bar.sync 0;
"""


# A block whose every thread arrives on `bar` (expected: the block plus `{extra}`) and, at DONE, reads its
# word of the 64 bytes thread 0 copies into `tile` (`%rd1`: the source, `%r4`: the bytes), for format()
# with `extra` and `lane` (the register DONE indexes by: 1 for the thread index). Between them go the
# producer's copy (from ARRIVE's branch) and the arrivals and waits under test.
BLOCK_ARRIVES_HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 16 .b8 tile[256];
	.shared .align 8 .b64 bar;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ntid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	add.u32 %r3, %r2, {extra};
	mbarrier.init.shared::cta.b64 [bar], %r3;
SYNC:
	bar.sync 0;
	mov.u32 %r4, 64;
	@%p1 bra ARRIVE;
	ld.param.u64 %rd1, [src];
"""
BLOCK_ARRIVES_TAIL = """DONE:
	and.b32 %r6, %r{lane}, 15;
	shl.b32 %r7, %r6, 2;
	mov.u32 %r8, tile;
	add.u32 %r9, %r8, %r7;
	ld.shared.u32 %r10, [%r9];
	ld.param.u64 %rd6, [out];
	mul.wide.u32 %rd7, %r1, 4;
	add.u64 %rd8, %rd6, %rd7;
	st.global.u32 [%rd8], %r10;
	ret;
}}
"""
