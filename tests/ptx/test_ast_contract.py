"""The syntax-tree contract of ast.py, whatever the nodes are made of (named tuples today): every node
class builds by position and by keyword with its defaults, reads by attribute, cannot be changed,
hashes, shows its fields in repr, equals only a node of its own class with equal fields, and has no
order. The parser's own constructor (fastpath.py builds nodes with tuple.__new__) gives the same nodes."""

from __future__ import annotations

import copy
import inspect
import pickle

import pytest

from mbarrier.ptx import ast, fastpath
from mbarrier.ptx.parser import parse

P = ast.Pos(3, 7)
N = ast.Name("%r1", P)

# One instance of every node class, its fields given by keyword, each field a value of its own.
SAMPLES: dict[type, dict[str, object]] = {
    ast.Pos: {"line": 3, "column": 7},
    ast.Name: {"name": "%r1", "pos": P},
    ast.Imm: {"value": 16, "text": "0x10", "pos": P, "unsigned": True},
    ast.FloatImm: {"value": 1.0, "raw": 0x3F800000, "bits": 32, "text": "0f3F800000", "pos": P},
    ast.Sink: {"pos": P},
    ast.Address: {"base": N, "offset": 8, "pos": P, "items": (N,)},
    ast.Vector: {"items": (N, N), "pos": P},
    ast.Not: {"operand": N, "pos": P},
    ast.ParenList: {"items": (N,), "pos": P},
    ast.Expr: {"text": "1<<3", "value": 8, "pos": P},
    ast.Guard: {"predicate": "%p1", "negated": True, "pos": P},
    ast.Instruction: {"opcode": "mov", "qualifiers": (".u32",), "operands": (N,), "guard": None, "pos": P},
    ast.Label: {"name": "L1", "pos": P},
    ast.Declarator: {"name": "x", "dims": (4,), "range": None, "init": (N,), "pos": P},
    ast.Declaration: {"space": ".shared", "type": ".b64", "names": (), "pos": P, "align": 8, "vector": None,
                      "linkage": ".extern", "extra": ()},
    ast.Directive: {"name": ".loc", "args": ("1", "2", "3"), "pos": P},
    ast.Block: {"body": (), "pos": P},
    ast.Param: {"space": ".param", "type": ".u64", "name": "p", "pos": P, "align": None, "dims": (),
                "ptr": True, "ptr_space": ".global", "ptr_align": 16},
    ast.Function: {"kind": "entry", "name": "k", "params": (), "returns": (), "body": (), "pos": P,
                   "linkage": ".visible", "performance": ((".maxntid", (128, 1, 1)),)},
    ast.Module: {"version": (8, 0), "targets": ("sm_90",), "address_size": 64, "functions": (),
                 "declarations": (), "directives": (), "path": "k.ptx", "source_lines": ("a",)},
}

# The defaults of the optional fields (ast.py's contract: callers leave them out).
DEFAULTS: dict[type, dict[str, object]] = {
    ast.Imm: {"unsigned": False},
    ast.Address: {"items": ()},
    ast.Declarator: {"dims": (), "range": None, "init": None, "pos": ast.Pos(0, 0)},
    ast.Declaration: {"align": None, "vector": None, "linkage": None, "extra": ()},
    ast.Param: {"align": None, "dims": (), "ptr": False, "ptr_space": None, "ptr_align": None},
    ast.Function: {"linkage": None, "performance": ()},
    ast.Module: {"path": "<input>", "source_lines": ()},
}

CLASSES = list(SAMPLES)


def fields_of(cls: type) -> list[str]:
    """The fields a node is built from: its constructor's parameters."""
    return list(inspect.signature(cls).parameters)


def test_every_node_class_is_sampled() -> None:
    """A new node class in ast.py must join SAMPLES (and so every test below)."""
    public = {v for k, v in vars(ast).items() if isinstance(v, type) and v.__module__ == ast.__name__
              and not k.startswith("_")}
    assert public == set(CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_construction_by_keyword_and_position(cls: type) -> None:
    kw = SAMPLES[cls]
    assert list(kw) == fields_of(cls)
    by_kw = cls(**kw)
    by_pos = cls(*kw.values())
    assert by_kw == by_pos
    for name, value in kw.items():
        assert getattr(by_kw, name) == value
    with pytest.raises(TypeError):
        cls(*kw.values(), "one too many")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_defaults(cls: type) -> None:
    defaults = DEFAULTS.get(cls, {})
    required = {k: v for k, v in SAMPLES[cls].items() if k not in defaults}
    node = cls(**required)
    for name, value in defaults.items():
        assert getattr(node, name) == value
    if required:
        with pytest.raises(TypeError):
            cls()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_immutable(cls: type) -> None:
    node = cls(**SAMPLES[cls])
    for name in SAMPLES[cls]:
        with pytest.raises(AttributeError):
            setattr(node, name, None)
    with pytest.raises((AttributeError, TypeError)):  # Module, a frozen slotted dataclass: TypeError
        node.not_a_field = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_equality_hash_and_repr(cls: type) -> None:
    kw = SAMPLES[cls]
    a, b = cls(**kw), cls(**kw)
    assert a == b and not a != b and hash(a) == hash(b) and len({a, b}) == 1
    text = repr(a)
    assert text.startswith(cls.__name__ + "(")
    for name in kw:
        if name != "source_lines":  # a module's whole text is left out of its repr
            assert f"{name}=" in text
    for name, value in kw.items():  # a change of any one field makes a different node
        other = {**kw, name: ("other", value)}
        c = cls(**other)
        assert c != a and not c == a


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_no_order(cls: type) -> None:
    a = cls(**SAMPLES[cls])
    with pytest.raises(TypeError):
        _ = a < a  # type: ignore[operator]
    with pytest.raises(TypeError):
        _ = a >= a  # type: ignore[operator]


def test_equality_tells_classes_apart() -> None:
    """Nodes with the same fields but of different classes differ, and no node equals a plain tuple."""
    name, label = ast.Name("x", P), ast.Label("x", P)
    assert name != label and not name == label and label != name
    assert name != ("x", P) and ("x", P) != name and not ("x", P) == name
    assert ast.Vector((N,), P) != ast.ParenList((N,), P)
    assert ast.Sink(P) != ast.Pos(3, 7) != (3, 7)
    assert {name: 1}.get(label) is None  # same hash may be, same key is not


def test_isinstance_and_the_operand_union() -> None:
    for cls in (ast.Name, ast.Imm, ast.FloatImm, ast.Sink, ast.Address, ast.Vector, ast.Not, ast.ParenList,
                ast.Expr):
        node = cls(**SAMPLES[cls])
        assert isinstance(node, cls) and isinstance(node, ast.Operand)  # type: ignore[arg-type]
        assert not isinstance(node, ast.Label)
    assert isinstance(ast.Label("L", P), ast.Statement)  # type: ignore[arg-type]


def test_copy_and_pickle_keep_the_node() -> None:
    insn = ast.Instruction("mov", (".u32",), (N, ast.Imm(1, "1", P)), ast.Guard("%p1", False, P), P)
    for again in (copy.copy(insn), copy.deepcopy(insn), pickle.loads(pickle.dumps(insn))):
        assert again == insn and type(again) is ast.Instruction and type(again.guard) is ast.Guard


def test_instruction_text_and_positions() -> None:
    insn = ast.Instruction("mbarrier", (".arrive", ".shared::cta", ".b64"), (N,), None, P)
    assert insn.text == "mbarrier.arrive.shared::cta.b64"
    assert (insn.pos.line, insn.pos.column) == (3, 7) and insn.operands[0].pos.column == 7


@pytest.mark.parametrize("cls", [c for c in CLASSES if "pos" in SAMPLES[c]], ids=lambda c: c.__name__)
def test_line_and_column_are_the_position(cls: type) -> None:
    node = cls(**{**SAMPLES[cls], "pos": ast.Pos(11, 13)})
    assert (node.line, node.column) == (11, 13) and node.pos == ast.Pos(11, 13)
    assert type(node.pos) is ast.Pos


def test_fast_constructor_builds_the_same_nodes() -> None:
    """The fast path builds nodes with tuple.__new__: the very nodes the classes' constructors build."""
    line = "\t@!%p1 st.shared.u32 [%r1+4], 0x10U; // c"
    insn = fastpath.instruction(line, 5)
    assert insn == ast.Instruction(
        "st", (".shared", ".u32"),
        (ast.Address(ast.Name("%r1", ast.Pos(5, 23)), 4, ast.Pos(5, 22)),
         ast.Imm(16, "0x10U", ast.Pos(5, 31), True)),
        ast.Guard("%p1", True, ast.Pos(5, 2)), ast.Pos(5, 8))
    assert type(insn) is ast.Instruction and type(insn.operands[0].pos) is ast.Pos


def test_parsed_tree_reads_by_attribute() -> None:
    m = parse(".version 8.0\n.target sm_90\n.visible .entry k()\n{\n.reg .b32 %r<3>;\n"
              "L: mov.u32 %r1, 1;\n}\n")
    body = m.entries[0].body
    assert body is not None
    decl, label, insn = body
    assert isinstance(decl, ast.Declaration) and decl.names[0].range == 3
    assert isinstance(label, ast.Label) and (label.name, label.pos.line, label.pos.column) == ("L", 6, 1)
    assert isinstance(insn, ast.Instruction) and insn.operands[1] == ast.Imm(1, "1", ast.Pos(6, 17))
