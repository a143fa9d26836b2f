"""The instruction registry (`sim.registry`): every opcode the simulator executes is declared once, with
facts that agree with what its executor does, and the checker reads nothing else (a register-only
instruction costs the checker no states, whichever opcode it is)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mbarrier import examples, sim
from mbarrier.core.violations import Violation
from mbarrier.explore.check import Options, check
from mbarrier.explore.code import analyse, shared_symbols
from mbarrier.explore.footprints import READ, WRITE, Footprints
from mbarrier.ptx import ast
from mbarrier.ptx.parser import parse
from mbarrier.sim.compile import SPECIAL_CONSTANTS
from mbarrier.sim.errors import SimError
from mbarrier.sim.registry import REGISTRY, Kind, facts_of

from .helpers import MULTICAST

HEADER = ".version 8.6\n.target sm_90a\n.address_size 64\n"
DECLS = """
    .reg .pred %p<8>;
    .reg .b16 %h<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    .reg .f64 %fd<8>;
    .reg .b128 %q<2>;
    .shared .align 16 .b8 buf[64];
    .shared .align 8 .b64 bar;
"""

# At least one instruction of each declared opcode (every copy, barrier and mbarrier form the facts tell
# apart). A new instruction needs its line here: the first test names an opcode that has none.
SAMPLES: dict[str, tuple[str, ...]] = {
    **{op: (f"{op}.u32 %r1, %r2, %r3;",) for op in ("add", "sub", "div", "rem", "min", "max")},
    "mul": ("mul.lo.u32 %r1, %r2, %r3;",), "mad": ("mad.lo.u32 %r1, %r2, %r3, %r4;",),
    "fma": ("fma.rn.f32 %f1, %f2, %f3, %f4;",),
    "addc": ("addc.u32 %r1, %r2, %r3;",), "subc": ("subc.u32 %r1, %r2, %r3;",),
    "madc": ("madc.lo.u32 %r1, %r2, %r3, %r4;",),
    **{op: (f"{op}.s32 %r1, %r2;",) for op in ("abs", "neg")},
    **{op: (f"{op}.b32 %r1, %r2, %r3;",) for op in ("and", "or", "xor")},
    **{op: (f"{op}.b32 %r1, %r2;",) for op in ("not", "cnot", "popc", "clz", "brev")},
    **{op: (f"{op}.b32 %r1, %r2, 3;",) for op in ("shl", "shr")},
    "bfe": ("bfe.u32 %r1, %r2, 4, 8;",), "bfi": ("bfi.b32 %r1, %r2, %r3, 4, 8;",),
    "prmt": ("prmt.b32 %r1, %r2, %r3, 0x3210;",), "selp": ("selp.u32 %r1, %r2, %r3, %p1;",),
    "setp": ("setp.lt.u32 %p1, %r2, %r3;",), "mov": ("mov.u32 %r1, %r2;", "mov.u32 %r1, %clock;"),
    "cvt": ("cvt.u64.u32 %rd1, %r2;", "cvt.rn.bf16x2.f32 %r1, %f2, %f3;", "cvt.rn.relu.f16.f32 %h1, %f2;"),
    "lop3": ("lop3.b32 %r1, %r2, %r3, %r4, 0x96;",), "shf": ("shf.l.wrap.b32 %r1, %r2, %r3, %r4;",),
    "bfind": ("bfind.u32 %r1, %r2;",), "fns": ("fns.b32 %r1, %r2, 0, 1;",),
    "bmsk": ("bmsk.clamp.b32 %r1, %r2, %r3;",), "szext": ("szext.wrap.s32 %r1, %r2, %r3;",),
    "sad": ("sad.u32 %r1, %r2, %r3, %r4;",), "mul24": ("mul24.lo.u32 %r1, %r2, %r3;",),
    "mad24": ("mad24.lo.u32 %r1, %r2, %r3, %r4;",), "dp4a": ("dp4a.u32.u32 %r1, %r2, %r3, %r4;",),
    "dp2a": ("dp2a.lo.u32.u32 %r1, %r2, %r3, %r4;",), "slct": ("slct.u32.s32 %r1, %r2, %r3, %r4;",),
    "copysign": ("copysign.f32 %f1, %f2, %f3;",), "testp": ("testp.finite.f32 %p1, %f2;",),
    **{op: (f"{op}.approx.f32 %f1, %f2;",) for op in ("rsqrt", "sin", "cos", "lg2", "ex2", "tanh")},
    "rcp": ("rcp.rn.f32 %f1, %f2;",), "sqrt": ("sqrt.rn.f32 %f1, %f2;",),
    "cvta": ("cvta.shared.u64 %rd1, %rd2;",), "mapa": ("mapa.shared::cluster.u32 %r1, %r2, 0;",),
    "isspacep": ("isspacep.shared %p1, %rd2;",), "getctarank": ("getctarank.shared::cluster.u32 %r1, %r2;",),
    "prefetch": ("prefetch.global.L2 [%rd2];", "prefetch.param.tensormap [out];"),
    "prefetchu": ("prefetchu.L1 [%rd2];",),
    "setmaxnreg": ("setmaxnreg.inc.sync.aligned.u32 240;",), "griddepcontrol": ("griddepcontrol.wait;",),
    "nanosleep": ("nanosleep.u32 20;",), "fence": ("fence.acq_rel.cta;", "fence.proxy.async;"),
    "membar": ("membar.cta;",),
    "bra": ("bra L;",), "exit": ("exit;",), "ret": ("ret;",), "trap": ("trap;",),
    "call": ("call f, ();",),
    "ld": ("ld.shared.u32 %r1, [buf];", "ld.global.v2.u32 {%r1, %r2}, [%rd2];", "ld.param.u64 %rd1, [out];"),
    "st": ("st.shared.u32 [buf], %r1;", "st.global.u32 [%rd2], %r1;",
           "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%r2], %r1, [%r3];"),
    "atom": ("atom.shared.add.u32 %r1, [buf], 1;",),
    "red": ("red.shared.add.u32 [buf], 1;",
            "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r2], 1, "
            "[%r3];"),
    "mbarrier": ("mbarrier.init.shared::cta.b64 [bar], 1;", "mbarrier.inval.shared::cta.b64 [bar];",
                 "mbarrier.arrive.shared::cta.b64 %rd1, [bar];",
                 "mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [bar], 16;",
                 "mbarrier.arrive_drop.shared::cta.b64 %rd1, [bar];",
                 "mbarrier.expect_tx.shared::cta.b64 [bar], 16;",
                 "mbarrier.complete_tx.shared::cta.b64 [bar], 16;",
                 "mbarrier.test_wait.shared::cta.b64 %p1, [bar], %rd2;",
                 "mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;",
                 "mbarrier.pending_count.b64 %r1, %rd2;"),
    "cp": ("cp.async.ca.shared.global [buf], [%rd2], 4;", "cp.async.commit_group;", "cp.async.wait_group 0;",
           "cp.async.wait_all;", "cp.async.mbarrier.arrive.shared.b64 [bar];",
           "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd2], 16, [bar];",
           "cp.async.bulk.global.shared::cta.bulk_group [%rd2], [buf], 16;",
           "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd2], [buf], 16;",
           "cp.async.bulk.commit_group;",
           "cp.async.bulk.wait_group.read 0;",
           "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [buf], "
           "[%rd2, {%r1, %r2}], [bar];",
           "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
           "[buf], [%rd2, {%r1}], [bar], %h1;",
           "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd2, {%r1, %r2}], [buf];",
           "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd2, {%r1, %r2}], [buf];",
           "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd2, {%r1, %r2}];"),
    "tcgen05": ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];",
                "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
                "[bar], %h1;"),
    "clusterlaunchcontrol": (
        "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [buf], [bar];",
        "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all"
        ".b128 [buf], [bar];",
        "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %q1;",
        "clusterlaunchcontrol.query_cancel.get_first_ctaid::z.b32.b128 %r1, %q1;",
        "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%r1, %r2, %r3, _}, %q1;"),
    "bar": ("bar.sync 0;", "bar.arrive 1, 32;", "bar.warp.sync 0xffffffff;"),
    "barrier": ("barrier.cluster.arrive;", "barrier.cluster.wait;"),
    "elect": ("elect.sync %r1|%p1, 0xffffffff;",), "vote": ("vote.sync.ballot.b32 %r1, %p1, 0xffffffff;",),
    "shfl": ("shfl.sync.idx.b32 %r1, %r2, 0, 0x1f, 0xffffffff;",), "activemask": ("activemask.b32 %r1;",),
    "redux": ("redux.sync.add.u32 %r1, %r2, 0xffffffff;",),
    "match": ("match.any.sync.b64 %r1, %rd2, 0xffffffff;", "match.all.sync.b32 %r1|%p1, %r2, 0xffffffff;"),
    "tensormap": ("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [buf], 1, 8;",
                  "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned "
                  "[%rd2], [buf], 128;"),
    "brkpt": ("brkpt;",),
    "ldmatrix": ("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r1, %r2}, [buf];",),
    "stmatrix": ("stmatrix.sync.aligned.m8n8.x1.shared.b16 [buf], {%r1};",),
    "wgmma": ("wgmma.fence.sync.aligned;", "wgmma.commit_group.sync.aligned;",
              "wgmma.wait_group.sync.aligned 0;",
              "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, "
              "1, 1, 1, 0, 0;",
              "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, "
              "%rd2, %p1;"),
}

# What a step of each kind may call on the machine (the registers and the thread's clock are the
# thread's own; `mapa`, `isspace` and `mb_pending_count` compute from their operands and the launch).
ARITHMETIC = {"div", "rem", "bfe_u", "bfe_s", "bfi", "prmt", "fdiv", "fnum", "f2i", "carry", "clock", "timer"}
ALLOWED: dict[Kind, set[str]] = {
    Kind.REGISTERS: ARITHMETIC | {"mapa", "isspace", "mb_pending_count"},
    Kind.BRANCH: set(), Kind.NOP: set(), Kind.FENCE: {"fence"}, Kind.EXIT: {"exit", "ret", "trap"},
    Kind.CALL: {"call", "call_indirect", "vprintf"},
    # tensor_prefetch reads its tensor map and moves nothing (cp.async.bulk.prefetch.tensor)
    Kind.LOAD: {"ld_cta", "ld_cluster", "ld_global", "ld_local", "ld_gen", "tensor_prefetch"},
    Kind.STORE: {"st_cta", "st_cluster", "st_global", "st_local", "st_gen", "tensormap_replace"},
    Kind.ATOMIC: {"atom"}, Kind.MBARRIER: {"mb_init", "mb_inval", "mb_tx", "mb_arrive", "mb_wait"},
    Kind.BARRIER: {"bar", "cluster_arrive", "cluster_wait"}, Kind.COLLECTIVE: {"coll"},
    Kind.WARP_READ: {"activemask"},
    Kind.COPY: {"cp_async", "bulk_copy", "bulk_store", "bulk_reduce", "st_async", "tensor_load",
                "tensor_store", "try_cancel"},
    Kind.COPY_ARRIVE: {"cp_mb_arrive", "tc_commit"},
    Kind.COPY_COMMIT: {"cp_commit", "bulk_commit", "wg_fence", "wg_commit"},
    Kind.COPY_WAIT: {"cp_wait", "cp_commit"}, Kind.MMA: {"wgmma", "wg_wait"},
}


def _kernel(lines: list[str]) -> ast.Module:
    body = "\n".join(f"    {line}" for line in lines)
    return parse(f"{HEADER}.func f()\n{{\n    ret;\n}}\n.visible .entry k(.param .u64 out)\n"
                 f"{{\n{DECLS}{body}\nL:\n    ret;\n}}\n", "registry.ptx")


def test_every_declared_opcode_has_a_sample_and_every_sample_is_declared() -> None:
    undeclared = sorted(op for op in SAMPLES if op not in REGISTRY)
    assert not undeclared, f"opcodes sampled here that the simulator does not declare: {undeclared}"
    missing = sorted(op for op in REGISTRY if op not in SAMPLES)
    assert not missing, f"declared opcodes with no sample line in SAMPLES: {missing}"


class Recorder:
    """The machine as a compiled step sees it, recording which of its methods the step calls."""

    def __init__(self, m: sim.Machine) -> None:
        self._m = m
        self.used: set[str] = set()

    def __getattr__(self, name: str) -> object:
        self.used.add(name)
        return getattr(self._m, name)


SAMPLE_LINES = [line for lines in SAMPLES.values() for line in lines]


@pytest.mark.parametrize("line", SAMPLE_LINES)
def test_the_facts_agree_with_what_the_executor_does(line: str) -> None:
    """The sample compiles to a real step (not an unsupported one), and running it touches the machine
    only as its facts say: a register-only instruction calls nothing that reads or writes shared state."""
    module = _kernel([line])
    m = sim.launch(module, "k", grid=1, block=1, args={"out": sim.Buffer(64)})
    t = m.threads[0]
    ins = next(s for s in module.functions[1].body or () if isinstance(s, ast.Instruction))
    f = facts_of(ins)
    assert t.site.facts == f
    rec = Recorder(m)
    try:
        t.code[0](rec, t)
    except (Violation, SimError) as e:  # an operand of 0 may be undefined behaviour: what was called counts
        assert "not supported" not in str(e), e
        assert not f.total, f"{line!r} is declared total (its step never raises) but raised {e}"
    if f.kind != Kind.OPAQUE:
        assert rec.used <= ALLOWED[f.kind], f"{line!r} is {f.kind.name} but its step called {rec.used}"
    if f.kind in (Kind.REGISTERS, Kind.BRANCH, Kind.NOP):
        assert f.private


TOTAL_LINES = [line for line in SAMPLE_LINES
               if facts_of(next(s for s in _kernel([line]).functions[1].body or ()
                                if isinstance(s, ast.Instruction))).total]


@pytest.mark.parametrize("line", TOTAL_LINES)
def test_a_total_instruction_never_raises(line: str) -> None:
    """`total` (the checker's state key drops what its operands came from): the step runs on any
    register values without raising."""
    module = _kernel([line])
    m = sim.launch(module, "k", grid=1, block=1, args={"out": sim.Buffer(64)})
    t = m.threads[0]
    rng = random.Random(line)
    first = len(SPECIAL_CONSTANTS)
    for _ in range(200):
        for slot in range(first, len(t.regs)):
            if isinstance(t.regs[slot], bool):
                t.regs[slot] = rng.random() < 0.5
            elif isinstance(t.regs[slot], int):
                t.regs[slot] = rng.choice((0, 1, 0xFFFFFFFF, 1 << 31, rng.getrandbits(64)))
        t.pc = 0
        t.code[0](m, t)


BUNDLED = sorted(Path(examples.__file__).parent.rglob("*.ptx"))


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name for p in BUNDLED])
def test_every_instruction_the_simulator_runs_in_the_bundled_kernels_is_declared(path: Path) -> None:
    """Whatever compiles to a real step is declared, and its site carries its declaration's facts."""
    module = sim.load(path)
    params = sim.pick_kernel(module, None).params
    scalars: dict[str | int, int | sim.Buffer | bytes] = {
        p.name: 0 for p in params if p.type not in (".u64", ".b64")}
    m = sim.launch(module, grid=4, block=1, args=scalars)  # 4: a whole number of clusters
    for fn in module.functions:
        if fn.name not in m.functions:
            continue
        compiled = m.functions[fn.name]
        body = ast.instructions(fn.body or ())
        for ins, site, step in zip(body, compiled.sites, compiled.code, strict=False):
            if "Unsupported" in step.__code__.co_names:
                continue  # it stops the run naming itself when reached
            assert ins.opcode in REGISTRY, f"{path.name}:{ins.pos.line}: {ins.opcode} runs, undeclared"
            assert site.facts == facts_of(ins)


def _states(text: str, tmp_path: Path, block: int) -> int:
    p = tmp_path / "k.ptx"
    p.write_text(text)
    r = check(sim.load(p), grid=1, block=block, options=Options(max_states=10_000, runs=False))
    assert r.verdict == "verified", [f.message for f in r.findings]
    return r.stats.states


RING = (Path(examples.__file__).parent / "corpus" / "ring.ptx").read_text()


def test_register_only_opcodes_cost_the_checker_no_states(tmp_path: Path) -> None:
    """ring.ptx verifies in 44 states (47 before whole-CTA bar.sync arrivals ran eagerly), and so with
    its two mul.lo.u32 written as mul24.lo.u32 (265 when the checker took mul24 for an instruction that
    touches everything). The same kernel computing its offsets with mul24, lop3 and shf explores no more
    states than with mul, and and shl."""
    assert RING.count("mul.lo.u32") == 2 and RING.count("rem.u32 %r19, %r19, 16;") == 1
    assert _states(RING, tmp_path, 3) == 44
    assert _states(RING.replace("mul.lo.u32", "mul24.lo.u32"), tmp_path, 3) == 44
    common = RING.replace("mul.lo.u32 %r19, %r18, 4;", "{}")
    plain = common.replace("mul.lo.u32 %r2, %r1, 16;", "shl.b32 %r2, %r1, 4;") \
        .replace("rem.u32 %r19, %r19, 16;", "and.b32 %r19, %r19, 15;") \
        .replace("{}", "mul.lo.u32 %r19, %r18, 4;")
    other = common.replace("mul.lo.u32 %r2, %r1, 16;", "shf.l.clamp.b32 %r2, 0, %r1, 4;") \
        .replace("rem.u32 %r19, %r19, 16;", "lop3.b32 %r19, %r19, 15, 0, 0xc0;") \
        .replace("{}", "mul24.lo.u32 %r19, %r18, 4;")
    assert _states(other, tmp_path, 3) <= _states(plain, tmp_path, 3)


def test_a_multicast_copy_touches_the_same_offsets_in_every_cta_of_its_mask() -> None:
    """.multicast::cluster lands in every CTA of the mask (the facts say so, with the mask's operand):
    the checker's view of the issue names the tile and the barrier at their offsets in each CTA the mask
    names (and the other CTA's liveness), so the other CTA's accesses to its tile and barrier conflict
    with it; the kernel verifies with and without reductions."""
    text = f"{HEADER}.visible .entry k(.param .u64 out, .param .u64 src)\n{{\n{MULTICAST}\n}}\n"
    module = parse(text, "m.ptx")
    body = module.functions[0].body or ()
    ins = next(s for s in ast.instructions(body) if ".multicast::cluster" in s.qualifiers)
    f = facts_of(ins)
    assert f.copy is not None and f.copy.multicast and f.copy.mask == 4
    args: dict[str | int, int | sim.Buffer | bytes] = {"out": sim.Buffer(8),
                                                       "src": sim.Buffer.of_ints(range(10, 18))}
    m = sim.launch(module, grid=2, block=1, cluster=2, args=args)
    syms = shared_symbols(m)
    view = analyse(module.functions[0], m.functions["k"], syms)
    (copy,) = [x for x in view.ins if x.op.startswith("cp.async.bulk")]
    assert copy.multicast and copy.addr is not None and copy.bar is not None and copy.mask_arg is not None
    assert copy.addr.base is not None and copy.bar.base is not None and copy.mask_arg[0] is not None
    t = m.threads[0]
    tile, bar = syms["tile"], syms["bar"]
    t.regs[copy.addr.base], t.regs[copy.bar.base] = tile, bar
    fp = Footprints(m, view)
    for mask, ctas in ((3, {0, 1}), (1, {0}), (2, {1})):
        t.regs[copy.mask_arg[0]] = mask
        items = set(fp.of_ins(t, copy, copy.pc, False))
        for cta in (0, 1):
            named = {(("sm", cta, tile, tile + 32), WRITE), (("mb", cta, bar), WRITE)} <= items
            assert named == (cta in ctas), (mask, cta, items)
        assert ((("live", 1), READ) in items) == (1 in ctas)
    verdicts = set()
    for reduce in (True, False):
        r = check(module, grid=2, block=1, cluster=2, args=dict(args),
                  options=Options(reductions=reduce, max_states=50_000))
        verdicts.add(r.verdict)
    assert verdicts == {"verified"}
