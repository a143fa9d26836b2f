"""Addresses wrap as PTX ISA 6.4.1 (Addresses as Operands) says: `[reg+imm]` at the register's width,
then at the state space's (32 bits for shared, local and param). nvcc's Ampere-style cp.async ring forms a
stage's address from a 32-bit shared base that wrapped below 0 (`[%r123+384]`); issue 13: the simulator
added in 64 bits and stopped at a correct kernel with "shared offset 0x100000068 is outside ...". The
same address must be formed the same way by the machine, the checker's footprints and its wait probe."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.cli import main
from mbarrier.explore.check import Options, check_machine
from mbarrier.sim.address import address_mask, cluster_address, mapped, shared_address

from .helpers import module, words

# A 4-stage cp.async ring over 32 threads (hand-written as nvcc forms it: the stages are addressed from
# one base, 3 stages below the last one, which wraps below shared offset 0 for the first threads).
RING = """
    .reg .pred %p<2>;
    .reg .b32 %r<24>;
    .reg .b64 %rd<12>;
    .shared .align 16 .b8 buf[512];
    .shared .align 8 .b64 full;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mul.wide.u32 %rd3, %r2, 1;
    add.s64 %rd4, %rd1, %rd3;
    mov.u32 %r3, buf;
    add.s32 %r4, %r3, %r2;
    add.s32 %r5, %r4, -384;               // &buf[t] - 384: wraps below 0 (0xfffffe80 + 4t)
    cp.async.ca.shared.global [%r5+384], [%rd4], 4;
    cp.async.ca.shared.global [%r5+512], [%rd4+128], 4;
    cp.async.ca.shared.global [%r5+640], [%rd4+256], 4;
    cp.async.ca.shared.global [%r5+768], [%rd4+384], 4;
    setp.eq.u32 %p1, %r1, 0;
    mov.u32 %r10, full;
    add.s32 %r11, %r10, -1024;            // the mbarrier through a wrapped base too (full is at 512)
    mov.u32 %r13, %ntid.x;
    @%p1 mbarrier.init.shared::cta.b64 [%r11+1024], %r13;
    bar.sync 0;
    cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r11+1024];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r11+1024], 0;
    @!%p1 bra WAIT;
    ld.shared.u32 %r6, [%r5+384];
    ld.shared.u32 %r7, [%r5+512];
    ld.shared.u32 %r8, [%r5+640];
    ld.shared.u32 %r9, [%r5+768];
    cvt.u64.u32 %rd5, %r4;
    add.s64 %rd6, %rd5, -384;             // a 64-bit register: wraps at 2^64, then truncated to 32 bits
    ld.shared.u32 %r12, [%rd6+384];
    add.s32 %r6, %r6, %r7;
    add.s32 %r6, %r6, %r8;
    add.s32 %r6, %r6, %r9;
    add.s32 %r6, %r6, %r12;
    add.s64 %rd7, %rd2, %rd3;
    st.global.u32 [%rd7], %r6;
    ret;
"""
PARAMS = ".param .u64 in, .param .u64 out"
INPUT = list(range(128))
EXPECT = [sum(INPUT[t + 32 * s] for s in range(4)) + t for t in range(32)]


def _launch() -> sim.Machine:
    return sim.launch(module(RING, params=PARAMS, name="ring"), grid=1, block=32,
                      args={"in": sim.Buffer.of_ints(INPUT), "out": sim.Buffer(128)})


@pytest.mark.parametrize("seed", range(4))
def test_a_wrapped_32_bit_shared_base_addresses_the_stage_it_names(seed: int) -> None:
    m = _launch()
    r = explore.run(m, explore.RandomScheduler(seed))
    assert r.outcome == "exited", r.message
    assert words(m, "out", 32) == EXPECT


def test_check_forms_the_same_addresses() -> None:
    """Every interleaving of two threads (two stages: their copies, the arrive-ons, the wait): the
    footprints and the wait probe read the wrapped addresses as the machine does."""
    two_stages = "\n".join(line for line in RING.splitlines() if "640]" not in line and "768]" not in line)
    mod = module(two_stages, params=PARAMS, name="ring")
    m = sim.launch(mod, grid=1, block=2, args={"in": sim.Buffer.of_ints(INPUT), "out": sim.Buffer(128)})
    r = check_machine(m, mod, Options(max_states=200_000))
    assert r.verdict == "verified", [f.message for f in r.findings]


def test_a_wrapped_address_outside_memory_is_still_a_fault() -> None:
    """Wrapping is modulo 2^32, not a licence: 0xfffffe80 + 384 + 4096 is offset 0x1000 + 4t, outside."""
    m = sim.launch(module(RING.replace("ld.shared.u32 %r9, [%r5+768];", "ld.shared.u32 %r9, [%r5+4480];"),
                          params=PARAMS, name="ring"), grid=1, block=32,
                   args={"in": sim.Buffer.of_ints(INPUT), "out": sim.Buffer(128)})
    r = explore.run(m)
    assert r.outcome == "violation" and r.rule == "memory-fault"
    assert "a load of 4 bytes at shared offset 0x10" in r.message and "outside the" in r.message


def test_the_masks_follow_the_state_space_and_the_register() -> None:
    assert address_mask("cta") == address_mask("cluster") == address_mask("local") == 0xFFFF_FFFF
    assert address_mask("generic") == address_mask("global") == (1 << 64) - 1
    assert address_mask("generic", 32) == 0xFFFF_FFFF  # a 32-bit register: wraps, then zero-extends
    assert address_mask("cta", 64) == 0xFFFF_FFFF      # a 64-bit register: truncated to the space's width


def test_cvta_to_shared_of_an_address_outside_the_window_is_a_fault() -> None:
    body = """
        .reg .b64 %rd<4>;
        ld.param.u64 %rd1, [out];
        cvta.to.shared.u64 %rd2, %rd1;
        ret;
    """
    r = explore.run(sim.launch(module(body), grid=1, block=1, args={"out": sim.Buffer(8)}))
    assert r.outcome == "violation" and r.rule == "kernel-fault"
    assert "cvta.to.shared of generic address" in r.message and "not in the shared window" in r.message


def test_cvta_to_generic_takes_the_32_bits_of_a_shared_address() -> None:
    body = """
        .reg .b32 %r<4>;
        .reg .b64 %rd<8>;
        .shared .align 4 .b32 x;
        mov.u32 %r1, x;
        st.shared.u32 [%r1], 7;
        mov.u64 %rd1, 0x100000000;
        cvt.u64.u32 %rd2, %r1;
        add.s64 %rd3, %rd2, %rd1;          // high bits beyond the 32-bit shared address
        cvta.shared.u64 %rd4, %rd3;
        ld.u32 %r2, [%rd4];
        ld.param.u64 %rd5, [out];
        st.global.u32 [%rd5], %r2;
        ret;
    """
    m = sim.launch(module(body), grid=1, block=1, args={"out": sim.Buffer(8)})
    r = explore.run(m)
    assert r.outcome == "exited", r.message
    assert words(m, "out", 1) == [7]


def test_the_checkers_view_wraps_as_the_machine_does() -> None:
    """explore.code's Addr carries the mask the compiled code applies: with the registers of a thread at
    the load, base + offset under that mask is the shared offset the machine reads."""
    from mbarrier.explore.check import Explorer

    mod = module(RING, params=PARAMS, name="ring")
    m = sim.launch(mod, grid=1, block=1, args={"in": sim.Buffer.of_ints(INPUT), "out": sim.Buffer(128)})
    e = Explorer(m, mod, Options(races=False))
    t = m.threads[0]
    while not t.site.text.startswith("mbarrier.try_wait"):
        for a in list(m.runnable):
            a.code[a.pc](m, a)
    wait = e.ins(t)
    assert wait.addr is not None and wait.addr.mask == 0xFFFF_FFFF
    full = m.ctas[0].symbols  # the offset of `full` in the CTA's shared memory
    target = e.spins.wait_target(t, wait)
    assert target is not None and full(target[1]) == "full"
    code = e.codes["ring"]
    loads = [x for x in code.ins if "[%r5+" in code.fn.sites[x.pc].text]
    assert len(loads) == 8  # four copies, four loads
    for x in loads:
        a = x.addr
        assert a is not None
        offset = (t.regs[a.base] + a.offset) & a.mask if a.base is not None else a.offset
        assert offset < m.ctas[0].size, (x.line, hex(offset))


CP_ASYNC_RING = Path(__file__).parent / "cuda" / "cp_async_ring.cu"
TILES = 6


@pytest.fixture(scope="module")
def nvcc_ring(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nvcc") / "cp_async_ring.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90a", "-O3", str(CP_ASYNC_RING), "-o", str(out)], check=True,
                   capture_output=True)
    return out


@pytest.mark.tool("nvcc")
def test_nvccs_cp_async_ring_runs_and_verifies(nvcc_ring: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13: a correct kernel never errs out. nvcc's own Ampere-style cp.async ring
    (cuda/cp_async_ring.cu, nvcc -O3): `run` computes its sums, `check` verifies it.
    nvcc 13.0 (V13.0.88) does NOT wrap here: it addresses the stages from `&buf[0][t]` upwards
    (`[%r4+384]`; run with addresses that never wrap, the module still runs clean), as for the eight
    variants we tried (cuda::pipeline, one loop for both ends, 4 words a thread, a loop from
    -(STAGES-1), stages walked by pointers, unsigned unrolled indices, 96-word tiles twice). The wrapped
    base of the issue's report stays covered by the hand-written RING above, formed as nvcc formed it."""
    mod = sim.load(nvcc_ring)
    data = list(range(32 * TILES))
    m = sim.launch(mod, grid=1, block=32, args={0: sim.Buffer.of_ints(data), 1: sim.Buffer(128), 2: TILES})
    r = explore.run(m, explore.RandomScheduler(1))
    assert r.outcome == "exited", r.message
    sums = [sum(data[k * 32 + t] for k in range(TILES)) for t in range(32)]
    assert words(m, "cp_async_ring_param_1", 32) == sums
    argv = [str(nvcc_ring), "--grid", "1", "--block", "2", "--arg", f"0=buf:{4 * 32 * TILES}", "--arg",
            "1=buf:128", "--arg", "2=3"]
    assert main(["run", *argv]) == 0
    assert main(["check", *argv, "--quiet"]) == 0, capsys.readouterr().out
    assert "VERIFIED" in capsys.readouterr().out


def test_mapped_keeps_the_offset_and_names_the_rank() -> None:
    """mapa and a multicast copy's targets: the same offset in the CTA of another rank, whichever CTA the
    address named (shared_address decodes it)."""
    assert mapped(0x40, 1) == cluster_address(1, 0x40)
    assert mapped(cluster_address(0, 0x40), 3) == cluster_address(3, 0x40)
    assert shared_address("cluster", mapped(0x40, 2)) == (2, 0x40)


TENSORMAP_REPLACE = """
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    .shared .align 128 .b8 map[128];
    mov.u32 %r1, %cluster_ctarank;
    cvta.shared.u64 %rd1, map;
    @%p1 bra SKIP;
    {target}
    tensormap.replace.tile.rank.b1024.b32 [%rd2], 1;
SKIP:
    barrier.cluster.arrive; barrier.cluster.wait;
    ret;
"""


@pytest.mark.parametrize(("target", "fault"), [
    ("mov.u64 %rd2, %rd1;", False),                      # the own CTA's map, through the shared window
    ("mapa.u64 %rd2, %rd1, 1;", True),                   # the other CTA's: not .shared::cta (undefined)
    ("cvta.local.u64 %rd2, 0;", True)])                  # the local window
def test_tensormap_replace_through_a_generic_address(target: str, fault: bool) -> None:
    """PTX ISA, tensormap.replace: a generic address must lie in the .global or the .shared::cta window."""
    body = TENSORMAP_REPLACE.replace("{target}", target).replace(
        "@%p1 bra SKIP;", ".reg .pred %p<2>;\n    setp.ne.u32 %p1, %r1, 0;\n    @%p1 bra SKIP;")
    m = sim.launch(module(body), grid=2, block=1, cluster=2, args={"out": sim.Buffer(8)})
    r = explore.run(m)
    if fault:
        assert r.outcome == "violation" and r.rule == "kernel-fault", r.message
        assert "is in neither the .global nor the .shared::cta window" in r.message
    else:
        assert r.outcome == "exited", (r.outcome, r.message)
        assert any(m.ctas[0].smem[:128]) and not any(m.ctas[1].smem[:128])  # CTA 0's map, replaced
