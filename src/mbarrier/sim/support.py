"""What of a kernel the simulator cannot execute, before running it: every instruction of the functions
the kernel can reach through its calls that compiles to a stop (`mbarrier support`).

The answer is the simulator's own: each function is compiled as a launch compiles it, so an opcode with
no declaration in the instruction registry (`sim.registry`) and a form its executor refuses are found
exactly where a run would stop. Parameters get zero bytes (the launch's values change no verdict here).
Functions are reached through direct calls, and through the function names the reachable code or a
variable's initializer mentions (targets of indirect calls); instructions that control flow never reaches
inside a reached function are counted too (`mbarrier run` would not stop at those).
"""

from __future__ import annotations

from dataclasses import dataclass

from mbarrier.ptx import ast
from mbarrier.sim.launch import launch, param_offsets, pick_kernel
from mbarrier.sim.registry import REGISTRY, SPACES
from mbarrier.sim.types import TYPES


@dataclass(frozen=True)
class Gap:
    """One instruction the simulator cannot execute."""

    function: str
    line: int
    operation: str     # `cp.async.bulk.tensor`: the opcode and its operation words (`operation`)
    instruction: str   # the source line
    reason: str


@dataclass(frozen=True)
class Support:
    kernel: str
    functions: tuple[str, ...]     # the kernel and the functions it can reach, in module order
    instructions: int              # instructions in them
    gaps: tuple[Gap, ...]

    def by_operation(self) -> dict[str, int]:
        """How many instructions of each operation, the most frequent first."""
        out: dict[str, int] = {}
        for g in self.gaps:
            out[g.operation] = out.get(g.operation, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


# Words that qualify how an operation runs, not which operation it is.
_MODIFIERS = frozenset({".sync", ".aligned", ".rn", ".rz", ".rm", ".rp", ".rna", ".rni", ".rzi", ".rmi",
                        ".rpi", ".ftz", ".sat", ".approx", ".full", ".uni"})


def operation(ins: ast.Instruction) -> str:
    """The operation an instruction names, without its shapes, types, spaces and sub-qualifiers:
    `cp.async.bulk.tensor` for `cp.async.bulk.tensor.2d.shared::cluster.global.tile...`."""
    words = [ins.opcode]
    for q in ins.qualifiers:
        if any(c.isdigit() for c in q) or "::" in q or q in TYPES or q in SPACES:
            break
        if q not in _MODIFIERS:
            words.append(q[1:])
    return ".".join(words)


def _names(op: ast.Operand) -> list[str]:
    if isinstance(op, ast.Name):
        return [op.name]
    if isinstance(op, (ast.Vector, ast.ParenList)):
        return [n for item in op.items for n in _names(item)]
    if isinstance(op, ast.Address) and op.base is not None:
        return [op.base.name]
    return []


def reachable(module: ast.Module, kernel: ast.Function) -> list[ast.Function]:
    """The kernel and every .func with a body it can reach, in module order: the functions its code
    names (call targets, function pointers taken with mov), those named in variable initializers (tables
    of function pointers an indirect call may use), and what they name in turn."""
    funcs = {f.name: f for f in module.functions if f.body is not None and f.kind == "func"}
    tables = {op.name for decl in module.declarations for d in decl.names for op in d.init or ()
              if isinstance(op, ast.Name) and op.name in funcs}
    seen = {kernel.name, *tables}
    todo = [kernel, *(funcs[n] for n in tables)]
    while todo:
        for ins in ast.instructions(todo.pop().body or ()):
            for name in (n for op in ins.operands for n in _names(op)):
                if name in funcs and name not in seen:
                    seen.add(name)
                    todo.append(funcs[name])
    return [f for f in module.functions if f.name in seen and f.body is not None]


def support(module: ast.Module, kernel: str | None = None) -> Support:
    """The instructions of `kernel` (and what it reaches) that the simulator cannot execute. Raises
    LaunchError for a kernel that cannot be launched at all (no such kernel, a variable of a type the
    simulator has no memory for)."""
    fn = pick_kernel(module, kernel)
    zeros = {name: bytes(size) for name, (_, size) in param_offsets(fn).items()}
    # the smallest launch the kernel's directives allow: one cluster of CTAs of the required shape
    shapes = {k: tuple(v) for k, v in fn.performance if k in (".reqnctapercluster", ".reqntid")}
    m = launch(module, fn.name, args=zeros, grid=shapes.get(".reqnctapercluster", 1),  # type: ignore[arg-type]
               block=shapes.get(".reqntid", 1))
    funcs = reachable(module, fn)
    gaps = []
    count = 0
    for f in funcs:
        code = m.functions[f.name]
        count += len(code.sites) - 1  # the implicit return at the end is not an instruction
        ins = ast.instructions(f.body or ())
        for pc in sorted(code.unsupported):
            site = code.sites[pc]
            op = ins[pc].opcode
            # the executor's own words, "`text` is not supported (why)", else what is missing
            why = code.reasons[pc].removeprefix(f"`{ins[pc].text}`").strip().removeprefix("is not supported")
            why = why.strip().removeprefix("(").removesuffix(")")
            if op not in REGISTRY:
                why = f"no executor for `{op}` in the simulator's instruction registry"
            elif not why:
                why = f"a form of `{op}` its executor does not implement"
            gaps.append(Gap(f.name, site.line, operation(ins[pc]), site.text, why))
    return Support(fn.name, tuple(f.name for f in funcs), count, tuple(gaps))
