"""Hangs that are not deadlocks: livelocks, found in the explored graph once the search has seen all of it.

A kernel can hang with some thread still moving: a loop that goes through different states without end (a
register toggled on every try of a flag nobody sets, two threads handing a value back and forth). No state
of it is a deadlock (something can always move), and the search, which remembers states, sees the loop as
a cycle and goes on. So the search records every transition it fires as an edge between states (`Graph`;
a state is named by the BFS node it was first reached by) and, after it explored every state, looks for a
*closed region*: a strongly connected set of states with a cycle that no transition leaves and where no
transition raises a finding. Every thread alive there stays alive forever, whatever the schedule.

A region closed in the reduced graph need not be closed in the full one: a sleep set (`explore.sleep`)
leaves out moves explored from another state. So each region is settled (`settle`) by a search of its own
from one of its states, with stubborn sets only (no sleep sets): stubborn sets keep, from every state they
expand, every state where nothing can move that the full graph reaches from it (Valmari's deadlock
preservation theorem holds state by state). If that search reaches no such state, every thread exiting
included, no schedule from the region ends: a livelock, reported with the schedule that reaches the region.
If it does reach one, the region was the sleep sets' doing, and a deadlock there is the main search's
finding already (it keeps every deadlock reachable from the first state).

The sleep sets can also leave a state of a livelock with no edge at all: a *dead end*, whose every move
slept (explored from another state). Where no closed region is found, each dead end gets a random run;
one that does not end within its bound is settled like a region. (docs/checker.md, "Livelocks", says why
this misses none.)
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mbarrier.explore import snapshot
from mbarrier.sim.machine import Copy, Thread

CHECK_EVERY = 4096  # Tarjan's steps between two looks at the check's bounds


class Graph:
    """The explored graph's edges (BFS nodes of first reach), and the states one of whose transitions
    raised a finding (a path out of any region)."""

    def __init__(self) -> None:
        self.src = array("i")
        self.dst = array("i")
        self.escapes: set[int] = set()
        self.back = 0  # edges to a state no deeper than their source: breadth first, only they close cycles

    def edge(self, u: int, v: int, back: bool) -> None:
        self.src.append(u)
        self.dst.append(v)
        self.back += back

    def escape(self, u: int) -> None:
        self.escapes.add(u)

    def closed_regions(self, nodes: int, check: Callable[[], None]) -> list[list[int]]:
        """The regions (lists of nodes) with a cycle that no edge leaves and no state of which escapes.
        `nodes`: the number of BFS nodes; `check`: the bounds, looked at as the work goes."""
        if not self.back:
            return []
        start, adj = _adjacency(nodes, self.src, self.dst)
        regions = []
        comp = array("i", [-1]) * nodes
        for ci, members in enumerate(_components(nodes, start, adj, check)):
            for v in members:
                comp[v] = ci
            closed, cyclic = True, len(members) > 1
            for v in members:
                if v in self.escapes:
                    closed = False
                    break
                for i in range(start[v], start[v + 1]):
                    w = adj[i]
                    if w == v:
                        cyclic = True
                    elif comp[w] != ci:
                        closed = False
                        break
                if not closed:
                    break
            if closed and cyclic:
                regions.append(members)
        return regions


def _adjacency(nodes: int, src: array[int], dst: array[int]) -> tuple[array[int], array[int]]:
    """Compressed rows: node v's successors are adj[start[v]:start[v + 1]]."""
    start = array("i", [0]) * (nodes + 1)
    for u in src:
        start[u + 1] += 1
    for v in range(nodes):
        start[v + 1] += start[v]
    fill = array("i", start)
    adj = array("i", [0]) * len(src)
    for u, v in zip(src, dst, strict=True):
        adj[fill[u]] = v
        fill[u] += 1
    return start, adj


def _components(nodes: int, start: array[int], adj: array[int],
                check: Callable[[], None]) -> list[list[int]]:
    """Tarjan's strongly connected components, iteratively; nodes with no edge out are left out (a
    component of one, without a cycle)."""
    index = array("i", [-1]) * nodes
    low = array("i", [0]) * nodes
    on_stack = bytearray(nodes)
    stack: list[int] = []
    out: list[list[int]] = []
    counter = steps = 0
    for root in range(nodes):
        if index[root] >= 0 or start[root] == start[root + 1]:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        work = [(root, start[root])]
        while work:
            steps += 1
            if steps % CHECK_EVERY == 0:
                check()
            v, i = work[-1]
            if i < start[v + 1]:
                work[-1] = (v, i + 1)
                w = adj[i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = 1
                    work.append((w, start[w]))
                elif on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
                continue
            work.pop()
            if work and low[v] < low[work[-1][0]]:
                low[work[-1][0]] = low[v]
            if low[v] == index[v]:
                members = []
                while True:
                    w = stack.pop()
                    on_stack[w] = 0
                    members.append(w)
                    if w == v:
                        break
                out.append(members)
    return out


class Stepper(Protocol):
    """What settling a region needs of the search (`explore.check.Explorer`)."""

    nthreads: int

    def reduced_moves(self, snap: snapshot.Snapshot) -> list[list[Thread | Copy]] | None:
        """A stubborn set's moves at the state (None: nothing can move there)."""

    def move(self, snap: snapshot.Snapshot, group: list[Thread | Copy]
             ) -> tuple[snapshot.Snapshot, list[int]] | None:
        """One move from the state: the state it reaches and the agents that stepped (None: it raised a
        finding)."""

    def state_key(self, snap: snapshot.Snapshot) -> int: ...


@dataclass
class Region:
    """A livelock settled: its first state, the states its own search found and the threads that kept
    stepping there."""

    start: snapshot.Snapshot
    states: int
    looping: list[int]


def livelocks(s: Stepper, graph: Graph, dead_ends: list[int], nodes: int,
              state_at: Callable[[int], snapshot.Snapshot], ends_at: Callable[[int], bool],
              check: Callable[[], None]) -> list[tuple[int, Region]]:
    """The livelocks of a complete search's graph, each as (the node of its first state, its region):
    the closed regions settled (the first one found is enough); where there is none, the dead ends (states
    whose every move slept and that no re-expansion left by an edge), each one from which a random run
    ends (`ends_at`) or that is settled. `nodes`: the number of BFS nodes; `state_at`: a node's state,
    replayed."""
    for members in graph.closed_regions(nodes, check):
        first = min(members)  # reached first: its schedule is a shortest one into the region
        region = settle(s, state_at(first))
        if region is not None:
            return [(first, region)]
    left = set(graph.src) if dead_ends else set()
    for n in dead_ends:
        if n in left:
            continue
        left.add(n)
        if not ends_at(n):
            region = settle(s, state_at(n))
            if region is not None:
                return [(n, region)]
    return []


def settle(s: Stepper, start: snapshot.Snapshot, limit: int | None = None) -> Region | None:
    """Whether no schedule from `start` ends (`Region`), by a search with stubborn sets only; None when
    one reaches a state where nothing can move (every thread exited, or a deadlock) or a finding, or
    (not settled) when it finds more than `limit` states."""
    seen = {s.state_key(start)}
    queue = deque([start])
    looping: set[int] = set()
    while queue:
        snap = queue.popleft()
        groups = s.reduced_moves(snap)
        if groups is None:
            return None
        for g in groups:
            moved = s.move(snap, g)
            if moved is None:
                return None
            new, aids = moved
            looping.update(a for a in aids if a < s.nthreads)
            h = s.state_key(new)
            if h not in seen:
                if limit is not None and len(seen) >= limit:
                    return None
                seen.add(h)
                queue.append(new)
    return Region(start, len(seen), sorted(looping))
