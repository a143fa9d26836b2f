"""Threads in words, alike ones together: "thread 5", "threads 0-31 (warp 0)", "threads 33-63 (warp 1,
lanes 1-31)", "threads 128-383 (warps 4-11)", "threads 64-95 (CTA 1, warp 0)". A launch numbers its threads
CTA by CTA, each CTA's in the order of its linear thread index (`sim.launch`), and a warp is 32 threads
of one CTA in that order (PTX ISA 2.2.1)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mbarrier.sim.machine import Machine

WARP = 32


def ranges(ids: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted ids as runs of consecutive ones, (first, last)."""
    out: list[tuple[int, int]] = []
    for i in sorted(set(ids)):
        if out and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


@dataclass(frozen=True)
class Layout:
    """How a launch's thread ids fall into CTAs and warps: `block` threads per CTA, the CTAs by name."""

    block: int
    ctas: tuple[str, ...]

    @staticmethod
    def of(m: Machine) -> Layout:
        return Layout(len(m.ctas[0].threads) if m.ctas else len(m.threads), tuple(c.name for c in m.ctas))

    def threads(self, ids: Iterable[int]) -> str:
        """The threads in words, runs of ids with the warps they make up."""
        runs = ranges(ids)
        if not runs:
            return "no thread"
        if len(runs) == 1 and runs[0][0] == runs[0][1]:
            return f"thread {runs[0][0]}"
        return "threads " + ", ".join(_span(a, b) + self._where(a, b) for a, b in runs)

    def _where(self, first: int, last: int) -> str:
        """The warps (and CTA) of one run of ids, in words; "" where the run crosses CTAs."""
        if first == last or self.block <= 0:
            return ""
        cta, lo = divmod(first, self.block)
        cta_last, hi = divmod(last, self.block)
        if cta != cta_last:
            return ""
        where = [f"CTA {self.ctas[cta]}"] if len(self.ctas) > 1 and cta < len(self.ctas) else []
        if self.block <= WARP:  # a CTA of one warp: its warp says nothing
            return f" ({where[0]})" if where else ""
        w0, w1 = lo // WARP, hi // WARP
        whole = lo % WARP == 0 and (hi % WARP == WARP - 1 or hi == self.block - 1)
        if w0 == w1:
            where.append(f"warp {w0}" + ("" if whole else f", lanes {_span(lo % WARP, hi % WARP)}"))
        elif whole:
            where.append(f"warps {w0}-{w1}")
        return f" ({', '.join(where)})" if where else ""


def plural(ids: Sequence[int], one: str, many: str) -> str:
    """`one` or `many` as the threads are one or more (the verb that follows them)."""
    return one if len(set(ids)) == 1 else many
