"""Lint against ptxas on real modules retargeted to another `.target` (by default `sm_90a` replaced
by `sm_90`, where the architecture-specific instructions are refused): for each module, the lines
ptxas reports errors on and the lines lint does, and the messages of both.

    python tools/retarget_compare.py FILE.ptx ... [--from sm_90a] [--to sm_90]

Prints one row per module (ptxas's error lines and messages, lint's, those both give) and every
difference. The modules themselves stay outside the repository (docs/lint.md says where they come
from).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from mbarrier.ptx.parser import parse
from mbarrier.ptx.validate import coverage, validate
from mbarrier.ptx.validate_oracle import ptxas_path

_LINE = re.compile(r"^ptxas [^,]*, line (\d+); (error|fatal)\s*: (.*)$")


def ptxas_errors(text: str, target: str) -> set[tuple[int, str]]:
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "m.ptx"
        f.write_text(text)
        r = subprocess.run([ptxas_path(), f"-arch={target}", str(f), "-o", "/dev/null"], capture_output=True,
                           text=True, timeout=600)
    return {(int(m.group(1)), m.group(3).strip()) for raw in (r.stdout + r.stderr).splitlines()
            if (m := _LINE.match(raw))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--from", dest="old", default="sm_90a")
    ap.add_argument("--to", dest="new", default="sm_90")
    ap.add_argument("--json", action="store_true", help="one JSON object per module")
    a = ap.parse_args()
    rows = []
    for name in a.files:
        text = re.sub(rf"^\.target {re.escape(a.old)}\b", f".target {a.new}", Path(name).read_text(),
                      flags=re.MULTILINE)
        theirs = ptxas_errors(text, a.new)
        module = parse(text, Path(name).name)
        ours = {(d.line, d.message) for d in validate(module) if d.severity != "warning"}
        cov = coverage(module)
        rows.append({"module": Path(name).name, "ptxas_lines": len({n for n, _ in theirs}),
                     "ptxas_messages": len(theirs), "lint_lines": len({n for n, _ in ours}),
                     "lint_messages": len(ours), "both": len(theirs & ours),
                     "ptxas_only": sorted(theirs - ours), "lint_only": sorted(ours - theirs),
                     "judged": cov.judged, "not_judged": sum(cov.not_judged.values())})
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'module':28} {'ptxas lines/msgs':>16} {'lint lines/msgs':>15} {'both':>5} {'judged':>7} "
          f"{'not judged':>10}")
    for r in rows:
        print(f"{r['module']:28} {r['ptxas_lines']:>7}/{r['ptxas_messages']:<8} {r['lint_lines']:>6}/"
              f"{r['lint_messages']:<8} {r['both']:>5} {r['judged']:>7} {r['not_judged']:>10}")
        for n, m in r["ptxas_only"]:
            print(f"    ptxas only: line {n}: {m}")
        for n, m in r["lint_only"]:
            print(f"    lint only:  line {n}: {m}")
    return 1 if any(r["ptxas_only"] or r["lint_only"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
