"""Words of the declaration grammar that both the parser and its line fast path (fastpath.py) read."""

from __future__ import annotations

from typing import Final

# State spaces a variable or a parameter is declared in (PTX ISA 5.1).
SPACES: Final = frozenset({".reg", ".const", ".global", ".local", ".param", ".shared", ".tex"})
# Fundamental and opaque types (PTX ISA 5.2); alternate float formats too, for declarations of them.
TYPES: Final = frozenset(
    f".{k}{w}" for k in "bsu" for w in (8, 16, 32, 64, 128)
) | frozenset({".f16", ".f16x2", ".f32", ".f64", ".bf16", ".bf16x2", ".tf32", ".pred", ".e4m3", ".e5m2",
               ".e4m3x2", ".e5m2x2", ".texref", ".samplerref", ".surfref"})
VECTORS: Final = {".v2": 2, ".v4": 4, ".v8": 8}
