"""A whole-CTA `bar.sync` whose id is a register that only ever holds one immediate (inline asm's
`mov.u32 %r501, 15; bar.sync %r501;`, ThunderKittens' kernels) cuts the frozen futures as `bar.sync 15`
does where counted barriers exist too (`code._constant`): before, its id counted as unknown, no
whole-CTA barrier cut any future, and at the state after ThunderKittens' one `mbarrier.init` 353 of 384
threads were in the stubborn set. Same verdicts and finding kinds as without reductions, with and without
bugs; the same states as with the immediate id."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.explore.check import Options, check

from .helpers import differential, load, outcome

# Thread 0 initializes the mbarrier at data+32 (count `init`); every thread meets at the whole-CTA
# barrier whose id the ID lines set, writes its word and arrives on the mbarrier; the others exit;
# thread 0 waits for the phase (`parity`), passes the counted barrier 1 (count `count`: 1, it alone) and
# reads thread 1's word. The exits in the others' futures conflict with an arrival at the whole barrier:
# only the cut there keeps the sets small.
KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{{
	.reg .pred %p<20>;
	.reg .b32 %r<40>;
	.shared .align 16 .b8 data[64];
	mov.u32 %r0, %tid.x;
	ld.param.u32 %r1, [n];
	shl.b32 %r2, %r0, 2;
	mov.u32 %r3, data;
	add.u32 %r4, %r3, %r2;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra MEET;
	mbarrier.init.shared::cta.b64 [data+32], {init};
MEET:
{id}
	st.shared.u32 [%r4], %r0;
	mbarrier.arrive.shared::cta.b64 _, [data+32];
	@%p0 bra DONE;
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [data+32], {parity};
	@!%p2 bra WAIT;
	bar.sync 1, {count};
	ld.shared.u32 %r7, [data+4];
DONE:
	exit;
}}
"""
IDS = {
    "immediate": "\tbar.sync 15;",
    "register": "\tmov.u32 %r30, 15;\n\tbar.sync %r30;",
    # Two immediates on two paths: not one value, so no cut (the outcome must not change either way).
    "two": "\tmov.u32 %r30, 15;\n\t@%p0 mov.u32 %r30, 14;\n\tbar.sync %r30;",
}

# (id form, init, count, parity, expected kind; None: verified), each with 3 threads
CASES = [("register", "%r1", 1, 0, None), ("register", "4", 1, 0, "deadlock"),
         ("register", "%r1", 1, 1, "race"), ("register", "%r1", 2, 0, "deadlock"),
         ("immediate", "%r1", 1, 0, None), ("two", "%r1", 1, 0, "deadlock")]


@pytest.mark.parametrize(("ident", "init", "count", "parity", "expected"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CASES])
def test_register_ids_same_outcomes_as_without_reductions(tmp_path: Path, ident: str, init: str, count: int,
                                                          parity: int, expected: str | None) -> None:
    text = KERNEL.format(id=IDS[ident], init=init, count=count, parity=parity)
    _, off = differential(load(tmp_path, text), block=3, args={"n": 3})
    if expected is None:
        assert off.verdict == "verified"
    else:
        assert expected in outcome(off)[1]


def test_a_register_id_holding_one_immediate_costs_what_the_immediate_does(tmp_path: Path) -> None:
    """The correct kernel: the same states with `bar.sync %r30` (%r30 = 15 on every path) as with
    `bar.sync 15`, one interleaving, 3n + 5 states (before the register's value was read: 23, 38, 65 and
    116 states for 3 to 6 threads; 4n + 5 while each arrival there took a state, `explore.wholebar`)."""
    for n in (3, 4, 5, 6):
        states = [check(load(tmp_path, KERNEL.format(id=IDS[i], init="%r1", count=1, parity=0)), grid=1,
                        block=n, args={"n": n}, options=Options(runs=False, walks=0)).stats
                  for i in ("register", "immediate")]
        assert states[0].states == states[1].states == states[0].transitions + 1 == 3 * n + 5, (n, states)
