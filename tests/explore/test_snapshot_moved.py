"""A snapshot's threads that did not move (`snapshot.save`'s `moved`): a thread that neither stepped nor was
released by the transition kept its registers, so its entry takes its register chunks from the parent's
whole; the issuer of a copy in flight is such a thread when the copy lands (its copies' statuses are
part of its entry, PTX ISA 9.7.9.25.3.1: cp.async completes asynchronously). At every transition of a
check the entries are the ones a save that compares every register gives, and the issuer-only threads'
chunks are the parent's own objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mbarrier.explore import snapshot
from mbarrier.explore.check import Options, check

from .helpers import load
from .test_copy_seed_futures import _copies


@pytest.mark.parametrize("early", [False, True])
def test_threads_that_did_not_move_keep_their_register_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              early: bool) -> None:
    original = snapshot.save
    seen = {"kept": 0}

    def both(m: Any, tokens: Any, prev: Any = None, dirty: Any = None, moved: Any = None) -> Any:
        fast = original(m, tokens, prev, dirty, moved)
        if prev is None or dirty is None or moved is None:
            return fast
        full = original(m, tokens, prev, dirty)
        got, want, was = (snapshot.thread_states(s) for s in (fast, full, prev))
        assert [e[0] for e in got] == [e[0] for e in want]
        assert [e[9] for e in got] == [e[9] for e in want]
        for aid in dirty - moved:
            assert got[aid][0][1] is was[aid][0][1]
            seen["kept"] += 1
        return fast

    monkeypatch.setattr(snapshot, "save", both)
    r = check(load(tmp_path, _copies(3, early)), grid=1, block=2,
        options=Options(runs=False, walks=0, max_findings=100))
    assert r.verdict == ("finding" if early else "verified")
    assert seen["kept"] > 0
