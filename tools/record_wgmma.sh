#!/usr/bin/env bash
# Records wgmma.mma_async on a Hopper GPU (PTX ISA 9.7.15): every case of mbarrier.hw.wgmma, its PTX
# assembled by ptxas for sm_90a and run through the CUDA driver (tools/wgmma/run_cases.cu) three times.
# Needs CUDA 13 (nvcc, ptxas, the driver), python3 with numpy; no network.
#   tools/record_wgmma.sh [OUTDIR]       (default: $OUT, else build/wgmma)
# Writes OUTDIR/wgmma.json (the records) and OUTDIR/wgmma-run.log. Commit the records as
# src/mbarrier/hw/data/wgmma/h100.json; tests/hw/test_wgmma_replay.py then compares the simulator with them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-${OUT:-$root/build/wgmma}}"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
log="$out/wgmma-run.log"
{
  echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  nvcc --version | tail -2
  python3 -m mbarrier.hw.wgmma emit "$work"
  nvcc -O2 -o "$work/run_cases" "$root/tools/wgmma/run_cases.cu" -lcuda
  while read -r name ptx _; do
    ptxas -arch=sm_90a "$work/$ptx" -o "$work/$name.cubin"
  done < "$work/manifest.txt"
  status=0
  "$work/run_cases" "$work" 3 || status=$?
  device="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  toolchain="$(ptxas --version | tail -1); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  python3 -m mbarrier.hw.wgmma collect "$work" "$out/wgmma.json" --device "$device" --toolchain "$toolchain"
  echo "run_cases exit status: $status"
} 2>&1 | tee "$log"
