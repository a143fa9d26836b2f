"""Kernels for sm_100a (PTX ISA 8.6) around the mbarrier side of tcgen05.commit (PTX ISA 9.7.16.12.5)
and clusterlaunchcontrol.try_cancel (9.7.12.21.1); ptxas 13.0 assembles each (`test_isa_sm100`)."""

from __future__ import annotations

HEAD = ".version 8.6\n.target sm_100a\n.address_size 64\n"

# A persistent-scheduler loop: ask to cancel a cluster, wait for the 16-byte response, run the canceled
# cluster's work and ask again, or stop. out = {is_canceled, ctaid.x, ctaid.x (v4), ctaid.z (v4)}.
CANCEL = HEAD + """.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .reg .b128 %q<2>;
    .shared .align 16 .b8 resp[16];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd0, [out];
    mbarrier.init.shared::cta.b64 [bar], 1;
    mov.u32 %r9, 0;
LOOP:
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [bar], {tx};
    clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [resp], [bar];
W:
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], %r9;
    @!%p1 bra W;
    xor.b32 %r9, %r9, 1;
    ld.shared.b128 %q1, [resp];
    clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p2, %q1;
    @%p2 bra LOOP;
    clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %r1, %q1;
    clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {{%r2, %r3, %r4, _}}, %q1;
    selp.u32 %r5, 1, 0, %p2;
    st.global.v4.u32 [%rd0], {{%r5, %r1, %r2, %r4}};
    ret;
}}
"""

# .multicast::cluster::all: CTA 0 of a cluster of two asks; the response and the complete-tx reach the
# same offsets in both CTAs; each waits on its own mbarrier and stores ctaid.y of its response.
CANCEL_ALL = HEAD + """.visible .entry k(.param .u64 out)
.reqnctapercluster 2, 1, 1
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .reg .b128 %q<2>;
    .shared .align 16 .b8 resp[16];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd0, [out];
    mov.u32 %r1, %cluster_ctarank;
    mbarrier.init.shared::cta.b64 [bar], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [bar], 16;
    barrier.cluster.arrive; barrier.cluster.wait;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
        .multicast::cluster::all.b128 [resp], [bar];
W:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra W;
    ld.shared.b128 %q1, [resp];
    clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128 %r2, %q1;
    mul.wide.u32 %rd3, %r1, 4;  add.s64 %rd4, %rd0, %rd3;  st.global.u32 [%rd4], %r2;
    barrier.cluster.arrive; barrier.cluster.wait;
    ret;
}
"""

# Thread 0 asks; thread 1 reads the response after a bar.sync that orders the issue, not the landing:
# {wait} is a wait on the mbarrier before the read (none: the read races with the async-proxy write).
CANCEL_READ = HEAD + """.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 16 .b8 resp[16];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd0, [out];
    mov.u32 %r0, %tid.x;
    setp.eq.u32 %p0, %r0, 0;
    @!%p0 bra MEET;
    mbarrier.init.shared::cta.b64 [bar], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [bar], 16;
    clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [resp], [bar];
MEET:
    bar.sync 0;
    @%p0 bra OWNER;
{wait}
    ld.shared.u32 %r1, [resp];
    st.global.u32 [%rd0], %r1;
    ret;
OWNER:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra OWNER;
    ret;
}}
"""
WAIT = """W:
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;
    @!%p1 bra W;"""

# tcgen05.commit .multicast::cluster: CTA 0 of a cluster of two commits with ctaMask 3; each CTA's
# mbarrier (count 1) at the same offset gets the arrive-on; each waits, then stores 7 at out[rank].
COMMIT_ALL = HEAD + """.visible .entry k(.param .u64 out)
.reqnctapercluster 2, 1, 1
{
    .reg .pred %p<4>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd0, [out];
    mov.u32 %r1, %cluster_ctarank;
    mbarrier.init.shared::cta.b64 [bar], 1;
    barrier.cluster.arrive; barrier.cluster.wait;
    setp.eq.u32 %p1, %r1, 0;
    mov.u32 %r2, bar;  mov.u16 %rs1, 3;
    @%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r2], %rs1;
W:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra W;
    mul.wide.u32 %rd3, %r1, 4;  add.s64 %rd4, %rd0, %rd3;  st.global.u32 [%rd4], 7;
    barrier.cluster.arrive; barrier.cluster.wait;
    ret;
}
"""

# One thread commits, tests the phase once (out = whether the arrive-on had already happened), then
# waits for it. With {branch} "@%p1 bra STUCK" (or "@!%p1 bra STUCK") one of the two orders ends waiting
# on `never`, whose phase nothing completes.
COMMIT_ONCE = HEAD + """.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    .shared .align 8 .b64 bar;
    .shared .align 8 .b64 never;
    ld.param.u64 %rd0, [out];
    mbarrier.init.shared::cta.b64 [bar], 1;
    mbarrier.init.shared::cta.b64 [never], 1;
    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];
    mbarrier.test_wait.parity.shared::cta.b64 %p1, [bar], 0;
    selp.u32 %r1, 1, 0, %p1;
    st.global.u32 [%rd0], %r1;
    {branch}
W:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra W;
    ret;
STUCK:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [never], 0;
    @!%p3 bra STUCK;
    ret;
}}
"""

#: Every kernel as ptxas sees it (the formats filled in).
ALL = {
    "cancel": CANCEL.format(tx=16), "cancel_tx32": CANCEL.format(tx=32), "cancel_all": CANCEL_ALL,
    "cancel_read": CANCEL_READ.format(wait=WAIT), "cancel_read_bug": CANCEL_READ.format(wait=""),
    "commit_all": COMMIT_ALL, "commit_once": COMMIT_ONCE.format(branch=""),
    "commit_stuck_if_done": COMMIT_ONCE.format(branch="@%p1 bra STUCK;"),
    "commit_stuck_if_pending": COMMIT_ONCE.format(branch="@!%p1 bra STUCK;"),
}
