// The race corpus, nvcc-compiled: a TMA-style store. Every thread writes its part of a shared tile,
// makes it visible to the async proxy (fence.proxy.async.shared::cta), __syncthreads, and thread 0
// copies the tile to global memory with cp.async.bulk and waits for the bulk group.
// out[i] = i * 5 + 1. Planted race bug (-D): BUG_NO_FENCE (no fence.proxy.async after the stores).
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

#define N 64

extern "C" __global__ void tma_store(int* out) {
  __shared__ alignas(128) int tile[N];
  for (int i = threadIdx.x; i < N; i += blockDim.x) tile[i] = i * 5 + 1;
#ifndef BUG_NO_FENCE
  ptx::fence_proxy_async(ptx::space_shared);
#endif
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out, tile, N * 4);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
  }
}
