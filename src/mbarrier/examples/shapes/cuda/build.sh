#!/usr/bin/env bash
# Regenerate the shape corpus (../*.ptx) from these sources: CUDA 13.0, sm_90a, -O3. nvcc compiles a copy
# of the sources under a fixed build directory and tools/ptx_relpaths.py makes the paths it writes
# relative to it, so the output is the same from any checkout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../../.." && pwd)"
rel=src/mbarrier/examples/shapes/cuda
build="${TMPDIR:-/tmp}/mbarrier-shapes-build"
rm -rf "$build" && mkdir -p "$build/$rel" && cp "$here"/*.cu "$here"/*.cuh "$build/$rel/"
cd "$build"
gen() {  # gen OUT SRC [FLAGS...]
  local out=$here/../$1.ptx src=$2; shift 2
  nvcc -ptx -arch=sm_90a -O3 "$@" "$rel/$src" -o "$out"
  python3 "$root/tools/ptx_relpaths.py" "$build" "$out"
}
gen ring ring.cu
gen ring_ct ring.cu -DITERS=4
gen ring_rolled ring.cu -DITERS=4 -DUNROLL1
gen ring_elect ring.cu -DELECT
gen ring_bug_parity ring.cu -DBUG_PARITY
gen ring_bug_count ring.cu -DBUG_COUNT
gen ring_bug_bytes ring.cu -DBUG_BYTES
gen warpgroup warpgroup.cu
gen warpgroup_ct warpgroup.cu -DITERS=4
gen warpgroup_bug_count warpgroup.cu -DBUG_COUNT
gen pingpong pingpong.cu
gen pingpong_bug_order pingpong.cu -DBUG_ORDER
gen persistent persistent.cu
gen persistent_bug_reset persistent.cu -DBUG_RESET
gen cluster cluster.cu
gen cluster_bug_mask cluster.cu -DBUG_MASK
gen cpasync cpasync.cu
gen cpasync_bug_inc cpasync.cu -DBUG_INC
gen named named.cu
gen named_bug_skip named.cu -DBUG_SKIP
gen branch branch.cu
gen branch_bug_skip branch.cu -DBUG_SKIP
rm -rf "$build"
