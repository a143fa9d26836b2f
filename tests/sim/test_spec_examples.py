"""Every PTX example of PTX ISA 9.7.13.15 runs verbatim on the simulator with the outcome its text describes.

The examples are read from the spec text itself (shared/spec/001_f8cbe79d1de95f85.txt beside the
checkout), so what runs is exactly what the manual shows. A wrapper makes each one a kernel:

* it declares what the example uses but does not declare, and sets the values the text leaves open
  (counts, predicates, addresses) in a setup placed after the example's own declarations;
* the manual's elisions (`...`, `....`, `..` lines, and comments ending in `...`) become comments, and
  where the wrapper has to supply the elided code (an init before use, a branch that keeps CTA 1 out of
  CTA 0's wait) it goes there and nowhere else; the one elided operand (`st.shared.b64 [shmem], ...;`)
  becomes 7;
* a finish stores what the test reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mbarrier import explore, sim
from mbarrier.core import encoding
from mbarrier.ptx.parser import parse

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "001_f8cbe79d1de95f85.txt"


def _examples() -> dict[str, str]:
    """section -> the text of its Examples block, dedented."""
    text = SPEC.read_text()
    out: dict[str, str] = {}
    for part in re.split(r"\n#####  (?=9\.7\.13\.15\.\d+\. )", text)[1:]:
        section = part.split(".", 5)[:5]
        number = ".".join(section)
        if "\nExamples\n" not in part:
            continue
        block = part.split("\nExamples\n", 1)[1]
        lines = [line[4:] if line.startswith("    ") else line for line in block.split("\n")]
        out[number] = "\n".join(lines).strip("\n ")
    return out


EXAMPLES = _examples() if SPEC.is_file() else {}


def _split(text: str, marker: str) -> list[str]:
    """Pieces of a block that holds several examples, each headed by a `// Example` comment."""
    return [p for p in re.split(rf"(?=^{re.escape(marker)})", text, flags=re.M) if p.strip()]


_ELLIPSIS = re.compile(r"^\s*(\.{2,4}|//.*\.\.\.\s*)$")


@dataclass
class Wrap:
    """How one example becomes a kernel."""

    declare: str = ""                 # declarations the example uses but does not make
    setup: str = ""                   # after the example's own declarations, before its first instruction
    fills: dict[int, str] = field(default_factory=dict)  # ellipsis number -> code the manual elided there
    finish: str = ""
    module: str = ""                  # module-level declarations

    def kernel(self, example: str) -> str:
        body: list[str] = []
        setup_done = False
        n = 0
        for line in example.split("\n"):
            stripped = line.strip()
            is_decl = stripped.startswith((".reg", ".shared", ".global", ".param"))
            if not setup_done and stripped and not is_decl and not stripped.startswith("//"):
                body.append(self.setup)
                setup_done = True
            if _ELLIPSIS.match(line):
                body.append(line if stripped.startswith("//") else f"// {stripped}")
                body.append(self.fills.get(n, ""))
                n += 1
                continue
            body.append(line.replace(", ...;", ", 7;"))
        if not setup_done:
            body.append(self.setup)
        return (f".version 8.6\n.target sm_90\n.address_size 64\n{self.module}\n"
                f".visible .entry spec_example(.param .u64 out)\n{{\n.reg .b64 %out;\n{self.declare}\n"
                f"ld.param.u64 %out, [out];\n" + "\n".join(body) + f"\n{self.finish}\nret;\n}}\n")


def _run(example: str, wrap: Wrap, seeds: tuple[int, ...] = (0, 1, 2), **launch: object) -> list[sim.Machine]:
    mod = parse(wrap.kernel(example), "spec_example.ptx")
    machines = []
    for seed in seeds:
        m = sim.launch(mod, args={"out": sim.Buffer(256)}, **launch)  # type: ignore[arg-type]
        r = explore.run(m, explore.RandomScheduler(seed))
        assert r.outcome == "exited", (r.outcome, r.message, r.site, r.stuck[:2])
        machines.append(m)
    return machines


def _bar(m: sim.Machine, name: str, cta: int = 0) -> tuple[bool, int, int, int, int]:
    c = m.ctas[cta]
    for off, b in c.barriers.items():
        if c.symbols(off) == name:
            return b.valid, b.phase, b.pending, b.expected, b.tx
    raise KeyError(name)


def _out(m: sim.Machine, n: int, width: int = 4) -> list[int]:
    base, _ = m.buffers["out"]
    return [m.gmem.load(base + width * i, width) for i in range(n)]


pytestmark = pytest.mark.skipif(not SPEC.is_file(), reason="the spec text is not beside the checkout")


def test_every_example_block_is_covered() -> None:
    assert sorted(EXAMPLES, key=lambda s: int(s.rsplit(".", 1)[1])) == [
        f"9.7.13.15.{n}" for n in range(9, 18)]


def test_9_10_init() -> None:
    """9.7.13.15.9: init sets phase 0 and pending = expected = count, through a generic and a shared
    address."""
    for m in _run(EXAMPLES["9.7.13.15.9"], Wrap(setup="mov.u32 %r1, 4;"), block=1):
        assert _bar(m, "shMem2") == (True, 0, 4, 4, 0)
        assert _bar(m, "shMem") == (True, 0, 12, 12, 0)


def test_9_10_inval_and_reuse() -> None:
    """9.7.13.15.10: after inval the memory may be stored to and initialized again."""
    wrap = Wrap(declare=".shared .b64 other;",
                setup="cvta.shared.u64 addr, other; mov.u32 %r1, 2; setp.eq.u32 t0, %tid.x, 0;")
    for m in _run(EXAMPLES["9.7.13.15.10"], wrap, block=1):
        assert not _bar(m, "other")[0] and not _bar(m, "shmem")[0]
        off = next(o for o, b in m.ctas[0].barriers.items() if m.ctas[0].symbols(o) == "shmem")
        # inval wrote the object back: the word of a fresh init(24).
        assert int.from_bytes(m.ctas[0].smem[off:off + 8], "little") == encoding.encode(0, 24, 0, 24)


def test_9_11_expect_tx_then_9_12_complete_tx() -> None:
    """9.7.13.15.11/12: expect-tx raises the tx-count, complete-tx lowers it (it may go negative)."""
    wrap = Wrap(declare=".shared .b64 mbarObj1, mbarObj2, b0, b2;\n.reg .b64 addr, addr2;",
                setup="cvta.shared.u64 addr, b0; cvta.shared.u64 addr2, b2;\n"
                      + "\n".join(f"mbarrier.init.shared.b64 [{b}], 1;" for b in ("b0", "b2", "mbarObj1",
                                                                                  "mbarObj2")))
    both = EXAMPLES["9.7.13.15.11"] + "\n" + EXAMPLES["9.7.13.15.12"]
    for m in _run(both, wrap, block=1):
        assert _bar(m, "b0") == (True, 0, 1, 1, 0)
        assert _bar(m, "mbarObj1") == (True, 0, 1, 1, 0)
        assert _bar(m, "mbarObj2") == (True, 0, 1, 1, 512)
        assert _bar(m, "b2") == (True, 0, 1, 1, -32)
    for m in _run(EXAMPLES["9.7.13.15.11"], wrap, block=1):
        assert [_bar(m, b)[4] for b in ("b0", "mbarObj1", "mbarObj2")] == [32, 512, 512]


def test_9_13_arrive_every_form_in_a_two_cta_cluster() -> None:
    """9.7.13.15.13: local arrives (with a count, .noComplete, .relaxed) and remote ones through mapa
    (shared::cluster and generic addresses, with a count and with .expect_tx) all land on shMem2."""
    wrap = Wrap(declare=".reg .b32 tx_count;",
                setup="mov.u32 cnt, 1; mov.u32 tx_count, 0;\n"
                      "mov.u32 remoteCTAId, %cluster_ctarank; xor.b32 remoteCTAId, remoteCTAId, 1;\n"
                      "mbarrier.init.shared.b64 [shMem], 1; mbarrier.init.shared.b64 [shMem2], 11;\n"
                      "barrier.cluster.arrive; barrier.cluster.wait;",
                finish="barrier.cluster.arrive; barrier.cluster.wait;")
    for m in _run(EXAMPLES["9.7.13.15.13"], wrap, grid=2, cluster=2, block=1):
        for cta in (0, 1):
            # 1 + 2 + 4 + cnt local arrivals and 1 + cnt + 1 remote ones: phase 0 completed.
            assert _bar(m, "shMem2", cta) == (True, 1, 11, 11, 0)
            assert _bar(m, "shMem", cta) == (True, 1, 1, 1, 0)


def test_9_14_arrive_drop_example_1_threads_leave() -> None:
    """9.7.13.15.14 Example 1: threads p and p2 drop out and exit; the others arrive and test."""
    decls, ex1, _, _ = _split(EXAMPLES["9.7.13.15.14"], "// Example")
    wrap = Wrap(declare=".reg .pred p, p2, q;\n.reg .b32 %a;",
                setup="setp.eq.u32 p, %tid.x, 3; setp.eq.u32 p2, %tid.x, 2; mov.u32 %a, 1;\n"
                      "setp.eq.u32 q, %tid.x, 0; @q mbarrier.init.shared.b64 [shMem], 5; bar.sync 0;")
    for m in _run(decls + ex1, wrap, block=4):
        # init(5); two drops lower expected to 3; four arrivals leave 1 pending (the fifth never comes).
        assert _bar(m, "shMem") == (True, 0, 1, 3, 0)


def test_9_14_arrive_drop_examples_2_and_3() -> None:
    decls, _, ex2, ex3 = _split(EXAMPLES["9.7.13.15.14"], "// Example")
    wrap2 = Wrap(declare=".reg .b32 addr;",
                 setup="mov.u32 addr, shMem; mbarrier.init.shared.b64 [shMem], 4; mov.u32 cnt, 2;")
    for m in _run(decls + ex2, wrap2, block=1):
        assert _bar(m, "shMem") == (True, 0, 1, 1, 0)
    wrap3 = Wrap(declare=".reg .b32 addr, tx_count;\n.reg .b64 state;",
                 setup="mov.u32 addr, shMem; mbarrier.init.shared.b64 [shMem], 2; mov.u32 tx_count, 64;")
    for m in _run(decls + ex3, wrap3, block=1):
        assert _bar(m, "shMem") == (True, 0, 1, 1, 64)


GBL = {i: [(7 * i + k) % 256 for k in range(16)] for i in range(1, 7)}
SHARD_SIZE = {1: 4, 2: 16, 3: 4, 4: 16, 5: 4, 6: 16}


def _copies_module() -> str:
    return "\n".join(f".global .align 16 .b8 gbl{i}[16] = {{{', '.join(map(str, GBL[i]))}}};" for i in GBL)


def _store_shards(ids: list[int]) -> str:
    lines = []
    for n, i in enumerate(ids):
        lines.append(f"ld.shared.v4.u32 {{%w0, %w1, %w2, %w3}}, [shard{i}];")
        lines.append(f"st.global.v4.u32 [%out+{16 * n}], {{%w0, %w1, %w2, %w3}};")
    return "\n".join(lines)


def _expected_shards(m: sim.Machine, ids: list[int]) -> None:
    got = _out(m, 4 * len(ids))
    for n, i in enumerate(ids):
        raw = b"".join(v.to_bytes(4, "little") for v in got[4 * n:4 * n + 4])
        assert list(raw[:SHARD_SIZE[i]]) == GBL[i][:SHARD_SIZE[i]]


def test_9_15_cp_async_mbarrier_arrive_examples() -> None:
    """9.7.13.15.15: with and without .noinc, the wait returns once the cp.async data has landed."""
    ex1, ex2 = _split(EXAMPLES["9.7.13.15.15"], "// Example")
    shards = "\n".join(f".shared .align 16 .b8 shard{i}[16];" for i in GBL)
    common = (f".shared .align 8 .b64 shMem;\n{shards}\n.reg .b32 threadCount, %w<4>;\n.reg .b64 state;\n"
              ".reg .pred p;")
    wrap1 = Wrap(module=_copies_module(), declare=common, setup="mov.u32 threadCount, 1;",
                 finish=_store_shards([1, 2]))
    for m in _run(ex1, wrap1, block=1):
        assert _bar(m, "shMem") == (True, 1, 1, 1, 0)
        _expected_shards(m, [1, 2])
    wrap2 = Wrap(module=_copies_module(),
                 declare=common + "\n.reg .b32 copyOperationCnt, copyArrivalCnt, totalCount;",
                 setup="mov.u32 threadCount, 1;", finish=_store_shards([1, 2, 3, 4, 5, 6]))
    for m in _run(ex2, wrap2, block=1):
        assert _bar(m, "shMem") == (True, 1, 4, 4, 0)  # 1 arrive + 3 .noinc arrive-ons per thread
        _expected_shards(m, [1, 2, 3, 4, 5, 6])


def _wait_examples() -> dict[str, str]:
    parts = _split(EXAMPLES["9.7.13.15.16"], "// Example")
    return {p.split()[2].rstrip(","): p for p in parts}


def test_9_16_example_1a_1b_and_2_waits() -> None:
    """9.7.13.15.16 Examples 1a/1b (test_wait with nanosleep, try_wait.relaxed.cluster) and 2 (a parity
    loop over IterMax phases): each wait loop ends when the phase completes."""
    ex = _wait_examples()
    wrap = Wrap(declare=".reg .b32 N;\n.reg .pred complete;", setup="mov.u32 N, 1;")
    for name in ("1a", "1b"):
        for m in _run(ex[name], wrap, block=1):
            assert _bar(m, "shMem") == (True, 1, 1, 1, 0)
    wrap2 = Wrap(declare=".reg .b32 N, IterMax;\n.reg .pred complete, p;",
                 setup="mov.u32 N, 1; mov.u32 IterMax, 5;")
    for m in _run(ex["2"], wrap2, block=1):
        assert _bar(m, "shMem") == (True, 5, 1, 1, 0)


def test_9_16_example_1a_is_one_initializing_thread() -> None:
    """The fragment initializes without a guard: run by two threads, the second init is on a valid
    object (9.7.13.15.9), so the example is read as one thread's code."""
    wrap = Wrap(declare=".reg .b32 N;\n.reg .pred complete;", setup="mov.u32 N, 2;")
    m = sim.launch(parse(wrap.kernel(_wait_examples()["1a"])), block=2, args={"out": sim.Buffer(8)})
    r = explore.run(m, explore.RandomScheduler(0))
    assert r.outcome == "violation" and r.rule == "init-on-valid"


def test_9_16_example_3_async_copy_completion() -> None:
    wrap = Wrap(declare=".reg .b32 threadCount;\n.reg .pred p;", setup="mov.u32 threadCount, 1;")
    for m in _run(_wait_examples()["3"], wrap, block=1):
        assert _bar(m, "shMem2") == (True, 1, 1, 1, 0)


def test_9_16_example_4_cluster_threads_arrive_on_cta0() -> None:
    """Example 4: one thread of CTA 0 initializes; every thread of the cluster arrives remotely on CTA 0's
    object; CTA 0's threads wait for parity 0. The wrapper fills the elided code after the arrive with a
    branch that keeps the other CTAs out of the wait, as the text says ("Only CTA0 threads...")."""
    wrap = Wrap(declare=".reg .b32 N;\n.reg .pred p0, complete, notCta0, lead;",
                setup="mov.u32 N, 8;\nsetp.eq.u32 notCta0, %cluster_ctarank, 0; not.pred notCta0, notCta0;\n"
                      "setp.eq.u32 lead, %tid.x, 0; and.pred p0, lead, !notCta0;",
                fills={0: "@notCta0 bra Done;"}, finish="Done:")
    for m in _run(_wait_examples()["4"], wrap, grid=4, cluster=2, block=4):
        for cta in (0, 2):
            assert _bar(m, "shMem", cta) == (True, 1, 8, 8, 0)


def test_9_17_pending_count() -> None:
    """9.7.13.15.17: pending_count of a .noComplete token is the pending count before that arrive."""
    wrap = Wrap(setup="mbarrier.init.shared.b64 [shMem], 3;", finish="st.global.u32 [%out], %r1;")
    for m in _run(EXAMPLES["9.7.13.15.17"], wrap, block=1):
        assert _out(m, 1) == [3]
        assert _bar(m, "shMem") == (True, 0, 2, 3, 0)
