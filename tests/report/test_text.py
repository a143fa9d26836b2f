"""Control and formatting characters from the input are shown escaped, never acted on by a terminal."""

from __future__ import annotations

import pytest

from mbarrier.report.text import printable


@pytest.mark.parametrize(("raw", "shown"), [
    ("ret; // \x1b[2J", "ret; // \\x1b[2J"),
    ("a\rb\x07c\x7f\x9b", "a\\x0db\\x07c\\x7f\\x9b"),
    ("x \u202e y \u2066 \u200b \ufeff", "x \\u202e y \\u2066 \\u200b \\ufeff"),
    ("line 1\n\tline 2", "line 1\n\tline 2"),  # newlines and tabs stay
    ("mbarrier.arrive.shared.b64 %rd1, [bar];", "mbarrier.arrive.shared.b64 %rd1, [bar];"),
])
def test_printable_escapes_control_characters(raw: str, shown: str) -> None:
    assert printable(raw) == shown
