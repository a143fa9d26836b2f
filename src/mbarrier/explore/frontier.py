"""The search's frontier: the states found and not yet expanded, in breadth-first order, and what the
search remembers of every state it has seen: its depth (by its hash), its node in the BFS tree (the
parent and the agents of the edge, from which a finding's schedule is rebuilt), and the sleep sets
(`explore.sleep`) still waiting for a queued state or left by an expanded one."""

from __future__ import annotations

from array import array
from collections import deque

from mbarrier.explore import snapshot
from mbarrier.explore.sleep import EMPTY, Sleep

# A queued expansion: (snapshot, depth, BFS node, state hash, None or a re-expansion's (woken, sleep set)).
Entry = tuple[snapshot.Snapshot, int, int, int, tuple[Sleep, Sleep] | None]


class Frontier:
    """Breadth first: so each finding comes with a shortest schedule of the explored graph."""

    def __init__(self, root: snapshot.Snapshot, root_hash: int, root_aids: list[int]) -> None:
        # BFS nodes: (parent node, aids of the edge); paths are rebuilt from parents. A state has the node
        # it was first reached by (`nodes`, by its hash); a re-expansion adds one more, of the same state.
        self.parents: list[tuple[int, tuple[int, ...]]] = [(-1, tuple(root_aids))]
        self.nodes: dict[int, int] = {root_hash: 0}
        self.depth_at = array("i", [0])  # each node's depth
        self.queue: deque[Entry] = deque([(root, 0, 0, root_hash, None)])
        # Sleep sets, kept only when not empty: a queued state's pending one, an expanded state's stored one.
        self.pending: dict[int, Sleep] = {}
        self.stored: dict[int, Sleep] = {}
        # One object per distinct sleep set: thousands of states keep a few hundred sets between them.
        self._sets: dict[Sleep, Sleep] = {}
        self.forgotten = 0  # queued states dropped by `forget`, still counted as unexplored

    def _one(self, sleep: Sleep) -> Sleep:
        return self._sets.setdefault(sleep, sleep)

    def __len__(self) -> int:
        return len(self.queue) + self.forgotten

    def forget(self) -> None:
        """Drop the queued states' snapshots (the search has stopped out of memory): the report that
        follows needs room, and only their number. The explored graph's paths stay for the findings."""
        self.forgotten += len(self.queue)
        self.queue.clear()
        self.pending.clear()

    def pop(self) -> Entry:
        return self.queue.popleft()

    def put_back(self, entry: Entry, forget: bool = False) -> None:
        """An entry popped but not expanded (the search stops): it counts as left unexplored. `forget`: the
        search stopped out of memory, and the queue's snapshots go too (`forget`)."""
        self.queue.appendleft(entry)
        if forget:
            self.forget()

    def path(self, node: int) -> list[int]:
        """The agents that step, in order, from the root to a node: its schedule."""
        parts: list[tuple[int, ...]] = []
        while node >= 0:
            parent, aids = self.parents[node]
            parts.append(aids)
            node = parent
        return [a for part in reversed(parts) for a in part]

    def depth_of(self, h: int) -> int | None:
        """The depth at which the state of this hash was first reached (None: never)."""
        n = self.nodes.get(h)
        return None if n is None else self.depth_at[n]

    def node_of(self, h: int) -> int:
        """The node by which a state seen was first reached: the state's name in `explore.livelock`."""
        return self.nodes[h]

    def _node(self, parent: int, aids: list[int], depth: int) -> int:
        self.parents.append((parent, tuple(aids)))
        self.depth_at.append(depth)
        return len(self.parents) - 1

    def add(self, snap: snapshot.Snapshot, h: int, depth: int, parent: int, aids: list[int],
            sleep: Sleep) -> None:
        """A new state, reached from node `parent` by the steps of `aids`, with its sleep set."""
        node = self._node(parent, aids, depth)
        self.nodes[h] = node
        self.queue.append((snap, depth, node, h, None))
        if sleep:
            self.pending[h] = self._one(sleep)

    def sleep_of(self, h: int) -> Sleep:
        """The sleep set a queued state is expanded with (taken: it is expanded now)."""
        return self.pending.pop(h, EMPTY)

    def expanded_with(self, h: int, sleep: Sleep) -> None:
        """What an expanded state left asleep: a path reaching it again may need some of it."""
        if sleep:
            self.stored[h] = self._one(sleep)

    def reached_again(self, snap: snapshot.Snapshot, h: int, depth: int, parent: int, aids: list[int],
                      sleep: Sleep) -> None:
        """A state seen before, reached again with sleep set `sleep` (Godefroid's rule): a queued one is
        expanded with the intersection of the two; an expanded one is expanded again for the agents it
        left asleep that this path does not."""
        narrowed = self.pending.get(h)
        if narrowed is not None:
            narrowed &= sleep
            if narrowed:
                self.pending[h] = self._one(narrowed)
            else:
                del self.pending[h]
        elif h in self.stored:
            wake = self.stored[h] - sleep
            if wake:
                rest = self.stored[h] & sleep
                if rest:
                    self.stored[h] = self._one(rest)
                else:
                    del self.stored[h]
                self.queue.append((snap, depth, self._node(parent, aids, depth), h, (wake, sleep)))
