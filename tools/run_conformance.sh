#!/usr/bin/env bash
# Run the litmus suite on a Hopper GPU (cupy, nvcc) and write the record; then, on any machine,
# `python tools/split_records.py RECORD` files it under src/mbarrier/hw/data/records/.
#   tools/run_conformance.sh [RECORD.json] [extra runner options, e.g. --cases ID,ID]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-conformance-run.json}"
shift || true
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
cubin=build/conformance/litmus.cubin
# A cubin built here (or carried) is reused when its .cu matches the catalogue; otherwise rebuild.
if ! python3 -c "import sys; from pathlib import Path; from mbarrier.hw import runner, litmus
runner.check_cubin(litmus.catalogue(), Path('$cubin'))" 2>/dev/null; then
  python3 -m mbarrier.hw.runner --build-only build/conformance
fi
python3 -m mbarrier.hw.runner --cubin "$cubin" --out "$out" "$@"
