#!/usr/bin/env python3
"""File a GPU run's record (from tools/run_conformance.sh) under src/mbarrier/hw/data/records/ (the
package's data), one file per case group.  Usage: python tools/split_records.py RUN.json [DEST_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mbarrier.hw import records

if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    run = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    dest = Path(sys.argv[2]) if len(sys.argv) == 3 else Path(__file__).parents[1] / records.REPO_DIR
    for path in records.split(run, dest):
        print(path)
