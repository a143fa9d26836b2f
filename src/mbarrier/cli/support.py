"""`mbarrier support FILE.ptx [--kernel NAME] [--format text|json]`: every instruction of the kernel and
of the functions it can reach through its calls that the simulator cannot execute, with its line,
operation and reason, before anything runs (the instruction registry, `sim.registry`, decides).

Exit codes: 0 the simulator can execute all of it, 1 it cannot execute some instruction (each listed),
2 a file that cannot be read or parsed, or no such kernel.
"""

from __future__ import annotations

import argparse
import sys

from mbarrier.cli import EXIT_CLEAN, EXIT_FINDINGS, UsageError
from mbarrier.cli.formats import JSON, TEXT, add_format_option, write_document
from mbarrier.cli.source import display_name, read_module
from mbarrier.report.support import support_json, support_text
from mbarrier.sim import LaunchError
from mbarrier.sim.support import support


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("support", help="list what of a kernel the simulator cannot execute",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE.ptx", help="the PTX module ('-' reads standard input)")
    p.add_argument("--kernel", help="the kernel (.entry); optional when the module has one")
    add_format_option(p, (TEXT, JSON))
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    module = read_module(args.file)
    try:
        s = support(module, args.kernel)
    except LaunchError as e:
        raise UsageError(f"{display_name(args.file)}: {e}") from None
    if args.format == JSON:
        write_document(support_json(s, display_name(args.file)))
    else:
        for line in support_text(s, display_name(args.file)):
            sys.stdout.write(line + "\n")
    return EXIT_FINDINGS if s.gaps else EXIT_CLEAN
