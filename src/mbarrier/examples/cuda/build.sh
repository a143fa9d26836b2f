#!/usr/bin/env bash
# Regenerate the bundled nvcc-compiled kernels (../*.ptx) from these sources: CUDA 13.0, sm_90, -O3.
set -euo pipefail
cd "$(dirname "$0")"
gen() {  # gen OUT SRC [FLAGS...]
  local out=$1 src=$2; shift 2
  nvcc -ptx -arch=sm_90 -O3 "$@" "$src" -o "../$out.ptx"
}
gen pipeline pipeline.cu
gen ring_buffer ring_buffer.cu
gen ring_buffer_bug_parity ring_buffer.cu -DBUG_PARITY
gen ring_buffer_bug_bytes ring_buffer.cu -DBUG_BYTES
gen ring_buffer_bug_count ring_buffer.cu -DBUG_COUNT
gen cluster_handshake cluster_handshake.cu
gen cluster_handshake_bug_count cluster_handshake.cu -DBUG_COUNT
gen arrive_drop arrive_drop.cu
gen arrive_drop_bug_no_drop arrive_drop.cu -DBUG_NO_DROP
gen calls calls.cu
# Debug builds (-G): device-function calls, local memory, no optimization; the tests check they compute
# what the optimized builds compute.
gen ring_buffer.G ring_buffer.cu -G
gen cluster_handshake.G cluster_handshake.cu -G
gen arrive_drop.G arrive_drop.cu -G
