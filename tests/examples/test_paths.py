"""The bundled PTX names no directory of the machine it was built on: `.file` paths are relative to the
repository (or the toolkit's own headers under /usr), and so is the DWARF compile unit's directory of the
-G builds. The build scripts make them so with tools/ptx_relpaths.py, tested here on a fresh nvcc build."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted((ROOT / "src" / "mbarrier" / "examples").rglob("*.ptx"))
ABSOLUTE = re.compile(rb"(?:^|\x00)/(?!usr/)")   # a string of the debug section that is an absolute path


def _debug_bytes(text: str) -> bytes:
    """The bytes of the `.b8` lines of the debug sections (strings live there)."""
    out = bytearray()
    for line in text.split(".section")[1:] if ".section" in text else []:
        for m in re.finditer(r"^\.b8 ([\d,]+)$", line, flags=re.M):
            out += bytes(int(b) for b in m.group(1).split(","))
    return bytes(out)


def _build_paths(text: str) -> list[str]:
    files = re.findall(r'^\s*\.file\s+\d+\s+"([^"]*)"', text, flags=re.M)
    return [f for f in files if f.startswith("/") and not f.startswith("/usr/")]


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(ROOT)))
def test_bundled_ptx_names_no_build_directory(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not _build_paths(text)
    assert not ABSOLUTE.search(_debug_bytes(text))


def test_the_g_builds_name_their_source_in_the_repository() -> None:
    for name in ("ring_buffer", "cluster_handshake", "arrive_drop"):
        text = (ROOT / "src" / "mbarrier" / "examples" / f"{name}.G.ptx").read_text(encoding="utf-8")
        assert f'"src/mbarrier/examples/cuda/{name}.cu"' in text
        assert f"src/mbarrier/examples/cuda/{name}.cu".encode() in _debug_bytes(text)


@pytest.mark.tool("nvcc", "ptxas")
def test_relpaths_rewrites_a_fresh_g_build(tmp_path: Path) -> None:
    """nvcc -G writes the build directory into `.file` and DW_AT_comp_dir; after the tool neither is there,
    the compile unit's length and references still add up (ptxas -g assembles it) and a second run
    changes nothing."""
    (tmp_path / "k.cu").write_text("__global__ void k(int *p) { p[threadIdx.x] = threadIdx.x; }\n")
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-G", "k.cu", "-o", "k.ptx"], cwd=tmp_path, check=True)
    before = (tmp_path / "k.ptx").read_text()
    assert str(tmp_path).encode() in _debug_bytes(before) or _build_paths(before)
    tool = [sys.executable, str(ROOT / "tools" / "ptx_relpaths.py"), str(tmp_path), "k.ptx"]
    subprocess.run(tool, cwd=tmp_path, check=True)
    after = (tmp_path / "k.ptx").read_text()
    assert not _build_paths(after) and not ABSOLUTE.search(_debug_bytes(after))
    proc = subprocess.run(["ptxas", "-arch=sm_90", "-g", "k.ptx", "-o", "k.cubin"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    subprocess.run(tool, cwd=tmp_path, check=True)
    assert (tmp_path / "k.ptx").read_text() == after
