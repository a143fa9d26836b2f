"""Export one launch as a Promela model for SPIN, with the state graph of `check --no-reduce`.

Each thread is an instance of one proctype (`_pid` is its thread index); each instruction is one atomic
statement, so one SPIN transition is one simulator step. A spin-wait (see `explore.code`) is a guard
that blocks until the wait would return True, exactly as the checker treats it. Every cp.async.bulk
instruction of every thread gets a copy process of its own that waits until it is issued and then lands
its bytes and completes the transaction in one step. Exited threads and landed copies block at an
`end` label (SPIN's valid end state), so a SPIN "invalid end state" is the checker's deadlock and
undefined behaviour is an assertion.

Supported: one CTA (no cluster), 32/64-bit integer arithmetic on small values (pointers become
`buffer << 24 | offset`), ld.param, ld/st.shared, ld/st.global, bar.sync 0 without a count, and the
mbarrier instructions init, arrive(_drop){.expect_tx,.noComplete}, expect_tx, complete_tx, test_wait
and try_wait (parity or token), plus cp.async.bulk global -> shared. Anything else stops the export
with its line and "cannot be exported".
"""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.explore.check import shared_symbols
from mbarrier.explore.code import BAR, BULK, MB, Code, Ins, _slot_maps, analyse
from mbarrier.ptx import ast
from mbarrier.sim.launch import pick_kernel
from mbarrier.sim.machine import Machine
from mbarrier.sim.registry import Kind, Space, facts_of

BUF_SHIFT = 24          # a pointer to buffer k is k << 24 | offset
GLOBAL_BYTES = 512      # bytes of each global buffer the model keeps (stores beyond fail an assertion)


class ExportError(Exception):
    """The kernel uses something the Promela export does not support (message names the line)."""


@dataclass
class _Ctx:
    regs: dict[str, int]
    ins: ast.Instruction
    info: Ins


_CMP = {".eq": "==", ".ne": "!=", ".lt": "<", ".le": "<=", ".gt": ">", ".ge": ">=",
        ".lo": "<", ".ls": "<=", ".hi": ">", ".hs": ">="}
_BIN = {"add": "+", "sub": "-", "and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>", "rem": "%",
        "div": "/"}


class Exporter:
    def __init__(self, m: Machine, module: ast.Module, fn: ast.Function) -> None:
        if len(m.ctas) != 1:
            raise ExportError("the Promela export supports one CTA (grid 1)")
        self.m = m
        self.fn = fn
        self.symbols = shared_symbols(m)
        self.code: Code = analyse(fn, m.functions[fn.name], self.symbols)
        self.params: dict[str, int] = {}
        self.buffers: list[str] = []
        for name in m.buffers:
            self.buffers.append(name)
        for p in fn.params:
            if p.name in m.buffers:
                self.params[p.name] = (self.buffers.index(p.name) + 1) << BUF_SHIFT
        self.nthreads = len(m.threads)
        self.block = m.threads[0].regs
        self.copies: list[tuple[int, int]] = []  # (pc, thread) of each copy process
        self.after_bar: set[int] = set()

    # -- operands ------------------------------------------------------------------------------------
    def var(self, c: _Ctx, name: str) -> str:
        if name in c.regs:
            return f"v{c.regs[name]}"
        special = {"%tid.x": "_pid", "%tid": "_pid", "%laneid": "(_pid % 32)", "%warpid": "(_pid / 32)",
                   "%ntid.x": str(self.nthreads), "%ntid": str(self.nthreads), "%tid.y": "0", "%tid.z": "0",
                   "%ctaid.x": "0", "%cluster_ctarank": "0", "%ntid.y": "1", "%ntid.z": "1"}
        if name in special:
            return special[name]
        if name in self.symbols:
            return str(self.symbols[name])
        if any(p.name == name for p in self.fn.params):
            raise self.fail(c, f"the address of kernel parameter {name}: the export has no parameter "
                            "memory, it reads a parameter only as `ld.param [name]`, a pointer to a buffer")
        raise self.fail(c, f"operand {name}")

    def src(self, c: _Ctx, op: ast.Operand) -> str:
        if isinstance(op, ast.Name):
            return self.var(c, op.name)
        if isinstance(op, ast.Imm):
            if not -(1 << 31) <= op.value < (1 << 31):
                if op.value & 0xFFFFFFFF == 0xFFFFFFFF:
                    return "-1"
                raise self.fail(c, f"immediate {op.text} (too wide for the model)")
            return str(op.value)
        if isinstance(op, ast.Not):
            return f"(!{self.src(c, op.operand)})"
        raise self.fail(c, "operand form")

    def addr(self, c: _Ctx, op: ast.Operand) -> str:
        if not isinstance(op, ast.Address) or op.items:
            raise self.fail(c, "address form")
        if op.base is None:
            return str(op.offset)
        base = self.var(c, op.base.name)
        return base if op.offset == 0 else f"({base} + {op.offset})"

    def dst(self, c: _Ctx, op: ast.Operand) -> str | None:
        if isinstance(op, ast.Sink):
            return None
        if isinstance(op, ast.Name) and op.name in c.regs:
            return f"v{c.regs[op.name]}"
        raise self.fail(c, "destination")

    def fail(self, c: _Ctx, what: str) -> ExportError:
        return ExportError(f"line {c.ins.pos.line}: `{c.ins.text}` cannot be exported to Promela ({what})")

    # -- instructions --------------------------------------------------------------------------------
    def body(self, c: _Ctx, pc: int) -> str:
        """The statement's effect (C-like Promela), without control flow."""
        s, q, ops = c.ins, c.ins.qualifiers, c.ins.operands
        op, f = s.opcode, facts_of(s)
        space = f.access.space if f.access is not None else None
        if op in ("fence", "membar", "nanosleep"):
            return "skip"
        if op == "mov":
            d = self.dst(c, ops[0])
            return f"{d} = {self.src(c, ops[1])}" if d else "skip"
        if op == "cvt" or op == "cvta":
            d = self.dst(c, ops[0])
            return f"{d} = {self.src(c, ops[1])}" if d else "skip"
        if op in _BIN:
            d = self.dst(c, ops[0])
            return f"{d} = {self.src(c, ops[1])} {_BIN[op]} {self.src(c, ops[2])}" if d else "skip"
        if op == "mul":
            d = self.dst(c, ops[0])
            return f"{d} = {self.src(c, ops[1])} * {self.src(c, ops[2])}" if d else "skip"
        if op == "mad":
            d = self.dst(c, ops[0])
            return (f"{d} = {self.src(c, ops[1])} * {self.src(c, ops[2])} + {self.src(c, ops[3])}"
                    if d else "skip")
        if op == "setp":
            cmp = next((_CMP[x] for x in q if x in _CMP), None)
            if cmp is None or len(ops) != 3:
                raise self.fail(c, "setp form")
            d = self.dst(c, ops[0])
            return f"{d} = ({self.src(c, ops[1])} {cmp} {self.src(c, ops[2])})" if d else "skip"
        if op == "selp":
            d = self.dst(c, ops[0])
            return (f"{d} = ({self.src(c, ops[3])} -> {self.src(c, ops[1])} : {self.src(c, ops[2])})"
                    if d else "skip")
        if op == "ld" and space == Space.PARAM:
            a = ops[1]
            if not isinstance(a, ast.Address) or a.base is None or a.items or a.offset or \
                    not any(p.name == a.base.name for p in self.fn.params):
                raise self.fail(c, "a parameter read through an address or at an offset: the export has no "
                                "parameter memory, it reads a parameter only as `ld.param [name]`")
            if a.base.name not in self.params:
                raise self.fail(c, f"parameter {a.base.name} is not a pointer to a buffer, the only "
                                "parameters the export models")
            d = self.dst(c, ops[0])
            return f"{d} = {self.params[a.base.name]}" if d else "skip"
        if op in ("ld", "st"):
            if f.kind not in (Kind.LOAD, Kind.STORE) or f.access is None or f.access.size != 4:
                raise self.fail(c, "only 32-bit loads and stores")
            mem = {Space.CTA: "sh", Space.GLOBAL: "gl"}.get(f.access.space)
            if mem is None:
                raise self.fail(c, "state space")
            if op == "ld":
                d = self.dst(c, ops[0])
                return f"{mem}_ld({d}, {self.addr(c, ops[1])})"
            return f"{mem}_st({self.addr(c, ops[0])}, {self.src(c, ops[1])})"
        if op == "bar" or op == "barrier":
            if c.info.sync_all != "cta" or not (ops and isinstance(ops[0], ast.Imm) and ops[0].value == 0):
                raise self.fail(c, "only bar.sync 0 without a count")
            return "bar_arrive()"
        if op == "mbarrier":
            return self.mbarrier(c)
        if op == "cp":
            if c.info.kind != BULK or c.info.size is None or c.info.multicast:
                raise self.fail(c, "only cp.async.bulk global -> shared with a constant size, no multicast")
            k = self.copies.index((pc, -1))
            bar = self.addr(c, ops[3])
            return (f"cq[{k} * NT + _pid].dst = {self.addr(c, ops[0])}; cq[{k} * NT + _pid].src = "
                    f"{self.addr(c, ops[1])}; cq[{k} * NT + _pid].size = {c.info.size}; "
                    f"cq[{k} * NT + _pid].bar = MB({bar}); cq[{k} * NT + _pid].state = 1")
        raise self.fail(c, "instruction")

    def mbarrier(self, c: _Ctx) -> str:
        x, ops = c.info, c.ins.operands
        sub = x.mb_op
        mb = facts_of(c.ins).mbarrier
        if mb is None or mb.address is None or mb.address.space != Space.CTA:
            raise self.fail(c, "only .shared::cta mbarrier objects")
        if sub == "init":
            return f"mb_init(MB({self.addr(c, ops[0])}), {self.src(c, ops[1])})"
        if sub in ("expect_tx", "complete_tx"):
            sign = "" if sub == "expect_tx" else "-"
            return f"mb_tx(MB({self.addr(c, ops[0])}), {sign}{self.src(c, ops[1])})"
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
            return f"mb_arrive(MB({self.addr(c, ops[1])}), {count}, {tx}, {nc}, {drop}, {tok})"
        if sub in ("test_wait", "try_wait"):
            raise self.fail(c, "wait")  # emitted by `statement`
        raise self.fail(c, f"mbarrier.{sub}")

    def wait_cond(self, c: _Ctx) -> str:
        ops = c.ins.operands
        bar = f"MB({self.addr(c, ops[1])})"
        arg = self.src(c, ops[2])
        if c.info.wait_parity:
            return f"((mb[{bar}].phase % 2) != {arg})"
        return f"({arg} < mb[{bar}].phase)"

    def statement(self, c: _Ctx, pc: int) -> list[str]:
        """The Promela lines of instruction pc (one atomic step), control flow included."""
        x = c.info
        if pc in self.m.functions[self.fn.name].unsupported:
            raise self.fail(c, "the simulator does not support it")
        nxt = f"L{pc + 1}"
        pre = "(bar_gen != g) -> " if pc in self.after_bar else ""
        guard = None
        if x.guard is not None:
            g = f"v{x.guard[0]}"
            guard = f"({g} == 0)" if x.guard[1] else f"({g} != 0)"
        op = c.ins.opcode
        if op == "bra":
            target = f"L{x.target}"
            if guard is None:
                return [f"atomic {{ {pre}goto {target} }}"]
            return [f"atomic {{ {pre}if :: {guard} -> goto {target} :: else -> goto {nxt} fi }}"]
        if op in ("exit", "ret"):
            eff = "thread_exit(); goto done"
            if guard is None:
                return [f"atomic {{ {pre}{eff} }}"]
            return [f"atomic {{ {pre}if :: {guard} -> {eff} :: else -> goto {nxt} fi }}"]
        if x.kind == MB and x.mb_op in ("test_wait", "try_wait"):
            cond = self.wait_cond(c)
            d = f"v{x.wait_dst}" if x.wait_dst is not None else "tok_sink"
            bar = f"MB({self.addr(c, c.ins.operands[1])})"
            stale = "" if x.wait_parity else (f"assert({self.src(c, c.ins.operands[2])} >= "
                                              f"mb[{bar}].phase - 1); ")
            ok = f"{d} = 1; mb[{bar}].waited = 1"
            if guard is not None:
                raise self.fail(c, "a guarded wait")
            if x.spin:  # blocks until it would succeed: the guard comes first, so the step is atomic
                gate = f"(bar_gen != g) && {cond}" if pre else cond
                return [f"atomic {{ {gate} -> mb_valid({bar}); {stale}{ok}; goto {nxt} }}"]
            eff = f"mb_valid({bar}); {stale}if :: {cond} -> {ok} :: else -> {d} = 0 fi"
            return [f"atomic {{ {pre}{eff}; goto {nxt} }}"]
        eff = self.body(c, pc)
        if x.kind == BAR and x.sync_all == "cta":  # bar.sync: the next instruction waits for the release
            self.after_bar.add(pc + 1)
        if guard is None:
            return [f"atomic {{ {pre}{eff}; goto {nxt} }}"]
        return [f"atomic {{ {pre}if :: {guard} -> {eff} :: else fi; goto {nxt} }}"]

    def export(self) -> str:
        pcs = list(_slot_maps(self.fn))
        for pc, (s, _) in enumerate(pcs):
            if s.opcode == "cp":
                self.copies.append((pc, -1))
        lines: list[str] = []
        for pc, (s, regs) in enumerate(pcs):
            c = _Ctx(regs, s, self.code.ins[pc])
            lines.append(f"L{pc}: /* line {s.pos.line}: {s.text.strip()} */")
            lines.extend("\t" + t for t in self.statement(c, pc))
        lines.append(f"L{len(pcs)}:\n\tatomic {{ thread_exit(); goto done }}")
        decl = "\n".join(f"\tint v{i};" for i in sorted({slot for _, regs in pcs for slot in regs.values()}))
        smem = self.m.ctas[0].size
        nb = max(1, (smem + 7) // 8)
        ncopies = len(self.copies) * self.nthreads
        head = _PRELUDE.format(nt=self.nthreads, smem=max(smem, 1), nb=nb, nbuf=len(self.buffers) + 1,
                               gbytes=GLOBAL_BYTES, shift=BUF_SHIFT, ncq=max(ncopies, 1))
        threads = (f"active [NT] proctype thread() {{\n{decl}\n\tint g;\n"
                   + "\n".join(lines) + "\ndone:\nend_exit:\n\tfalse\n}\n")
        copies = "" if not ncopies else _COPY.format(ncq=ncopies)
        return head + threads + copies


_PRELUDE = """/* Generated by `mbarrier export --promela`: a process per thread, a step per instruction. */
#define NT {nt}
#define SMEM {smem}
#define NB {nb}
#define NBUF {nbuf}
#define GBYTES {gbytes}
#define MB(a) ((a) / 8)

typedef MBAR {{ bit valid; byte phase; int pending; int expected; int tx; bit waited }}
typedef COPY {{ byte state; int dst; int src; int size; int bar }}
typedef GBUF {{ byte b[GBYTES] }}

MBAR mb[NB];
byte sh[SMEM];
GBUF gl[NBUF];
COPY cq[{ncq}];
int live = NT;
int bar_cnt = 0;
int bar_gen = 0;
hidden int tok_sink;  /* the state an arrive returns into `_`: not part of the state */

inline sh_ld(d, a) {{
\tassert(a >= 0 && a + 4 <= SMEM); d = sh[a] | (sh[a+1] << 8) | (sh[a+2] << 16) | (sh[a+3] << 24)
}}
inline sh_st(a, v) {{
\tassert(a >= 0 && a + 4 <= SMEM);
\tsh[a] = v & 255; sh[a+1] = (v >> 8) & 255; sh[a+2] = (v >> 16) & 255; sh[a+3] = (v >> 24) & 255
}}
#define GB(a) gl[(a) >> {shift}].b
#define GO(a) ((a) & 16777215)
inline gl_ld(d, a) {{
\td = GB(a)[GO(a)] | (GB(a)[GO(a) + 1] << 8) | (GB(a)[GO(a) + 2] << 16) | (GB(a)[GO(a) + 3] << 24)
}}
inline gl_st(a, v) {{
\tassert(GO(a) + 4 <= GBYTES);
\tGB(a)[GO(a)] = v & 255; GB(a)[GO(a) + 1] = (v >> 8) & 255;
\tGB(a)[GO(a) + 2] = (v >> 16) & 255; GB(a)[GO(a) + 3] = (v >> 24) & 255
}}

inline mb_valid(i) {{ assert(mb[i].valid) }}
inline mb_done(i) {{
\tif
\t:: mb[i].pending == 0 && mb[i].tx == 0 -> mb[i].phase++; mb[i].pending = mb[i].expected; mb[i].waited = 0
\t:: else
\tfi
}}
inline mb_init(i, n) {{
\tassert(!mb[i].valid && n >= 1); mb[i].valid = 1; mb[i].phase = 0; mb[i].pending = n; mb[i].expected = n;
\tmb[i].tx = 0; mb[i].waited = 1
}}
inline mb_tx(i, n) {{ mb_valid(i); mb[i].tx = mb[i].tx + n; mb_done(i) }}
inline mb_arrive(i, n, t, nc, drop, tok) {{
\tmb_valid(i); assert(mb[i].waited); assert(n <= mb[i].pending);
\tif :: drop -> mb[i].expected = mb[i].expected - n; assert(mb[i].expected >= 1) :: else fi;
\tassert(!(nc && mb[i].pending == n && mb[i].tx + t == 0));
\ttok = mb[i].phase; mb[i].tx = mb[i].tx + t; mb[i].pending = mb[i].pending - n; mb_done(i)
}}
inline bar_arrive() {{ bar_cnt++; g = bar_gen; if :: bar_cnt >= live -> bar_gen++; bar_cnt = 0 :: else fi }}
inline thread_exit() {{ live--; if :: bar_cnt > 0 && bar_cnt >= live -> bar_gen++; bar_cnt = 0 :: else fi }}

"""

_COPY = """
active [{ncq}] proctype copy() {{
\tint k = _pid - NT;
\tint j;
end_idle:  /* a copy that is never issued waits here: a valid end state */
\tatomic {{ cq[k].state == 1 ->
\t\tj = 0;
\t\tdo
\t\t:: j < cq[k].size -> sh[cq[k].dst + j] = gl[cq[k].src >> 24].b[(cq[k].src & 16777215) + j]; j++
\t\t:: else -> break
\t\tod;
\t\tj = 0;
\t\tmb_tx(cq[k].bar, -cq[k].size); cq[k].state = 2
\t}}
end_landed:
\tfalse
}}
"""


def export_promela(module: ast.Module, m: Machine, kernel: str | None = None) -> str:
    """The Promela model of the launched machine `m` of `module` (see the module docstring)."""
    return Exporter(m, module, pick_kernel(module, kernel)).export()
