"""The package outside its checkout: a wheel built from this tree, installed into a fresh virtual
environment, runs every command example of README.md and docs/*.md (the ```sh blocks, the ```python
blocks, the `python -m mbarrier...` commands named in the text, and the `mbarrier ...` commands of the
text and of `$ ` lines in output blocks that name bundled files: `$E/`, `$C/`, `$R/`) from a directory
outside the checkout,
so nothing may read the source tree at run time. Building needs setuptools>=77 here (the test extra
has it); nothing is downloaded."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Commands that need the checkout itself (installing it, its tests, its scripts): not a user's.
CHECKOUT_ONLY = re.compile(r"pip install|pytest|\btools/|\bbench/")
#: A program the examples run besides mbarrier and python3: the line needs it (see tests/conftest.py).
TOOL_WORDS = {"nvcc": "nvcc", "ptxas": "ptxas", "spin": "spin"}
#: Exit codes of a working example (2 is a usage or input error: the example itself is wrong).
GOOD_EXITS = {0, 1, 3}
#: The bundled modules as the pages name them (README.md defines E, C and R so).
BUNDLED = ("E=$(python3 -c 'import mbarrier.examples as e; print(e.HERE)')\nC=$E/corpus\n"
           "R=$(python3 -c 'import mbarrier.examples.races as r; print(r.HERE)')\nmkdir -p docs\n")
NAMES_BUNDLED = re.compile(r"\$[ECR]/")


@dataclass(frozen=True)
class Example:
    where: str                 # page:line of the block
    lines: tuple[str, ...]     # run in order in one directory, each checked on its own
    preamble: str = ""         # the block's variable assignments, for a line run on its own
    tool: str | None = None


def _commands(block: str) -> list[str]:
    lines = block.replace("\\\n", " ").splitlines()
    out = []
    for line in lines:
        for part in line.split("&&"):
            part = part.strip()
            if part and not part.startswith("#") and not CHECKOUT_ONLY.search(part):
                out.append(part)
    return out


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"```sh\n(.*?)```", text, flags=re.S):
            where = f"{page.name}:{text.count(chr(10), 0, m.start()) + 1}"
            cmds = _commands(m.group(1))
            preamble = "".join(c + "\n" for c in cmds if re.match(r"^[A-Z]+=", c))
            plain = [c for c in cmds if not any(c.split()[0] == w for w in TOOL_WORDS)]
            if plain:
                found.append(Example(where, tuple(plain)))
            for c in cmds:
                if c not in plain:
                    found.append(Example(where, (c,), preamble, TOOL_WORDS[c.split()[0]]))
        for m in re.finditer(r"`(python3? -m mbarrier[\w.]*(?: [^`<>\[\]|]*)?)`", text):
            found.append(Example(f"{page.name}:{text.count(chr(10), 0, m.start()) + 1}", (m.group(1),)))
        for m in re.finditer(r"`(mbarrier [^`]*)`|^\$ (mbarrier .*)$", text, flags=re.M):
            command = " ".join((m.group(1) or m.group(2)).split())
            if NAMES_BUNDLED.search(command):
                found.append(Example(f"{page.name}:{text.count(chr(10), 0, m.start()) + 1}", (command,),
                                     BUNDLED))
    return found


def python_blocks() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"```python\n(.*?)```", text, flags=re.S):
            found.append((f"{page.name}:{text.count(chr(10), 0, m.start()) + 1}", m.group(1)))
    return found


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel of this tree installed; its bin/ directory."""
    tmp = tmp_path_factory.mktemp("wheel")
    tree = tmp / "tree"   # a copy: the build writes build/ and *.egg-info into the tree it builds
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info", "*.pyc"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    build = subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w",
                            str(tmp / "dist"), str(tree)], capture_output=True, text=True)
    assert build.returncode == 0, f"the wheel did not build (setuptools>=77 needed):\n{build.stderr[-3000:]}"
    (wheel,) = (tmp / "dist").glob("mbarrier-*.whl")
    # The wheel's dependencies (numpy, rich) come from this interpreter's site-packages, so nothing is
    # downloaded; the venv's own site-packages comes first, so `mbarrier` is the wheel's, not the checkout's
    # (the examples' assertion that no checkout path appears would catch the other).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(tmp / "venv")], check=True)
    bin_dir = tmp / "venv" / "bin"
    subprocess.run([*pip, "--python", str(bin_dir / "python"), "install", "--no-deps", "--no-index",
                    str(wheel)], check=True, env=_env(bin_dir))   # PYTHONPATH would hide the venv's state
    where = subprocess.run([str(bin_dir / "python"), "-c", "import mbarrier; print(mbarrier.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp, env=_env(bin_dir)).stdout
    assert where.startswith(str(tmp / "venv")), f"mbarrier came from {where}, not the wheel"
    deps = subprocess.run([*pip, "--python", str(bin_dir / "python"), "check"], capture_output=True,
                          text=True, env=_env(bin_dir))
    assert deps.returncode == 0, f"the wheel's declared dependencies are not met:\n{deps.stdout}{deps.stderr}"
    return bin_dir


def _env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_pages_have_examples() -> None:
    ex = examples()
    assert len([e for e in ex if e.where.startswith("README")]) >= 5
    assert any("mbarrier.hw.doc" in line for e in ex for line in e.lines)
    assert len(python_blocks()) >= 3


@pytest.mark.parametrize("example", [pytest.param(e, id=e.where, marks=[pytest.mark.tool(e.tool)] if e.tool
                                                  else []) for e in examples()])
def test_command_example_runs_from_the_wheel(example: Example, venv: Path, tmp_path: Path) -> None:
    lines = example.preamble
    for line in example.lines:
        if re.match(r"^[A-Z]+=", line):
            lines += line + "\n"
            continue
        proc = subprocess.run(["bash", "-c", lines + line], cwd=tmp_path, env=_env(venv), capture_output=True,
                              text=True, timeout=120)
        said = (f"{example.where}: `{line}` exited {proc.returncode}\n"
                f"{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
        assert proc.returncode in GOOD_EXITS, said
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, said
        assert str(ROOT) not in proc.stdout + proc.stderr, f"the checkout was read: {said}"


@pytest.mark.parametrize(("where", "code"), [
    pytest.param(w, c, id=w, marks=[pytest.mark.tool("triton")] if "import triton" in c else [])
    for w, c in python_blocks()])
def test_python_example_runs_from_the_wheel(where: str, code: str, venv: Path, tmp_path: Path) -> None:
    # run from a file: `@triton.jit` reads its function's source
    (tmp_path / "example.py").write_text(code)
    proc = subprocess.run([str(venv / "python"), "example.py"], cwd=tmp_path, env=_env(venv),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{where}:\n{proc.stderr[-3000:]}"


def test_a_users_mypy_strict_passes_on_the_readme_example(venv: Path, tmp_path: Path) -> None:
    """The installed package is typed (py.typed) and exports its names: a user's `mypy --strict` on the
    README's Python examples, against the wheel installed in the venv, reports nothing."""
    code = "\n".join(c for w, c in python_blocks() if w.startswith("README"))
    (tmp_path / "example.py").write_text(code)
    mypy = [sys.executable, "-m", "mypy", "--strict", "--python-executable", str(venv / "python"),
            "--cache-dir", str(tmp_path / "cache"), "example.py"]
    proc = subprocess.run(mypy, cwd=tmp_path, env=_env(venv), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_wheel_carries_the_license_and_no_checkout_path(venv: Path, tmp_path: Path) -> None:
    code = ("import importlib.metadata as m, mbarrier; d = m.distribution('mbarrier');"
            "print(d.metadata['License-Expression']); print(mbarrier.__file__);"
            "print(any(f.name == 'LICENSE' for f in d.files))")
    out = subprocess.run([str(venv / "python"), "-c", code], cwd=tmp_path, env=_env(venv),
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "Apache-2.0" and out[2] == "True"
    assert not out[1].startswith(str(ROOT)), "imported from the checkout, not from the wheel"
