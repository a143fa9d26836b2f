"""SARIF 2.1.0 logs of lint and check (`--format sarif`), for code scanning (GitHub's `upload-sarif`).

One run per log: the tool with the rules its results use (ids and help from spec's catalogues, through
`report.rules`), one result per diagnostic or finding with its location; a finding's schedule is a
codeFlow with one threadFlow per agent that takes a step of it that others can see (the steps `check`'s
text trace shows), and a race's two accesses and a deadlock's waiters are related locations. What the
tool could not do (an unreadable file, an instruction the simulator does not support, a bound) is a
tool execution notification, never a result about the code."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath
from typing import Any

from mbarrier.explore.run import TraceStep
from mbarrier.report.check import visible
from mbarrier.report.model import CheckReport, Finding, LintReport
from mbarrier.report.rules import help_of

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"
#: A codeFlow keeps the last this many visible steps of a schedule (a message says what was left out).
MAX_FLOW_STEPS = 1000

Trace = Callable[[Finding], Sequence[TraceStep]]


def artifact_uri(path: str) -> str:
    """A file as SARIF names it: a relative path stays relative (code scanning resolves it against the
    repository), an absolute one is a file: URI."""
    p = PurePath(path)
    if p.is_absolute():
        return Path(path).as_uri()
    return urllib.parse.quote(p.as_posix())


def _location(uri: str, line: int | None, column: int | None = None, snippet: str | None = None,
              message: str | None = None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
    if line is not None:
        region: dict[str, Any] = {"startLine": line}
        if column is not None:
            region["startColumn"] = column
        if snippet is not None:
            region["snippet"] = {"text": snippet}
        physical["region"] = region
    out: dict[str, Any] = {"physicalLocation": physical}
    if message is not None:
        out["message"] = {"text": message}
    return out


def _rules(ids: Sequence[str], levels: dict[str, str]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for rid in sorted(set(ids)):
        h = help_of(rid)
        cite = f" ({'PTX ISA ' if h.section[:1].isdigit() else ''}{h.section})" if h.section else ""
        rule: dict[str, Any] = {
            "id": rid, "name": h.name, "shortDescription": {"text": h.title},
            "fullDescription": {"text": h.text},
            "help": {"text": f"{h.text}{cite}", "markdown": f"**{h.title}**{cite}\n\n{h.text}"},
            "defaultConfiguration": {"level": levels.get(rid, "error")},
            "properties": {"tags": ["mbarrier", h.source]} | ({"section": h.section} if h.section else {}),
        }
        index[rid] = len(rules)
        rules.append(rule)
    return rules, index


def _log(tool_version: str, rules: list[dict[str, Any]], results: list[dict[str, Any]],
         notifications: list[dict[str, Any]], successful: bool) -> dict[str, Any]:
    driver: dict[str, Any] = {"name": "mbarrier", "version": tool_version, "semanticVersion": tool_version,
                              "rules": rules}
    invocation: dict[str, Any] = {"executionSuccessful": successful}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {"$schema": SCHEMA_URI, "version": VERSION,
            "runs": [{"tool": {"driver": driver}, "invocations": [invocation], "results": results,
                      "columnKind": "unicodeCodePoints"}]}


def _notification(text: str, level: str, uri: str | None = None, line: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"message": {"text": text}, "level": level}
    if uri is not None:
        out["locations"] = [_location(uri, line)]
    return out


# -- lint -------------------------------------------------------------------------------------------
def lint_sarif(report: LintReport) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    levels: dict[str, str] = {}
    ids = [d.rule for f in report.files for d in f.diagnostics]
    for f in report.files:
        if f.error is not None:
            notes.append(_notification(f.error, "error", artifact_uri(f.file)))
        for d in f.diagnostics:
            level = "warning" if d.severity == "warning" else "error"
            levels.setdefault(d.rule, level)
            results.append({"ruleId": d.rule, "level": level, "message": {"text": d.message},
                            "locations": [_location(artifact_uri(f.file), d.line, d.column)],
                            "properties": {"severity": d.severity}})
    rules, index = _rules(ids, levels)
    for r in results:
        r["ruleIndex"] = index[r["ruleId"]]
    return _log(report.tool.version, rules, results, notes, not notes)


# -- check ------------------------------------------------------------------------------------------
def _agent_flow_id(agent: str) -> str:
    return f"copy {agent}" if agent.startswith("c") else f"thread {agent}"


def code_flow(f: Finding, steps: Sequence[TraceStep], uri: str) -> dict[str, Any]:
    """The finding's schedule: a threadFlow per agent, its visible steps in execution order."""
    shown = [s for s in steps if visible(s)]
    cut = max(len(shown) - MAX_FLOW_STEPS, 0)
    shown = shown[cut:]
    flows: dict[str, list[dict[str, Any]]] = {}
    last = steps[-1].step if steps else -1
    for s in shown:
        text = s.site.text + "".join(f"; {e.barrier}: {e.before} -> {e.after}" for e in s.events)
        flows.setdefault(s.agent, []).append({
            "location": _location(uri, s.site.line, message=text), "executionOrder": s.step,
            "importance": "essential" if s.step == last else ("important" if s.events else "unimportant")})
    message = f"the shortest schedule found: {f.steps} steps ({len(shown)} shown: the steps others can see)"
    if cut:
        message += f"; the first {cut} such steps are left out"
    threads = [{"id": _agent_flow_id(agent), "locations": locs} for agent, locs in flows.items()]
    return {"message": {"text": message}, "threadFlows": threads}


def _related(f: Finding, uri: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, a in enumerate(f.accesses):
        which = "first" if i == 0 else "second"
        loc = _location(uri, a.line, message=f"{which} access: {a.operation} of {a.size} bytes at "
                        f"{a.address:#x} ({a.space}) by {a.agent}")
        out.append(loc | {"id": len(out)})
    for w in f.waiters:
        out.append(_location(uri, w.line, message=f"thread {w.thread} {w.reason}") | {"id": len(out)})
    return out


def check_sarif(report: CheckReport, trace: Trace | None = None) -> dict[str, Any]:
    """`trace(finding)`: the steps of the finding's schedule, replayed (none: no codeFlows)."""
    uri = artifact_uri(report.file)
    results = []
    for f in report.findings:
        head, _, rest = f.message.partition("\n")
        text = head + (f"\n{rest}" if rest else "")
        if f.missing_edge and "missing edge" not in text:
            text += f"\nmissing edge: {f.missing_edge}"
        result: dict[str, Any] = {
            "ruleId": f.rule, "level": "error", "kind": "fail", "message": {"text": text},
            "locations": [_location(uri, f.line, snippet=f.instruction)],
            "properties": {"kind": f.kind.value, "section": f.section, "schedule": f.schedule,
                           "agent": f.agent}}
        related = _related(f, uri)
        if related:
            result["relatedLocations"] = related
        if trace is not None:
            result["codeFlows"] = [code_flow(f, trace(f), uri)]
        results.append(result)
    notes = []
    u = report.unsupported
    if u is not None:
        notes.append(_notification(f"not checked beyond this instruction: {u.message} (the simulator's "
                                   "limit, not a finding about the kernel)", "error", uri, u.line))
    if report.covered:
        notes.append(_notification(f"not every interleaving was explored: {report.covered}", "warning"))
    rules, index = _rules([f.rule for f in report.findings], {})
    for r in results:
        r["ruleIndex"] = index[r["ruleId"]]
    return _log(report.tool.version, rules, results, notes, u is None)
