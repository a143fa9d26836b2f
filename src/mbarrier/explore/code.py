"""The kernel's code as the checker sees it: for each instruction, what it may touch, where control may
go next, which registers it writes, and whether it is a spin-wait.

The simulator compiles each PTX instruction to a step function (`sim.compile`); the checker also needs
to reason about instructions a thread has not reached yet (partial-order reduction asks "can this
thread ever touch that barrier again?"). This module derives that from the syntax tree, with the
register slots the compiler assigned (same declaration order and block scopes as `compile_function`).

A register is *fixed* at an instruction when no instruction reachable from there writes it: its current
value is then its value for the rest of the thread's life, so guards and addresses that read only
fixed registers are known exactly (nvcc's unrolled code makes most of them so).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from mbarrier.ptx import ast
from mbarrier.sim.compile import SPECIAL_CONSTANTS, SPECIAL_DYNAMIC, SPECIAL_SLOT, CompiledFunction
from mbarrier.sim.types import TYPES

# Instructions that touch only the executing thread's registers (and its private clock): the checker
# runs them eagerly, without a scheduling choice, because no other agent can observe them.
LOCAL_OPCODES = frozenset({
    "add", "sub", "mul", "mad", "fma", "div", "rem", "abs", "neg", "min", "max", "and", "or", "xor", "not",
    "cnot", "shl", "shr", "popc", "clz", "brev", "bfe", "bfi", "prmt", "selp", "setp", "mov", "cvt", "bra",
    "nanosleep", "fence", "membar", "cvta", "mapa",
})

# Kinds of instructions the checker distinguishes.
LOCAL, BRANCH, EXIT, MB, LOAD, STORE, ATOM, BAR, CLUSTER, WARP, CP_ASYNC, CP_WAIT, CP_MB, BULK, \
    BULK_STORE, WARP_READ = range(16)

_SPACE = {".shared": "cta", ".shared::cta": "cta", ".shared::cluster": "cluster", ".global": "global",
          ".const": "global", ".param": "param"}
_NO_DEF = frozenset({"st", "red", "bar", "barrier", "bra", "exit", "ret", "trap", "fence", "membar",
                     "nanosleep", "cp"})


@dataclass(frozen=True)
class Addr:
    """An address operand: `base` register slot (None for a constant) plus `offset`."""

    base: int | None
    offset: int
    space: str   # "cta", "cluster", "global", "generic"


@dataclass
class Ins:
    """One instruction as the checker sees it."""

    pc: int
    kind: int
    op: str                      # e.g. "mbarrier.try_wait", "ld", "bar.warp.sync"
    line: int
    guard: tuple[int, bool] | None = None          # (slot, negated)
    target: int | None = None                      # branch target pc
    defs: frozenset[int] = frozenset()
    addr: Addr | None = None                       # the memory or mbarrier operand
    addr2: Addr | None = None                      # a second one: bulk copy source / cp.async source
    bar: Addr | None = None                        # the mbarrier a bulk copy completes on
    mb_op: str = ""                                # init, inval, arrive, arrive_drop, expect_tx, ...
    mb_plain: bool = False                         # an arrive without .expect_tx and .noComplete
    wait_dst: int | None = None                    # the predicate a wait writes
    wait_arg: tuple[int | None, int] = (None, 0)   # the token or parity operand: (slot, constant)
    wait_parity: bool = False
    counted: bool = False                          # bar.sync/bar.arrive with an explicit thread count
    sync_all: str | None = None                    # waits for every thread of its "cta", "warp", "cluster"
    size: int | None = None                        # bytes accessed, when constant
    spin: bool = False                             # a wait whose failure leads straight back to it
    reads: frozenset[int] = frozenset()            # register slots the instruction reads


@dataclass
class Code:
    """The checker's view of one compiled function."""

    fn: CompiledFunction
    ins: list[Ins]
    succ: list[tuple[int, ...]] = field(default_factory=list)
    reach_defs: list[frozenset[int]] = field(default_factory=list)
    token_slots: frozenset[int] = frozenset()
    # bar.sync can cut futures short only when every bar instruction is a whole-CTA bar.sync.
    cta_barriers_whole: bool = True

    def fixed(self, pc: int, slot: int) -> bool:
        return slot not in self.reach_defs[pc]


def _slot_maps(fn: ast.Function) -> Iterator[tuple[ast.Instruction, dict[str, int]]]:
    """Each instruction with the register names in scope, resolved to the compiler's slots."""
    next_slot = len(SPECIAL_CONSTANTS)
    scope: list[dict[str, int]] = [{}]
    for p in fn.params:
        if p.space == ".reg":
            scope[0][p.name] = next_slot
            next_slot += 1

    def walk(body: tuple[ast.Statement, ...]) -> Iterator[tuple[ast.Instruction, dict[str, int]]]:
        nonlocal next_slot
        for s in body:
            if isinstance(s, ast.Block):
                scope.append({})
                yield from walk(s.body)
                scope.pop()
            elif isinstance(s, ast.Declaration) and s.space == ".reg" and s.type in TYPES:
                for d in s.names:
                    for name in ([d.name] if d.range is None else [f"{d.name}{i}" for i in range(d.range)]):
                        scope[-1][name] = next_slot
                        next_slot += 1
            elif isinstance(s, ast.Instruction):
                merged: dict[str, int] = {}
                for frame in scope:
                    merged.update(frame)
                yield s, merged

    yield from walk(fn.body or ())


def _names(op: ast.Operand) -> list[str]:
    if isinstance(op, ast.Name):
        return [op.name]
    if isinstance(op, ast.Not):
        return _names(op.operand)
    if isinstance(op, ast.Expr):
        return [n.strip().lstrip("!") for n in op.text.replace("|", " ").split()]
    if isinstance(op, (ast.Vector, ast.ParenList)):
        return [n for item in op.items for n in _names(item)]
    if isinstance(op, ast.Address):
        return ([op.base.name] if op.base else []) + [n for item in op.items for n in _names(item)]
    return []


def _addr(op: ast.Operand, regs: dict[str, int], symbols: dict[str, int], space: str) -> Addr | None:
    if not isinstance(op, ast.Address) or op.items:
        return None
    if op.base is None:
        return Addr(None, op.offset, space)
    if op.base.name in regs:
        return Addr(regs[op.base.name], op.offset, space)
    if op.base.name in symbols:
        return Addr(None, symbols[op.base.name] + op.offset, space)
    return None


def _space(quals: tuple[str, ...]) -> str:
    for q in quals:
        if q in _SPACE:
            return _SPACE[q]
    return "generic"


def _classify(i: int, s: ast.Instruction, regs: dict[str, int], symbols: dict[str, int]) -> Ins:
    op, q = s.opcode, s.qualifiers
    guard = None
    if s.guard is not None and s.guard.predicate in regs:
        guard = (regs[s.guard.predicate], s.guard.negated)
    defs: set[int] = set()
    if op not in _NO_DEF and s.operands and not (op == "mbarrier" and q[:1] in (
            (".init",), (".inval",), (".expect_tx",), (".complete_tx",))):
        defs.update(regs[n] for n in _names(s.operands[0]) if n in regs)
    reads = frozenset(regs[n] for o in s.operands[(1 if defs else 0):] for n in _names(o) if n in regs)
    if guard is not None:
        reads |= {guard[0]}
    x = Ins(i, LOCAL, op, s.pos.line, guard=guard, defs=frozenset(defs), reads=reads)
    ops = s.operands
    if op == "bra":
        x.kind, x.target = BRANCH, -1  # resolved by the caller from the label
        return x
    if op in LOCAL_OPCODES:
        return x
    if op in ("exit", "ret", "trap"):
        x.kind = EXIT
        x.op = op
        return x
    if op == "ld" and _space(q) == "param":
        return x
    if op == "mbarrier":
        sub = q[0][1:] if q else ""
        x.op = f"mbarrier.{sub}"
        x.mb_op = sub
        x.mb_plain = sub in ("arrive", "arrive_drop") and ".expect_tx" not in q and ".noComplete" not in q
        if sub == "pending_count":
            return x
        x.kind = MB
        space = "cta" if ".shared::cta" in q or ".shared" in q else ("cluster" if ".shared::cluster" in q
                                                                      else "generic")
        idx = 1 if sub in ("arrive", "arrive_drop", "test_wait", "try_wait") else 0
        x.addr = _addr(ops[idx], regs, symbols, space) if len(ops) > idx else None
        if sub in ("test_wait", "try_wait"):
            if isinstance(ops[0], ast.Name) and ops[0].name in regs:
                x.wait_dst = regs[ops[0].name]
            x.wait_parity = ".parity" in q
            arg = ops[2] if len(ops) > 2 else None
            if isinstance(arg, ast.Name) and arg.name in regs:
                x.wait_arg = (regs[arg.name], 0)
            elif isinstance(arg, ast.Imm):
                x.wait_arg = (None, arg.value)
            else:
                x.kind = ATOM  # an operand form the checker cannot evaluate: touches everything
        return x
    if op in ("ld", "st", "atom", "red"):
        x.kind = {"ld": LOAD, "st": STORE}.get(op, ATOM)
        sizes = [TYPES[t].size for t in q if t in TYPES]
        vec = 4 if ".v4" in q else 2 if ".v2" in q else 1
        x.size = sizes[-1] * vec if sizes else None
        a = ops[1] if op in ("ld", "atom") else ops[0]
        x.addr = _addr(a, regs, symbols, _space(q))
        return x
    if op in ("bar", "barrier"):
        rest = [t for t in q if t not in (".aligned", ".cta")]
        if rest[:1] == [".warp"]:
            x.kind, x.op = WARP, "bar.warp.sync"
            if ops and isinstance(ops[0], ast.Imm) and ops[0].value & 0xFFFFFFFF == 0xFFFFFFFF:
                x.sync_all = "warp"
        elif rest[:1] == [".cluster"]:
            x.kind, x.op = CLUSTER, "barrier.cluster." + ("wait" if ".wait" in rest else "arrive")
            if x.op.endswith("wait"):
                x.sync_all = "cluster"
        else:
            x.kind, x.op = BAR, "bar." + ("arrive" if ".arrive" in rest else "sync")
            x.counted = len(ops) > 1
            if not x.counted and x.op == "bar.sync":
                x.sync_all = "cta"
        return x
    if op in ("elect", "vote", "shfl"):
        x.kind = WARP
        return x
    if op == "activemask":
        x.kind = WARP_READ
        return x
    if op == "cp":
        text = ".".join(t.lstrip(".") for t in q)
        x.op = "cp." + text
        if "commit_group" in text:
            return x
        if "wait_group" in text or "wait_all" in text:
            x.kind = CP_WAIT
            return x
        if "mbarrier.arrive" in text:
            x.kind = CP_MB
            x.bar = _addr(ops[0], regs, symbols, _space(q))
            x.addr = x.bar
            return x
        if text.startswith("async.bulk") and ".global.shared" in "." + text:
            x.kind = BULK_STORE
            x.addr = _addr(ops[0], regs, symbols, "global")
            x.addr2 = _addr(ops[1], regs, symbols, "cta")
            x.size = ops[2].value if len(ops) > 2 and isinstance(ops[2], ast.Imm) else None
            return x
        if text.startswith("async.bulk"):
            x.kind = BULK
            dst_space = "cluster" if "shared::cluster" in text else "cta"
            x.addr = _addr(ops[0], regs, symbols, dst_space)
            x.addr2 = _addr(ops[1], regs, symbols, "global")
            x.size = ops[2].value if len(ops) > 2 and isinstance(ops[2], ast.Imm) else None
            x.bar = _addr(ops[3], regs, symbols, "cluster") if len(ops) > 3 else None
            return x
        if text.startswith("async"):
            x.kind = CP_ASYNC
            x.addr = _addr(ops[0], regs, symbols, "cta")
            x.addr2 = _addr(ops[1], regs, symbols, "global")
            x.size = ops[2].value if len(ops) > 2 and isinstance(ops[2], ast.Imm) else None
            return x
    # Anything else the simulator runs is treated as touching everything (never as local).
    x.kind = ATOM
    x.op = op
    return x


def analyse(fn: ast.Function, compiled: CompiledFunction, shared_symbols: dict[str, int]) -> Code:
    """Build the checker's view of a kernel: instructions, control flow, reachable register writes."""
    ins: list[Ins] = []
    for i, (s, regs) in enumerate(_slot_maps(fn)):
        if i in compiled.unsupported:
            # Its step stops the run: nothing to analyse (its operands may not even be complete), and
            # as a step that touches everything no reduction moves anything past it.
            ins.append(Ins(i, ATOM, s.opcode, s.pos.line))
            continue
        x = _classify(i, s, regs, shared_symbols)
        if x.kind == BRANCH:
            target = s.operands[0]
            x.target = compiled.labels.get(target.name, -1) if isinstance(target, ast.Name) else -1
        ins.append(x)
    n = len(ins)
    if n + 1 != len(compiled.code):
        raise RuntimeError(f"the checker's view of {fn.name} has {n} instructions, the compiled code "
                           f"{len(compiled.code) - 1}: the two front ends disagree")
    ins.append(Ins(n, EXIT, "ret", fn.pos.line))  # the implicit return at the end of the body
    succ: list[tuple[int, ...]] = []
    for x in ins:
        nxt: list[int] = []
        if x.kind == BRANCH:
            nxt.append(x.target if x.target is not None and x.target >= 0 else x.pc + 1)
            if x.guard is not None:
                nxt.append(x.pc + 1)
        elif x.kind == EXIT:
            if x.guard is not None:
                nxt.append(x.pc + 1)
        else:
            nxt.append(x.pc + 1)
        succ.append(tuple(p for p in nxt if p <= n))
    code = Code(compiled, ins, succ)
    code.reach_defs = _reach_defs(code)
    code.cta_barriers_whole = all(x.sync_all == "cta" for x in ins if x.kind == BAR)
    code.token_slots = frozenset(s for x in ins if x.mb_op in ("arrive", "arrive_drop") for s in x.defs)
    for x in ins:
        if x.kind == MB and x.mb_op in ("test_wait", "try_wait"):
            x.spin = _is_spin(code, x)
    return code


def _reach_defs(code: Code) -> list[frozenset[int]]:
    """For each pc, the register slots written by some instruction reachable from it (itself included)."""
    return [frozenset(d) for d in backward_union(code, [set(x.defs) for x in code.ins])]


def backward_union(code: Code, sets: list[set[int]]) -> list[set[int]]:
    """The least solution of X[pc] = sets[pc] | X[s] for every successor s of pc (`sets` is updated in
    place and returned): what some path from pc meets. With sets[pc] = succ[pc], the pcs reachable."""
    # Strongly connected components would be exact and linear; a fixpoint is simple and fast enough.
    changed = True
    while changed:
        changed = False
        for pc in range(len(code.ins) - 1, -1, -1):
            cur = sets[pc]
            before = len(cur)
            for s in code.succ[pc]:
                cur |= sets[s]
            if len(cur) != before:
                changed = True
    return sets


def _is_spin(code: Code, w: Ins) -> bool:
    """Does a False result of wait `w` lead back to `w` through local instructions only, whatever the
    other registers hold? Tracks only values derived from the wait's result (selp/setp/not/mov on it)."""
    if w.wait_dst is None:
        return False
    # Abstract values: ("res", negated) for a predicate equal to the result, ("int", a, b) for an
    # integer that is a when the result is True and b when False.
    env: dict[int, tuple[object, ...]] = {w.wait_dst: ("res", False)}
    result = False  # we follow the failure path
    pc = w.pc + 1
    seen = 0
    while seen < 64:
        seen += 1
        if pc == w.pc:
            return True
        x = code.ins[pc]
        if x.kind not in (LOCAL, BRANCH):
            return False
        decided = _guard_value(x, env, result)
        if x.kind == BRANCH:
            if x.guard is None or decided is True:
                pc = x.target if x.target is not None and x.target >= 0 else pc + 1
                continue
            if decided is False:
                pc += 1
                continue
            return False
        if decided is None and x.guard is not None:
            return False
        if decided is not False:
            _abstract_step(code, x, env, result)
        pc += 1
    return False


def _guard_value(x: Ins, env: dict[int, tuple[object, ...]], result: bool) -> bool | None:
    if x.guard is None:
        return True
    v = env.get(x.guard[0])
    if v is None or v[0] != "res":
        return None
    value = result != v[1]
    return value != x.guard[1]


def _abstract_step(code: Code, x: Ins, env: dict[int, tuple[object, ...]], result: bool) -> None:
    """Propagate result-derived values through the few instructions nvcc uses around a wait."""
    src = code.fn.sites[x.pc].text
    for d in x.defs:
        env.pop(d, None)
    derived = [env[r] for r in x.reads if r in env]
    if not derived or len(x.defs) != 1:
        return
    d = next(iter(x.defs))
    toks = src.replace(",", " ").replace(";", " ").split()
    v = derived[0]
    if x.op == "selp" and v[0] == "res" and len(toks) >= 5:
        try:
            a, b = int(toks[2], 0), int(toks[3], 0)
        except ValueError:
            return
        env[d] = ("int", b, a) if v[1] else ("int", a, b)
    elif x.op == "setp" and v[0] == "int" and len(toks) >= 4:
        cmp = next((c for c in (".eq", ".ne") if c in toks[0]), None)
        try:
            k = int(toks[3], 0)
        except ValueError:
            return
        if cmp is None:
            return
        t_val, f_val = (v[1] == k, v[2] == k) if cmp == ".eq" else (v[1] != k, v[2] != k)
        if t_val != f_val:
            env[d] = ("res", not t_val)
    elif x.op in ("mov", "not") and v[0] == "res" and ".pred" in toks[0]:
        env[d] = ("res", v[1] != (x.op == "not"))


# -- register data flow (for liveness, `explore.liveness`) ------------------------------------------------
# Opcodes whose first operand is a destination the instruction always writes in full (when its guard
# holds). Any other opcode writes no register, or is not known here: then it kills nothing.
_WRITES_FIRST = (LOCAL_OPCODES - {"bra", "nanosleep", "fence", "membar"}) | {
    "ld", "atom", "vote", "shfl", "elect", "activemask", "redux", "isspacep", "getctarank"}
_MB_WRITES_FIRST = frozenset({".arrive", ".arrive_drop", ".test_wait", ".try_wait", ".pending_count"})
# Opcodes that read no register beyond their operands and write none: everything else unknown to this
# table is assumed to read every register (the conservative answer).
_READS_OPERANDS = frozenset({"st", "red", "bar", "barrier", "bra", "exit", "ret", "trap", "fence", "membar",
                             "nanosleep", "cp", "prefetch", "prefetchu", "griddepcontrol", "setmaxnreg",
                             "mbarrier"})
_IDENT = re.compile(r"[%$_A-Za-z][\w$.]*")


@dataclass(frozen=True)
class RegisterFlow:
    """What one instruction does to the registers: the slots it may read (`uses`, special registers
    included), the slots it surely overwrites when its guard holds (`kills`), and `everything` when what
    it reads cannot be told (then it reads every slot). `clocked`: it reads a clock or timer register,
    whose value is the thread's clock, not a register."""

    uses: frozenset[int]
    kills: frozenset[int]
    everything: bool = False
    clocked: bool = False


def _identifiers(op: ast.Operand) -> list[str]:
    texts = [op.text] if isinstance(op, ast.Expr) else _names(op)
    return [n for text in texts for n in _IDENT.findall(text)]


def _operand_slots(op: ast.Operand, regs: dict[str, int]) -> set[int]:
    """The register slots an operand names, special registers included; a name that looks like a special
    register the compiler keeps in a slot but is not one of them counts as all of them."""
    out: set[int] = set()
    for n in _identifiers(op):
        if n in regs:
            out.add(regs[n])
        elif n in SPECIAL_SLOT:
            out.add(SPECIAL_SLOT[n])
        elif n + ".x" in SPECIAL_SLOT:
            out.update(SPECIAL_SLOT[n + c] for c in (".x", ".y", ".z"))  # %tid and the like
        elif n.startswith("%") and n not in SPECIAL_DYNAMIC:
            out.update(SPECIAL_SLOT.values())
    return out


def register_flow(fn: ast.Function) -> list[RegisterFlow]:
    """Each instruction's register reads and writes, in the order of `analyse`'s `ins`."""
    out: list[RegisterFlow] = []
    for s, regs in _slot_maps(fn):
        op, q = s.opcode, s.qualifiers
        writes = op in _WRITES_FIRST or (op == "mbarrier" and q[:1] and q[0] in _MB_WRITES_FIRST)
        kills: set[int] = set()
        if writes and s.operands:
            kills = {slot for slot in _operand_slots(s.operands[0], regs) if slot >= len(SPECIAL_CONSTANTS)}
        uses: set[int] = set()
        for o in s.operands[(1 if writes else 0):]:
            uses |= _operand_slots(o, regs)
        if s.guard is not None:
            uses |= _operand_slots(ast.Name(s.guard.predicate, s.guard.pos), regs)
        if op == "call":
            uses.update(SPECIAL_SLOT.values())  # the callee starts with the caller's special registers
        known = writes or op in _READS_OPERANDS or op == "call"
        clocked = any(n in SPECIAL_DYNAMIC for o in s.operands for n in _identifiers(o))
        out.append(RegisterFlow(frozenset(uses), frozenset(kills), not known, clocked))
    return out
