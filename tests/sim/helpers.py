"""Building small kernels from PTX snippets and reading their results."""

from __future__ import annotations

from mbarrier import explore, sim
from mbarrier.ptx import ast
from mbarrier.ptx.parser import parse

HEADER = ".version 8.6\n.target sm_90a\n.address_size 64\n"


def module(body: str, params: str = ".param .u64 out", name: str = "k", extra: str = "") -> ast.Module:
    return parse(f"{HEADER}{extra}\n.visible .entry {name}({params})\n{{\n{body}\n}}\n", "test.ptx")


def words(m: sim.Machine, name: str, n: int, width: int = 4, signed: bool = False) -> list[int]:
    base, _ = m.buffers[name]
    out = [m.gmem.load(base + width * i, width) for i in range(n)]
    if signed:
        sign = 1 << (8 * width - 1)
        out = [(v ^ sign) - sign for v in out]
    return out


def run(mod: ast.Module, seed: int = 0, trace: bool = False, **launch: object) -> explore.RunResult:
    m = sim.launch(mod, **launch)  # type: ignore[arg-type]
    return explore.run(m, explore.RandomScheduler(seed), trace=trace)


# CTA 0 of a cluster of two copies one 32-byte tile with cp.async.bulk .multicast::cluster (mask 3) into
# the same offset of both CTAs; each waits on its own barrier and writes the tile's last word to out[rank].
MULTICAST = """
    .reg .pred %p<4>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .shared .align 16 .b8 tile[32];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd0, [out];  ld.param.u64 %rd1, [src];
    mov.u32 %r1, %cluster_ctarank;
    mbarrier.init.shared::cta.b64 [bar], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 32;
    barrier.cluster.arrive; barrier.cluster.wait;
    setp.eq.u32 %p1, %r1, 0;
    mov.u32 %r2, tile;  mov.u32 %r3, bar;  mov.u16 %rs1, 3;
    @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
        [%r2], [%rd1], 32, [%r3], %rs1;
W:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra W;
    ld.shared.u32 %r4, [tile+28];
    mul.wide.u32 %rd3, %r1, 4;  add.s64 %rd4, %rd0, %rd3;  st.global.u32 [%rd4], %r4;
    barrier.cluster.arrive; barrier.cluster.wait;
    ret;
"""
