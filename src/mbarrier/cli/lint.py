"""`mbarrier lint FILE.ptx [FILE ...] [--target sm_XX] [--strict] [--format FORMAT]`: ptxas's verdict
and wording on every mbarrier-family instruction, plus warnings for what ptxas accepts but PTX ISA
9.7.13.15 leaves undefined. `-` reads standard input.

Exit codes: 0 clean (warnings allowed unless --strict), 1 findings (an error, a syntax error, or a
warning under --strict), 2 a file that cannot be read or a bad argument.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass

from mbarrier.cli import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, UsageError, colour
from mbarrier.cli.colour import Painter
from mbarrier.cli.formats import GITHUB, JSON, SARIF, TEXT, add_format_option, write_document, write_json
from mbarrier.cli.streams import write_styled
from mbarrier.ptx.diagnostics import Diagnostic, PtxSyntaxError
from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import Coverage, coverage, validate
from mbarrier.report.github import lint_annotations
from mbarrier.report.model import LintFile, lint_file, lint_report
from mbarrier.report.sarif import lint_sarif
from mbarrier.report.text import printable
from mbarrier.spec.targets import TARGET_MIN_VERSION, parse_target


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("lint", help="check PTX like ptxas does, plus the hazards ptxas cannot see",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX files; '-' for standard input")
    p.add_argument("--target", help="judge for this target (sm_80, sm_90a, ...) instead of the "
                                    "module's .target")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    add_format_option(p, (TEXT, JSON, SARIF, GITHUB))
    p.set_defaults(handler=main)


@dataclass(frozen=True, slots=True)
class FileResult:
    path: str
    diagnostics: list[Diagnostic]
    lines: tuple[str, ...]
    coverage: Coverage | None = None
    """What was judged (None: the text did not parse)."""


def lint_text(text: str, path: str, target: str | None = None, strict: bool = False) -> FileResult:
    """The diagnostics of one PTX text: a syntax error is one fatal finding, else the validator's."""
    lines = tuple(text.splitlines())
    try:
        module = parse(text, path)
    except PtxSyntaxError as e:
        return FileResult(path, list(e.diagnostics), lines)
    diags = validate(module, target)
    if strict:
        diags = [dataclasses.replace(d, severity="error") if d.severity == "warning" else d
                 for d in diags]
    return FileResult(path, diags, lines, coverage(module))


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        raise OSError(f"{path}: cannot read: {e.strerror or e}") from None


def format_human(result: FileResult, paint: Painter | None = None) -> str:
    """The diagnostics as text, escaped (and coloured by `paint` when given)."""
    paint = paint or Painter(False)
    out = []
    for d in result.diagnostics:
        style = "warning" if d.severity == "warning" else "error"
        out.append(f"{paint(f'{d.file}:{d.line}:{d.column}:', 'bold')} {paint(d.severity + ':', style)} "
                   f"{paint(d.message, 'bold')} {paint(f'[{d.rule}]', 'note')}")
        if 1 <= d.line <= len(result.lines):
            src = result.lines[d.line - 1].expandtabs(1)
            out.append(f"  {printable(src)}")
            # Under the column as printed: a control character before it is shown escaped, wider.
            out.append("  " + " " * len(printable(src[:max(d.column - 1, 0)])) + paint("^", "caret"))
    return "\n".join(out)


def main(args: argparse.Namespace) -> int:
    if args.target is not None and parse_target(args.target) is None:
        raise UsageError(f"unknown target {args.target!r}; known: {', '.join(TARGET_MIN_VERSION)}")
    if args.files.count("-") > 1:
        raise UsageError("'-' (standard input) may be given once")
    results: list[FileResult] = []
    files: list[LintFile] = []
    for path in args.files:
        try:
            text = _read(path)
        except OSError as e:
            if args.format == TEXT:
                sys.stderr.write(f"mbarrier lint: error: {e}\n")
            files.append(LintFile(path, (), None, str(e)))
            continue
        results.append(lint_text(text, "<stdin>" if path == "-" else path, args.target, args.strict))
        r = results[-1]
        c = r.coverage
        files.append(lint_file(r.path, r.diagnostics, None if c is None else (c.judged, c.not_judged)))
    report = lint_report(files, args.target, args.strict)
    if args.format == JSON:
        write_json(report)
    elif args.format == SARIF:
        write_document(lint_sarif(report))
    elif args.format == GITHUB:
        for line in lint_annotations(report):
            print(line)
    else:
        paint = Painter(colour.enabled(sys.stdout))
        for r in results:
            if r.diagnostics:
                write_styled(format_human(r, paint) + "\n")
        s = report.summary
        judged = sum(f.instructions.judged for f in files if f.instructions)
        other = sum(f.instructions.not_judged for f in files if f.instructions)
        if results:  # nothing was read: the errors above said why
            sys.stderr.write(f"{s.files} file(s): {s.errors} error(s), {s.warnings} warning(s); {judged} "
                             f"instruction(s) judged, {other} outside lint's scope\n")
    if any(f.error is not None for f in files):
        return EXIT_USAGE
    return EXIT_FINDINGS if report.failed else EXIT_CLEAN
