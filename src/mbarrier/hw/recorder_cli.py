"""The command line the GPU recorders share (`python3 -m mbarrier.hw.tma`, `... .wgmma`): `emit DIR`
writes the recording kernels, `collect DIR OUT` gathers what the GPU wrote into a records file."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path


def recorder_main(prog: str, doc: str, emit: Callable[[Path], object],
                  collect: Callable[[Path, str, str], object], argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("emit")
    e.add_argument("dir", type=Path)
    c = sub.add_parser("collect")
    c.add_argument("dir", type=Path)
    c.add_argument("out", type=Path)
    c.add_argument("--device", default="unknown")
    c.add_argument("--toolchain", default="")
    args = p.parse_args(argv)
    if args.cmd == "emit":
        emit(args.dir)
    else:
        args.out.write_text(json.dumps(collect(args.dir, args.device, args.toolchain), indent=1) + "\n")
    return 0
