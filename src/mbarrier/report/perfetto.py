"""A timeline as Chrome trace-event JSON (the JSON trace format Perfetto, ui.perfetto.dev and
chrome://tracing open): one microsecond per step.

* a process per CTA, with a track per thread: a slice per step others can see (named by its
  instruction, the line and the barrier changes in its args), a slice per wait on an mbarrier from its
  first failed test to the test that got through, and for a thread still waiting at the end a `STUCK`
  slice to the end of the trace, its reason in the args;
* a process `copy engines` with a track per copy: `in flight` from the issue to the landing;
* each mbarrier a counter track in its CTA's process (`NAME phase`, `NAME pending`, `NAME tx`);
* flow arrows from the step that completed a phase (an arrive, a copy landing) to each wait it released;
* a violation or race: the failing step's slice named after it, with the message.
"""

from __future__ import annotations

from typing import Any

from mbarrier.report.timeline import Timeline

COPIES_PID = 0   # the copy engines' process; CTA i is process i + 1


def _pid(cta: int) -> int:
    return cta + 1


def _name(text: str) -> str:
    """A slice's name: the instruction's opcode with its qualifiers."""
    words = [w for w in text.replace("{", " ").split() if not w.startswith("@")]
    return words[0].rstrip(";") if words else text


def _meta(kind: str, pid: int, tid: int | None, **args: object) -> dict[str, Any]:
    event: dict[str, Any] = {"ph": "M", "name": kind, "pid": pid, "args": args}
    if tid is not None:
        event["tid"] = tid
    return event


def _slice(name: str, cat: str, pid: int, tid: int, start: int, end: int, **args: object) -> dict[str, Any]:
    return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": start,
            "dur": max(end - start, 1), "args": args}


def trace_events(tl: Timeline, title: str = "") -> dict[str, Any]:
    """The trace of a timeline (`title`: what it shows, in the trace's metadata)."""
    events: list[dict[str, Any]] = []
    cta_of = {aid: cta for aid, _, cta in tl.threads}
    for cta in range(tl.ctas):
        events.append(_meta("process_name", _pid(cta), None, name=f"CTA {cta}"))
        events.append(_meta("process_sort_index", _pid(cta), None, sort_index=cta))
    for aid, name, cta in tl.threads:
        events.append(_meta("thread_name", _pid(cta), aid, name=name))
        events.append(_meta("thread_sort_index", _pid(cta), aid, sort_index=aid))
    if tl.copies:
        events.append(_meta("process_name", COPIES_PID, None, name="copy engines"))
        events.append(_meta("process_sort_index", COPIES_PID, None, sort_index=tl.ctas))
    copy_of = {c.aid: c for c in tl.copies}
    for c in tl.copies:
        events.append(_meta("thread_name", COPIES_PID, c.aid,
                            name=f"c{c.number} {c.kind} (thread {c.thread}, line {c.line})"))
        end = (c.landed + 1) if c.landed is not None else tl.end
        name = "in flight" if c.landed is not None else "in flight (never landed)"
        events.append(_slice(name, "copy", COPIES_PID, c.aid, c.issued, end, line=c.line,
                             issued_by=f"thread {c.thread}"))

    def track(agent: int) -> tuple[int, int]:
        return (COPIES_PID, agent) if agent in copy_of else (_pid(cta_of[agent]), agent)

    failed = tl.failure[0] if tl.failure else None
    for s in tl.steps:
        pid, tid = track(s.agent)
        name = _name(s.text)
        args: dict[str, Any] = {"step": s.step, "line": s.line, "instruction": s.text}
        if s.barriers:
            args["barriers changed"] = ", ".join(s.barriers)
        if s.step == failed and tl.failure is not None:
            name = f"{tl.failure[2].upper()}: {name}"
            args["message"] = tl.failure[3]
        events.append({"ph": "X", "name": name, "cat": "step", "pid": pid, "tid": tid, "ts": s.step, "dur": 1,
                       "args": args})
    flow = 0
    for w in tl.waits:
        pid = _pid(cta_of[w.thread])
        if w.end is None:
            events.append({"ph": "X", "name": f"STUCK: waits on {w.name}", "cat": "stuck", "pid": pid,
                           "tid": w.thread, "ts": w.start, "dur": max(tl.end - w.start, 1),
                           "args": {"reason": w.reason}})
            continue
        events.append({"ph": "X", "name": f"wait on {w.name}", "cat": "wait", "pid": pid, "tid": w.thread,
                       "ts": w.start, "dur": w.end + 1 - w.start, "args": {"barrier": w.name}})
        if w.released_by is not None:
            flow += 1
            src = next((s for s in tl.steps if s.step == w.released_by), None)
            if src is None:
                continue
            spid, stid = track(src.agent)
            events.append({"ph": "s", "id": flow, "name": f"completes {w.name}", "cat": "release",
                           "pid": spid, "tid": stid, "ts": src.step})
            events.append({"ph": "f", "bp": "e", "id": flow, "name": f"completes {w.name}", "cat": "release",
                           "pid": pid, "tid": w.thread, "ts": w.end})
    for thread, since, reason in tl.stuck:
        events.append({"ph": "X", "name": "STUCK", "cat": "stuck", "pid": _pid(cta_of[thread]), "tid": thread,
                       "ts": since, "dur": max(tl.end - since, 1), "args": {"reason": reason}})
    for k in tl.counts:
        events.append({"ph": "C", "name": k.name, "pid": _pid(k.barrier[0]), "ts": k.step,
                       "args": {"phase": k.phase, "pending": k.pending, "tx": k.tx}})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"tool": "mbarrier", "title": title, "time unit": "1 us = 1 step"}}
