"""A call of `__assertfail` (nvcc's device-side `assert`) in a thread's future (`sim.isa.control.TRAP_CALLS`,
`explore.code`'s `Ins.trap`): it ends the launch with a finding whatever the other threads do, and reads
nothing but its arguments and their strings. It used to count as an instruction the checker cannot see
into: a future that could reach it touched anything (every barrier's count, every byte), so every other
thread's step conflicted with it. CUTLASS's stream-K scheduler asserts on paths the futures cannot rule
out, and its first state's stubborn set held 354 of 706 agents. Same verdicts and kinds as without
reductions, the assertion's finding among them (PTX ISA 9.7.13.15.16 for the waits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

# Every thread stores its word, arrives on `bar` (count: the threads), waits for the phase, reads the next
# thread's word and asserts it is not `bad`.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.extern .func __assertfail
(
    .param .b64 __assertfail_param_0,
    .param .b64 __assertfail_param_1,
    .param .b32 __assertfail_param_2,
    .param .b64 __assertfail_param_3,
    .param .b64 __assertfail_param_4
)
;
.global .align 1 .b8 $str[4] = {120, 33, 61, 0};
.global .align 1 .b8 $file[5] = {107, 46, 99, 117, 0};
.global .align 1 .b8 $fn[2] = {107, 0};
.visible .entry k(.param .u32 bad)
{
	.reg .pred %p<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	.shared .align 8 .b64 bar;
	.shared .align 4 .b8 buf[128];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ntid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SYNC;
	mbarrier.init.shared::cta.b64 [bar], %r2;
SYNC:
	bar.sync 0;
	mov.u32 %r3, buf;
	shl.b32 %r4, %r1, 2;
	add.u32 %r5, %r3, %r4;
	add.u32 %r6, %r1, 100;
	st.shared.u32 [%r5], %r6;
	mbarrier.arrive.shared::cta.b64 %rd1, [bar];
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra WAIT;
	add.u32 %r7, %r1, 1;
	rem.u32 %r8, %r7, %r2;
	shl.b32 %r9, %r8, 2;
	add.u32 %r10, %r3, %r9;
	ld.shared.u32 %r11, [%r10];
	ld.param.u32 %r12, [bad];
	setp.ne.u32 %p3, %r11, %r12;
	@%p3 bra DONE;
	mov.u64 %rd2, $str;  cvta.global.u64 %rd2, %rd2;
	mov.u64 %rd3, $file;  cvta.global.u64 %rd3, %rd3;
	mov.u64 %rd4, $fn;  cvta.global.u64 %rd4, %rd4;
	{
	.param .b64 param0;  st.param.b64 [param0], %rd2;
	.param .b64 param1;  st.param.b64 [param1], %rd3;
	.param .b32 param2;  st.param.b32 [param2], 7;
	.param .b64 param3;  st.param.b64 [param3], %rd4;
	.param .b64 param4;  st.param.b64 [param4], 1;
	call.uni __assertfail, (param0, param1, param2, param3, param4);
	}
DONE:
	ret;
}
"""


@pytest.mark.parametrize("bad", [0, 101])  # 101: thread 0 reads thread 1's word and asserts
@pytest.mark.parametrize("threads", [2, 3])
def test_same_answers_as_without_reductions(tmp_path: Path, bad: int, threads: int) -> None:
    on, _ = differential(load(tmp_path, KERNEL), block=threads, args={"bad": bad})
    assert outcome(on) == (("finding", frozenset({"violation"})) if bad else ("verified", frozenset()))
    if bad:
        assert any("__assertfail" in f.message for f in on.findings)


def test_fewer_states_than_with_a_call_that_touches_anything(tmp_path: Path) -> None:
    # 22, 32 and 42 states at 4, 6 and 8 threads: one chain, the call's `st.param` stores of its arguments
    # are local steps (they write the thread's own frame). Before, 94, 748 and more (the call touching
    # anything); 41, 141 and 529 with those stores counted as stores to any byte.
    k = load(tmp_path, KERNEL)
    states = []
    for n in (4, 6, 8):
        r = check(k, grid=1, block=n, args={"bad": 0}, options=Options(walks=0, max_states=5000))
        assert r.verdict == "verified"
        states.append(r.stats.states)
    assert states[0] < 30 and states[2] - states[1] == states[1] - states[0], states
