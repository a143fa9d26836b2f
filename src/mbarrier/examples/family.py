"""A TMA-style producer/consumer ring as PTX, generated for any size, with planted bugs on request.

P producer threads fill S stages for K iterations: each producer waits until the consumers released the
stage (`empty[s]`), arms `full[s]` with its share of the bytes (`mbarrier.arrive.expect_tx`) and starts
a `cp.async.bulk` of 16 bytes that completes on `full[s]`. C consumer threads (each stands for the
elected lane of a consumer warp) wait on `full[s]`, read their word of the tile, write it to `out`
and release the stage with an arrive on `empty[s]`. Launch: one CTA of P + C threads.

The loops are unrolled and every value has its own register (as nvcc emits it), so the checker knows
each instruction's barrier and address in advance. `bug` plants one mistake:

  missing-arrive   consumer 0 does not release stage 0 in iteration 0        -> deadlock
  wrong-parity     consumers wait for the wrong initial parity of `full`     -> violation or deadlock
  count-high       `empty` expects one arrival more than there are consumers -> deadlock
  count-low        `empty` expects one arrival fewer                         -> violation
  tx-mismatch      producers announce 4 bytes more than they copy            -> deadlock
  extra-arrive     consumer 0 arrives twice on `empty` in iteration 0        -> violation
  refill-early     producers do not wait for `empty` before refilling        -> violation
"""

from __future__ import annotations

BUGS = ("missing-arrive", "wrong-parity", "count-high", "count-low", "tx-mismatch", "extra-arrive",
        "refill-early")
CHUNK = 16  # bytes each producer copies per stage


class _Emit:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = {"r": 0, "p": 0, "rd": 0}
        self.labels = 0

    def reg(self, kind: str) -> str:
        self.n[kind] += 1
        return f"%{kind}{self.n[kind]}"

    def label(self, stem: str) -> str:
        self.labels += 1
        return f"{stem}_{self.labels}"

    def __call__(self, text: str) -> None:
        self.lines.append(text if text.endswith(":") else "\t" + text)


def ring_ptx(producers: int = 1, consumers: int = 2, stages: int = 2, iters: int = 3,
             bug: str | None = None, name: str = "ring") -> str:
    """The kernel's PTX text (see the module docstring)."""
    if bug is not None and bug not in BUGS:
        raise ValueError(f"unknown bug {bug!r} (bugs: {', '.join(BUGS)})")
    if producers < 1 or consumers < 1 or stages < 1 or iters < 1:
        raise ValueError("producers, consumers, stages and iterations must be at least 1")
    if bug == "count-low" and consumers < 2:
        raise ValueError("count-low needs at least 2 consumers")
    p_, c_, s_, k_ = producers, consumers, stages, iters
    e = _Emit()
    stage_bytes = CHUNK * p_
    empty_count = c_ + (1 if bug == "count-high" else -1 if bug == "count-low" else 0)
    expect = CHUNK + (4 if bug == "tx-mismatch" else 0)
    tid = e.reg("r")
    e(f"mov.u32 {tid}, %tid.x;")
    # Thread 0 initializes every barrier, then everyone meets at bar.sync.
    not0 = e.reg("p")
    e(f"setp.ne.u32 {not0}, {tid}, 0;")
    e(f"@{not0} bra SYNC;")
    for s in range(s_):
        e(f"mbarrier.init.shared::cta.b64 [full+{8 * s}], {p_};")
        e(f"mbarrier.init.shared::cta.b64 [empty+{8 * s}], {empty_count};")
    e("fence.mbarrier_init.release.cluster;")  # the inits must reach the copies' complete-tx (async proxy)
    e("SYNC:")
    e("bar.sync 0;")
    is_cons = e.reg("p")
    e(f"setp.ge.u32 {is_cons}, {tid}, {p_};")
    e(f"@{is_cons} bra CONSUMER;")
    # Producer p: its chunk of every tile.
    src = e.reg("rd")
    e(f"ld.param.u64 {src}, [src];")
    tid64 = e.reg("rd")
    e(f"cvt.u64.u32 {tid64}, {tid};")
    off = e.reg("rd")
    e(f"mul.lo.u64 {off}, {tid64}, {CHUNK};")
    base = e.reg("rd")
    e(f"add.u64 {base}, {src}, {off};")
    dst_off = e.reg("r")
    e(f"mul.lo.u32 {dst_off}, {tid}, {CHUNK};")
    for k in range(k_):
        s, rnd = k % s_, k // s_
        if bug != "refill-early":
            ok = e.reg("p")
            loop = e.label("PWAIT")
            e(f"{loop}:")
            e(f"mbarrier.try_wait.parity.shared::cta.b64 {ok}, [empty+{8 * s}], {(rnd & 1) ^ 1};")
            e(f"@!{ok} bra {loop};")
        e(f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [full+{8 * s}], {expect};")
        dst = e.reg("r")
        e(f"mov.u32 {dst}, tile;")
        dst2 = e.reg("r")
        e(f"add.u32 {dst2}, {dst}, {s * stage_bytes};")
        dst3 = e.reg("r")
        e(f"add.u32 {dst3}, {dst2}, {dst_off};")
        srck = e.reg("rd")
        e(f"add.u64 {srck}, {base}, {k * stage_bytes};")
        bar = e.reg("r")
        e(f"mov.u32 {bar}, full;")
        bar2 = e.reg("r")
        e(f"add.u32 {bar2}, {bar}, {8 * s};")
        e(f"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{dst3}], [{srck}], {CHUNK}, "
          f"[{bar2}];")
    e("exit;")
    # Consumer c: one 32-bit word of each tile.
    e("CONSUMER:")
    c = e.reg("r")
    e(f"sub.u32 {c}, {tid}, {p_};")
    out = e.reg("rd")
    e(f"ld.param.u64 {out}, [out];")
    c64 = e.reg("rd")
    e(f"cvt.u64.u32 {c64}, {c};")
    coff = e.reg("rd")
    e(f"mul.lo.u64 {coff}, {c64}, 4;")
    obase = e.reg("rd")
    e(f"add.u64 {obase}, {out}, {coff};")
    word = e.reg("r")
    e(f"mul.lo.u32 {word}, {c}, 4;")
    e(f"rem.u32 {word}, {word}, {stage_bytes};")
    is0 = e.reg("p")
    e(f"setp.eq.u32 {is0}, {c}, 0;")
    for k in range(k_):
        s, rnd = k % s_, k // s_
        parity = (rnd & 1) ^ (1 if bug == "wrong-parity" else 0)
        ok = e.reg("p")
        loop = e.label("CWAIT")
        e(f"{loop}:")
        e(f"mbarrier.try_wait.parity.shared::cta.b64 {ok}, [full+{8 * s}], {parity};")
        e(f"@!{ok} bra {loop};")
        addr = e.reg("r")
        e(f"mov.u32 {addr}, tile;")
        addr2 = e.reg("r")
        e(f"add.u32 {addr2}, {addr}, {s * stage_bytes};")
        addr3 = e.reg("r")
        e(f"add.u32 {addr3}, {addr2}, {word};")
        v = e.reg("r")
        e(f"ld.shared.u32 {v}, [{addr3}];")
        e(f"st.global.u32 [{obase}+{4 * c_ * k}], {v};")
        if bug == "missing-arrive" and k == 0:
            e(f"@!{is0} mbarrier.arrive.shared::cta.b64 _, [empty+{8 * s}];")
        else:
            e(f"mbarrier.arrive.shared::cta.b64 _, [empty+{8 * s}];")
        if bug == "extra-arrive" and k == 0:
            e(f"@{is0} mbarrier.arrive.shared::cta.b64 _, [empty+{8 * s}];")
    e("exit;")
    kinds = (("p", "pred"), ("r", "b32"), ("rd", "b64"))
    regs = "\n".join(f"\t.reg .{t} %{k}<{e.n[k] + 1}>;" for k, t in kinds)
    body = "\n".join(x for x in e.lines if x is not None)
    what = (f"{p_} producer{'s' if p_ > 1 else ''}, {c_} consumer{'s' if c_ > 1 else ''}, {s_} stages, "
            f"{k_} iterations")
    return (f"// A TMA-style ring ({what}){'' if bug is None else ', planted bug: ' + bug}.\n"
            f"// Generated by mbarrier.examples.family.ring_ptx; launch: --grid 1 --block {p_ + c_}\n"
            ".version 8.0\n.target sm_90\n.address_size 64\n\n"
            f".visible .entry {name}(.param .u64 src, .param .u64 out)\n{{\n{regs}\n"
            f"\t.shared .align 16 .b8 tile[{s_ * stage_bytes}];\n"
            f"\t.shared .align 8 .b64 full[{s_}];\n\t.shared .align 8 .b64 empty[{s_}];\n\n{body}\n}}\n")


def block(producers: int, consumers: int) -> int:
    """Threads per CTA for `ring_ptx(producers, consumers, ...)`."""
    return producers + consumers
