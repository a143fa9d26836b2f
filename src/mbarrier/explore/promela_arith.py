"""Integer arithmetic of the Promela export (`explore.promela`): each operation as a C-like Promela
expression over the model's 32-bit ints. 32-bit operations are exact (C's int wraps as the hardware's
registers do; unsigned comparisons and logical shifts are written out); a 64-bit value is modelled by
its low 32 bits where it fits them, and an operation whose result may not fit asserts that it does
(`MODEL_LIMIT`, the model's own bound, never a finding)."""

from __future__ import annotations

OPCODES = ("add", "sub", "and", "or", "xor", "shl", "shr", "mul", "mad", "div", "rem", "not", "neg")

_CMP = {".eq": "==", ".ne": "!=", ".lt": "<", ".le": "<=", ".gt": ">", ".ge": ">=",
        ".lo": "<", ".ls": "<=", ".hi": ">", ".hs": ">="}
_UNSIGNED_CMP = {".lo": "ULT({a}, {b})", ".ls": "ULE({a}, {b})", ".hi": "ULT({b}, {a})",
                 ".hs": "ULE({b}, {a})", ".lt": "ULT({a}, {b})", ".le": "ULE({a}, {b})",
                 ".gt": "ULT({b}, {a})", ".ge": "ULE({b}, {a})"}
_BIN = {"add": "+", "sub": "-", "and": "&", "or": "|", "xor": "^", "shl": "<<"}


class FormError(Exception):
    """An operation form the model does not write (the message says which)."""


def _type(q: tuple[str, ...]) -> str:
    """The instruction's (last) integer type qualifier, e.g. `.u32`."""
    return next((x for x in reversed(q) if x[1:2] in ("u", "s", "b") and x[2:].isdigit()), "")


def _bits(ty: str) -> int:
    return int(ty[2:]) if ty[2:].isdigit() else 32


def compare(q: tuple[str, ...], a: str, b: str) -> str | None:
    """setp's comparison (None: not an integer comparison the model writes)."""
    cmp = next((x for x in q if x in _CMP), None)
    if cmp is None:
        return None
    if cmp in _UNSIGNED_CMP and (cmp in (".lo", ".ls", ".hi", ".hs") or _type(q)[1:2] in ("u", "b")):
        return _UNSIGNED_CMP[cmp].format(a=a, b=b)
    return f"({a} {_CMP[cmp]} {b})"


def arith(op: str, q: tuple[str, ...], a: list[str], shift: int | None) -> tuple[str, str]:
    """(check, expression) of an arithmetic instruction on operands `a`; `shift`: shr's immediate."""
    ty = _type(q)
    wide = ".wide" in q or _bits(ty) == 64
    unsigned = ty[1:2] in ("u", "b")
    fits = ""
    if op in _BIN and len(a) == 2:
        e = f"{a[0]} {_BIN[op]} {a[1]}"
        if wide and op == "add":
            fits = f"({a[1]} >= 0 -> {a[0]} + {a[1]} >= {a[0]} : {a[0]} + {a[1]} < {a[0]})"
        elif wide and op == "sub":
            fits = f"({a[1]} >= 0 -> {a[0]} - {a[1]} <= {a[0]} : {a[0]} - {a[1]} > {a[0]})"
        elif wide and op == "shl":
            fits = f"(({a[0]} << {a[1]}) >> {a[1]} == {a[0]})"
    elif op == "shr" and len(a) == 2:
        if not unsigned:
            e = f"{a[0]} >> {a[1]}"
        elif shift is None:
            raise FormError("a logical shift by a register")
        elif shift >= 32:
            e, fits = "0", f"{a[0]} >= 0" if wide else ""
        else:
            e = a[0] if shift == 0 else f"(({a[0]} >> {shift}) & {(1 << (32 - shift)) - 1})"
            fits = f"{a[0]} >= 0" if wide else ""
    elif op == "mul" and len(a) == 2 and (".lo" in q or wide):
        e = f"{a[0]} * {a[1]}"
        if wide:
            fits = f"({a[0]} == 0 || ({a[0]} * {a[1]}) / {a[0]} == {a[1]})"
            if ".wide" in q and unsigned:
                fits += f" && {a[0]} >= 0 && {a[1]} >= 0"
    elif op == "mad" and len(a) == 3 and ".lo" in q and not wide:
        e = f"{a[0]} * {a[1]} + {a[2]}"
    elif op in ("div", "rem") and len(a) == 2 and not wide:
        e = f"{a[0]} {'/' if op == 'div' else '%'} {a[1]}"
        fits = f"{a[0]} >= 0 && {a[1]} > 0" if unsigned else f"{a[1]} != 0"
    elif op == "not" and len(a) == 1:
        e = f"!{a[0]}" if ".pred" in q else f"~{a[0]}"
    elif op == "neg" and len(a) == 1 and not unsigned:
        e = f"-{a[0]}"
    else:
        raise FormError("instruction form")
    return (f"assert(MODEL_LIMIT || ({fits})); " if fits else ""), e


def convert(op: str, q: tuple[str, ...], a: str) -> tuple[str, str]:
    """(check, expression) of cvt between integer types, or cvta (a pointer stays what it is)."""
    if op == "cvta":
        return "", a
    types = [x for x in q if x[1:2] in ("u", "s", "b") and x[2:].isdigit()]
    if len(types) != 2 or any(x not in q[-2:] for x in types):
        raise FormError("cvt form (integers only)")
    to, frm = _bits(types[0]), _bits(types[1])
    if to < 32:
        mask = (1 << to) - 1
        if types[0][1] == "s":
            return "", f"((({a}) & {mask}) ^ {1 << (to - 1)}) - {1 << (to - 1)}"
        return "", f"({a}) & {mask}"
    if to == 64 and frm == 32 and types[1][1] == "u":
        return f"assert(MODEL_LIMIT || {a} >= 0); ", a
    return "", a
