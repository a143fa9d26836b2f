#!/usr/bin/env bash
# Regenerate the bundled nvcc-compiled kernels (../*.ptx) from these sources: CUDA 13.0, sm_90, -O3.
# nvcc compiles a copy of the sources at src/mbarrier/examples/cuda/ under a fixed build directory, so the
# output is the same from any checkout (with -G nvcc derives internal symbol names from the source's
# absolute path); tools/ptx_relpaths.py then makes the paths nvcc wrote (`.file`, the DWARF compile
# unit's directory) relative to it: `src/mbarrier/examples/cuda/ring_buffer.cu`, as in the repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
rel=src/mbarrier/examples/cuda
build="${TMPDIR:-/tmp}/mbarrier-nvcc-build"
rm -rf "$build" && mkdir -p "$build/$rel" && cp "$here"/*.cu "$build/$rel/"
cd "$build"
gen() {  # gen OUT SRC [FLAGS...]
  local out=$here/../$1.ptx src=$2; shift 2
  nvcc -ptx -arch=sm_90 -O3 "$@" "$rel/$src" -o "$out"
  python3 "$root/tools/ptx_relpaths.py" "$build" "$out"
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
# Kernels launched by launch files (../*.launch.json): a struct parameter, a CUtensorMap parameter.
gen struct_ring struct_ring.cu
gen tma_tile tma_tile.cu
# Debug builds (-G): device-function calls, local memory, no optimization; the tests check they compute
# what the optimized builds compute.
gen ring_buffer.G ring_buffer.cu -G
gen cluster_handshake.G cluster_handshake.cu -G
gen arrive_drop.G arrive_drop.cu -G
rm -rf "$build"
