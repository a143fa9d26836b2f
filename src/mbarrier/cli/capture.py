"""`mbarrier capture [--kernel PATTERN] [-o DIR] [--ptx PATH]... -- COMMAND ...`: run a real program on
a machine with a GPU and write one launch file per kernel launch it makes (docs/capture.md): the PTX, the
parameters with device pointers as buffers (their contents before the launch, and after it as the GPU
left them) and tensor maps as the encode calls that made them. `mbarrier run MODULE.ptx --launch FILE`
replays one on the simulator.

Exit codes: 0 the command exited 0 and at least one launch was captured, 2 otherwise (no C compiler, a
command that cannot start or fails, no launch captured).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from mbarrier.cli import EXIT_CLEAN, EXIT_USAGE, UsageError, options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("capture", help="capture a program's kernel launches as launch files (needs a GPU)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernel", metavar="PATTERN",
                   help="capture only kernels whose (mangled) name matches this shell pattern")
    p.add_argument("-o", "--output", metavar="DIR", type=options.output_dir, default=Path("capture"),
                   help="the directory to write into (default ./capture)")
    p.add_argument("--ptx", metavar="PATH", type=Path, action="append", default=[],
                   help="a PTX file, or a directory searched for *.ptx, that defines the kernels (first "
                   "place looked; repeatable)")
    p.add_argument("--max-launches", metavar="N", type=options.positive,
                   help="capture at most N launches per process (default: every matching launch)")
    p.add_argument("--max-buffer", metavar="SIZE", type=options.size, default=1 << 30,
                   help="do not copy allocations larger than SIZE (default 1G): such a buffer starts as "
                   "zeros")
    p.add_argument("--keep-raw", action="store_true", help="keep the interposer's records (DIR/raw)")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                   help="the program and its arguments")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from mbarrier.capture import CaptureError, convert, run

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise UsageError("no command to run: mbarrier capture [options] -- COMMAND ...")
    out: Path = args.output
    out.mkdir(parents=True, exist_ok=True)
    try:
        status = run(command, out, args.kernel, args.max_launches, args.max_buffer)
        executable = shutil.which(command[0])
        done = convert(out / "raw", out, command, args.ptx, [Path(executable)] if executable else [])
    except CaptureError as e:
        raise UsageError(str(e)) from None
    for c in done:
        where = c.launch.name if c.launch else "(not written)"
        sys.stdout.write(f"{where}: {c.kernel}\n")
        for w in c.warnings:
            sys.stdout.write(f"  warning: {w}\n")
    if not args.keep_raw:
        shutil.rmtree(out / "raw", ignore_errors=True)
    written = sum(c.launch is not None for c in done)
    sys.stdout.write(f"{written} launch file{'s' if written != 1 else ''} in {out}\n")
    if status != 0:
        sys.stderr.write(f"mbarrier capture: error: {command[0]} exited with status {status}\n")
        return EXIT_USAGE
    if not written:
        sys.stderr.write("mbarrier capture: error: no launch was captured"
                         f"{f' (no kernel matched {args.kernel!r})' if args.kernel else ''}\n")
        return EXIT_USAGE
    return EXIT_CLEAN
