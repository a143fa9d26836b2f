"""`--format` of lint, run and check, in ruff's manner: `text` for people, `json` (also `--json`) for
tools, `sarif` for code scanning (GitHub's among them) and `github` for workflow annotations; and the
timelines of run and check (`--perfetto`, `--svg`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mbarrier.cli import options
from mbarrier.report.model import Report, to_json
from mbarrier.report.perfetto import trace_events
from mbarrier.report.svg import timeline_svg
from mbarrier.report.timeline import Timeline

TEXT, JSON, SARIF, GITHUB = "text", "json", "sarif", "github"


def add_format_option(p: argparse.ArgumentParser, choices: tuple[str, ...]) -> None:
    p.add_argument("--format", choices=choices, default=TEXT, dest="format",
                   help=f"output format (default {TEXT}): {', '.join(choices)}")
    p.add_argument("--json", action="store_const", const=JSON, dest="format",
                   help="the same as --format json")


def dumps(document: object) -> str:
    """JSON text with every character a terminal could act on escaped by JSON itself: json escapes C0
    controls and (ensure_ascii) all non-ASCII; DEL is left, so it is escaped here (stdout's guard would
    otherwise print it as `\\x7f`, which is no JSON escape)."""
    return json.dumps(document, indent=2).replace("\x7f", "\\u007f")


def write_document(document: object) -> None:
    sys.stdout.write(dumps(document) + "\n")


def write_json(report: Report) -> None:
    write_document(to_json(report))


def add_timeline_options(p: argparse.ArgumentParser, perfetto: str) -> None:
    """`--perfetto` (a file for run, a directory for check) and `--svg FILE`."""
    if perfetto == "file":
        p.add_argument("--perfetto", type=options.output_file, metavar="OUT.json",
                       help="write the run as a Chrome trace-event / Perfetto timeline (Perfetto opens it)")
        p.add_argument("--svg", type=options.output_file, metavar="FILE",
                       help="write a small static timeline of the run as SVG")
    else:
        p.add_argument("--perfetto", type=options.output_dir, metavar="DIR",
                       help="write a Chrome trace-event / Perfetto timeline of each finding into DIR")
        p.add_argument("--svg", type=options.output_file, metavar="FILE",
                       help="write a small static timeline of the first finding as SVG")


def write_timelines(tl: Timeline, title: str, perfetto: Path | None, svg: Path | None) -> None:
    if perfetto is not None:
        options.write_output(perfetto, json.dumps(trace_events(tl, title)) + "\n", "--perfetto")
    if svg is not None:
        options.write_output(svg, timeline_svg(tl, title), "--svg")
