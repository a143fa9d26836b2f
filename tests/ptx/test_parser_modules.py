"""Every real module under tests/ptx/modules/ (nvcc output, tools/gen_modules.sh) parses, and the tree
agrees with an independent line-based reading of the text."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from mbarrier.ptx import ast
from mbarrier.ptx.parser import parse_file

MODULES = Path(__file__).parent / "modules"
PTX_FILES = sorted(MODULES.glob("*.ptx"))

# One instruction per line in tool output (inline asm may open a `{` before it): an optional guard, the
# opcode with its qualifiers, then a blank or `;` but not a `:` (that is a label: `prototype_0 : ...`).
# Call sequences continue on later lines, which this does not match.
_INSN_LINE = re.compile(
    r"^\s*\{?\s*(?:@!?[%\w$]+\s+)?([a-z][a-z0-9_]*)((?:\.[\w:]+)*)(?![ \t]*:)[ \t;]", re.M)
_ENTRY = re.compile(r"\.entry\s+([\w$]+)")
_LOC = re.compile(r"^\s*\.loc\s", re.M)


def directives(stmts: tuple[ast.Statement, ...], name: str) -> list[ast.Directive]:
    out: list[ast.Directive] = []
    for s in stmts:
        if isinstance(s, ast.Directive) and s.name == name:
            out.append(s)
        elif isinstance(s, ast.Block):
            out.extend(directives(s.body, name))
    return out


def flat(stmts: tuple[ast.Statement, ...]) -> list[ast.Statement]:
    out: list[ast.Statement] = []
    for s in stmts:
        out.extend(flat(s.body) if isinstance(s, ast.Block) else [s])
    return out


def all_instructions(m: ast.Module) -> list[ast.Instruction]:
    return [i for f in m.functions if f.body is not None for i in ast.instructions(f.body)]


def test_there_are_modules() -> None:
    assert len(PTX_FILES) >= 12


@pytest.mark.parametrize("path", PTX_FILES, ids=lambda p: p.name)
def test_module_matches_text(path: Path) -> None:
    text = path.read_text()
    m = parse_file(path)
    assert m.path == str(path)
    assert m.version == (9, 0)
    assert m.targets[0] == re.search(r"^\.target\s+(\w+)", text, re.M).group(1)  # type: ignore[union-attr]
    assert m.address_size == 64
    assert [f.name for f in m.entries] == _ENTRY.findall(text)
    insns = all_instructions(m)
    by_text = Counter(match.group(1) + match.group(2) for match in _INSN_LINE.finditer(text))
    assert Counter(i.text for i in insns) == by_text
    # source order inside each function: positions strictly increase
    for f in m.functions:
        if f.body is not None:
            lines = [i.pos.line for i in ast.instructions(f.body)]
            assert lines == sorted(lines)
    locs = [d for f in m.functions if f.body is not None for d in directives(f.body, ".loc")]
    assert len(locs) == len(_LOC.findall(text))
    for d in locs:
        assert d.args[0].isdigit() and d.args[1].isdigit()
        assert text.split("\n")[d.pos.line - 1].lstrip().startswith(".loc")


def load(name: str) -> ast.Module:
    return parse_file(MODULES / name)


def test_cluster_kernel_structure() -> None:
    m = load("cluster.sm_90.ptx")
    (k,) = m.entries
    assert k.name == "_Z4pingPi"
    assert k.linkage == ".visible"
    assert [p.name for p in k.params] == ["_Z4pingPi_param_0"]
    assert k.params[0].type == ".u64" and k.params[0].space == ".param"
    assert (".explicitcluster", ()) in k.performance
    assert (".reqnctapercluster", (2, 1, 1)) in k.performance
    insns = all_instructions(m)
    arrive = next(i for i in insns if i.text.startswith("mbarrier.arrive"))
    assert arrive.qualifiers == (".arrive", ".release", ".cluster", ".shared::cluster", ".b64")
    assert isinstance(arrive.operands[0], ast.Sink)
    addr = arrive.operands[1]
    assert isinstance(addr, ast.Address) and addr.base is not None and addr.offset == 0
    wait = next(i for i in insns if i.opcode == "mbarrier" and i.qualifiers[0] == ".try_wait")
    assert wait.qualifiers[1] == ".parity"
    assert [type(o) for o in wait.operands] == [ast.Name, ast.Address, ast.Name]
    assert any(i.text == "fence.mbarrier_init.release.cluster" and i.operands == () for i in insns)


def test_inline_asm_family_operands() -> None:
    m = load("inline_asm_family.sm_90.ptx")
    insns = [i for i in all_instructions(m) if i.opcode == "mbarrier"]
    forms = [i.qualifiers[0] for i in insns]
    assert forms == [".init", ".arrive", ".arrive", ".pending_count", ".expect_tx", ".complete_tx",
                     ".try_wait", ".test_wait", ".arrive_drop", ".arrive", ".inval"]
    hinted = insns[forms.index(".try_wait")]
    assert len(hinted.operands) == 4
    hint = hinted.operands[3]
    assert isinstance(hint, ast.Imm) and hint.value == 1000
    expect = insns[9]
    assert expect.qualifiers == (".arrive", ".expect_tx", ".release", ".cta", ".shared::cta", ".b64")
    tx = expect.operands[2]
    assert isinstance(tx, ast.Imm) and tx.value == 0
    # the inline-asm `{ .reg .pred p; ... }` scopes are Blocks with their own declarations
    k = m.entries[0]
    assert k.body is not None
    blocks = [s for s in k.body if isinstance(s, ast.Block)]
    assert len(blocks) == 2
    decl = blocks[0].body[0]
    assert isinstance(decl, ast.Declaration) and decl.space == ".reg" and decl.type == ".pred"
    assert decl.names[0].name == "p"
    assert any(isinstance(s, ast.Label) and s.name == "LAB_WAIT" for s in blocks[0].body)
    guarded = [i for i in ast.instructions(blocks[0].body) if i.guard is not None]
    assert len(guarded) == 1 and guarded[0].guard is not None
    assert guarded[0].guard.predicate == "p" and guarded[0].guard.negated


def test_bulk_copy_qualifiers() -> None:
    m = load("bulk_copy.sm_90.ptx")
    (cp,) = [i for i in all_instructions(m) if i.opcode == "cp" and ".bulk" in i.qualifiers]
    assert cp.qualifiers == (".async", ".bulk", ".shared::cta", ".global", ".mbarrier::complete_tx::bytes")
    assert [type(o) for o in cp.operands] == [ast.Address, ast.Address, ast.Name, ast.Address]


def test_generic_mix_module_level() -> None:
    m = load("generic_mix.sm_90.ptx")
    decls = {n.name: d for d in m.declarations for n in d.names}
    table = decls["table"]
    assert table.space == ".const" and table.align == 4 and table.type == ".b8"
    assert table.names[0].dims == (32,)
    init = table.names[0].init
    assert init is not None and len(init) == 29
    assert [x.value for x in init[:8] if isinstance(x, ast.Imm)] == [1, 0, 0, 0, 254, 255, 255, 255]
    g = decls["gscale"].names[0].init
    assert g is not None and isinstance(g[0], ast.FloatImm) and g[0].value == 1.5 and g[0].bits == 32
    d = decls["gdouble"].names[0].init
    assert d is not None and isinstance(d[0], ast.FloatImm) and d[0].value == 0.1 and d[0].bits == 64
    dyn = decls["dyn"]
    assert dyn.linkage == ".extern" and dyn.space == ".shared" and dyn.names[0].dims == (None,)
    vprintf = next(f for f in m.functions if f.name == "vprintf")
    assert vprintf.body is None and vprintf.linkage == ".extern" and vprintf.kind == "func"
    assert [p.name for p in vprintf.returns] == ["func_retval0"]
    assert len(vprintf.params) == 2
    k = m.entries[0]
    assert (".maxntid", (128, 1, 1)) in k.performance and (".minnctapersm", (2,)) in k.performance
    assert k.body is not None
    body = flat(k.body)
    proto = next(j for j, s in enumerate(body) if isinstance(s, ast.Label) and s.name == "prototype_0")
    cp = body[proto + 1]
    assert isinstance(cp, ast.Directive) and cp.name == ".callprototype"
    assert cp.args[:4] == ("(", ".param", ".b32", "_")
    calls = [i for i in all_instructions(m) if i.opcode == "call"]
    indirect = [c for c in calls if isinstance(c.operands[-1], ast.Name)
                and c.operands[-1].name == "prototype_0"]
    assert len(indirect) == 1
    assert calls and all(any(isinstance(o, ast.ParenList) for o in c.operands) for c in calls)


def test_debug_sections_kept() -> None:
    m = load("barrier_memcpy_async.sm_90.G.ptx")
    text = (MODULES / "barrier_memcpy_async.sm_90.G.ptx").read_text()
    sections = [d for d in m.directives if d.name == ".section"]
    assert [d.args[0] for d in sections] == re.findall(r"^\s*\.section\s+(\S+)", text, re.M)
    files = [d for d in m.directives if d.name == ".file"]
    assert len(files) == len(re.findall(r"^\s*\.file\s", text, re.M))
    assert m.targets == ("sm_90", "debug")


def test_triton_tma_module() -> None:
    """Triton 3.9 output (tests/ptx/modules/triton_kernels.py): TMA loads completing on mbarriers."""
    m = load("triton_tma_matmul.sm_90.ptx")
    text = (MODULES / "triton_tma_matmul.sm_90.ptx").read_text()
    assert m.targets == ("sm_90a",)
    (smem,) = m.declarations
    assert (smem.linkage, smem.space, smem.align, smem.names[0].name, smem.names[0].dims) == (
        ".extern", ".shared", 16, "global_smem", (None,))
    (k,) = m.entries
    assert len(k.params) == 8 and all(p.ptr for p in k.params if p.type == ".u64")
    assert k.performance == ((".reqntid", (256,)),)
    insns = all_instructions(m)
    mbar = Counter(i.qualifiers[0] for i in insns if i.opcode == "mbarrier")
    assert mbar == Counter({q: len(re.findall(rf"mbarrier\{q}\.", text))
                            for q in (".init", ".arrive", ".try_wait", ".inval")})
    loads = [i for i in insns if i.text.endswith(".mbarrier::complete_tx::bytes")]
    assert len(loads) == len(re.findall(r"complete_tx::bytes", text)) >= 4
    for ld in loads:
        assert ld.guard is not None and not ld.guard.negated
        tensor = ld.operands[1]
        assert isinstance(tensor, ast.Address) and len(tensor.items) == 1
        coords = tensor.items[0]
        assert isinstance(coords, ast.Vector) and len(coords.items) == 2
    expect = [i for i in insns if i.qualifiers[:2] == (".arrive", ".expect_tx")]
    assert expect and all(isinstance(i.operands[2], ast.Imm) and i.operands[2].value == 32768 for i in expect)
    wgmma = [i for i in insns if i.opcode == "wgmma" and ".mma_async" in i.qualifiers]
    assert wgmma and all(isinstance(i.operands[0], ast.Vector) and len(i.operands[0].items) == 64
                         for i in wgmma)


def test_tensor_map_multicast_module() -> None:
    """nvcc output for <cuda/ptx> TMA: CUtensorMap parameters and a multicast tensor load."""
    m = load("bulk_tensor.sm_90a.ptx")
    (k,) = m.entries
    tmap_in, tmap_out, rows = k.params
    assert (tmap_in.type, tmap_in.align, tmap_in.dims) == (".b8", 128, (128,))
    assert tmap_out.dims == (128,) and rows.type == ".u32"
    assert (".reqnctapercluster", (2, 1, 1)) in k.performance
    (mc,) = [i for i in all_instructions(m) if ".multicast::cluster" in i.qualifiers]
    assert mc.qualifiers == (".async", ".bulk", ".tensor", ".2d", ".shared::cluster", ".global", ".tile",
                             ".mbarrier::complete_tx::bytes", ".multicast::cluster")
    dst, src, bar, mask = mc.operands
    assert isinstance(src, ast.Address) and isinstance(src.items[0], ast.Vector)
    assert isinstance(dst, ast.Address) and isinstance(bar, ast.Address) and isinstance(mask, ast.Name)
    decls = [s for s in k.body or () if isinstance(s, ast.Declaration) and s.space == ".shared"]
    assert [(d.align, d.type, d.names[0].dims) for d in decls] == [(128, ".b8", (16384,)), (8, ".u64", ())]
