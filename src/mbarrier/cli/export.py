"""`mbarrier export --promela`: the launch as a Promela model for SPIN, with the state graph of
`mbarrier check --no-reduce --no-races` (one instruction per step)."""

from __future__ import annotations

import argparse
import sys

from mbarrier.cli import EXIT_CLEAN, EXIT_INCOMPLETE, UsageError, options
from mbarrier.cli.bounds import Deadline, TimeoutHit
from mbarrier.cli.run import add_launch_options, load_launch, module_file
from mbarrier.cli.source import display_name
from mbarrier.explore.promela import GLOBAL_BYTES, ExportError, export_promela


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="write the launch as a Promela model for SPIN",
                       description="Write one launch of a kernel as a Promela model whose state graph is the "
                       "one `mbarrier check --no-reduce --no-races` explores: verify it with "
                       "`spin -a M.pml && cc -DNOREDUCE -DVECTORSZ=65536 -o pan pan.c && ./pan`.")
    p.add_argument("--promela", action="store_true", required=True, help="write Promela (the only format)")
    add_launch_options(p)
    p.add_argument("-o", "--output", type=options.output_file, metavar="FILE",
                   help="write the model to FILE (default: stdout)")
    p.add_argument("--global-bytes", type=options.positive, default=GLOBAL_BYTES, metavar="N",
                   help=f"bytes of each global buffer the model keeps (default {GLOBAL_BYTES}); an access "
                        "beyond fails an assertion naming MODEL_LIMIT")
    p.add_argument("--threads-per-process", type=options.positive, metavar="N",
                   help="N threads in each Promela process, each stepping on its own (default: one per "
                        "process where SPIN's 255 processes allow, else a warp or the fewest warps that fit)")
    p.add_argument("--timeout", type=options.seconds, metavar="S",
                   help="stop after S seconds of wall time, reading, parsing and the export included "
                        "(exit 3; nothing is written)")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    deadline = Deadline(args.timeout, getattr(args, "started", None))
    name = display_name(module_file(args))
    try:
        module, m = load_launch(args, deadline=deadline)
        with deadline.phase(f"writing the Promela model of {name}"):
            text = export_promela(module, m, args.kernel, args.global_bytes, args.threads_per_process)
    except TimeoutHit as e:
        sys.stderr.write(f"mbarrier export: incomplete: {e.message()}; nothing was written\n")
        return EXIT_INCOMPLETE
    except ExportError as e:
        raise UsageError(f"{name}: {e}") from None
    if args.output:
        options.write_output(args.output, text, "-o")
    else:
        sys.stdout.write(text)
    return EXIT_CLEAN
