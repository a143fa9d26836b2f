"""The protocol corpus: correct protocols verify; each planted bug is found with the right kind and rule,
and its schedule replays to the same outcome under `mbarrier run`'s replay scheduler."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from mbarrier import sim
from mbarrier.cli.run import parse_dims
from mbarrier.explore import Replay, run
from mbarrier.explore.check import Options, check

CORPUS = Path(sim.__file__).parent.parent / "examples" / "corpus"
_EXPECT = re.compile(r"^// check: (?P<args>.*?) => (?P<verdict>\w+)(?: (?P<kind>\w+) (?P<rule>[\w-]+))?$",
                     re.M)


def _case(path: Path) -> tuple[dict[str, object], str, str | None, str | None]:
    m = _EXPECT.search(path.read_text())
    assert m is not None, f"{path.name} has no `// check:` line"
    argv = shlex.split(m["args"])
    opts = dict(zip(argv[::2], argv[1::2], strict=True))
    launch = {"grid": parse_dims(opts["--grid"], "grid"), "block": parse_dims(opts["--block"], "block"),
              "cluster": parse_dims(opts.get("--cluster"), "cluster")}
    return launch, m["verdict"], m["kind"], m["rule"]


FILES = sorted(CORPUS.glob("*.ptx"))


def test_corpus_covers_every_planted_bug_of_the_issue() -> None:
    names = {p.stem for p in FILES}
    assert {"ring", "handoff", "exit_drop"} <= names  # correct protocols
    assert {"ring_missing_arrive", "ring_wrong_parity", "ring_count_high", "ring_count_low",
            "ring_tx_mismatch", "ring_extra_arrive", "stale_token", "nocomplete", "exit_no_drop",
            "remote_wait", "ring_refill_early"} <= names


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_corpus_kernel(path: Path) -> None:
    launch, verdict, kind, rule = _case(path)
    module = sim.load(path)
    result = check(module, **launch, options=Options(max_states=50_000))  # type: ignore[arg-type]
    assert result.verdict == verdict, [f.message for f in result.findings]
    if verdict == "verified":
        assert result.stats.states > 1 and not result.findings
        return
    found = [f for f in result.findings if f.kind == kind and f.rule == rule]
    assert found, [(f.kind, f.rule) for f in result.findings]
    f = found[0]
    # The schedule replays to the same end: stuck for a deadlock, the same violation otherwise.
    replay = run(sim.launch(module, **launch), Replay(f.schedule))  # type: ignore[arg-type]
    if kind == "deadlock":
        assert replay.outcome == "stuck"
        stuck_lines = {s.site.line for s in replay.stuck}
        assert {w.line for w in f.waiters} <= stuck_lines
    else:
        assert replay.outcome == "violation" and replay.rule == rule
        assert replay.steps == len(f.aids)
