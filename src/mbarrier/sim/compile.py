"""From a PTX function's syntax tree to a list of step functions, one per instruction.

Each instruction is translated once per launch into the source of a small Python function
`f(m, t)` (m: the Machine, t: the Thread) that performs exactly that instruction and sets `t.pc`; all of
a kernel's functions are compiled by one `exec`. Registers live in the thread's `regs` list at fixed
slots, operands become list indexing or constants, and there is no syntax-tree walking at run time.

Each opcode's emitter is declared with its facts in `sim.registry` (the modules of `sim.isa`). Instructions
the simulator does not implement compile to a function that raises `Unsupported` with the
instruction's text and line, so they stop a run when reached and never pass as a no-op.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from mbarrier.ptx import ast
from mbarrier.sim.address import LOCAL_GENERIC, PARAM_GENERIC, SHARED_GENERIC, address_mask
from mbarrier.sim.errors import LaunchError, Unsupported
from mbarrier.sim.floatbits import FLOAT_HELPERS, f32_bits, f64_bits
from mbarrier.sim.frames import Frame, FrameVar, Layout, statements
from mbarrier.sim.registry import REGISTRY, Facts, Kind, facts_of
from mbarrier.sim.types import TYPES, Scalar

# Per-thread constant special registers: they sit at the first slots of every register file.
SPECIAL_CONSTANTS: tuple[str, ...] = tuple(
    [f"%{name}.{c}" for name in ("tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid",
                                 "cluster_ctaid", "cluster_nctaid") for c in "xyz"]
    + ["%laneid", "%warpid", "%nwarpid", "%cluster_ctarank", "%cluster_nctarank", "%smid", "%nsmid",
       "%gridid", "%is_explicit_cluster", "%lanemask_eq", "%lanemask_le", "%lanemask_lt",
       "%lanemask_ge", "%lanemask_gt", "%total_smem_size", "%dynamic_smem_size",
       "%reserved_smem_offset_begin", "%reserved_smem_offset_end", "%reserved_smem_offset_cap",
       "%reserved_smem_offset_0", "%reserved_smem_offset_1"]
    # %envreg0..31: read-only registers the driver fills (PTX ISA 10, Special Registers: %envreg<32>);
    # 0 unless the launch gives values (`launch(..., envregs=...)`).
    + [f"%envreg{i}" for i in range(32)]
)
SPECIAL_SLOT: dict[str, int] = {name: i for i, name in enumerate(SPECIAL_CONSTANTS)}
# Special registers whose value changes as the thread runs: read through the machine.
SPECIAL_DYNAMIC: dict[str, str] = {
    "%clock": "m.clock(t, 32)", "%clock64": "m.clock(t, 64)", "%globaltimer": "m.timer(t, 64)",
    "%globaltimer_lo": "m.timer(t, 32)", "%globaltimer_hi": "(m.timer(t, 64) >> 32)",
}
_SPECIAL_ALIASES = {"%tid": "%tid.x", "%ntid": "%ntid.x", "%ctaid": "%ctaid.x", "%nctaid": "%nctaid.x"}


@dataclass(frozen=True, slots=True)
class Reg:
    slot: int
    type: Scalar


_END = Facts(Kind.EXIT, "ret")


@dataclass(frozen=True, slots=True)
class Site:
    """Where an instruction came from: for traces and reports. `source` is the high-level location the
    latest `.loc` before it names (`k.cu:57`), when the module has line information; `facts` what the
    instruction touches (`sim.registry`)."""

    line: int
    text: str
    function: str
    source: str = ""
    facts: Facts = field(default=_END, compare=False)


@dataclass
class CompiledFunction:
    name: str
    code: list[Callable[..., None]]
    sites: list[Site]
    labels: dict[str, int]
    nregs: int
    reg_types: list[Scalar]
    unsupported: frozenset[int] = frozenset()  # the pcs that stop the run (not supported, malformed)
    reasons: dict[int, str] = field(default_factory=dict)  # what each of them raises
    reg_names: dict[int, str] = field(default_factory=dict)  # slot -> its name in the source (messages)
    # pc of each direct branch -> its target's pc (labels resolved in the branch's block)
    targets: dict[int, int] = field(default_factory=dict)
    # pc of each ld/st whose address names a variable of the frame (a .local one, or a .param one: a
    # call's argument or result, a .func's parameter) -> that variable's local address
    frame_bases: dict[int, int] = field(default_factory=dict)


class UnsupportedForm(Exception):
    """Raised by an emitter for a form it does not implement; becomes a raising step function."""


_LITERAL = re.compile(r"-?(0x[0-9a-f]+|\d+)")
_FOLDABLE = re.compile(r"(min|max|abs|bool|not|if|else|True|False|and|or)|[\s\d()+\-*/%&|^<>=!~.,xa-f]")
_FOLD_BUILTINS = {"min": min, "max": max, "abs": abs, "bool": bool}


def is_literal(expr: str) -> bool:
    return _LITERAL.fullmatch(expr) is not None


def fold(expr: str) -> str:
    """Evaluate at compile time an expression made only of literals and operators."""
    if "r[" in expr or "m." in expr or "t." in expr or "_" in expr:
        return expr
    if _FOLDABLE.sub("", expr):
        return expr
    try:
        value = eval(expr, {"__builtins__": _FOLD_BUILTINS})  # noqa: S307 - literals and operators only
    except (ArithmeticError, SyntaxError, TypeError, ValueError, NameError):
        return expr
    if isinstance(value, bool):
        return repr(value)
    return f"{value:#x}" if isinstance(value, int) and value >= 0 else f"({value})"


def sext(expr: str, bits: int) -> str:
    """Python source for the signed value of an unsigned `bits`-wide expression."""
    sign = 1 << (bits - 1)
    return fold(f"((({expr}) ^ {sign:#x}) - {sign:#x})")


@dataclass
class Gen:
    """The code generator's state for one instruction: operand helpers and the lines emitted."""

    scope: list[dict[str, Reg | FrameVar]]
    layout: Layout
    labels: dict[str, int]
    index: int
    ins: ast.Instruction
    frame: Frame
    lines: list[str] = field(default_factory=list)
    sets_pc: bool = False
    consts: dict[str, object] = field(default_factory=dict)
    entry: bool = True  # compiling a kernel (.entry), not a .func

    # -- names ---------------------------------------------------------------------------------------
    def lookup(self, name: str) -> Reg | None:
        """The register this name denotes in scope (None: not a register)."""
        for frame in reversed(self.scope):
            if name in frame:
                found = frame[name]
                return found if isinstance(found, Reg) else None
        return None

    def var(self, name: str) -> FrameVar | None:
        """The frame variable (.local or .param) this name denotes in scope."""
        for frame in reversed(self.scope):
            if name in frame:
                found = frame[name]
                return found if isinstance(found, FrameVar) else None
        return None

    def unsupported(self, why: str = "") -> UnsupportedForm:
        return UnsupportedForm(why)

    def const(self, value: object) -> str:
        """A name for a Python object the generated code needs (bound into the function's globals)."""
        name = f"_k{self.index}_{len(self.consts)}"
        self.consts[name] = value
        return name

    # -- operands ------------------------------------------------------------------------------------
    def src(self, op: ast.Operand, ty: Scalar) -> str:
        """Source of the operand's value as an unsigned `ty.bits`-wide integer (a bool for .pred)."""
        if isinstance(op, ast.Name):
            reg = self.lookup(op.name)
            if reg is not None:
                if reg.type.pred and not ty.pred:
                    # ptxas refuses a predicate where a number goes; the value would be a bool.
                    raise self.unsupported(f"predicate {op.name} as a {ty.name} operand")
                if ty.pred or reg.type.bits <= ty.bits:
                    return f"r[{reg.slot}]"
                return f"(r[{reg.slot}] & {ty.mask:#x})"
            name = _SPECIAL_ALIASES.get(op.name, op.name)
            if name in SPECIAL_SLOT:
                return f"r[{SPECIAL_SLOT[name]}]"
            if name in SPECIAL_DYNAMIC:
                return f"({SPECIAL_DYNAMIC[name]} & {ty.mask:#x})"
            var = self.var(op.name)
            if var is not None:
                return f"{var.address & ty.mask:#x}"
            sym = self.layout.symbols.get(op.name)
            if sym is not None:
                return f"{sym.address & ty.mask:#x}"
            at = self.layout.param_at.get(op.name)
            if at is not None:
                return f"{at & ty.mask:#x}"  # mov d, param: its .param address (PTX ISA 5.1.6.1)
            raise self.unsupported(f"unknown name {op.name!r}")
        if isinstance(op, ast.Imm):
            if ty.float:
                return f"{(f32_bits if ty.bits == 32 else f64_bits)(float(op.value)):#x}"
            return f"{op.value & ty.mask:#x}"
        if isinstance(op, ast.FloatImm):
            if op.bits == ty.bits:
                return f"{op.raw:#x}"
            if ty.bits == 32:
                return f"{f32_bits(op.value):#x}"
            if ty.bits == 64:
                return f"{f64_bits(op.value):#x}"
            raise self.unsupported(f"float immediate {op.text} as {ty.name}")
        if isinstance(op, ast.Expr):
            if op.value is None:
                return self.symbol_expr(op, ty)
            return f"{op.value & ty.mask:#x}"
        if isinstance(op, ast.Not):
            return f"(not {self.src(op.operand, ty)})"
        raise self.unsupported(f"operand {type(op).__name__}")

    def symbol_expr(self, op: ast.Expr, ty: Scalar) -> str:
        """`sym+4`, `sym-8`: a symbol's address plus a constant."""
        text = op.text.replace(" ", "")
        for sep in ("+", "-"):
            if sep in text:
                head, _, tail = text.partition(sep)
                sym = self.layout.symbols.get(head)
                base = sym.address if sym is not None else self.layout.param_at.get(head)
                if base is not None:
                    try:
                        off = int(tail, 0)
                    except ValueError:
                        break
                    return f"{(base + (off if sep == '+' else -off)) & ty.mask:#x}"
        raise self.unsupported(f"expression {op.text!r}")

    def ssrc(self, op: ast.Operand, ty: Scalar) -> str:
        """Source of the operand's value read as a signed integer of `ty.bits`."""
        return sext(self.src(op, ty), ty.bits)

    def dst(self, op: ast.Operand) -> Reg | None:
        """The destination register (None for the sink `_`)."""
        if isinstance(op, ast.Sink):
            return None
        if isinstance(op, ast.Name):
            reg = self.lookup(op.name)
            if reg is not None:
                return reg
        raise self.unsupported(f"destination {op!r} is not a register")

    def assign(self, op: ast.Operand, expr: str, ty: Scalar, masked: bool = False) -> None:
        """Emit `reg = expr`, truncated to the instruction type and to the register's width."""
        reg = self.dst(op)
        if reg is None:
            return
        if reg.type.pred or ty.pred:
            self.lines.append(f"r[{reg.slot}] = {expr}")
            return
        bits = min(ty.bits, reg.type.bits)
        if masked and bits == ty.bits:
            self.lines.append(f"r[{reg.slot}] = {fold(expr)}")
        else:
            self.lines.append(f"r[{reg.slot}] = {fold(f'({expr}) & {(1 << bits) - 1:#x}')}")

    def address(self, op: ast.Operand, space: str) -> str:
        """Source of the address an `[...]` operand of this state space ("cta", "cluster", "local",
        "param", "global", "generic") names, wrapped as PTX ISA 6.4.1 says (`sim.address.address_mask`:
        `[%r+384]` with a 32-bit register is modulo 2^32). In a generic-addressing instruction a shared
        variable's name stands for its generic address."""
        if not isinstance(op, ast.Address) or op.items:
            raise self.unsupported("address operand form")
        mask = address_mask(space)
        if op.base is None:
            return f"{op.offset & mask:#x}"
        reg = self.lookup(op.base.name)
        if reg is not None:
            base = f"r[{reg.slot}]"
            wrap = address_mask(space, reg.type.bits)
            if op.offset == 0 and wrap >= reg.type.mask:
                return base
            return f"(({base} + {op.offset}) & {wrap:#x})"
        var = self.var(op.base.name)
        if var is not None:
            return f"{(var.address + (LOCAL_GENERIC if space == 'generic' else 0) + op.offset) & mask:#x}"
        sym = self.layout.symbols.get(op.base.name)
        if sym is not None:
            base_addr = sym.address + (SHARED_GENERIC if space == "generic" and sym.space == "shared" else 0)
            return f"{(base_addr + op.offset) & mask:#x}"
        at = self.layout.param_at.get(op.base.name)
        if at is not None:
            return f"{(at + (PARAM_GENERIC if space == 'generic' else 0) + op.offset) & mask:#x}"
        raise self.unsupported(f"address base {op.base.name!r}")

    def label(self, op: ast.Operand) -> int:
        if isinstance(op, ast.Name) and op.name in self.labels:
            return self.labels[op.name]
        raise self.unsupported(f"branch target {op!r}")

    def type_of(self, ins: ast.Instruction, n: int = -1) -> Scalar:
        found = [TYPES[q] for q in ins.qualifiers if q in TYPES]
        if not found:
            raise self.unsupported("no type qualifier")
        return found[n]

    def has(self, *quals: str) -> bool:
        return any(q in self.ins.qualifiers for q in quals)

    def next_pc(self) -> int:
        return self.index + 1


_IDENTIFIER = re.compile(r"[%$A-Za-z_][\w$]*")


def _operand_names(op: ast.Operand, out: set[str]) -> None:
    if isinstance(op, ast.Name):
        out.add(op.name)
    elif isinstance(op, ast.Address):
        if op.base is not None:
            out.add(op.base.name)
        for item in op.items:
            _operand_names(item, out)
    elif isinstance(op, (ast.Vector, ast.ParenList)):
        for item in op.items:
            _operand_names(item, out)
    elif isinstance(op, ast.Not):
        _operand_names(op.operand, out)
    elif isinstance(op, ast.Expr):
        out.update(_IDENTIFIER.findall(op.text))


def named_in(fn: ast.Function) -> frozenset[str]:
    """Every name an instruction of the function mentions (operands, guards): a superset of the
    registers its code reads or writes."""
    out: set[str] = set()
    for kind, s in statements(fn.body or ()):
        if kind == "stmt" and isinstance(s, ast.Instruction):
            if s.guard is not None:
                out.add(s.guard.predicate)
            for op in s.operands:
                _operand_names(op, out)
    return frozenset(out)


def declared_names(d: ast.Declarator, named: frozenset[str]) -> list[str]:
    """The registers a declarator declares that get a slot: its name, or for a range `%r<N>` (the
    names %r0 .. %r<N-1>, PTX ISA 5.4.6) those of them the code names (`named`: `named_in`), in index
    order. A declared range costs nothing until used: `.reg .pred %p<0xffffffff>;` is one declaration,
    not four billion slots in every thread's register file."""
    if d.range is None:
        return [d.name]
    n, limit = len(d.name), d.range
    found = [(int(u[n:]), u) for u in named
             if u.startswith(d.name) and u[n:].isdigit() and (u[n] != "0" or u[n:] == "0")]
    return [u for i, u in sorted(found) if i < limit]


def _declare(frame: dict[str, Reg | FrameVar], decl: ast.Declaration, next_slot: int,
             types: list[Scalar], named: frozenset[str]) -> int:
    ty = TYPES.get(decl.type)
    if ty is None:
        raise LaunchError(f"line {decl.pos.line}: registers of type {decl.type} are not supported")
    for d in decl.names:
        for name in declared_names(d, named):
            frame[name] = Reg(next_slot, ty)
            types.append(ty)
            next_slot += 1
    return next_slot


def source_files(module: ast.Module) -> dict[str, str]:
    """`.file` directives: file number -> the file's base name."""
    files = {}
    for d in module.directives:
        if d.name == ".file" and len(d.args) >= 2:
            files[d.args[0]] = d.args[1].strip('"').rsplit("/", 1)[-1]
    return files


def compile_function(fn: ast.Function, layout: Layout, source_lines: tuple[str, ...],
                     files: dict[str, str] | None = None) -> CompiledFunction:
    """Compile a function body into step functions (plus a final implicit `ret`)."""
    assert fn.body is not None
    # Pass 1: instruction indices of labels, block by block. A label is seen in its { } block and the
    # blocks inside it, an inner one hiding an outer one of its name (inline asm repeats `waitLoop:`
    # in a block of its own at every use: the branch in each block goes to its own).
    own: list[dict[str, int]] = [{}]
    parent: list[int] = [-1]
    stack = [0]
    block_of: list[int] = []
    for kind, s in statements(fn.body):
        if kind == "enter":
            own.append({})
            parent.append(stack[-1])
            stack.append(len(own) - 1)
        elif kind == "leave":
            stack.pop()
        elif isinstance(s, ast.Label):
            own[stack[-1]][s.name] = len(block_of)
        elif isinstance(s, ast.Instruction):
            block_of.append(stack[-1])
    visible: list[dict[str, int]] = []
    for b, names in enumerate(own):  # a block comes after its parent
        visible.append({**(visible[parent[b]] if parent[b] >= 0 else {}), **names})
    labels = visible[0]
    # Pass 2: registers in scope and code.
    named = named_in(fn)
    reg_types: list[Scalar] = [TYPES[".b32"]] * len(SPECIAL_CONSTANTS)
    reg_names: dict[int, str] = {}
    next_slot = len(SPECIAL_CONSTANTS)
    scope: list[dict[str, Reg | FrameVar]] = [{}]
    frame = layout.frames[fn.name]
    for name, address, size in frame.params + frame.returns:
        scope[0][name] = FrameVar(address, size)
    decls = iter(frame.decls)
    for p in fn.params:
        if p.space == ".reg":
            reg = Reg(next_slot, TYPES.get(p.type, TYPES[".b64"]))
            scope[0][p.name] = reg
            reg_types.append(reg.type)
            next_slot += 1
    watched = async_register_names(fn)
    sources: list[str] = []
    unsupported: set[int] = set()
    reasons: dict[int, str] = {}
    consts: dict[str, object] = {}
    sites: list[Site] = []
    targets: dict[int, int] = {}
    frame_bases: dict[int, int] = {}
    index = 0
    loc = ""
    for kind, s in statements(fn.body):
        if kind == "enter":
            scope.append({})
            continue
        if kind == "leave":
            scope.pop()
            continue
        if isinstance(s, ast.Declaration) and s.space == ".reg":
            next_slot = _declare(scope[-1], s, next_slot, reg_types, named)
            reg_names.update((r.slot, n) for n, r in scope[-1].items() if isinstance(r, Reg))
        elif isinstance(s, ast.Declaration) and s.space in (".local", ".param"):
            for _ in s.names:
                name, address, size = next(decls)
                scope[-1][name] = FrameVar(address, size)
        if isinstance(s, ast.Directive) and s.name == ".loc" and len(s.args) >= 2:
            loc = f"{(files or {}).get(s.args[0], 'file' + s.args[0])}:{s.args[1]}"
        if not isinstance(s, ast.Instruction):
            continue
        line = s.pos.line
        text = source_lines[line - 1].strip() if 0 < line <= len(source_lines) else s.text
        sites.append(Site(line, text, fn.name, loc, facts_of(s)))
        gen = Gen(scope, layout, visible[block_of[index]], index, s, frame, entry=fn.kind == "entry")
        target = s.operands[0] if s.opcode == "bra" and s.operands else None
        if isinstance(target, ast.Name) and target.name in gen.labels:
            targets[index] = gen.labels[target.name]
        moves = s.opcode in ("ld", "st") and len(s.operands) == 2
        where = s.operands[1 if s.opcode == "ld" else 0] if moves else None
        if isinstance(where, ast.Address) and where.base is not None and \
                (var := gen.var(where.base.name)) is not None:
            frame_bases[index] = var.address
        if watched and not sites[-1].facts.async_registers:
            _watch(gen, s, watched)
        source = _emit(gen, s, consts, reasons)
        if source.startswith(_RAISING):
            unsupported.add(index)
        sources.append(source)
        index += 1
    # Falling off the end of a body returns (exits, in a kernel).
    sites.append(Site(fn.pos.line, "(end of function)", fn.name))
    sources.append(f"def _i{index}(m, t):\n    m.ret(t)\n")
    namespace: dict[str, object] = dict(consts)
    namespace["Unsupported"] = Unsupported
    namespace.update(FLOAT_HELPERS)
    exec(compile("\n".join(sources), f"<ptx:{fn.name}>", "exec"), namespace)  # noqa: S102
    code = [namespace[f"_i{i}"] for i in range(index + 1)]
    return CompiledFunction(fn.name, code, sites, labels, next_slot, reg_types,  # type: ignore[arg-type]
                            frozenset(unsupported), reasons, reg_names, targets, frame_bases)


def async_register_names(fn: ast.Function) -> frozenset[str]:
    """The registers that asynchronous operations of the function own while in flight (`Facts.
    async_registers`: wgmma.mma_async's accumulators and A fragments), by name."""
    out: set[str] = set()
    for kind, s in statements(fn.body or ()):
        if kind == "stmt" and isinstance(s, ast.Instruction):
            ops = s.operands
            for i in facts_of(s).async_registers:
                if i < len(ops):
                    _operand_names(ops[i], out)
    return frozenset(out)


def _watch(gen: Gen, ins: ast.Instruction, watched: frozenset[str]) -> None:
    """An ordinary instruction naming registers an asynchronous operation may own: its step first tells
    the machine (`Machine.wg_touch`), which refuses an access while they are in flight and remembers it
    for the fence rule of wgmma.mma_async (PTX ISA 9.7.15.7.1)."""
    names: set[str] = set()
    for op in ins.operands:
        _operand_names(op, names)
    if ins.guard is not None:
        names.add(ins.guard.predicate)
    slots = sorted({reg.slot for n in names & watched if (reg := gen.lookup(n)) is not None})
    if slots:
        gen.lines.append(f"m.wg_touch(t, {tuple(slots)!r})")


_RAISING = "# raises\n"


def _raising(index: int, why: str, reasons: dict[int, str]) -> str:
    reasons[index] = why
    return (f"{_RAISING}def _i{index}(m, t):\n"
            f"    raise Unsupported({why!r})\n")


def _emit(gen: Gen, ins: ast.Instruction, consts: dict[str, object], reasons: dict[int, str]) -> str:
    i = gen.index
    declared = REGISTRY.get(ins.opcode)
    try:
        if declared is None:
            raise UnsupportedForm("")
        declared.emit(gen, ins)
    except UnsupportedForm as e:
        why = f" ({e})" if str(e) else ""
        return _raising(i, f"`{ins.text}` is not supported{why}", reasons)
    except (LookupError, ValueError):
        # The emitter could not take the operands apart: too few or too many for the instruction (ptxas
        # refuses it: "Arguments mismatch"), or a form of it the simulator does not know.
        n = len(ins.operands)
        return _raising(i, f"`{ins.text}` is not supported ({n} operand{'s' if n != 1 else ''}: not a form "
                           f"of {ins.opcode} the simulator knows; `mbarrier lint` judges it as ptxas does)",
                        reasons)
    consts.update(gen.consts)
    body = list(gen.lines)
    if not gen.sets_pc:
        body.append(f"t.pc = {i + 1}")
    out = [f"def _i{i}(m, t):"]
    guard = None
    if ins.guard is not None:
        reg = gen.lookup(ins.guard.predicate)
        if reg is None:
            return _raising(i, f"`{ins.text}`: unknown guard predicate {ins.guard.predicate!r}", reasons)
        taken, skipped = (body[0][7:], i + 1) if not ins.guard.negated else (i + 1, body[0][7:])
        if len(body) == 1 and body[0].startswith("t.pc = ") and gen.sets_pc:
            # A guarded branch: one conditional assignment.
            out.append(f"    t.pc = {taken} if t.regs[{reg.slot}] else {skipped}")
            return "\n".join(out) + "\n"
        guard = f"r[{reg.slot}]" if not ins.guard.negated else f"not r[{reg.slot}]"
    if guard is not None or any("r[" in line for line in body):
        out.append("    r = t.regs")
    if guard is not None:
        out.append(f"    if not ({guard}):")
        out.append(f"        t.pc = {i + 1}")
        out.append("        return")
    out.extend("    " + line for line in body)
    return "\n".join(out) + "\n"
