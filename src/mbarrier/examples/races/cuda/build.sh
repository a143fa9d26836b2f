#!/usr/bin/env bash
# Regenerate the nvcc-compiled race corpus (../nvcc_*.ptx) from these sources: CUDA 13.0, sm_90 (wgmma:
# sm_90a), -O3.
set -euo pipefail
cd "$(dirname "$0")"
gen() {  # gen OUT SRC [FLAGS...] (ARCH: sm_90 unless set)
  local out=$1 src=$2; shift 2
  nvcc -ptx -arch="${ARCH:-sm_90}" -O3 "$@" "$src" -o "../nvcc_$out.ptx"
}
gen tma_ring tma_ring.cu
gen tma_ring_bug_read_early tma_ring.cu -DBUG_READ_EARLY
gen tma_ring_bug_relaxed tma_ring.cu -DBUG_RELAXED
gen tma_ring_bug_early_release tma_ring.cu -DBUG_EARLY_RELEASE
gen tma_store tma_store.cu
gen tma_store_bug_no_fence tma_store.cu -DBUG_NO_FENCE
gen cluster_scope cluster_scope.cu
gen cluster_scope_bug_cta_scope cluster_scope.cu -DBUG_CTA_SCOPE
gen cp_async_arrive cp_async_arrive.cu
gen cp_async_arrive_bug_untracked cp_async_arrive.cu -DBUG_UNTRACKED
ARCH=sm_90a gen wgmma_gemm wgmma_gemm.cu
ARCH=sm_90a gen wgmma_gemm_bug_early_release wgmma_gemm.cu -DBUG_EARLY_RELEASE
ARCH=sm_90a gen tile_gemm tile_gemm.cu
ARCH=sm_90a gen tile_gemm_bug_early_release tile_gemm.cu -DBUG_EARLY_RELEASE
ARCH=sm_90a gen tile_gemm_bug_expect_tx tile_gemm.cu -DBUG_EXPECT_TX
ARCH=sm_90a gen tile_gemm_bug_no_fence tile_gemm.cu -DBUG_NO_FENCE
ARCH=sm_90a gen tma_tensor tma_tensor.cu
ARCH=sm_90a gen tma_tensor_bug_expect_tx tma_tensor.cu -DBUG_EXPECT_TX
ARCH=sm_90a gen tma_tensor_bug_no_fence tma_tensor.cu -DBUG_NO_FENCE
