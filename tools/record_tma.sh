#!/usr/bin/env bash
# Records tensor copies on a Hopper GPU (PTX ISA 5.5, 9.7.9.25.5.2-3): every case of mbarrier.hw.tma, its
# PTX assembled by ptxas for sm_90a, its tensor map encoded by the driver (cuTensorMapEncodeTiled /
# cuTensorMapEncodeIm2col), run through the CUDA driver (tools/tma/run_cases.cu) three times.
# Needs CUDA 13 (nvcc, ptxas, the driver), python3; no network.
#   tools/record_tma.sh [OUTDIR]       (default: $OUT, else build/tma)
# Writes OUTDIR/tma.json (the records) and OUTDIR/tma-run.log. Commit the records as
# src/mbarrier/hw/data/tma/h100.json; tests/hw/test_tma_replay.py then compares the simulator with them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-${OUT:-$root/build/tma}}"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
log="$out/tma-run.log"
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  nvcc --version | tail -2
  python3 -m mbarrier.hw.tma emit "$work"
  nvcc -O2 -arch=sm_90a -o "$work/run_cases" "$root/tools/tma/run_cases.cu" -lcuda
  while read -r name ptx _; do
    ptxas -arch=sm_90a "$work/$ptx" -o "$work/$name.cubin"
  done < "$work/manifest.txt"
  # One process per case: a case that faults (an illegal instruction is sticky) leaves the context
  # unusable, and every later case of the same process would fail with it.
  status=0
  mv "$work/manifest.txt" "$work/manifest.all"
  while read -r line; do
    printf '%s\n' "$line" > "$work/manifest.txt"
    "$work/run_cases" "$work" 3 || status=$?
  done < "$work/manifest.all"
  mv "$work/manifest.all" "$work/manifest.txt"
  device="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  toolchain="$(ptxas --version | tail -1); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  python3 -m mbarrier.hw.tma collect "$work" "$out/tma.json" --device "$device" --toolchain "$toolchain"
  echo "run_cases exit status: $status"
} 2>&1 | tee "$log"
