"""Finding a kernel's PTX: in PTX files the user names, in the images the program loaded (PTX text, or
the PTX a fatbin embeds, taken out with `cuobjdump -xptx`), or in the program's executable (`cuobjdump`
again: the CUDA runtime may load its fatbins without a call the interposer sees)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _entry(name: str) -> re.Pattern[str]:
    return re.compile(r"\.entry\s+" + re.escape(name) + r"\s*\(")


def _extract(binary: Path) -> list[tuple[str, str]]:
    """The PTX modules embedded in a fatbin, cubin or executable (none without cuobjdump)."""
    tool = shutil.which("cuobjdump")
    if tool is None or not binary.is_file():
        return []
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([tool, "-xptx", "all", str(binary.resolve())], cwd=tmp, capture_output=True,
                              check=False)
        if done.returncode != 0:
            return []
        found = sorted(Path(tmp).glob("*.ptx"))
        return [(f"{binary} ({p.name})", p.read_text(errors="replace")) for p in found]


class PtxSources:
    """The PTX modules to look in, in order: the user's files, the loaded images, the executables."""

    def __init__(self, user: Iterable[Path], images: Iterable[tuple[Path, str]],
                 binaries: Iterable[Path]) -> None:
        self._pending: list[tuple[str, Path]] = []
        self.modules: list[tuple[str, str]] = []
        for path in user:
            files = sorted(path.rglob("*.ptx")) if path.is_dir() else [path]
            self._pending += [("ptx", f) for f in files]
        for path, kind in images:
            self._pending.append(("ptx" if kind == "ptx" else "binary", path))
        self._pending += [("binary", b) for b in binaries]

    def _load_next(self) -> bool:
        if not self._pending:
            return False
        kind, path = self._pending.pop(0)
        if kind == "ptx":
            self.modules.append((str(path), path.read_bytes().rstrip(b"\0").decode(errors="replace")))
        else:
            self.modules += _extract(path)
        return True

    def find(self, kernel: str) -> tuple[str, str] | None:
        """(where, text) of the first module that defines `.entry kernel`, loading sources as needed."""
        pattern = _entry(kernel)
        i = 0
        while True:
            while i < len(self.modules):
                if pattern.search(self.modules[i][1]):
                    return self.modules[i]
                i += 1
            if not self._load_next():
                return None
