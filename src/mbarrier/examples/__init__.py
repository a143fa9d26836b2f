"""Bundled example kernels: nvcc-compiled PTX (sources and build script in `cuda/`)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent


def path(name: str) -> Path:
    """The bundled PTX file `name` (with or without `.ptx`)."""
    p = HERE / (name if name.endswith(".ptx") else name + ".ptx")
    if not p.is_file():
        known = ", ".join(sorted(f.stem for f in HERE.glob("*.ptx")))
        raise FileNotFoundError(f"no bundled example {name!r} (examples: {known})")
    return p


def names() -> list[str]:
    return sorted(f.stem for f in HERE.glob("*.ptx"))
