"""A small static timeline of one run or finding as SVG, for docs and bug reports: a lane per thread
and per copy engine, a tick per step others can see (mbarrier operations dark, memory light), waits as
bars from the first failed test to the release, a wait still stuck at the end in red to the right
edge, copies in flight, arrows from the step that completed a phase to the wait it released, and the
failing step of a violation or race marked."""

from __future__ import annotations

from html import escape

from mbarrier.report.timeline import Timeline

MAX_LANES = 24          # more threads than this: the lanes of the threads that do most are kept
LANE = 22
LEFT = 150
WIDTH = 820
TOP = 34

COLORS = {"step": "#4a5568", "barrier": "#2b6cb0", "wait": "#cbd5e0", "stuck": "#e53e3e",
          "copy": "#9ae6b4", "arrow": "#2f855a", "fail": "#c53030", "text": "#1a202c"}


def _keep(tl: Timeline, threads: list[int], copies: list[int], busy: dict[int, int],
          involved: set[int]) -> tuple[list[int], list[int], int]:
    """At most MAX_LANES lanes: the threads a finding involves first, then the busiest."""
    if len(threads) + len(copies) <= MAX_LANES:
        return threads, copies, 0
    ranked = sorted(threads, key=lambda a: (a not in involved, -busy.get(a, 0)))
    keep = set(ranked[:max(MAX_LANES - len(copies), 4)])
    kept = [a for a in threads if a in keep]
    return kept, copies[:MAX_LANES - len(kept)], len(threads) - len(kept)


def timeline_svg(tl: Timeline, title: str) -> str:
    busy: dict[int, int] = {}
    for s in tl.steps:
        busy[s.agent] = busy.get(s.agent, 0) + 1
    involved = {w.thread for w in tl.waits} | {t for t, _, _ in tl.stuck}
    if tl.failure is not None:
        involved.add(tl.failure[1])
    threads = [aid for aid, _, _ in tl.threads if aid in busy or aid in involved]
    threads, copies, left_out = _keep(tl, threads, [c.aid for c in tl.copies], busy, involved)
    lanes = {aid: i for i, aid in enumerate(threads + copies)}
    names = {aid: f"thread {aid}" for aid, _, _ in tl.threads}
    names.update({c.aid: f"c{c.number} {c.kind}" for c in tl.copies})
    end = max(tl.end, 1)
    scale = (WIDTH - LEFT - 10) / end

    def x(step: float) -> float:
        return LEFT + step * scale

    def y(aid: int) -> float:
        return TOP + lanes[aid] * LANE

    def bar(aid: int, start: int, stop: int, fill: str, tip: str, top: int = 4, height: int = 12,
            least: float = 2) -> str:
        w = max((stop - start) * scale, least)
        return (f'<rect x="{x(start):.1f}" y="{y(aid) + top}" width="{w:.1f}" height="{height}" '
                f'fill="{fill}"><title>{escape(tip)}</title></rect>')

    height = TOP + len(lanes) * LANE + 44
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="11">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto-start-reverse">'
           f'<path d="M0,0 L10,5 L0,10 z" fill="{COLORS["arrow"]}"/></marker></defs>',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="8" y="16" font-size="12" fill="{COLORS["text"]}">{escape(title)}</text>']
    for aid, lane in lanes.items():
        yy = TOP + lane * LANE
        out.append(f'<text x="8" y="{yy + 14}" fill="{COLORS["text"]}">{escape(names[aid])}</text>')
        out.append(f'<line x1="{LEFT}" y1="{yy + 10}" x2="{WIDTH - 10}" y2="{yy + 10}" stroke="#edf2f7"/>')
    for c in tl.copies:
        if c.aid in lanes:
            stop = c.landed + 1 if c.landed is not None else end
            out.append(bar(c.aid, c.issued, stop, COLORS["copy"], f"c{c.number} in flight"))
    for w in tl.waits:
        if w.thread in lanes:
            if w.end is None:
                out.append(bar(w.thread, w.start, end, COLORS["stuck"], f"STUCK: {w.reason}"))
            else:
                out.append(bar(w.thread, w.start, w.end + 1, COLORS["wait"], f"waits on {w.name}"))
    for thread, since, reason in tl.stuck:
        if thread in lanes:
            out.append(bar(thread, since, end, COLORS["stuck"], f"STUCK: {reason}"))
    for s in tl.steps:
        if s.agent in lanes:
            color = COLORS["barrier"] if s.barriers else COLORS["step"]
            tip = f"step {s.step}, line {s.line}: {s.text}"
            out.append(bar(s.agent, s.step, s.step + 1, color, tip, 2, 16, 1.5))
    for w in tl.waits:
        if w.released_by is None or w.end is None or w.thread not in lanes:
            continue
        src = next((s for s in tl.steps if s.step == w.released_by), None)
        if src is None or src.agent not in lanes:
            continue
        out.append(f'<line x1="{x(src.step + 0.5):.1f}" y1="{y(src.agent) + 10}" '
                   f'x2="{x(w.end + 0.5):.1f}" y2="{y(w.thread) + 10}" stroke="{COLORS["arrow"]}" '
                   'stroke-width="1.2" marker-end="url(#arrow)"/>')
    if tl.failure is not None and tl.failure[1] in lanes:
        step, agent, kind, message = tl.failure
        out.append(f'<circle cx="{x(step + 0.5):.1f}" cy="{y(agent) + 10}" r="6" fill="none" '
                   f'stroke="{COLORS["fail"]}" stroke-width="2">'
                   f'<title>{escape(kind)}: {escape(message)}</title></circle>')
    legend = [f"steps 0-{end - 1}; dark: a step others can see, blue: it changed an mbarrier, grey: a wait, "
              "red: stuck to the end,",
              "green: a copy in flight, arrow: from the step that completed a phase to the wait it released"
              + (f"; {left_out} more threads not shown" if left_out else "")]
    for i, text in enumerate(legend):
        out.append(f'<text x="8" y="{height - 22 + 12 * i}" font-size="9" fill="#4a5568">'
                   f'{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
