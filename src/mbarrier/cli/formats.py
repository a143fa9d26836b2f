"""`--format` of lint, run and check, in ruff's manner: `text` for people, `json` (also `--json`) for
tools, `sarif` for code scanning (GitHub's among them) and `github` for workflow annotations."""

from __future__ import annotations

import argparse
import json
import sys

from mbarrier.report.model import Report, to_json

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
