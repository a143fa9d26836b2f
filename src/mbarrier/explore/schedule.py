"""The schedule string: which agent ran at each step, compact and printable.

Runs of steps are comma-separated; each is an agent name with an optional `*count`: a thread by its
global index (`17`), an asynchronous copy engine by `c` and its number in issue order (`c0`).
Example: `0*12,1*12,c0,1*3`. The same string replays the same run, bit for bit.

A schedule means something only on the launch it was recorded on (it names agents by number), so the
strings the command line writes carry a `Fingerprint` of that launch before a `;`:
`v1 module=3fa2c1d0 kernel=ring grid=1,1,1 block=3,1,1 cluster=1,1,1 args=9e0c4b1a; 0*12,1*12,c0,1*3`.
A string without one (as written before fingerprints) is still read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, fields

_RUN = re.compile(r"(c?)(\d+)(?:\*(\d+))?")


class ScheduleError(ValueError):
    """A malformed schedule string, or one that names an agent that cannot run at that step."""


FORMAT = "v1"


@dataclass(frozen=True)
class Fingerprint:
    """The launch a schedule was recorded on: a digest of the module's text, the kernel, the grid, block
    and cluster shapes (X,Y,Z) and a digest of the kernel's arguments."""

    module: str
    kernel: str
    grid: str
    block: str
    cluster: str
    args: str

    def __str__(self) -> str:
        return " ".join([FORMAT] + [f"{f.name}={getattr(self, f.name)}" for f in fields(self)])

    @classmethod
    def parse(cls, header: str) -> Fingerprint:
        words = header.split()
        if not words or words[0] != FORMAT:
            raise ScheduleError(f"the schedule's header {header.strip()!r} is not of format {FORMAT} "
                                f"({FORMAT} module=M kernel=K grid=G block=B cluster=C args=A; RUNS)")
        pairs = [w.partition("=")[::2] for w in words[1:]]
        items = dict(pairs)
        names = [f.name for f in fields(cls)]
        if sorted(k for k, _ in pairs) != sorted(names) or not all(items.values()):
            raise ScheduleError(f"the schedule's header {header.strip()!r} must name each of "
                                f"{', '.join(names)} once")
        return cls(**items)

    def differences(self, here: Fingerprint) -> list[str]:
        """What differs between the launch this fingerprint was recorded on and `here`, in words."""
        out = []
        for f in fields(self):
            was, now = getattr(self, f.name), getattr(here, f.name)
            if was == now:
                continue
            if f.name == "module":
                out.append(f"the module's text (digest {was}; this module's is {now})")
            elif f.name == "args":
                out.append(f"the kernel's arguments, --arg and --dynamic-shared (digest {was}; this "
                           f"launch's is {now})")
            else:
                out.append(f"{f.name} {was} (this launch: {now})")
        return out


def split(text: str) -> tuple[Fingerprint | None, str]:
    """The fingerprint of a schedule string (None when it has none) and its runs."""
    header, sep, body = text.partition(";")
    if not sep:
        return None, text
    return Fingerprint.parse(header), body


def stamp(fingerprint: Fingerprint, runs: str) -> str:
    """The schedule string with its fingerprint."""
    return f"{fingerprint}; {runs}"


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
    """The agent id of each step (a fingerprint, if any, is not checked here: see `split`)."""
    text = split(text)[1].strip()
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
