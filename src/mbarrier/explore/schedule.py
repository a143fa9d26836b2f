"""The schedule string: which agent ran at each step, compact and printable.

Runs of steps are comma-separated; each is an agent name with an optional `*count`: a thread by its
global index (`17`), an asynchronous copy engine by `c` and its number in issue order (`c0`).
Example: `0*12,1*12,c0,1*3`. The same string replays the same run, bit for bit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_RUN = re.compile(r"(c?)(\d+)(?:\*(\d+))?")


class ScheduleError(ValueError):
    """A malformed schedule string, or one that names an agent that cannot run at that step."""


def agent_name(aid: int, nthreads: int) -> str:
    return str(aid) if aid < nthreads else f"c{aid - nthreads}"


def encode(runs: list[int], nthreads: int) -> str:
    """The string of flat (agent id, steps) pairs; adjacent runs of the same agent merge."""
    parts: list[str] = []
    prev, count = -1, 0
    for i in range(0, len(runs), 2):
        aid, n = runs[i], runs[i + 1]
        if n == 0:
            continue
        if aid == prev:
            count += n
            continue
        if count:
            parts.append(_run(prev, count, nthreads))
        prev, count = aid, n
    if count:
        parts.append(_run(prev, count, nthreads))
    return ",".join(parts)


def _run(aid: int, count: int, nthreads: int) -> str:
    name = agent_name(aid, nthreads)
    return name if count == 1 else f"{name}*{count}"


def decode(text: str, nthreads: int) -> Iterator[int]:
    """The agent id of each step."""
    text = text.strip()
    if not text:
        return
    for i, part in enumerate(text.split(",")):
        match = _RUN.fullmatch(part.strip())
        if match is None:
            raise ScheduleError(f"schedule item {i + 1} ({part!r}) is not `N`, `N*COUNT`, `cN` or `cN*COUNT`")
        copy, num, count = match.group(1), int(match.group(2)), int(match.group(3) or 1)
        if not copy and num >= nthreads:
            raise ScheduleError(f"schedule item {i + 1} names thread {num}, but the launch has {nthreads}")
        aid = num + nthreads if copy else num
        for _ in range(count):
            yield aid
