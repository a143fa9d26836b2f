"""Export one launch as a Promela model for SPIN, with the state graph of `check --no-reduce`.

Each thread is an instance of one proctype (`_pid` is its thread index), or, where the launch needs more
processes than SPIN runs (255), each warp (or the fewest warps that fit) is one process that steps any one
of its threads at a time (`explore.promela_procs`); each instruction is one atomic statement, so one SPIN
transition is one simulator step. A spin-wait (see `explore.code`) is a guard
that blocks until the wait would return True, exactly as the checker treats it. A pool of copy engines
(processes) takes the cp.async.bulk copies as they are issued; an engine lands its copy's bytes and
completes its transaction in one step. A thread at bar.sync or at a warp collective (bar.warp.sync,
elect.sync, vote.sync) is blocked until the barrier or the collective completes: its next instruction
is written a second time behind that guard (label `R<pc>`), reading back the collective's result.
Exited threads and idle engines block at `end` labels (SPIN's valid end state), so a SPIN "invalid end
state" is the checker's deadlock and undefined behaviour is an assertion.

Supported: one CTA or the CTAs of one cluster (one-dimensional grid and block), with `mapa`, remote
arrives, multicast copies and barrier.cluster; integer parameters (their launch values)
and pointers to buffers (`buffer << 24 | offset`; a pointer is only offset, never otherwise computed
on); 32-bit integer arithmetic as the hardware does it, 64-bit arithmetic on values that fit 32 bits
(checked: `MODEL_LIMIT`); ld/st.shared and ld/st.global of 32 bits; bar.sync / bar.arrive with any id
and thread count; bar.warp.sync, elect.sync and vote.sync over the full warp; the mbarrier
instructions init, arrive(_drop){.expect_tx,.noComplete}, expect_tx, complete_tx, test_wait and
try_wait (parity or token) on the CTA's own objects; cp.async.bulk global -> shared (into the CTA's
own shared memory); cp.async and cp.async.mbarrier.arrive{.noinc} (pools of engines: a copy lands, an
arrive-on arrives once its thread's earlier copies landed). Anything else stops the export with its line
and "cannot be exported".
"""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.explore import promela_arith
from mbarrier.explore.code import (
    BAR,
    BULK,
    CLUSTER,
    CP_ASYNC,
    CP_MB,
    MB,
    WARP,
    Code,
    Ins,
    _slot_maps,
    analyse,
    shared_symbols,
)
from mbarrier.explore.promela_procs import Location, Step, grouped, me, per_thread
from mbarrier.explore.promela_text import (
    COLLECTIVE_ACC,
    COPY,
    CP_ASYNC_DECL,
    CP_ASYNC_ENGINES,
    PRELUDE,
    collective_done,
    copy_issue,
    cp_async_issue,
    thread_exit,
)
from mbarrier.ptx import ast
from mbarrier.sim.launch import pick_kernel
from mbarrier.sim.machine import Machine
from mbarrier.sim.registry import Kind, Space, facts_of

BUF_SHIFT = 24          # a pointer to buffer k is k << 24 | offset
GLOBAL_BYTES = 512      # bytes of each global buffer the model keeps (accesses beyond: MODEL_LIMIT)
COPY_ENGINES = 4        # copies in flight at once (more: MODEL_LIMIT)
MAX_PROCESSES = 255     # SPIN's limit on running processes
CP_ASYNC_ENGINES_MAX = 64  # cp.async copies (and as many arrive-ons) in flight at once, within that limit
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1


class ExportError(Exception):
    """The kernel uses something the Promela export does not support (message names the line)."""


@dataclass
class _Ctx:
    regs: dict[str, int]
    ins: ast.Instruction
    info: Ins


@dataclass(frozen=True)
class _Resume:
    """What the instruction after a blocking one waits for (`cond`) and then reads back (`eff`)."""

    cond: str
    eff: str


_VOTES = (".any", ".all", ".uni", ".ballot")


class Exporter:
    def __init__(self, m: Machine, module: ast.Module, fn: ast.Function, global_bytes: int,
                 per: int | None = None) -> None:
        if len(m.clusters) != 1:
            raise ExportError("the Promela export models one cluster (or one CTA): a grid of several "
                              "clusters cannot be exported")
        if any(any(t.tid[1:]) for t in m.threads) or any(any(c.ctaid[1:]) for c in m.ctas):
            raise ExportError("the Promela export models a one-dimensional block and grid (--block N, "
                              "--grid N)")
        self.nctas = len(m.ctas)
        self.block = len(m.threads) // self.nctas
        if m.ctas[0].size % 16:  # CTA r's shared memory is sh[r * SMEM ...]: copies keep their alignment
            raise ExportError(f"shared memory of {m.ctas[0].size} bytes, not a multiple of 16")
        self.m = m
        self.fn = fn
        self.gbytes = global_bytes
        self.symbols = shared_symbols(m)
        self.code: Code = analyse(fn, m.functions[fn.name], self.symbols)
        self.buffers: list[str] = list(m.buffers)
        self.params: dict[str, tuple[int, int]] = {}  # name -> (value in the model, bytes)
        for p in fn.params:
            off, size = m.params.names[p.name]
            if p.name in m.buffers:
                self.params[p.name] = ((self.buffers.index(p.name) + 1) << BUF_SHIFT, size)
                continue
            v = m.params.load(off, size) if size <= 8 else None
            if v is not None and v >= 1 << (8 * size - 1):
                v -= 1 << (8 * size)  # the model's ints are signed: a u32 of 2^31 or more wraps as int does
            if v is not None and (_INT_MIN <= v <= _INT_MAX) and size in (4, 8):
                self.params[p.name] = (v, size)
        for name, (base, _) in m.buffers.items():
            region = m.gmem.region(base, 0)[0]
            if any(any(page) for page in region.pages.values()):
                raise ExportError(f"buffer {name} starts with data: the model's global buffers start "
                                  "zero-filled")
        self.nthreads = len(m.threads)
        self.pcs = list(_slot_maps(self.fn))
        kinds = {self.code.ins[pc].kind for pc, (s, _) in enumerate(self.pcs) if s.opcode == "cp"}
        self.ncq = COPY_ENGINES * self.nctas if BULK in kinds else 0  # bulk copy engines
        self.ampere = bool(kinds & {CP_ASYNC, CP_MB})  # cp.async and its arrive-on are used
        self.per = self.threads_per_process(per)
        self.cluster_used = False               # barrier.cluster is used
        self.kinds: list[str] = []              # collective kinds, in order of first use
        self.resumes: dict[int, _Resume] = {}   # pc after a blocking instruction -> its guard

    def processes(self, per: int) -> tuple[int, int] | None:
        """(processes of threads, cp.async engines) with `per` threads per process; None: over SPIN's
        limit."""
        np = -(-self.nthreads // per)
        nca = min(CP_ASYNC_ENGINES_MAX, 2 * self.nthreads, (MAX_PROCESSES - np - self.ncq) // 2) \
            if self.ampere else 0
        return None if np + self.ncq > MAX_PROCESSES or (self.ampere and nca < 1) else (np, nca)

    def threads_per_process(self, per: int | None) -> int:
        """One thread per process where the launch fits SPIN's limit, else a warp (or 2, 4, ... warps:
        the fewest that fit); `per`: this many, where that fits."""
        tries = [per] if per is not None else [1, *(32 << k for k in range(8))]
        for n in tries:
            if n < 1:
                raise ExportError(f"{n} threads per process: at least 1")
            if self.processes(n) is not None:
                return n
        n = tries[-1]
        np = -(-self.nthreads // n)
        raise ExportError(f"SPIN runs at most {MAX_PROCESSES} processes; the model of this launch has "
                          f"{np + self.ncq + 2 * self.ampere} ({self.nthreads} threads"
                          f"{f' in {np} processes of {n}' if n > 1 else ''}, {self.ncq} bulk copy "
                          f"engines{' and cp.async engines' if self.ampere else ''})")

    def loc(self, name: str) -> str:
        """A variable of the running thread: a local of its process, one per thread of a group."""
        return name if self.per == 1 else f"{name}[THR]"

    # -- operands ------------------------------------------------------------------------------------
    def var(self, c: _Ctx, name: str) -> str:
        if name in c.regs:
            return self.loc(f"v{c.regs[name]}")
        special = {"%tid.x": "TID", "%tid": "TID", "%laneid": "LANE", "%ntid.x": "BLK", "%ntid": "BLK",
                   "%tid.y": "0", "%tid.z": "0", "%ctaid.x": "CTA", "%ctaid": "CTA", "%ctaid.y": "0",
                   "%ctaid.z": "0", "%nctaid.x": "NC", "%nctaid.y": "1", "%nctaid.z": "1",
                   "%cluster_ctarank": "CTA", "%cluster_nctarank": "NC", "%cluster_ctaid.x": "CTA",
                   "%cluster_nctaid.x": "NC", "%clusterid.x": "0", "%nclusterid.x": "1", "%ntid.y": "1",
                   "%ntid.z": "1"}
        if name in special:
            return special[name]
        if name in self.symbols:
            return str(self.symbols[name])
        if any(p.name == name for p in self.fn.params):
            raise self.fail(c, f"the address of kernel parameter {name}: the export has no parameter "
                            "memory, it reads a parameter only as `ld.param [name]`")
        raise self.fail(c, f"operand {name}")

    def src(self, c: _Ctx, op: ast.Operand) -> str:
        if isinstance(op, ast.Name):
            return self.var(c, op.name)
        if isinstance(op, ast.Imm):
            if not _INT_MIN <= op.value <= _INT_MAX:
                if op.value & 0xFFFFFFFF == 0xFFFFFFFF:
                    return "-1"
                raise self.fail(c, f"immediate {op.text} (too wide for the model)")
            return str(op.value)
        if isinstance(op, ast.Not):
            return f"(!{self.src(c, op.operand)})"
        if isinstance(op, ast.Vector) and len(op.items) == 1:
            return self.src(c, op.items[0])
        raise self.fail(c, "operand form")

    def addr(self, c: _Ctx, op: ast.Operand) -> str:
        if not isinstance(op, ast.Address) or op.items:
            raise self.fail(c, "address form")
        if op.base is None:
            return str(op.offset)
        base = self.var(c, op.base.name)
        return base if op.offset == 0 else f"({base} + {op.offset})"

    def shared(self, c: _Ctx, op: ast.Operand, space: Space | None, own: bool = False) -> tuple[str, str]:
        """(check, byte of `sh`) of a shared-memory operand; a .shared::cluster address names a CTA of
        the cluster by its rank (`own`: it must be this CTA's)."""
        a = self.addr(c, op)
        if space == Space.CTA:
            return "", f"(CTA * SMEM + {a})"
        if space == Space.CLUSTER:
            return f"cl_chk({a}); " + (f"assert(CLR({a}) == CTA); " if own else ""), f"CL({a})"
        raise self.fail(c, "state space")

    def dst(self, c: _Ctx, op: ast.Operand) -> str | None:
        if isinstance(op, ast.Sink):
            return None
        if isinstance(op, ast.Name) and op.name in c.regs:
            return self.loc(f"v{c.regs[op.name]}")
        raise self.fail(c, "destination")

    def fail(self, c: _Ctx, what: str) -> ExportError:
        return ExportError(f"line {c.ins.pos.line}: `{c.ins.text}` cannot be exported to Promela ({what})")

    # -- instructions --------------------------------------------------------------------------------
    def arith(self, c: _Ctx) -> str:
        """Integer arithmetic, cvt and cvta (`explore.promela_arith`)."""
        s, ops = c.ins, c.ins.operands
        d = self.dst(c, ops[0])
        if d is None:
            return "skip"
        a = [self.src(c, o) for o in ops[1:]]
        shift = ops[2].value if s.opcode == "shr" and len(ops) > 2 and isinstance(ops[2], ast.Imm) else None
        try:
            check, e = promela_arith.convert(s.opcode, s.qualifiers, a[0]) if s.opcode in ("cvt", "cvta") \
                else promela_arith.arith(s.opcode, s.qualifiers, a, shift)
        except promela_arith.FormError as err:
            raise self.fail(c, str(err)) from None
        return f"{check}{d} = {e}"

    def body(self, c: _Ctx) -> str:
        """The statement's effect (C-like Promela), without control flow."""
        s, q, ops = c.ins, c.ins.qualifiers, c.ins.operands
        op, f = s.opcode, facts_of(s)
        space = f.access.space if f.access is not None else None
        if op in ("fence", "membar", "nanosleep"):
            return "skip"
        if op == "mov":
            d = self.dst(c, ops[0])
            return f"{d} = {self.src(c, ops[1])}" if d else "skip"
        if op in ("cvt", "cvta"):
            return self.arith(c)
        if op == "mapa":
            if ".shared::cluster" not in q or len(ops) != 3:
                raise self.fail(c, "only mapa.shared::cluster")
            d, a, r = self.dst(c, ops[0]), self.src(c, ops[1]), self.src(c, ops[2])
            return f"assert({r} >= 0 && {r} < NC); " + (f"{d} = (({r} + 1) << 24) | ({a} & 16777215)" if d
                                                        else "skip")
        if op in promela_arith.OPCODES:
            return self.arith(c)
        if op == "setp":
            e = promela_arith.compare(q, *[self.src(c, o) for o in ops[1:]]) if len(ops) == 3 else None
            if e is None:
                raise self.fail(c, "setp form")
            d = self.dst(c, ops[0])
            return f"{d} = {e}" if d else "skip"
        if op == "selp":
            d = self.dst(c, ops[0])
            return (f"{d} = ({self.src(c, ops[3])} -> 0 + {self.src(c, ops[1])} : {self.src(c, ops[2])})"
                    if d else "skip")
        if op == "ld" and space == Space.PARAM:
            return self.ld_param(c)
        if op in ("ld", "st"):
            if f.kind not in (Kind.LOAD, Kind.STORE) or f.access is None or f.access.size != 4:
                raise self.fail(c, "only 32-bit loads and stores")
            mem = {Space.CTA: "sh", Space.GLOBAL: "gl"}.get(f.access.space)
            if mem is None:
                raise self.fail(c, "state space")
            if op == "ld":
                d = self.dst(c, ops[0])
                return f"{mem}_ld({d or 'tok_sink'}, {self.addr(c, ops[1])})"
            return f"{mem}_st({self.addr(c, ops[0])}, {self.src(c, ops[1])})"
        if op == "mbarrier":
            return self.mbarrier(c)
        if op == "cp" and c.info.kind == CP_ASYNC:
            return self.cp_async(c)
        if op == "cp" and c.info.kind == CP_MB:
            return self.cp_async_arrive(c)
        if op == "cp":
            return self.bulk_copy(c)
        raise self.fail(c, "instruction")

    def ld_param(self, c: _Ctx) -> str:
        a, f = c.ins.operands[1], facts_of(c.ins)
        if not isinstance(a, ast.Address) or a.base is None or a.items or a.offset or \
                not any(p.name == a.base.name for p in self.fn.params):
            raise self.fail(c, "a parameter read through an address or at an offset: the export has no "
                            "parameter memory, it reads a parameter only as `ld.param [name]`")
        if a.base.name not in self.params:
            raise self.fail(c, f"parameter {a.base.name}: its launch value does not fit the model's 32 bits")
        value, size = self.params[a.base.name]
        if f.access is None or f.access.size != size:
            raise self.fail(c, f"a {f.access.size if f.access else '?'}-byte read of the {size}-byte "
                            f"parameter {a.base.name}")
        d = self.dst(c, c.ins.operands[0])
        return f"{d} = {value}" if d else "skip"

    def bulk_copy(self, c: _Ctx) -> str:
        x, ops, f = c.info, c.ins.operands, facts_of(c.ins)
        cp = f.copy
        if x.kind != BULK or cp is None or cp.barrier is None or cp.src is None or \
                cp.src.space != Space.GLOBAL or c.ins.opcode != "cp" or \
                not c.ins.qualifiers[:2] == (".async", ".bulk") or len(ops) != (5 if x.multicast else 4):
            raise self.fail(c, "only cp.async.bulk global -> shared with an mbarrier")
        size = str(x.size) if x.size is not None else self.src(c, ops[2])
        src = self.addr(c, ops[1])
        who = f"ME * 65536 + {c.info.pc}"  # the checker tells copies apart by issuer and line too
        if not x.multicast:
            chk1, dst = self.shared(c, ops[0], cp.dst.space)
            chk2, bar = self.shared(c, ops[3], cp.barrier.space)
            return f"{chk1}{chk2}cq_issue({dst}, {src}, {size}, MB({bar}), ({who}))"
        # one copy into the same offsets of each CTA the mask names (bits 16 and up are not ranks)
        d, b, mask = self.addr(c, ops[0]), self.addr(c, ops[3]), self.src(c, ops[4])
        parts = [f"assert((({mask}) & 65535) >> NC == 0)"]
        for r in range(self.nctas):
            parts.append(f"if :: (({mask}) >> {r}) & 1 -> cq_issue(({r} * SMEM + ({d} & 16777215)), {src}, "
                         f"{size}, MB({r} * SMEM + ({b} & 16777215)), ({who})) :: else fi")
        return "; ".join(parts)

    def cp_async(self, c: _Ctx) -> str:
        """cp.async.ca/.cg shared <- global, without a source size: an engine lands it later."""
        ops = c.ins.operands
        if len(ops) != 3:
            raise self.fail(c, "cp.async with a source size or a cache policy")
        return f"cpa_issue({self.addr(c, ops[0])}, {self.addr(c, ops[1])}, {self.src(c, ops[2])})"

    def cp_async_arrive(self, c: _Ctx) -> str:
        """cp.async.mbarrier.arrive{.noinc}: the pending count rises now (without .noinc); an engine
        arrives once the thread's cp.async copies in flight now have landed."""
        use = facts_of(c.ins).copy
        if use is None or use.dst is None:
            raise self.fail(c, "cp.async.mbarrier.arrive form")
        chk, at = self.shared(c, c.ins.operands[0], use.dst.space, own=True)
        return f"{chk}mb_at({at}); cpa_arrive(MB({at}), {1 if use.noinc else 0})"

    def mbarrier(self, c: _Ctx) -> str:
        x, ops = c.info, c.ins.operands
        sub = x.mb_op
        mb = facts_of(c.ins).mbarrier
        if mb is None or mb.address is None or mb.address.space not in (Space.CTA, Space.CLUSTER):
            raise self.fail(c, "only .shared mbarrier objects")
        chk, at = self.shared(c, ops[mb.address.operand], mb.address.space,
                              own=sub not in ("arrive", "arrive_drop", "expect_tx", "complete_tx"))
        chk += f"mb_at({at}); "
        if sub == "init":
            return f"{chk}mb_init(MB({at}), {self.src(c, ops[1])})"
        if sub in ("expect_tx", "complete_tx"):
            sign = "" if sub == "expect_tx" else "-"
            return f"{chk}mb_tx(MB({at}), {sign}{self.src(c, ops[1])})"
        if sub in ("arrive", "arrive_drop"):
            d = self.dst(c, ops[0])
            tok = d if d is not None else "tok_sink"
            count, tx = "1", "0"
            if mb.expect_tx:
                tx = self.src(c, ops[2])
            elif len(ops) > 2:
                count = self.src(c, ops[2])
            nc = "1" if mb.no_complete else "0"
            drop = "1" if sub == "arrive_drop" else "0"
            return f"{chk}mb_arrive(MB({at}), {count}, {tx}, {nc}, {drop}, {tok})"
        raise self.fail(c, f"mbarrier.{sub}")

    # -- blocking instructions -----------------------------------------------------------------------
    def bar(self, c: _Ctx, pc: int) -> str:
        """bar.sync / bar.arrive: the effect; a bar.sync's next instruction waits for the release."""
        x, ops = c.info, c.ins.operands
        if not 1 <= len(ops) <= 2 or x.sync_all == "cluster":
            raise self.fail(c, "bar form")
        ident = self.src(c, ops[0])
        count = f"({self.src(c, ops[1])} + 1)" if len(ops) == 2 else "0"
        g = self.loc("g")
        if x.bar_waits:  # this CTA's barrier, as bar_arrive counts it
            self.resumes[pc + 1] = _Resume(f"(bar_gen[BI({ident})] != {g})", "")
        return f"bar_arrive({ident}, {count}, {g if x.bar_waits else 'tok_sink'})"

    def collective(self, c: _Ctx, pc: int) -> str:
        """A warp collective over the full warp: the lane counts in; the last one completes it."""
        s, ops = c.ins, c.ins.operands
        if s.opcode == "bar":
            kind, mask, x, outs = "bar.warp.sync", ops[0] if ops else None, "0", ""
        elif s.opcode == "elect" and s.qualifiers == (".sync",) and len(ops) == 2:
            kind, mask, x = "elect.sync", ops[1], "0"
            outs = self.elect_outs(c, ops[0])
        elif s.opcode == "vote" and len(ops) == 3 and sum(m in s.qualifiers for m in _VOTES) == 1:
            mode = next(m for m in _VOTES if m in s.qualifiers)
            kind, mask, x = f"vote{mode}", ops[2], self.src(c, ops[1])
            d = self.dst(c, ops[0])
            res = {".any": "(cw_res[W] != 0)", ".all": "(cw_res[W] == 0)", ".uni": "(cw_res[W] != 3)",
                   ".ballot": "cw_res[W]"}[mode]
            outs = f"{d} = {res}; " if d else ""
        else:
            raise self.fail(c, "a warp collective other than bar.warp.sync, elect.sync and vote.sync")
        full = ""
        if isinstance(mask, ast.Name):  # a register: asserted to hold the full warp when it runs
            full = f"assert(MODEL_LIMIT || {self.src(c, mask)} == -1); "
        elif not (isinstance(mask, ast.Imm) and mask.value & 0xFFFFFFFF == 0xFFFFFFFF):
            raise self.fail(c, "a member mask other than the full warp (0xffffffff)")
        if kind not in self.kinds:
            self.kinds.append(kind)
        k = self.kinds.index(kind)
        w = f"(WARP * NK + {k})"
        acc = COLLECTIVE_ACC[kind].replace("W]", f"{w}]").replace("X", x)
        g = self.loc("g")
        self.resumes[pc + 1] = _Resume(f"(cw_gen[{w}] != {g})", outs.replace("W]", f"{w}]"))
        return (f"{full}cw_cnt[{w}]++; cw_acc[{w}] = {acc}; {g} = cw_gen[{w}]; "
                f"if :: cw_cnt[{w}] >= WLIVE(WARP) -> cw_done_{k}({w}) :: else fi")

    def elect_outs(self, c: _Ctx, op: ast.Operand) -> str:
        """elect.sync's `d|p` (either may be `_`): the leader's lane, and whether this lane leads."""
        names = [n.strip() for n in op.text.split("|")] if isinstance(op, ast.Expr) else \
            [op.name] if isinstance(op, ast.Name) else ["_"]
        if len(names) > 2 or any(n != "_" and n not in c.regs for n in names):
            raise self.fail(c, "destination")
        values = ["32 - cw_res[W]", "(LANE == 32 - cw_res[W])"]
        return "".join(f"{self.loc(f'v{c.regs[n]}')} = {v}; "
                       for n, v in zip(names, values, strict=False) if n != "_")

    # -- statements ----------------------------------------------------------------------------------
    def statement(self, c: _Ctx, pc: int, resume: _Resume | None) -> Step:
        """Instruction pc as one step, control flow included; `resume`: the guard of a thread that comes
        from a blocking instruction (the copy labelled R<pc>)."""
        x = c.info
        if pc in self.m.functions[self.fn.name].unsupported:
            raise self.fail(c, "the simulator does not support it")
        nxt = f"L{pc + 1}"
        cond, pre = (resume.cond, resume.eff) if resume else (None, "")
        guard = None
        if x.guard is not None:
            g = self.loc(f"v{x.guard[0]}")
            guard = f"({g} == 0)" if x.guard[1] else f"({g} != 0)"
        op = c.ins.opcode
        if op == "bra":
            target = f"L{x.target}"
            if guard is None:
                return Step(cond, f"{pre}goto {target}")
            return Step(cond, f"{pre}if :: {guard} -> goto {target} :: else -> goto {nxt} fi")
        if op in ("exit", "ret"):
            eff = "thread_exit(); goto done"
            if guard is None:
                return Step(cond, f"{pre}{eff}")
            return Step(cond, f"{pre}if :: {guard} -> {eff} :: else -> goto {nxt} fi")
        if x.kind == MB and x.mb_op in ("test_wait", "try_wait"):
            return self.wait(c, pc, resume)
        if x.kind == CLUSTER:
            return self.cluster_barrier(c, pc, resume)
        after = nxt
        if x.kind == BAR:
            eff = self.bar(c, pc)
            after = f"R{pc + 1}" if x.bar_waits else nxt
        elif x.kind == WARP:
            eff = self.collective(c, pc)
            after = f"R{pc + 1}"
        else:
            eff = self.body(c)
        if guard is None:
            return Step(cond, f"{pre}{eff}; goto {after}")
        return Step(cond, f"{pre}if :: {guard} -> {eff}; goto {after} :: else -> goto {nxt} fi")

    def cluster_barrier(self, c: _Ctx, pc: int, resume: _Resume | None) -> Step:
        """barrier.cluster.arrive counts the thread in (twice without a wait is a fault); .wait blocks
        until the phase it arrived in has completed (without an arrive before it: a fault)."""
        q = [x for x in c.ins.qualifiers if x not in (".release", ".relaxed", ".acquire", ".aligned")]
        if c.info.guard is not None or q not in ([".cluster", ".arrive"], [".cluster", ".wait"]):
            raise self.fail(c, "barrier.cluster form")
        self.cluster_used = True
        nxt = f"L{pc + 1}"
        arr, g = self.loc("cl_arr"), self.loc("cl_g")
        cond, pre = (resume.cond, resume.eff) if resume else (None, "")
        if q[1] == ".arrive":
            return Step(cond, f"{pre}assert(!{arr}); {arr} = 1; {g} = cl_phase; cl_cnt++; "
                        f"if :: cl_cnt >= cl_live -> cl_phase++; cl_cnt = 0 :: else fi; goto {nxt}")
        # .wait: past a completed phase at once, else blocked until it completes (as bar.sync)
        self.resumes[pc + 1] = _Resume(f"(cl_phase != {g})", f"{arr} = 0; ")
        return Step(cond, f"{pre}assert({arr}); if :: cl_phase != {g} -> {arr} = 0; goto {nxt} "
                    f":: else -> goto R{pc + 1} fi")

    def wait(self, c: _Ctx, pc: int, resume: _Resume | None) -> Step:
        x, ops = c.info, c.ins.operands
        if x.guard is not None:
            raise self.fail(c, "a guarded wait")
        mb = facts_of(c.ins).mbarrier
        assert mb is not None and mb.address is not None
        chk, at = self.shared(c, ops[1], mb.address.space, own=True)
        chk += f"mb_at({at}); "
        bar = f"MB({at})"
        arg = self.src(c, ops[2])
        if x.wait_parity:
            cond = f"((mb[{bar}].phase % 2) != {arg})"
            check = f"assert({arg} == 0 || {arg} == 1); "
        else:
            cond = f"({arg} < mb[{bar}].phase)"
            check = f"assert({arg} >= mb[{bar}].phase - 1); "
        d = self.loc(f"v{x.wait_dst}") if x.wait_dst is not None else "tok_sink"
        ok = f"{d} = 1; mb[{bar}].waited = 1"
        nxt = f"L{pc + 1}"
        first = resume.eff if resume else ""
        if x.spin:  # blocks until it would succeed: the guard comes first, so the step is atomic
            gate = f"{resume.cond} && {cond}" if resume else cond
            return Step(gate, f"{first}{chk}mb_valid({bar}); {check}{ok}; goto {nxt}")
        eff = f"{chk}mb_valid({bar}); {check}if :: {cond} -> {ok} :: else -> {d} = 0 fi"
        return Step(resume.cond if resume else None, f"{first}{eff}; goto {nxt}")

    def export(self) -> str:
        ctxs = [_Ctx(regs, s, self.code.ins[pc]) for pc, (s, regs) in enumerate(self.pcs)]
        locations = [Location(f"L{pc}", f"line {c.ins.pos.line}: {c.ins.text.strip()}",
                              self.statement(c, pc, None)) for pc, c in enumerate(ctxs)]
        end = "thread_exit(); goto done"
        locations.append(Location(f"L{len(ctxs)}", None, Step(None, end)))
        for pc in sorted(self.resumes):  # the blocked copies, known once every statement was written
            r = self.resumes[pc]
            step = Step(r.cond, f"{r.eff}{end}") if pc == len(ctxs) else self.statement(ctxs[pc], pc, r)
            locations.append(Location(f"R{pc}", None, step))
        local = [("int", f"v{i}") for i in sorted({slot for _, regs in self.pcs for slot in regs.values()})]
        if self.cluster_used:
            local += [("bit", "cl_arr"), ("byte", "cl_g")]
        local.append(("int", "g"))
        smem = self.m.ctas[0].size
        counts = self.processes(self.per)
        assert counts is not None  # threads_per_process chose a count that fits
        np, nca = counts
        ncq = self.ncq
        sizes = [self.m.gmem.region(self.m.buffers[b][0], 0)[0].size for b in self.buffers]
        gsize = "0"
        for k, n in reversed(list(enumerate(sizes, 1))):
            gsize = f"(k) == {k} -> {min(n, _INT_MAX)} : ({gsize})"
        procs = "a process per thread" if self.per == 1 else f"a process per {self.per} threads"
        head = PRELUDE.format(procs=procs, nt=self.nthreads, np=np, me=me(self.per), smem=max(smem, 1),
                              nb=max(1, (smem + 7) // 8), nbuf=len(self.buffers) + 1, gbytes=self.gbytes,
                              nw=self.nctas * ((self.block + 31) // 32),
                              nk=max(1, len(self.kinds)), ncq=max(ncq, 1), ncqp=ncq, gsize=gsize,
                              nc=self.nctas, blk=self.block)
        bars = [i.bar_id for i in self.code.ins if i.kind == BAR]
        ids = sorted({b[1] for b in bars if b is not None and b[0] is None})
        if any(b is None or b[0] is not None for b in bars):  # an id in a register: any of the 16
            ids = list(range(16))
        head += copy_issue(ncq) + collective_done(self.kinds) + thread_exit(ids, self.kinds) + "\n"
        if nca:
            head += CP_ASYNC_DECL.format(nca=nca) + cp_async_issue() + "\n"
        threads = per_thread(locations, local) if self.per == 1 else \
            grouped(locations, local, self.per, self.nthreads)
        copies = "" if not ncq else COPY.format(ncq=ncq)
        if nca:
            copies += CP_ASYNC_ENGINES.format(nca=nca)
        return head + threads + copies


def export_promela(module: ast.Module, m: Machine, kernel: str | None = None,
                   global_bytes: int = GLOBAL_BYTES, threads_per_process: int | None = None) -> str:
    """The Promela model of the launched machine `m` of `module` (see the module docstring);
    `global_bytes`: the bytes of each global buffer the model keeps; `threads_per_process`: group the
    threads so (default: one per process where SPIN's process limit allows, else the fewest warps)."""
    return Exporter(m, module, pick_kernel(module, kernel), global_bytes, threads_per_process).export()
