#!/usr/bin/env python3
"""Make the paths nvcc writes into PTX relative to the directory it was built in, so that a committed
module names no build machine's directory. Usage: python3 tools/ptx_relpaths.py BUILD_DIR FILE.ptx ...

nvcc writes the absolute path of each source under BUILD_DIR into `.file` directives (-G, -lineinfo) and,
with -G, the build directory into the DWARF compile unit (DW_AT_comp_dir, a string inside
`.section .debug_info`). This rewrites `.file N "BUILD_DIR/x.cu"` as `.file N "x.cu"`, and the compile
unit's DW_AT_comp_dir and DW_AT_name under BUILD_DIR as paths relative to it (`.` for BUILD_DIR itself).
A string of another length moves every DIE after it, so the unit length and every DIE reference
(DW_FORM_ref4, DW_FORM_ref_addr) after the string move by the same amount; the abbreviations are read from
`.section .debug_abbrev`. Any other reference form, or a layout this does not know, stops with an error
rather than writing a broken module. The files are rewritten in place; a second run changes nothing.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

DW_AT_NAME, DW_AT_COMP_DIR = 0x03, 0x1B
# DWARF forms: fixed sizes, and the ones with a length or a terminator.
FIXED = {0x01: 8, 0x05: 2, 0x06: 4, 0x07: 8, 0x0B: 1, 0x0C: 1, 0x0E: 4, 0x10: 4, 0x11: 1, 0x12: 2,
         0x13: 4, 0x14: 8, 0x17: 4, 0x19: 0}
STRING, SDATA, UDATA, BLOCK1, EXPRLOC = 0x08, 0x0D, 0x0F, 0x0A, 0x18
REFS = {0x10, 0x13}          # ref_addr (from the section's start), ref4 (from the unit's start)
UNSUPPORTED_REFS = {0x11, 0x12, 0x14, 0x15}


@dataclass
class Item:
    """One datum of a section: a byte, or a `.b32`/`.b64` value (a number or a label)."""

    line: int
    size: int
    value: int | str


def _section(lines: list[str], name: str) -> tuple[int, int] | None:
    """The line range (first, end) of a section's body, between its braces."""
    for i, line in enumerate(lines):
        if line.split() == [".section", name]:
            start = i + 2 if lines[i + 1].strip() == "{" else i + 1
            end = next(j for j in range(start, len(lines)) if lines[j].strip() == "}")
            return start, end
    return None


def _items(lines: list[str], start: int, end: int) -> list[Item]:
    out = []
    for i in range(start, end):
        kind, _, rest = lines[i].split("//")[0].strip().partition(" ")
        values = [v.strip() for v in rest.split(",")]
        size = {".b8": 1, ".b16": 2, ".b32": 4, ".b64": 8}.get(kind)
        if size is None or (size > 1 and len(values) != 1):
            raise SystemExit(f"line {i + 1}: unexpected {lines[i].strip()!r} in a debug section")
        out += [Item(i, size, int(v) if re.fullmatch(r"\d+", v) else v) for v in values]
    return out


class Reader:
    def __init__(self, items: list[Item]) -> None:
        self.items, self.i, self.offset = items, 0, 0

    def byte(self) -> int:
        it = self.items[self.i]
        if it.size != 1 or not isinstance(it.value, int):
            raise SystemExit(f"line {it.line + 1}: expected a byte")
        self.i += 1
        self.offset += 1
        return it.value

    def uleb(self) -> int:
        value, shift = 0, 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value

    def fixed(self, size: int) -> list[Item]:
        """`size` bytes: one `.b32`/`.b64` item, or that many `.b8` items."""
        it = self.items[self.i]
        if it.size == size and size > 1:
            self.i += 1
            self.offset += size
            return [it]
        taken = []
        for _ in range(size):
            taken.append(self.items[self.i])
            self.byte()
        return taken

    def skip(self, size: int) -> None:
        """`size` bytes of a block, whatever items hold them (an address inside is a `.b64` label)."""
        end = self.offset + size
        while self.offset < end:
            self.offset += self.items[self.i].size
            self.i += 1
        if self.offset != end:
            raise SystemExit(f"line {self.items[self.i - 1].line + 1}: a block ends inside an item")


def _abbrevs(lines: list[str]) -> dict[int, list[tuple[int, int]]]:
    span = _section(lines, ".debug_abbrev")
    if span is None:
        raise SystemExit("a .debug_info section without .debug_abbrev")
    r, out = Reader(_items(lines, *span)), {}
    while r.i < len(r.items):
        code = r.uleb()
        if code == 0:
            break
        r.uleb()   # the tag
        r.byte()   # has children
        attrs = []
        while True:
            attr, form = r.uleb(), r.uleb()
            if (attr, form) == (0, 0):
                break
            attrs.append((attr, form))
        out[code] = attrs
    return out


def _relative(path: str, root: str) -> str | None:
    if path == root:
        return "."
    return path[len(root) + 1:] if path.startswith(root + "/") else None


def _rewrite_debug_info(lines: list[str], root: str) -> list[str]:
    span = _section(lines, ".debug_info")
    if span is None:
        return lines
    abbrevs = _abbrevs(lines)
    r = Reader(_items(lines, *span))
    length = r.fixed(4)[0]
    r.fixed(2)  # version
    r.fixed(4)  # .debug_abbrev offset
    r.fixed(1)  # address size
    strings: list[tuple[int, int, str, str]] = []   # (offset, first item, old, new) of the strings to change
    refs: list[Item] = []
    unit_id = True
    while r.i < len(r.items):
        code = r.uleb()
        if code == 0:
            continue
        for attr, form in abbrevs[code]:
            if form == STRING:
                at, first, chars = r.offset, r.i, []
                while (b := r.byte()) != 0:
                    chars.append(b)
                text = bytes(chars).decode("utf-8")
                new = _relative(text, root) if unit_id and attr in (DW_AT_NAME, DW_AT_COMP_DIR) else None
                if new is not None:
                    strings.append((at, first, text, new))
            elif form in FIXED:
                taken = r.fixed(FIXED[form])
                if form in REFS:
                    if len(taken) != 1 or not isinstance(taken[0].value, int):
                        raise SystemExit(f"line {taken[0].line + 1}: a reference that is not one number")
                    refs.append(taken[0])
            elif form in (SDATA, UDATA):
                r.uleb()
            elif form == BLOCK1:
                r.skip(r.byte())
            elif form == EXPRLOC:
                r.skip(r.uleb())
            elif form in UNSUPPORTED_REFS:
                raise SystemExit(f"DWARF reference form {form:#x} is not handled")
            else:
                raise SystemExit(f"DWARF form {form:#x} is not handled")
        unit_id = False   # only the compile unit's own name and directory
    if not strings:
        return lines
    if 4 + int(length.value) != sum(it.size for it in r.items):
        raise SystemExit("the .debug_info section is not exactly one compile unit")
    out = list(lines)
    # A reference is an offset from the unit's start (ref4) or the section's (ref_addr): the same here,
    # and the reader's offsets count from there too; it moves by the strings changed before its target.
    for item in refs:
        moved = sum(len(new.encode()) - len(old.encode())
                    for at, _, old, new in strings if at < int(item.value))
        out[item.line] = _set(out[item.line], int(item.value), int(item.value) + moved)
    delta = sum(len(new.encode()) - len(old.encode()) for _, _, old, new in strings)
    out[length.line] = _set(out[length.line], int(length.value), int(length.value) + delta)
    for _, first, old, new in reversed(strings):
        # Written as the compiler wrote it: as many bytes per line as its first line holds (nvcc: 40,
        # LLVM: 1, with a comment naming the attribute, kept), the terminating 0 on a line of its own.
        first_line = r.items[first].line
        last_line = r.items[first + len(old.encode())].line     # the terminating 0
        chunk = sum(1 for it in r.items[first:first + len(old.encode())] if it.line == first_line)
        if (r.items[first - 1].line == first_line
                or last_line != first_line + (len(old.encode()) + chunk - 1) // chunk):
            raise SystemExit(f"line {first_line + 1}: the string {old!r} does not fill its own lines")
        data = new.encode()
        rows = [".b8 " + ",".join(map(str, data[k:k + chunk])) for k in range(0, len(data), chunk)]
        comment = lines[first_line].partition("//")
        if comment[1]:
            rows[0] = rows[0].ljust(len(comment[0])) + "//" + comment[2]
        out[first_line:last_line] = rows
    return out


def _set(line: str, old: int, new: int) -> str:
    """`line` (`.b32 old`, perhaps with a comment) with the value `new`."""
    return re.sub(rf"(\.b32\s+){old}\b", rf"\g<1>{new}", line, count=1)


def rewrite(text: str, root: str) -> str:
    root = root.rstrip("/")
    lines = [re.sub(r'^(\s*\.file\s+\d+\s+")' + re.escape(root) + r'/', r"\1", line)
             for line in text.split("\n")]
    return "\n".join(_rewrite_debug_info(lines, root))


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.exit(__doc__)
    root = str(Path(argv[0]).resolve())
    for name in argv[1:]:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, root)
        if new != text:
            path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
