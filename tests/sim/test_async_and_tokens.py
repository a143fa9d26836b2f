"""Asynchronous engines (cp.async groups, bulk copies both ways) and token provenance in registers."""

from __future__ import annotations

import pytest

from mbarrier import explore, sim
from mbarrier.sim.races import track

from .helpers import MULTICAST, module, run, words

REGS = ".reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n"


def test_cp_async_groups_wait_group_and_wait_all() -> None:
    """cp.async.wait_group N lets N recent groups stay pending; wait_all waits for every copy."""
    body = REGS + """
        .shared .align 16 .b8 buf[64];
        ld.param.u64 %rd0, [out];  ld.param.u64 %rd1, [src];
        cp.async.ca.shared.global [buf], [%rd1], 4;
        cp.async.commit_group;
        cp.async.cg.shared.global [buf+16], [%rd1+16], 16;
        cp.async.commit_group;
        cp.async.wait_group 1;
        ld.shared.u32 %r1, [buf];
        cp.async.ca.shared.global [buf+32], [%rd1+32], 8;
        cp.async.wait_all;
        ld.shared.v4.u32 {%r2, %r3, %r4, %r5}, [buf+16];
        ld.shared.v2.u32 {%r6, %r7}, [buf+32];
        st.global.v4.u32 [%rd0], {%r1, %r2, %r3, %r4};
        st.global.v4.u32 [%rd0+16], {%r5, %r6, %r7, 0};
        ret;
    """
    mod = module(body, params=".param .u64 out, .param .u64 src")
    for seed in range(6):
        args = {"out": sim.Buffer(32), "src": sim.Buffer.of_ints(range(1, 17))}
        r = run(mod, seed=seed, block=1, args=args)
        assert r.ok, r.message
        assert words(r.machine, "out", 7) == [1, 5, 6, 7, 8, 9, 10]


def test_bulk_copies_global_to_shared_and_back() -> None:
    """cp.async.bulk global->shared::cluster completes tx on the mbarrier; shared::cta->global with
    bulk groups lands before wait_group 0 returns."""
    body = REGS + """
        .shared .align 16 .b8 tile[64];
        .shared .align 8 .b64 bar;
        ld.param.u64 %rd0, [out];  ld.param.u64 %rd1, [src];
        mbarrier.init.shared::cta.b64 [bar], 1;
        mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 64;
        mov.u32 %r1, tile;  mov.u32 %r2, bar;
        cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 64, [%r2];
    W:
        mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;
        @!%p1 bra W;
        ld.shared.u32 %r3, [tile+60];
        st.shared.u32 [tile], %r3;
        fence.proxy.async.shared::cta;
        cp.async.bulk.global.shared::cta.bulk_group [%rd0], [%r1], 64;
        cp.async.bulk.commit_group;
        cp.async.bulk.wait_group 0;
        ld.global.u32 %r4, [%rd0+4];
        st.global.u32 [%rd0+64], %r4;
        ret;
    """
    mod = module(body, params=".param .u64 out, .param .u64 src")
    for seed in range(6):
        args = {"out": sim.Buffer(80), "src": sim.Buffer.of_ints(range(100, 116))}
        r = run(mod, seed=seed, block=1, args=args)
        assert r.ok, r.message
        assert words(r.machine, "out", 17) == [115] + list(range(101, 116)) + [101]


def test_a_copy_bigger_than_the_expected_bytes_leaves_the_phase_incomplete() -> None:
    """Expect 32 bytes, copy 64: the tx-count goes 32 -> -32 and never reaches exactly zero, so the
    phase never completes (9.7.13.15.6) and the waiter is reported stuck with the tx-count."""
    body = REGS + """
        .shared .align 16 .b8 tile[64];
        .shared .align 8 .b64 bar;
        ld.param.u64 %rd1, [src];
        mbarrier.init.shared::cta.b64 [bar], 1;
        mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 32;
        mov.u32 %r1, tile;  mov.u32 %r2, bar;
        cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 64, [%r2];
    W:
        mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;
        @!%p1 bra W;
        ret;
    """
    r = run(module(body, params=".param .u64 src"), block=1, args={"src": sim.Buffer(64)})
    assert r.outcome == "stuck"
    [s] = r.stuck
    assert "try_wait.parity" in s.site.text and s.barrier == "bar"
    assert s.state == ("phase 0 (parity 0), 0 of 1 arrival still pending, 32 transaction bytes delivered "
                       "ahead of expect_tx")


def test_a_token_moved_through_registers_keeps_its_provenance() -> None:
    """A wait on a token from two phases ago is caught (9.7.13.15.16), even after `mov`."""
    body = REGS + """
        .shared .align 8 .b64 bar;
        mbarrier.init.shared::cta.b64 [bar], 1;
        mbarrier.arrive.shared::cta.b64 %rd1, [bar];
        mov.b64 %rd2, %rd1;
    W0:
        mbarrier.test_wait.shared::cta.b64 %p1, [bar], %rd2;
        @!%p1 bra W0;
        mbarrier.arrive.shared::cta.b64 %rd3, [bar];
    W1:
        mbarrier.test_wait.shared::cta.b64 %p1, [bar], %rd3;
        @!%p1 bra W1;
        mbarrier.test_wait.shared::cta.b64 %p2, [bar], %rd2;
        ret;
    """
    r = run(module(body, params=""), block=1)
    assert r.outcome == "violation" and r.rule == "wait-stale-token"
    assert r.site is not None and "%rd2" in r.site.text


def test_a_remote_wait_is_a_cluster_operation_violation() -> None:
    body = REGS + """
        .shared .align 8 .b64 bar;
        mbarrier.init.shared::cta.b64 [bar], 1;
        barrier.cluster.arrive; barrier.cluster.wait;
        mov.u32 %r1, bar;  mapa.shared::cluster.u32 %r2, %r1, 1;
        cvt.u64.u32 %rd1, %r2;  cvta.shared.u64 %rd2, %rd1;
        mbarrier.try_wait.parity.b64 %p1, [%rd2], 0;
        ret;
    """
    r = run(module(body, params=""), grid=2, cluster=2, block=1)
    assert r.outcome == "violation" and r.rule == "cluster-operation"


def test_a_misaligned_mbarrier_is_an_alignment_violation() -> None:
    body = REGS + ".shared .align 8 .b8 raw[16];\nmbarrier.init.shared::cta.b64 [raw+4], 1;\nret;"
    r = run(module(body, params=""), block=1)
    assert r.outcome == "violation" and r.rule == "alignment"


def test_multicast_bulk_copy_lands_in_every_cta_of_the_mask() -> None:
    """cp.async.bulk ... .multicast::cluster: CTA 0 copies one tile into the same offset of both CTAs of
    the cluster; each CTA's own barrier at the same offset gets the bytes' complete-tx."""
    mod = module(MULTICAST, params=".param .u64 out, .param .u64 src")
    for seed in range(4):
        r = run(mod, seed=seed, grid=2, cluster=2, block=1,
                args={"out": sim.Buffer(8), "src": sim.Buffer.of_ints(range(10, 18))})
        assert r.ok, r.message
        assert words(r.machine, "out", 2) == [17, 17]


def test_st_async_and_red_async_complete_tx_on_the_remote_barrier() -> None:
    """st.async and red.async.add into the other CTA's shared memory land later and complete 4 bytes of
    tx each on its mbarrier; the owner waits, then reads both."""
    body = REGS + """
        .shared .align 8 .b64 bar;
        .shared .align 4 .b32 slot[2];
        ld.param.u64 %rd0, [out];
        mov.u32 %r1, %cluster_ctarank;  xor.b32 %r2, %r1, 1;
        mbarrier.init.shared::cta.b64 [bar], 1;
        mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [bar], 8;
        st.shared.u32 [slot+4], 100;
        barrier.cluster.arrive; barrier.cluster.wait;
        mov.u32 %r3, slot;  mapa.shared::cluster.u32 %r4, %r3, %r2;
        mov.u32 %r5, bar;  mapa.shared::cluster.u32 %r6, %r5, %r2;
        add.u32 %r7, %r1, 7;
        st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r4], %r7, [%r6];
        red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r4+4], %r7, [%r6];
    W:
        mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;
        @!%p1 bra W;
        ld.shared.v2.u32 {%r8, %r9}, [slot];
        mul.wide.u32 %rd2, %r1, 8;  add.s64 %rd3, %rd0, %rd2;  st.global.v2.u32 [%rd3], {%r8, %r9};
        barrier.cluster.arrive; barrier.cluster.wait;
        ret;
    """
    for seed in range(4):
        r = run(module(body), seed=seed, grid=2, cluster=2, block=1, args={"out": sim.Buffer(16)})
        assert r.ok, r.message
        assert words(r.machine, "out", 4) == [8, 108, 7, 107]


def test_remote_access_to_a_cta_that_has_exited_is_a_fault() -> None:
    """CTA 1 stores into CTA 0's shared memory after a cluster barrier; without a second cluster barrier
    CTA 0 may already have exited (its shared memory is gone). With it, never."""
    def body(final_sync: str) -> str:
        return REGS + f"""
            .shared .align 4 .b32 slot;
            mov.u32 %r1, %cluster_ctarank;
            barrier.cluster.arrive; barrier.cluster.wait;
            setp.eq.u32 %p1, %r1, 0;
            @%p1 bra DONE;
            mov.u32 %r2, slot;  mapa.shared::cluster.u32 %r3, %r2, 0;
            st.shared::cluster.u32 [%r3], 5;
        DONE:
            {final_sync}
            ret;
        """
    results = [run(module(body(""), params=""), seed=s, grid=2, cluster=2, block=1) for s in range(8)]
    assert {r.outcome for r in results} == {"exited", "violation"}
    assert all("whose threads have all exited" in r.message and r.rule == "remote-cta-exited"
               for r in results if r.outcome == "violation")
    sync = "barrier.cluster.arrive; barrier.cluster.wait;"
    assert all(run(module(body(sync), params=""), seed=s, grid=2, cluster=2, block=1).ok for s in range(8))


def test_a_copy_that_lands_after_its_cta_exited_is_a_fault() -> None:
    """A bulk store from shared memory that nobody waits for: when it runs after the CTA exited, its source
    is gone (cp.async.bulk.wait_group.read exists for this)."""
    body = REGS + """
        .shared .align 16 .b8 tile[16];
        ld.param.u64 %rd0, [out];
        mov.u32 %r1, tile;
        cp.async.bulk.global.shared::cta.bulk_group [%rd0], [%r1], 16;
        cp.async.bulk.commit_group;
        ret;
    """
    results = [run(module(body), seed=s, block=1, args={"out": sim.Buffer(16)}) for s in range(8)]
    assert {r.outcome for r in results} == {"exited", "violation"}  # the copy may also land in time
    assert all("whose threads have all exited" in r.message and r.rule == "exit-with-copies-in-flight"
               for r in results if r.outcome == "violation")
    waited = body.replace("ret;", "cp.async.bulk.wait_group.read 0;\n ret;")
    assert all(run(module(waited), seed=s, block=1, args={"out": sim.Buffer(16)}).ok for s in range(8))


@pytest.mark.parametrize("red, init, src, expect", [
    (".add.u32", [0xFFFFFFFF, 5, 7, 9], [1, 2, 3, 4], [0, 7, 10, 13]),         # modulo 2^32
    (".min.s32", [-5, 5, 0, 2], [3, -7, 0, 1], [-5, -7, 0, 1]),                # signed
    (".max.u32", [1, 0xFFFFFFFE, 3, 4], [2, 1, 3, 0], [2, 0xFFFFFFFE, 3, 4]),
    (".inc.u32", [0, 3, 5, 9], [3, 3, 3, 9], [1, 0, 0, 0]),                   # old >= src -> 0, else old+1
    (".dec.u32", [0, 3, 5, 1], [3, 3, 3, 9], [3, 2, 3, 0]),                   # old == 0 or old > src -> src
    (".xor.b32", [0xF0F0, 1, 2, 3], [0xFF00, 1, 1, 1], [0x0FF0, 0, 3, 2]),
])
def test_a_bulk_reduction_combines_each_element_into_global_memory(
        red: str, init: list[int], src: list[int], expect: list[int]) -> None:
    """cp.reduce.async.bulk.global.shared::cta.bulk_group.redOp.type (PTX ISA 9.7.9.25.4.2): the engine
    reads `size` bytes of shared memory and performs `.redOp` on each element of `.type` with the global
    one; the bulk group tracks it like a bulk store."""
    body = REGS + f"""
        .shared .align 16 .b32 tile[4];
        ld.param.u64 %rd0, [out];  ld.param.u64 %rd1, [src];
        ld.global.v4.u32 {{%r4, %r5, %r6, %r7}}, [%rd1];
        st.shared.v4.u32 [tile], {{%r4, %r5, %r6, %r7}};
        fence.proxy.async.shared::cta;
        mov.u32 %r1, tile;
        cp.reduce.async.bulk.global.shared::cta.bulk_group{red} [%rd0], [%r1], 16;
        cp.async.bulk.commit_group;
        cp.async.bulk.wait_group 0;
        ret;
    """
    mod = module(body, params=".param .u64 out, .param .u64 src")
    mask = 0xFFFFFFFF
    args = {"out": sim.Buffer.of_ints([v & mask for v in init]),
            "src": sim.Buffer.of_ints([v & mask for v in src])}
    m = sim.launch(mod, block=1, args=args)
    track(m)
    r = explore.run(m, explore.RandomScheduler(0))
    assert r.ok, r.message
    assert words(m, "out", 4, signed=red.endswith("s32")) == expect


def test_a_float_bulk_reduction_is_refused_by_name() -> None:
    body = """
        .reg .b64 %rd<2>;  .reg .b32 %r<2>;
        .shared .align 16 .b32 tile[4];
        ld.param.u64 %rd0, [out];  mov.u32 %r1, tile;
        cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd0], [%r1], 16;
        ret;
    """
    r = run(module(body), block=1, args={"out": sim.Buffer(16)})
    assert r.outcome == "unsupported" and ".add.f32" in r.message
