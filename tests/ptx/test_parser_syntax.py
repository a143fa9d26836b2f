"""The syntax tree for each construct of a PTX module (PTX ISA 11 directives, 5 state spaces and types,
6 instruction operands), and the shape of syntax errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from mbarrier.ptx import ast
from mbarrier.ptx.diagnostics import PtxSyntaxError
from mbarrier.ptx.parser import parse, parse_file

HEADER = ".version 8.6\n.target sm_100a, sm_90a, sm_120f\n.address_size 64\n"


def body(stmts: str) -> tuple[ast.Statement, ...]:
    m = parse(HEADER + ".visible .entry k()\n{\n" + stmts + "\n}\n")
    b = m.entries[0].body
    assert b is not None
    return b


def insn(text: str) -> ast.Instruction:
    (s,) = body(text)
    assert isinstance(s, ast.Instruction)
    return s


def test_header() -> None:
    m = parse(HEADER)
    assert m.version == (8, 6)
    assert m.targets == ("sm_100a", "sm_90a", "sm_120f")
    assert m.address_size == 64 and m.functions == () and m.path == "<input>"
    m2 = parse(".version 7.0\n.target sm_80\n.target texmode_independent\n")
    assert m2.targets == ("sm_80", "texmode_independent") and m2.address_size == 64
    assert parse(".version 7.0\n.target sm_80\n.address_size 32\n").address_size == 32


def test_functions_params_and_returns() -> None:
    m = parse(HEADER + """
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);
.weak .func (.reg .b32 r) f(.reg .b32 x) { mov.b32 r, x; ret; }
.visible .entry k(
    .param .u64 .ptr .global .align 16 k_param_0,
    .param .align 8 .b8 k_param_1[24],
    .param .u32 k_param_2
)
.maxntid 128, 1, 1
.reqntid 128
.minnctapersm 2
.explicitcluster
.reqnctapercluster 2, 1, 1
.maxclusterrank 8
{
    ret;
}
.entry noparams { ret; }
""")
    vprintf, f, k, noparams = m.functions
    assert (vprintf.kind, vprintf.linkage, vprintf.body) == ("func", ".extern", None)
    assert [(p.space, p.type, p.name) for p in vprintf.returns] == [(".param", ".b32", "func_retval0")]
    assert [p.name for p in vprintf.params] == ["a", "b"]
    assert f.linkage == ".weak" and f.returns[0].space == ".reg" and f.body is not None
    assert k.kind == "entry" and k.linkage == ".visible"
    p0, p1, p2 = k.params
    # `.ptr .global .align 16`: the pointee's space and alignment (PTX ISA 5.1.6.3), not the parameter's
    assert (p0.type, p0.ptr, p0.align, p0.dims) == (".u64", True, None, ())
    assert (p0.ptr_space, p0.ptr_align) == (".global", 16)
    assert (p1.type, p1.align, p1.dims) == (".b8", 8, (24,))
    assert (p2.name, p2.pos) == ("k_param_2", ast.Pos(10, 5))
    assert k.performance == ((".maxntid", (128, 1, 1)), (".reqntid", (128,)), (".minnctapersm", (2,)),
                             (".explicitcluster", ()), (".reqnctapercluster", (2, 1, 1)),
                             (".maxclusterrank", (8,)))
    assert noparams.params == () and noparams.linkage is None
    assert m.entries == (k, noparams)
    assert m.function("f") is f
    with pytest.raises(KeyError):
        m.function("vprintf")  # a declaration without a body


def test_declarations() -> None:
    m = parse(HEADER + """
.global .align 4 .u32 g = 5;
.const .align 8 .b8 table[4] = {1, 0x2, 03, -1};
.global .f32 pi = 0f40490FDB;
.global .v2 .u32 pair = {1, 2};
.global .u32 grid[2][2] = {{1, 2}, {3, 4}};
.global .align 8 .u64 ptrs[1] = {generic(g)};
.global .u64 addr = g+4;
.extern .shared .align 16 .b8 smem[];
.visible .global .b32 a, b[3];
.entry k() {
    .reg .pred %p<7>;
    .reg .b64 %rd<53>;
    .reg .v4 .f32 %v;
    .shared .align 8 .b64 bar[2];
    .local .align 4 .b8 __local_depot0[16];
    .param .b64 param0;
    ret;
}
""")
    d = {n.name: x for x in m.declarations for n in x.names}
    assert d["g"].names[0].init == (ast.Imm(5, "5", ast.Pos(5, 27)),)
    t = d["table"]
    assert (t.space, t.align, t.type, t.names[0].dims) == (".const", 8, ".b8", (4,))
    assert [x.value for x in t.names[0].init or () if isinstance(x, ast.Imm)] == [1, 2, 3, -1]
    pi = (d["pi"].names[0].init or ())[0]
    assert isinstance(pi, ast.FloatImm) and abs(pi.value - 3.14159265) < 1e-6
    assert d["pair"].vector == 2
    grid = d["grid"].names[0]
    assert grid.dims == (2, 2) and grid.init is not None and all(isinstance(v, ast.Vector) for v in grid.init)
    ptr = (d["ptrs"].names[0].init or ())[0]
    assert isinstance(ptr, ast.Expr) and ptr.text == "generic(g)" and ptr.value is None
    assert isinstance((d["addr"].names[0].init or ())[0], ast.Expr)
    assert (d["smem"].linkage, d["smem"].names[0].dims) == (".extern", (None,))
    assert [n.name for n in d["a"].names] == ["a", "b"] and d["a"].names[1].dims == (3,)
    assert d["a"].linkage == ".visible"
    k = m.entries[0].body
    assert k is not None
    p, rd, v, bar, depot, param = k[:6]
    assert isinstance(p, ast.Declaration) and (p.space, p.type, p.names[0].range) == (".reg", ".pred", 7)
    assert isinstance(rd, ast.Declaration) and rd.names[0].name == "%rd" and rd.names[0].range == 53
    assert isinstance(v, ast.Declaration) and (v.vector, v.type) == (4, ".f32")
    assert isinstance(bar, ast.Declaration) and (bar.space, bar.align, bar.type) == (".shared", 8, ".b64")
    assert isinstance(depot, ast.Declaration) and depot.space == ".local"
    assert isinstance(param, ast.Declaration) and param.space == ".param"


def test_statements_in_order() -> None:
    b = body("""
    .loc 1 12 3
$L__BB0_1:
    @%p1 bra $L__BB0_1;
    @!%p2 bra.uni $L__BB0_1;
    {
        .reg .pred p;
        .pragma "nounroll";
        ret;
    }
    .loc 1 13 5, function_name $L__info_string0, inlined_at 1 5 3
""")
    loc, label, g1, g2, block, loc2 = b
    assert isinstance(loc, ast.Directive) and (loc.name, loc.args) == (".loc", ("1", "12", "3"))
    assert loc.pos == ast.Pos(7, 5)
    assert isinstance(label, ast.Label) and label.name == "$L__BB0_1"
    assert isinstance(g1, ast.Instruction) and g1.guard == ast.Guard("%p1", False, ast.Pos(9, 5))
    assert isinstance(g2, ast.Instruction) and g2.guard is not None and g2.guard.negated
    assert g2.qualifiers == (".uni",) and g2.operands == (ast.Name("$L__BB0_1", ast.Pos(10, 19)),)
    assert isinstance(block, ast.Block) and len(block.body) == 3
    pragma = block.body[1]
    assert isinstance(pragma, ast.Directive) and pragma.args == ('"nounroll"',)
    assert isinstance(loc2, ast.Directive) and loc2.args[:3] == ("1", "13", "5")
    assert "inlined_at" in loc2.args


def test_qualifiers_in_source_order() -> None:
    i = insn("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p1, [%r1], %r2, 0x989680;")
    assert i.opcode == "mbarrier"
    assert i.qualifiers == (".try_wait", ".parity", ".acquire", ".cluster", ".shared::cta", ".b64")
    assert i.text == "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64"
    assert i.operands[3] == ast.Imm(10000000, "0x989680", ast.Pos(6, 75))
    j = insn("mbarrier.arrive.b64.shared::cluster.cluster.release _, [%r1];")
    assert j.qualifiers == (".arrive", ".b64", ".shared::cluster", ".cluster", ".release")


@pytest.mark.parametrize("text,expected", [
    ("[%r1]", ast.Address(ast.Name("%r1", ast.Pos(6, 21)), 0, ast.Pos(6, 20))),
    ("[%r1+8]", ast.Address(ast.Name("%r1", ast.Pos(6, 21)), 8, ast.Pos(6, 20))),
    ("[%rd1+-8]", ast.Address(ast.Name("%rd1", ast.Pos(6, 21)), -8, ast.Pos(6, 20))),
    ("[bar]", ast.Address(ast.Name("bar", ast.Pos(6, 21)), 0, ast.Pos(6, 20))),
    ("[bar+0x10]", ast.Address(ast.Name("bar", ast.Pos(6, 21)), 16, ast.Pos(6, 20))),
    ("[bar + 2*4]", ast.Address(ast.Name("bar", ast.Pos(6, 21)), 8, ast.Pos(6, 20))),
    ("[1024]", ast.Address(None, 1024, ast.Pos(6, 20))),
])
def test_addresses(text: str, expected: ast.Address) -> None:
    assert insn(f"ld.shared.u32 %r1, {text};").operands[1] == expected


def test_tensor_address_items() -> None:
    i = insn("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
             "[%r1], [%rd1, {%r2, %r3}], [%r4];")
    a = i.operands[1]
    assert isinstance(a, ast.Address) and a.base == ast.Name("%rd1", ast.Pos(6, 90))
    (v,) = a.items
    assert isinstance(v, ast.Vector)
    assert [x.name for x in v.items if isinstance(x, ast.Name)] == ["%r2", "%r3"]


@pytest.mark.parametrize("text,cls,value", [
    ("42", ast.Imm, 42), ("-1", ast.Imm, -1), ("0xFFFFFFFF", ast.Imm, 0xFFFFFFFF), ("017", ast.Imm, 15),
    ("7U", ast.Imm, 7), ("0b11", ast.Imm, 3), ("(1<<3)", ast.Expr, 8), ("1 ? 2 : 3", ast.Expr, 2),
    ("-(4)", ast.Expr, -4), ("7/2", ast.Expr, 3), ("-7/2", ast.Expr, -3), ("-7 % 2", ast.Expr, -1),
    ("~0", ast.Expr, -1), ("0f3F800000", ast.FloatImm, 1.0), ("1.5", ast.FloatImm, 1.5),
    ("-1.5", ast.FloatImm, -1.5), ("1.5+1", ast.Expr, None),
])
def test_immediates(text: str, cls: type, value: float | None) -> None:
    op = insn(f"mov.u32 %r1, {text};").operands[1]
    assert isinstance(op, cls)
    assert op.value == value  # type: ignore[attr-defined]
    if isinstance(op, ast.Imm):
        assert op.text == text and op.unsigned == text.endswith("U")


def test_other_operands() -> None:
    i = insn("mov.b64 {%r1, _}, %rd1;")
    v = i.operands[0]
    assert isinstance(v, ast.Vector) and isinstance(v.items[1], ast.Sink)
    assert insn("mov.u32 %r1, %tid.x;").operands[1] == ast.Name("%tid.x", ast.Pos(6, 14))
    assert insn("mbarrier.arrive.shared.b64 _, [%r1];").operands[0] == ast.Sink(ast.Pos(6, 28))
    n = insn("selp.u32 %r1, 1, 0, !%p1;").operands[3]
    assert n == ast.Not(ast.Name("%p1", ast.Pos(6, 22)), ast.Pos(6, 21))
    pair = insn("setp.lt.s32 %p1|%p2, %r1, 0;").operands[0]
    assert isinstance(pair, ast.Expr) and pair.text == "%p1|%p2"
    sym = insn("mov.u64 %rd1, sym+4;").operands[1]
    assert isinstance(sym, ast.Expr) and sym.text == "sym+4" and sym.value is None


def test_call_and_callprototype() -> None:
    b = body("""
    call.uni (retval0), f, (param0, param1);
    call.uni g, ();
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (retval0), %rd5, (param0), proto;
""")
    c1, c2, label, proto, c3 = b
    assert isinstance(c1, ast.Instruction) and isinstance(c1.operands[0], ast.ParenList)
    assert isinstance(c1.operands[2], ast.ParenList) and len(c1.operands[2].items) == 2
    assert isinstance(c2, ast.Instruction) and c2.operands[1] == ast.ParenList((), ast.Pos(8, 17))
    assert isinstance(label, ast.Label) and label.name == "proto"
    assert isinstance(proto, ast.Directive) and proto.name == ".callprototype"
    assert isinstance(c3, ast.Instruction) and c3.operands[-1] == ast.Name("proto", ast.Pos(10, 37))


def test_module_directives() -> None:
    m = parse(HEADER + """.file 1 "/tmp/k.cu", 1700000000, 1234
.section .debug_abbrev
{
.b8 1
.b8 17,1
}
.func f() { ret; }
.alias g, f;
.pragma "nounroll";
""")
    f, s, alias, pragma = m.directives
    assert (f.name, f.args[:2]) == (".file", ("1", '"/tmp/k.cu"'))
    assert s.name == ".section" and s.args == (".debug_abbrev", ".b8", "1", ".b8", "17", ",", "1")
    assert alias.args == ("g", ",", "f") and pragma.args == ('"nounroll"',)


def test_no_version_is_left_to_the_validator() -> None:
    m = parse(".target sm_90\n")
    assert m.version is None and m.targets == ("sm_90",)


def test_syntax_error_shape() -> None:
    with pytest.raises(PtxSyntaxError) as e:
        parse(HEADER + ".entry k()\n{\n  mov.u32 %r1 %r2;\n}\n", "bad.ptx")
    (d,) = e.value.diagnostics
    assert (d.severity, d.rule, d.file, d.line, d.column) == ("fatal", "syntax", "bad.ptx", 6, 15)
    assert d.message.startswith("Parsing error near '%r2': syntax error (expected")
    assert d.format().startswith("bad.ptx:6:15: fatal: Parsing error near '%r2'")
    assert str(e.value) == d.format()


def test_parse_file(tmp_path: Path) -> None:
    f = tmp_path / "k.ptx"
    f.write_text(HEADER)
    assert parse_file(f).path == str(f)
    bad = tmp_path / "bad.ptx"
    bad.write_bytes(HEADER.encode() + b"// \xff\xfe\n")
    with pytest.raises(PtxSyntaxError) as e:
        parse_file(bad)
    (d,) = e.value.diagnostics
    assert (d.line, d.column, d.file) == (4, 4, str(bad))
    assert "Unexpected non-ASCII character encountered on line 4" in d.message


def test_attributes_between_header_and_body() -> None:
    m = parse(HEADER + """
.func (.reg .b32 r) f() .noreturn .abi_preserve 4 { ret; }
.visible .entry k() .maxnreg 64 .blocksareclusters .pragma "nounroll"; { ret; }
""")
    f, k = m.functions
    assert f.performance == ((".noreturn", ()), (".abi_preserve", (4,)))
    assert k.performance == ((".maxnreg", (64,)), (".blocksareclusters", ()))
    assert k.body is not None
    pragma = k.body[0]  # a kernel-level .pragma is the first statement of its body
    assert isinstance(pragma, ast.Directive) and pragma.args == ('"nounroll"',)
    with pytest.raises(PtxSyntaxError):
        parse(HEADER + ".visible .entry k() .noreturn { ret; }\n")


def test_branch_and_call_targets() -> None:
    """`.branchtargets` for brx.idx and `.calltargets` for an indirect call (ptxas accepts this text)."""
    b = body("""ts: .branchtargets L1, L2;
brx.idx %r1, ts;
L1: ret;
L2: ret;
{
Ftgt: .calltargets f, g;
call %rd1, (arg), Ftgt;
}""")
    label, targets, brx = b[:3]
    assert isinstance(label, ast.Label) and label.name == "ts"
    assert isinstance(targets, ast.Directive) and targets.args == ("L1", ",", "L2")
    assert isinstance(brx, ast.Instruction) and brx.operands[1] == ast.Name("ts", ast.Pos(7, 14))
    block = b[-1]
    assert isinstance(block, ast.Block)
    call = block.body[2]
    assert isinstance(call, ast.Instruction) and [type(o) for o in call.operands] == [
        ast.Name, ast.ParenList, ast.Name]
