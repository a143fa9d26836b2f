"""The debugging directives (PTX ISA 11.6): `.loc`, `.file` and `.section`, with the grammar ptxas
checks. Each becomes an ast.Directive whose args are the token texts after the directive's name."""

from __future__ import annotations

from mbarrier.ptx import ast
from mbarrier.ptx.ast import Pos
from mbarrier.ptx.lexer import DOT, IDENT, INT, PUNCT, STRING, Token
from mbarrier.ptx.operands import _RESERVED, OperandParser
from mbarrier.spec.forms import VARIABLE_TYPES

# A data line may have any variable's type (ptxas 13.0 takes `.f32 1`, `.pred 1`), its items integers or
# labels
_DATA_TYPES = VARIABLE_TYPES


class DebugParser(OperandParser):
    def args_from(self, start: int) -> tuple[str, ...]:
        return tuple(t[1] for t in self.toks[start:self.i])

    def int_token(self, what: str) -> None:
        if self.toks[self.i][0] != INT:
            raise self.error(what)
        self.i += 1

    def loc(self, t: Token) -> ast.Directive:
        """`.loc file line column` and `..., function_name label[+n], inlined_at file line column`."""
        self.i += 1
        start = self.i
        for what in ("a file index", "a line number", "a column"):
            self.int_token(what)
        if self.at(","):
            self.i += 1
            if self.toks[self.i][1] != "function_name":
                raise self.error("function_name")
            self.i += 1
            self.ident("the label of the inlined function's name")
            if self.at("+"):
                self.i += 1
                self.int_token("an offset")
            self.expect(",", "', inlined_at file line column'")
            if self.toks[self.i][1] != "inlined_at":
                raise self.error("inlined_at")
            self.i += 1
            for what in ("a file index", "a line number", "a column"):
                self.int_token(what)
        return ast.Directive(".loc", self.args_from(start), Pos(t[2], t[3]))

    def file(self, t: Token) -> ast.Directive:
        """`.file index "name"` with an optional `, timestamp, size`."""
        self.i += 1
        start = self.i
        self.int_token("a file index")
        if self.toks[self.i][0] != STRING:
            raise self.error("the file name in double quotes")
        self.i += 1
        if self.at(","):
            self.i += 1
            self.int_token("a timestamp")
            self.expect(",", "', size'")
            self.int_token("a file size")
        return ast.Directive(".file", self.args_from(start), Pos(t[2], t[3]))

    def section(self, t: Token) -> ast.Directive:
        """`.section .debug_info { label: .b8 1, 2 .b32 label+4, l1-l2 ... }`: DWARF data."""
        toks = self.toks
        self.i += 1
        start = self.i
        name = toks[self.i]
        if name[0] != DOT:
            raise self.error("a section name such as .debug_info")
        self.i += 1
        self.expect("{")
        while True:
            x = toks[self.i]
            if x[0] == IDENT:  # a label
                self.i += 1
                self.expect(":", "':' after the label")
            elif x[0] == DOT and x[1] in _DATA_TYPES:
                # each number followed by a comma at once (most of a DWARF section), then item by item
                i = self.i + 1
                while toks[i][0] == INT and toks[i + 1][1] == "," and toks[i + 1][0] == PUNCT:
                    i += 2
                self.i = i
                self.data_item()
                while self.at(","):
                    self.i += 1
                    self.data_item()
            elif self.at("}"):
                self.i += 1
                break
            else:
                raise self.error("'.b8'-style data, a label or '}' in the .section")
        # the section's name, then its contents without the braces
        args = self.args_from(start)
        return ast.Directive(".section", (args[0],) + args[2:-1], Pos(t[2], t[3]))

    def data_item(self) -> None:
        """`-1`, `0x10`, `label`, `.debug_abbrev`, `label+4`, `label1-label2`."""
        x = self.toks[self.i]
        if (x[0] == IDENT and x[1] != "_") or (
                x[0] == DOT and x[1] not in _DATA_TYPES and x[1] not in _RESERVED):  # (a section's name)
            self.i += 1
            if self.at("+"):
                self.i += 1
                self.int_token("an integer offset")
            elif self.at("-") and x[0] == IDENT:  # (a section's name takes no difference)
                self.i += 1
                y = self.toks[self.i]
                if y[0] != IDENT or y[1] == "_":
                    raise self.error("a label (label-label is a difference of addresses)")
                self.i += 1
            return
        if x[1] == "-" and x[0] == PUNCT:
            self.i += 1
        self.int_token("an integer or a label")
