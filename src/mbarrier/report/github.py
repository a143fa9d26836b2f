"""GitHub Actions workflow annotations of lint and check (`--format github`): one
`::error file=F,line=L,col=C,title=T::MESSAGE` line per diagnostic or finding, which a workflow run shows
on the file and line of a pull request.

Escaping, as the Actions runner reads commands (@actions/core's command.ts): in the message, `%`,
CR and LF become `%25`, `%0D` and `%0A`; in a property value also `:` and `,` become `%3A` and `%2C`."""

from __future__ import annotations

from collections.abc import Iterator

from mbarrier.report.check import replay_command
from mbarrier.report.model import CheckReport, Finding, LintReport


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, *, file: str | None = None, line: int | None = None,
            col: int | None = None, title: str | None = None) -> str:
    """One workflow command (`level`: error, warning or notice)."""
    props = [(k, str(v)) for k, v in (("file", file), ("line", line), ("col", col), ("title", title))
             if v is not None]
    head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{level}{' ' + head if head else ''}::{escape_data(message)}"


def lint_annotations(report: LintReport) -> Iterator[str]:
    for f in report.files:
        if f.error is not None:
            yield command("error", f.error, file=f.file, title="mbarrier lint: cannot read the file")
        for d in f.diagnostics:
            yield command("warning" if d.severity == "warning" else "error", d.message, file=f.file,
                          line=d.line, col=d.column, title=f"mbarrier lint ({d.rule})")


def _finding_text(f: Finding, replay: str) -> str:
    text = f.message
    if f.missing_edge and "missing edge" not in text:
        text += f"\nmissing edge: {f.missing_edge}"
    if replay:
        text += f"\nreplay: {replay_command(replay, f.kind, f.steps, f.schedule)}"
    return text


def check_annotations(report: CheckReport, replay: str = "") -> Iterator[str]:
    """`replay`: the `mbarrier run` command of the launch (each finding's replay line is it with
    `--schedule`)."""
    for f in report.findings:
        yield command("error", _finding_text(f, replay), file=report.file, line=f.line,
                      title=f"mbarrier check: {f.kind.value} ({f.rule})")
    u = report.unsupported
    if u is not None:
        yield command("warning", f"{u.message}: the simulator cannot run this instruction; the kernel is "
                      "not checked beyond it (not a finding about the kernel)", file=report.file, line=u.line,
                      title="mbarrier check: not checked (unsupported instruction)")
    if report.covered:
        yield command("warning", f"not every interleaving was explored: {report.covered}", file=report.file,
                      title="mbarrier check: incomplete")
