"""Register values a thread's future instructions will see: constant propagation from its registers now.

`code.fixed` knows a register whose value can no longer change. nvcc and the family generator compute
most addresses, parities and counts just before use (`mov.u32 %r24, empty; add.u32 %r31, %r24, 8`), so
from a thread's pc those registers are not fixed, yet their values at the instruction that uses them
follow from the registers the thread holds now. This is a forward data-flow analysis over the
instructions reachable from the thread's pc: the state at an instruction maps each register that may
still change to its value on *every* path from the pc to it (absent when paths disagree or it is
unknown). Pure local instructions (register arithmetic, `mov`, `cvt`, `setp`, `selp`, `ld.param`...)
are evaluated by running their compiled step on a scratch copy of the thread whose unknown registers
hold a value that raises when used; a shfl.sync gives its value where every outcome gives the same
(`_shfl`); anything else that writes a register makes it unknown. Guards known
in a state decide branches, so paths that cannot be taken add nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from mbarrier.explore.budget import pulse
from mbarrier.explore.code import ATOM, LOCAL, MATRIX, MB, STORE, Addr, Code, Ins
from mbarrier.sim.address import is_local_generic
from mbarrier.sim.compile import SPECIAL_CONSTANTS, SPECIAL_DYNAMIC
from mbarrier.sim.machine import EXITED, Machine, Thread
from mbarrier.sim.waits import InCollective

Env = dict[int, object]


class Unknown:
    """A register value the analysis does not know: any use in a compiled step raises."""

    __slots__ = ()

    def _fail(self, *_: object) -> NoReturn:
        raise TypeError("unknown register value")

    __bool__ = __int__ = __index__ = __hash__ = _fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _fail
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __neg__ = __invert__ = _fail
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = _fail


UNKNOWN = Unknown()


@dataclass(frozen=True)
class FutureToken:
    """The state token an arrive in the thread's future returns (9.7.13.15.13): its value is unknown, but
    it names the barrier at `addr` (a constant address) and the phase that barrier is in at the arrive,
    which is all a token wait reads of it (`explore.frozen` makes such a wait a gate)."""

    addr: Addr


def value(code: Code, t: Thread, pc: int, env: Env | None, slot: int) -> object | None:
    """The value register `slot` holds at an instruction whose state is `env` (None: unknown)."""
    if code.fixed(pc, slot):
        return t.regs[slot]
    if env is None:
        return None
    return env.get(slot)


@dataclass
class Unrolled:
    """A thread's future as a graph of *nodes*: an instruction and the register values it will see on the
    paths that reach it (`envs[n]`: the live registers that may still change, with their values where
    known). Path-sensitive: a loop whose trip count follows from known registers (a kernel parameter, a
    thread index) is unrolled, each iteration its own nodes with its own parity, address and count;
    where a pc would get more than MAX_PER_PC nodes, or the graph more than MAX_NODES, the values at that
    pc are merged (only those on which every path agrees stay known: the data-flow analysis of
    Kildall, as before this unrolling) into one node that stands for the rest, so the graph is finite
    and over-approximates every path. `on_cycle[n]`: the node lies on a cycle of the graph (an arrival
    there may happen any number of times). Equal envs and successor tuples are one object (`Shared`)."""

    pcs: list[int] = field(default_factory=list)
    envs: list[Env] = field(default_factory=list)
    succ: list[tuple[int, ...]] = field(default_factory=list)
    on_cycle: list[bool] = field(default_factory=list)
    start: int = 0
    pc: int = 0                  # the pc it was unrolled from: its envs leave out what is fixed there
    at: dict[int, list[int]] = field(default_factory=dict)   # the nodes of each pc
    widened: bool = False        # some pc's values were merged (MAX_PER_PC, MAX_NODES)
    local: bytes = b""           # the thread's local memory at `pc` (`ROOT`)


MAX_NODES = 4096
MAX_PER_PC = 64


class Shared:
    """Envs and successor tuples of the unrolled futures a search keeps (`Frozen`'s flows), one object for
    equal ones: a thread's futures from successive pcs, and successive nodes where no live register
    changes, repeat them. Each table is emptied when it holds more than KEPT (what the kept futures hold
    stays theirs)."""

    KEPT = 4096
    __slots__ = ("edges", "envs")

    def __init__(self) -> None:
        self.envs: dict[int, Env] = {}  # by the hash of the env's key in `unroll`
        self.edges: dict[tuple[int, ...], tuple[int, ...]] = {}

    def edge(self, e: list[int]) -> tuple[int, ...]:
        t = tuple(e)
        return self.edges.setdefault(t, t)


def unroll(m: Machine, code: Code, t: Thread, live: list[tuple[int, ...]],
           succ: Callable[[int, Env], tuple[int, ...]], shared: Shared | None = None) -> Unrolled:
    """The nodes reachable from the thread's pc. `live[pc]`: the registers some path from pc may read
    before writing them (the others cannot matter there); `succ(j, env)` gives the successors of
    instruction j in state env (known guards followed). Equal envs and successor tuples are those of
    `shared` where it has them (an env is never changed once made)."""
    pc = t.pc
    g = Unrolled()
    out_edges: list[list[int]] = []
    sh = Shared() if shared is None else shared
    envs = sh.envs
    if len(envs) > Shared.KEPT:
        envs.clear()
    if len(sh.edges) > Shared.KEPT:
        sh.edges.clear()
    index: dict[tuple[object, ...], int] = {}
    per_pc: dict[int, list[int]] = {}
    merged: dict[int, int] = {}   # pc -> the node that stands for every further path through it
    shadow = _shadow(t)
    work: list[int] = []

    def node(j: int, env: Env) -> int:
        here = live_sets.get(j)
        if here is None:
            here = live_sets[j] = frozenset(live[j])
        memory = code.reads_local[j]   # the local memory it carries matters here
        env = {s: v for s, v in env.items() if s in here or (s < 0 and memory)}
        w = merged.get(j)
        if w is not None:
            old = g.envs[w]
            keep = {s: v for s, v in old.items() if s in env and _same(env[s], v)}
            if len(keep) != len(old):
                g.envs[w] = keep
                work.append(w)   # fewer known values: more successors
            return w
        ek = tuple(sorted((s, type(v).__name__, _hashable(v)) for s, v in env.items()))
        key = (j, ek)
        n = index.get(key)
        if n is not None:
            return n
        same_pc = per_pc.setdefault(j, [])
        widen = len(same_pc) >= MAX_PER_PC or len(g.pcs) >= MAX_NODES
        if widen:
            for other in same_pc:
                e = g.envs[other]
                env = {s: v for s, v in env.items() if s in e and _same(e[s], v)}
        else:
            h = hash(ek)
            found = envs.get(h)
            if found is not None and _equal(found, env):
                env = found
            else:
                envs[h] = env
        n = len(g.pcs)
        g.pcs.append(j)
        g.envs.append(env)
        out_edges.append([])
        if widen:
            merged[j] = n
        else:
            index[key] = n
        same_pc.append(n)
        work.append(n)
        return n

    live_sets: dict[int, frozenset[int]] = {}  # of the pcs met only
    root: Env = {s: t.regs[s] for s in live[pc] if not code.fixed(pc, s)}
    if code.reads_local[pc]:
        root[ROOT] = ()
    g.start = node(pc, root)
    while work:
        pulse()  # a future of thousands of nodes takes seconds: the bounds and Ctrl-C are honoured here
        n = work.pop()
        j, env = g.pcs[n], g.envs[n]
        out = _transfer(m, code, t, shadow, code.ins[j], pc, env)
        edges = out_edges[n]
        for s in succ(j, env):
            k = node(s, out)
            if k not in edges:
                edges.append(k)
    g.succ = [sh.edge(e) for e in out_edges]
    g.on_cycle = _on_cycle(g.succ)
    g.pc, g.at, g.widened, g.local = pc, per_pc, bool(merged), bytes(t.local)
    return g


def resume(g: Unrolled, code: Code, t: Thread, live: list[tuple[int, ...]]) -> Unrolled | None:
    """The same thread's future from where it stands now, read off `g` (unrolled at an earlier pc of its
    path, with the same `live` sets), or None. Where `g` merged no values, a node at the thread's pc whose
    env holds exactly the thread's registers (those live there that may change after `g.pc`) roots the
    graph `unroll` would build now: each node's successors follow from its pc and env alone (registers
    fixed at `g.pc` hold the same values now, and those fixed only later are in the env), and no merging
    happens in a part of a graph that had none."""
    if g.widened:
        return None
    pc = t.pc
    nodes = g.at.get(pc)
    if not nodes:
        return None
    regs = t.regs
    want = [s for s in live[pc] if not code.fixed(g.pc, s)]
    memory = code.reads_local[pc]
    for n in nodes:
        env = g.envs[n]
        size = len(env) - sum(1 for s in env if s < 0) if memory else len(env)
        if size == len(want) and all(s in env and _same(env[s], regs[s]) for s in want) and \
                (not memory or _same_memory(env, g.local, t.local)):
            return Unrolled(g.pcs, g.envs, g.succ, g.on_cycle, n, g.pc, g.at, False, g.local)
    return None


# -- local memory (PTX ISA 5.1.5: the thread's own, which no other agent observes) -------------------------
# An env carries it beside the registers, where a load of it is reachable (`Code.reads_local`): under
# ROOT, the (offset, size) ranges stored since the root, every other byte holding what the thread's local
# memory held at the root (`Unrolled.local`; absent: those bytes are not known); under a cell key
# (`_cell`), the value a known store put in that range. A cell is dropped by a store that overlaps it,
# and all of it by a store to an address that is not known, or by an instruction that may write local
# memory otherwise (a call's frame, a generic or .param store that may point into it: `_clobbers`).
# Merges treat these keys as registers: where paths disagree, the value is not known.
ROOT = -1


def _cell(addr: int, size: int) -> int:
    """The env key of the cell of `size` bytes (at most 16) at local offset `addr`."""
    return -2 - (addr << 5 | size)


def _range(key: int) -> tuple[int, int]:
    k = -2 - key
    return k >> 5, k & 31


def _overlaps(a: int, n: int, b: int, m: int) -> bool:
    return a < b + m and b < a + n


def _same_memory(env: Env, old: bytes, now: bytearray) -> bool:
    """Whether the local memory `env` carries (from a root whose memory was `old`) is exactly `now`: every
    range stored since holds a known integer equal to its bytes now, and every other byte is as it was."""
    written = env.get(ROOT)
    if not isinstance(written, tuple) or len(old) != len(now):
        return False
    for a, n in written:
        v = env.get(_cell(a, n)) if n <= 16 else None
        if type(v) is not int or v != int.from_bytes(now[a:a + n], "little"):
            return False
    if old != now:
        for i in range(len(old)):
            if old[i] != now[i] and not any(a <= i < a + n for a, n in written):
                return False
    return True


def _local_addr(code: Code, t: Thread, pc: int, env: Env, x: Ins) -> int | None:
    a = x.addr
    if a is None or x.size is None:
        return None
    base = 0 if a.base is None else value(code, t, pc, env, a.base)
    if not isinstance(base, int) or isinstance(base, bool):
        return None
    return (base + a.offset) & a.mask


def _local(code: Code, t: Thread, pc: int, env: Env, x: Ins) -> Env:
    """The state after ld.local or st.local x (`Ins.local`)."""
    guard = None if x.guard is None else value(code, t, pc, env, x.guard[0])
    if guard is not None and bool(guard) == x.guard[1]:  # type: ignore[index]
        return env  # the guard is known to be off
    sure = x.guard is None or guard is not None
    addr = _local_addr(code, t, pc, env, x)
    out = dict(env)
    if x.defs:   # a load
        for d in x.defs:
            out.pop(d, None)
        if sure and addr is not None and x.local_exact and len(x.defs) == 1:
            assert x.size is not None
            got = _load(t, env, addr, x.size)
            if got is not None:
                out[next(iter(x.defs))] = got
        return out
    if addr is None:
        return {s: v for s, v in env.items() if s >= 0}
    assert x.size is not None
    n = x.size
    for k in env:
        if k < ROOT and _overlaps(addr, n, *_range(k)):
            del out[k]
    written = out.get(ROOT)
    if isinstance(written, tuple) and (addr, n) not in written:
        out[ROOT] = tuple(sorted(written + ((addr, n),)))
    # A store on a wait's failure path (`Code.backoff`) leaves its value unknown, as `_transfer` leaves the
    # registers there: a retry count would give each try nodes of its own.
    if sure and x.local_value is not None and n <= 16 and x.pc not in code.backoff:
        slot, const = x.local_value
        v = const if slot is None else value(code, t, pc, env, slot)
        if isinstance(v, FutureToken):
            if n == 8:   # the whole token word (a narrower store keeps part of a word nobody knows)
                out[_cell(addr, n)] = v
        elif isinstance(v, int) and not isinstance(v, bool):
            out[_cell(addr, n)] = int(v) & ((1 << 8 * n) - 1)   # bytes: a token word's int, as stored
    return out


def _load(t: Thread, env: Env, addr: int, n: int) -> object | None:
    """The value a load of `n` bytes at local offset `addr` reads in state `env` (None: not known)."""
    key = _cell(addr, n) if n <= 16 else None
    if key is not None and key in env:
        return env[key]
    if any(k < ROOT and _overlaps(addr, n, *_range(k)) for k in env):
        return None   # part of a stored value
    written = env.get(ROOT)
    if not isinstance(written, tuple) or any(_overlaps(addr, n, a, m) for a, m in written):
        return None
    mem = t.local
    if addr + n > len(mem):
        return None   # the load faults
    return int.from_bytes(mem[addr:addr + n], "little")


def _clobbers(code: Code, t: Thread, pc: int, env: Env, x: Ins) -> bool:
    """Whether x, neither ld.local nor st.local, may write the thread's local memory: a call (its frame)
    or any instruction the checker cannot see into, a store to a .param variable (a call's argument in the
    frame), a generic store or atomic whose address is not known to lie outside the local window."""
    if x.kind not in (ATOM, STORE):
        return False
    if x.kind == ATOM and x.op not in ("atom", "red"):
        return True
    a = x.addr
    if a is None or a.space == "param":
        return True
    if a.space != "generic":
        return False
    base = 0 if a.base is None else value(code, t, pc, env, a.base)
    if not isinstance(base, int) or isinstance(base, bool):
        return True
    return is_local_generic((base + a.offset) & a.mask)


def _hashable(v: object) -> object:
    try:
        hash(v)
    except TypeError:
        return id(v)
    return v


def _on_cycle(succ: Sequence[Sequence[int]]) -> list[bool]:
    """For each node, whether it lies on a cycle: Tarjan's strongly connected components, iteratively."""
    n = len(succ)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    out = [False] * n
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        frames = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while frames:
            v, i = frames[-1]
            if i < len(succ[v]):
                frames[-1] = (v, i + 1)
                w = succ[v][i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    frames.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            frames.pop()
            if frames:
                u = frames[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in succ[v]:
                    for w in comp:
                        out[w] = True
    return out


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


def _equal(a: Env, b: Env) -> bool:
    """The same registers with the same values (of the same types: True is not 1 here)."""
    return len(a) == len(b) and all(s in b and _same(b[s], v) for s, v in a.items())


def future_start(code: Code, t: Thread) -> Thread:
    """The thread as its future starts. A lane blocked inside a warp collective (`InCollective`) already
    stands past it (the simulator moves pc first, `sim.isa.control.collective`), but the registers the
    collective writes hold their old values until it completes: its future starts at the collective
    itself, whose transfer (`_transfer`) gives those registers the values every outcome agrees on, or
    none. That future holds the lane's arrival a second time, a harmless extra. So does a lane inside a
    stmatrix, which writes no register: the row its address gives is written when the meeting completes
    (`footprints.Footprints._matrix`). Other threads, and a collective that writes no register
    (bar.warp.sync, setmaxnreg), start where they stand."""
    if not isinstance(t.wait, InCollective):
        return t
    at = code.ins[t.pc - 1]
    if not at.defs and at.kind != MATRIX:
        return t
    view = Thread.__new__(Thread)
    for name in Thread.__slots__:
        setattr(view, name, getattr(t, name))
    view.pc = t.pc - 1
    return view


def _shadow(t: Thread) -> Thread:
    shadow = Thread.__new__(Thread)
    for name in ("aid", "func", "code", "cta", "warp", "lane", "tid", "time", "effects", "status"):
        setattr(shadow, name, getattr(t, name))
    shadow.regs = list(t.regs)
    shadow.pc = t.pc
    return shadow


def _shfl(code: Code, t: Thread, pc: int, env: Env, x: Ins) -> int | None:
    """The value a future shfl.sync gives the thread, where every outcome gives the same: the thread's own
    `a` (a lane outside the source range, or a source lane that has exited or does not take part, gives
    the executing lane its own value: PTX ISA, shfl.sync), or the source lane's, where that lane's `a`
    operands at every shfl.sync of this mode can no longer change (`Code.fixed` at its pc) and equal the
    thread's own: a warp-uniform value such as `tid.x / 32`, read from lane 0 as
    `__shfl_sync(~0, threadIdx.x / 32, 0)` (CUTLASS's canonical_warp_idx_sync) does. None: unknown."""
    assert x.shfl is not None
    mode, _, a, b, c = x.shfl
    args = [_operand(code, t, pc, env, o) for o in (a, b, c)]
    own, bval, cval = args
    if not (isinstance(own, int) and isinstance(bval, int) and isinstance(cval, int)):
        return None
    own &= 0xFFFFFFFF
    lane = t.lane
    clamp, seg = cval & 0x1F, (cval >> 8) & 0x1F
    max_lane = (lane & seg) | (clamp & ~seg & 0x1F)
    if mode == ".up":
        j, ok = lane - bval, lane - bval >= max_lane
    elif mode == ".down":
        j, ok = lane + bval, lane + bval <= max_lane
    elif mode == ".bfly":
        j, ok = lane ^ bval, (lane ^ bval) <= max_lane
    elif mode == ".idx":
        j = (lane & seg) | (bval & ~seg & 0x1F)
        ok = j <= max_lane
    else:
        return None
    if not ok or j == lane:
        return own
    w = t.warp
    src = None if w is None else next((th for th in w.threads if th.lane == j), None)
    if src is None or src.status == EXITED:
        return own
    if code.calls or src.func is not t.func or src.frames:
        return None
    for o in code.shfl_sources.get(mode, [None]):
        if o is None:
            return None
        slot, const = o
        if slot is not None:
            if not code.fixed(src.pc, slot):
                return None
            const = src.regs[slot]  # type: ignore[assignment]
        if not isinstance(const, int) or const & 0xFFFFFFFF != own:
            return None
    return own


def _operand(code: Code, t: Thread, pc: int, env: Env, o: tuple[int | None, int] | None) -> object | None:
    if o is None:
        return None
    slot, const = o
    return const if slot is None else value(code, t, pc, env, slot)


def _transfer(m: Machine, code: Code, t: Thread, shadow: Thread, x: Ins, pc: int, env: Env) -> Env:
    if x.local:
        return _local(code, t, pc, env, x)
    if x.kind in (ATOM, STORE) and any(s < 0 for s in env) and _clobbers(code, t, pc, env, x):
        env = {s: v for s, v in env.items() if s >= 0}
    if not x.defs:
        return env
    guard = None if x.guard is None else value(code, t, pc, env, x.guard[0])
    if guard is not None and bool(guard) == x.guard[1]:  # type: ignore[index]
        return env  # the guard is known to be off: the instruction does nothing
    out = dict(env)
    for d in x.defs:
        out.pop(d, None)
    if x.guard is not None and guard is None:
        return out
    if x.shfl is not None:
        got = _shfl(code, t, pc, env, x)
        if got is not None and x.shfl[1] is not None:
            out[x.shfl[1]] = got
        return out
    if x.kind == MB:
        if x.mb_op in ("arrive", "arrive_drop") and len(x.defs) == 1 and x.addr is not None:
            a = x.addr
            base = 0 if a.base is None else value(code, t, pc, env, a.base)
            if isinstance(base, int):
                out[next(iter(x.defs))] = FutureToken(Addr(None, (base + a.offset) & a.mask, a.space))
        return out
    # Evaluated: functions of their register operands (`Facts.pure`), and ld.param (analyse marks it LOCAL).
    # Not on a wait's failure path (`Code.backoff`): a retry count there would give each try nodes of its
    # own, and the merge past MAX_PER_PC forgets every value at the pc (the wait's parity and address).
    if x.kind != LOCAL or not (x.pure or x.op == "ld") or x.pc in code.backoff:
        return out
    text = code.fn.sites[x.pc].text
    if any(name in text for name in SPECIAL_DYNAMIC):
        return out  # reads a clock: not a function of the registers
    regs = shadow.regs
    for s in x.reads:  # the step reads these (fixed ones already hold their values)
        if not code.fixed(pc, s):
            v = env.get(s, UNKNOWN)
            regs[s] = UNKNOWN if isinstance(v, FutureToken) else v  # a token's word is not known
    shadow.pc = x.pc
    try:
        code.fn.code[x.pc](m, shadow)
    except Exception:  # noqa: BLE001 - an unknown operand (or a faulting instruction): the result is unknown
        return out
    for d in x.defs:
        v = regs[d]
        if not isinstance(v, Unknown):
            out[d] = v
    return out



class _Missing:
    """In a lane tuple (`unroll_lanes`): that thread does not know the register there."""

    __slots__ = ()


_MISSING = _Missing()
Lanes = dict[int, tuple[object, ...]]  # registers whose values may differ: each thread's value


class _Diverged(Exception):
    """The threads' runs of `unroll` would part ways: `unroll_lanes` gives up."""


class _Parted(Exception):
    """The threads' guards at a branch differ: `parts` holds the threads (their indexes) of each way."""

    def __init__(self, parts: list[list[int]]) -> None:
        super().__init__()
        self.parts = parts


# `unroll_lanes` walks again for each part of threads that part ways at a branch, at most this often.
MAX_PARTS = 8


def unroll_lanes(m: Machine, code: Code, ts: Sequence[Thread], live: list[tuple[int, ...]],
                 succ: Callable[[Thread, int, int, Env], tuple[int, ...]],
                 shared: Shared | None = None) -> list[Unrolled | None]:
    """`unroll` of each of `ts` (threads of one function at one pc, outside calls, of one warp), done
    in one walk for all (`_walk_lanes`): for each thread the graph `unroll(m, code, t, live, lambda j,
    env: succ(t, j, t.pc, env))` builds, node for node (the same pcs, edges and node numbers, equal
    envs), or None where this cannot tell (then unroll that thread alone). Threads that part ways at a
    branch are walked again in groups, one per way (at most MAX_PARTS more walks)."""
    out: list[Unrolled | None] = [None] * len(ts)
    todo = [list(range(len(ts)))]
    walks = 0
    while todo and walks <= MAX_PARTS:
        group = todo.pop()
        if len(group) < 2:
            continue
        walks += 1
        try:
            graphs = _walk_lanes(m, code, [ts[i] for i in group], live, succ, shared)
        except _Parted as e:
            todo.extend([group[k] for k in part] for part in e.parts)
            continue
        except (_Diverged, TypeError):  # TypeError: an unhashable value in a key
            continue
        for i, g in zip(group, graphs, strict=True):
            out[i] = g
    return out


def _walk_lanes(m: Machine, code: Code, ts: Sequence[Thread], live: list[tuple[int, ...]],
                succ: Callable[[Thread, int, int, Env], tuple[int, ...]],
                shared: Shared | None) -> list[Unrolled]:
    """`unroll_lanes` for threads that do not part ways (else it raises `_Parted` or `_Diverged`).

    The registers whose values may differ between the threads (`_lane_slots`: those that differ now and
    whatever the future computes from them, from a special register that differs, or with shfl.sync) are
    carried as one tuple of the threads' values (`_MISSING` where one does not know it); every other
    register holds the same value for all, kept once, and an instruction that reads none of the former
    is evaluated once. The walk is `unroll`'s, so each thread's own run takes the same steps as long as
    it would make the same choices: the same successors (compared where the guard may differ) and the
    same answer to "is this node new?" (equal tuples mean equal values for each thread; a new node is
    looked up among each thread's own). Where `unroll` merges a pc's values (MAX_PER_PC, MAX_NODES),
    each thread's values are merged alike. Where the threads would not make the same choices (a guard,
    a node of its own, a merge that loses some threads' values and not the others'), this raises."""
    t0, pc = ts[0], ts[0].pc
    lanes = range(len(ts))
    vary, reads_lane = _lane_slots(code, ts, pc)
    sh = Shared() if shared is None else shared
    if len(sh.edges) > Shared.KEPT:
        sh.edges.clear()
    shadows = [_shadow(t) for t in ts]
    pcs: list[int] = []
    commons: list[Env] = []
    vecs: list[Lanes] = []
    out_edges: list[list[int]] = []
    per_pc: dict[int, list[int]] = {}
    merged: dict[int, int] = {}   # pc -> the node that stands for every further path through it
    index: dict[tuple[object, ...], int] = {}
    alike: dict[tuple[int, int], list[int]] = {}  # nodes by pc and shared values: a lane's own may match
    ckeys: dict[tuple[object, ...], int] = {}  # the shared part of a key, numbered
    cid_of: dict[int, tuple[Env, int]] = {}    # by the id of a shared part kept in `commons`
    one_common: dict[int, Env] = {}            # by its number: the first shared part with those values
    one_vec: dict[tuple[object, ...], Lanes] = {}
    live_sets: dict[int, frozenset[int]] = {}
    work: list[int] = []

    def node(j: int, common: Env, vec: Lanes) -> int:
        here = live_sets.get(j)
        if here is None:
            here = live_sets[j] = frozenset(live[j])
        kept = {s: v for s, v in common.items() if s in here}
        common = common if len(kept) == len(common) else kept   # the same object where nothing dies
        memory = code.reads_local[j]   # as `unroll`: the local memory it carries, in `vec` only
        kept_vec = {s: v for s, v in vec.items() if s in here or (s < 0 and memory)}
        vec = vec if len(kept_vec) == len(vec) else kept_vec
        w = merged.get(j)
        if w is not None:   # as `unroll`: the merged node keeps the values every path agrees on
            old = commons[w]
            keep = {s: v for s, v in old.items() if s in common and _same(common[s], v)}
            keep_vec, fewer = _meet(vecs[w], vec, len(ts))
            if len(keep) != len(old):
                fewer = len(ts)
            if fewer:
                if fewer != len(ts):
                    raise _Diverged   # some threads would walk the node again, the others not
                commons[w], vecs[w] = keep, keep_vec
                work.append(w)
            return w
        known = cid_of.get(id(common))
        if known is not None and known[0] is common:
            cid = known[1]
        else:
            ck = tuple(sorted((s, type(v).__name__, _hashable(v)) for s, v in common.items()))
            cid = ckeys.setdefault(ck, len(ckeys))
            common = one_common.setdefault(cid, common)  # equal values, one object (one env per lane)
        vk = tuple(sorted((s, v, tuple(map(type, v))) for s, v in vec.items()))
        vec = one_vec.setdefault(vk, vec)  # raises TypeError on an unhashable value: the caller gives up
        key = (j, cid, vk)
        n = index.get(key)
        if n is not None:
            return n
        others = alike.setdefault((j, cid), [])
        for o in others:   # a thread whose own values equal those of a node it has would find that node
            ov = vecs[o]
            slots = vec.keys() | ov.keys()
            for i in lanes:
                if all(_lane_same(vec.get(s), ov.get(s), i) for s in slots):
                    raise _Diverged
        same_pc = per_pc.setdefault(j, [])
        widen = len(same_pc) >= MAX_PER_PC or len(pcs) >= MAX_NODES
        if widen:   # as `unroll`: one node for the rest, with the values every node at j agrees on
            for other in same_pc:
                e = commons[other]
                common = {s: v for s, v in common.items() if s in e and _same(e[s], v)}
                vec = _meet(vec, vecs[other], len(ts))[0]
        n = len(pcs)
        pcs.append(j)
        commons.append(common)
        vecs.append(vec)
        out_edges.append([])
        if widen:
            merged[j] = n
        else:
            cid_of[id(common)] = (common, cid)
            index[key] = n
            others.append(n)
        same_pc.append(n)
        work.append(n)
        return n

    def lane_env(common: Env, vec: Lanes, i: int) -> Env:
        own = [(s, v[i]) for s, v in vec.items() if v[i] is not _MISSING]
        if not own:
            return common   # the shared values are the whole env: one object for every lane (never changed)
        env = dict(common)
        env.update(own)
        return env

    root = [s for s in live[pc] if not code.fixed(pc, s)]
    root_vec: Lanes = {s: tuple(t.regs[s] for t in ts) for s in root if s in vary}
    if code.reads_local[pc]:
        root_vec[ROOT] = ((),) * len(ts)
    start = node(pc, {s: t0.regs[s] for s in root if s not in vary}, root_vec)
    while work:
        pulse()
        n = work.pop()
        j, common, vec = pcs[n], commons[n], vecs[n]
        x = code.ins[j]
        new_common, new_vec = common, vec
        if x.local or (x.kind in (ATOM, STORE) and any(s < 0 for s in vec)):
            # Each thread's own local memory (the env keys below 0 are in `vec` only; a load's defs are
            # in vary, `_lane_slots`); what else it writes is not known (`_transfer`).
            outs = [_transfer(m, code, ts[i], shadows[i], x, pc, lane_env(common, vec, i)) for i in lanes]
            if x.defs - vary:
                new_common = {s: v for s, v in common.items() if s not in x.defs}
            new_vec = {s: v for s, v in _defs(vec, x, outs).items() if s >= 0}
            for k in sorted({k for o in outs for k in o if k < 0}):
                new_vec[k] = tuple(o.get(k, _MISSING) for o in outs)
        elif not x.defs:
            pass
        elif j in reads_lane or x.shfl is not None:
            # defs within vary (`_lane_slots`): each thread's own values
            outs = [_transfer(m, code, ts[i], shadows[i], x, pc, lane_env(common, vec, i)) for i in lanes]
            new_vec = _defs(vec, x, outs)
        elif ins := sorted(x.reads & vary):
            # Threads with equal values in the registers it reads that differ get the same results
            # (a register fixed at pc is read from the thread, the others from the env).
            done: dict[tuple[object, ...], Env] = {}
            outs = []
            for i in lanes:
                vals: list[object] = []
                for s in ins:
                    if code.fixed(pc, s):
                        v = ts[i].regs[s]
                    else:
                        w = vec.get(s)
                        v = _MISSING if w is None else w[i]
                    vals += (type(v), v)
                got = done.get(key := tuple(vals))
                if got is None:
                    got = done[key] = _transfer(m, code, ts[i], shadows[i], x, pc, lane_env(common, vec, i))
                outs.append(got)
            new_vec = _defs(vec, x, outs)
        else:   # a function of registers equal in every thread: once
            out = _transfer(m, code, t0, shadows[0], x, pc, common)
            new_common = {s: v for s, v in out.items() if s not in vary}
            if x.defs & vary:
                new_vec = dict(vec)
                for d in x.defs & vary:
                    if d in out:
                        new_vec[d] = (out[d],) * len(ts)
                    else:
                        new_vec.pop(d, None)
        if x.guard is not None and x.guard[0] in vary:
            ways: dict[tuple[int, ...], list[int]] = {}
            for i in lanes:
                ways.setdefault(succ(ts[i], j, pc, lane_env(common, vec, i)), []).append(i)
            if len(ways) > 1:
                raise _Parted(list(ways.values()))
            nexts = next(iter(ways))
        else:
            nexts = succ(t0, j, pc, common)
        edges = out_edges[n]
        for s in nexts:
            k = node(s, new_common, new_vec)
            if k not in edges:
                edges.append(k)
    succs = [sh.edge(e) for e in out_edges]
    cycles = _on_cycle(succs)
    graphs = []
    for i in lanes:
        pulse()
        envs: list[Env] = []
        # Nodes whose values are the same objects share one env (those where no live register changes).
        kept: dict[tuple[int, int], Env] = {}
        for common, vec in zip(commons, vecs, strict=True):
            env = kept.get(key := (id(common), id(vec)))
            if env is None:
                env = kept[key] = lane_env(common, vec, i)
            envs.append(env)
        graphs.append(Unrolled(pcs, envs, succs, cycles, start, pc, per_pc, bool(merged), bytes(ts[i].local)))
    return graphs


def _meet(base: Lanes, other: Lanes, lanes: int) -> tuple[Lanes, int]:
    """`base` keeping, for each thread, only the values `other` holds too (equal, of the same type), as
    `unroll` merges envs; and how many threads lost one."""
    out: Lanes = {}
    lost = [False] * lanes
    for s, vals in base.items():
        theirs = other.get(s)
        kept = []
        for i, v in enumerate(vals):
            if v is not _MISSING and (theirs is None or theirs[i] is _MISSING or not _same(theirs[i], v)):
                lost[i] = True
                v = _MISSING
            kept.append(v)
        if any(v is not _MISSING for v in kept):
            out[s] = tuple(kept)
    return out, sum(lost)


def _defs(vec: Lanes, x: Ins, outs: list[Env]) -> Lanes:
    """`vec` with the registers x writes (all of them among those that differ between the threads) set
    to each thread's value after it (`outs`: each thread's env)."""
    out = dict(vec)
    for d in x.defs:
        got = tuple(o.get(d, _MISSING) for o in outs)
        if all(v is _MISSING for v in got):
            out.pop(d, None)
        else:
            out[d] = got
    return out


def _lane_same(a: tuple[object, ...] | None, b: tuple[object, ...] | None, i: int) -> bool:
    """Whether thread i holds the same value (or none) in two lane tuples of one register (None: no
    thread knows it there)."""
    x = _MISSING if a is None else a[i]
    y = _MISSING if b is None else b[i]
    return x is y or _same(x, y)


def _lane_slots(code: Code, ts: Sequence[Thread], pc: int) -> tuple[frozenset[int], frozenset[int]]:
    """The register slots whose values may differ between the threads anywhere in their futures from pc,
    and the instructions reachable from pc that read a special register (`%tid.x`, `%laneid`...) whose
    value differs (the checker's `Ins.reads` holds declared registers only). The former: those that
    differ now, and the defs of every instruction reachable from pc that reads one, reads such a
    special register or is a shfl.sync (its value depends on the lane), to a fixpoint."""
    regs0 = ts[0].regs
    differ = [s for s in range(len(regs0)) if any(not _same(t.regs[s], regs0[s]) for t in ts[1:])]
    vary = {s for s in differ if s >= len(SPECIAL_CONSTANTS)}
    # Stems: `%tid` for `%tid.x` (also the alias `%tid`); a wider match only evaluates more per thread.
    names = {SPECIAL_CONSTANTS[s].split(".")[0] for s in differ if s < len(SPECIAL_CONSTANTS)}
    reach: list[int] = []
    seen = {pc}
    todo = [pc]
    while todo:
        j = todo.pop()
        reach.append(j)
        for k in code.succ[j]:
            if k not in seen:
                seen.add(k)
                todo.append(k)
    reads_lane = frozenset(j for j in reach if names and "%" in (text := code.fn.sites[j].text)
                           and any(name in text for name in names))
    for j in reach:
        x = code.ins[j]
        if j in reads_lane or x.shfl is not None or x.local:   # a load of each thread's own local memory
            vary |= x.defs
    changed = True
    while changed:
        changed = False
        for j in reach:
            x = code.ins[j]
            if x.defs and x.reads & vary and not x.defs <= vary:
                vary |= x.defs
                changed = True
    return frozenset(vary), reads_lane
