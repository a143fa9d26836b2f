"""`mbarrier conform`: the model against the GPU, case by case.

Without --gpu, the model replays the recorded observations (shipped in mbarrier/hw/data/records/); with --gpu,
the litmus suite runs on this machine's GPU first (needs the `gpu` extra, nvcc and an sm_90 GPU).
Exit 0 when nothing disagrees, 1 otherwise, 2 when the records, the extra or the GPU are missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from mbarrier.cli import EXIT_CLEAN, EXIT_FINDINGS, UsageError, options
from mbarrier.hw import records
from mbarrier.hw.litmus import case_from_dict
from mbarrier.hw.records import Recorded
from mbarrier.hw.replay import AGREE, DISAGREE, UNDEFINED_FLAGGED, Verdict, compare


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("conform", help="compare the model with recorded (or live, --gpu) GPU observations")
    p.add_argument("--gpu", action="store_true", help="run the litmus suite on this machine's GPU first")
    p.add_argument(
        "--json", action="store_true", help='print {"cases", "agree", "undefined_flagged", "disagree"}'
    )
    p.add_argument(
        "--records", type=Path, metavar="DIR",
        help="the records to replay (default: the H100 runs shipped with the package)",
    )
    p.add_argument(
        "--save", type=options.output_file, metavar="FILE",
        help="with --gpu: also write the live run's record here",
    )
    p.set_defaults(handler=main)


def _live(save: Path | None) -> tuple[list[Recorded], str]:
    from mbarrier.hw import runner  # imports cupy lazily

    try:
        record = runner.run(None, log=sys.stderr)
    except runner.GpuUnavailable as e:
        raise UsageError(f"cannot run on a GPU: {e}") from None
    if save is not None:
        options.write_output(save, json.dumps(record, indent=1) + "\n", "--save")
    header = {k: record[k] for k in records.HEADER_KEYS}
    recs = [Recorded(case_from_dict(r["case"]), r, header, save or Path("live")) for r in record["results"]]
    return recs, f"live run on {record['gpu']['name']}"


def _recorded(directory: Path | None) -> tuple[list[Recorded], str]:
    path = directory or records.default_dir()
    try:
        recs = records.load(path)
    except FileNotFoundError:
        raise UsageError(f"no conformance records at {path}; pass --records DIR, or run with --gpu") from None
    except records.RecordError as e:
        raise UsageError(f"malformed conformance record: {e}") from None
    if not recs:
        raise UsageError(f"{path} holds no recorded cases")
    gpus = sorted({f"{r.header['gpu']['name']} ({str(r.header['date'])[:10]})" for r in recs})
    return recs, f"recorded on {', '.join(gpus)}"


def main(args: argparse.Namespace) -> int:
    if args.save is not None and not args.gpu:
        raise UsageError("--save needs --gpu")
    recs, source = _live(args.save) if args.gpu else _recorded(args.records)
    verdicts: list[Verdict] = [compare(r.case, r.result) for r in recs]
    kinds = Counter(v.kind for v in verdicts)
    bad = [v for v in verdicts if v.kind == DISAGREE]
    if args.json:
        print(
            json.dumps(
                {
                    "cases": len(verdicts),
                    "agree": kinds[AGREE],
                    "undefined_flagged": kinds[UNDEFINED_FLAGGED],
                    "disagree": [v.case_id for v in bad],
                }
            )
        )
    else:
        groups: dict[str, Counter[str]] = {}
        for r, v in zip(recs, verdicts, strict=True):
            groups.setdefault(r.case.group, Counter())[v.kind] += 1
        print(f"mbarrier conform: {len(verdicts)} cases, {source}")
        print(f"{'group':<10} {'cases':>6} {'agree':>6} {'undefined, flagged':>19} {'disagree':>9}")
        for g, c in [*groups.items(), ("total", kinds)]:
            print(f"{g:<10} {sum(c.values()):>6} {c[AGREE]:>6} {c[UNDEFINED_FLAGGED]:>19} {c[DISAGREE]:>9}")
        for v in bad:
            print(f"disagree: {v.case_id}: {'; '.join(v.reasons)}")
    return EXIT_FINDINGS if bad else EXIT_CLEAN
