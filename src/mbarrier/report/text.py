"""Text that is safe to print: PTX source lines, file and kernel names and messages quoting them may hold
control characters (an escape sequence in a comment, a stray carriage return, a Unicode bidirectional
override) that a terminal would act on instead of showing. They are shown escaped, as `\\x1b` or
`\\u202e`; newlines and tabs are kept."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, zero-width and bidirectional formatting marks, BOM.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str) -> str:
    """`text` with every control or formatting character escaped (but newlines and tabs)."""
    return _UNSAFE.sub(_escape, text)
