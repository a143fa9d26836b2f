// The race corpus, nvcc-compiled: a TMA-style ring (one producer thread in warp 0, CONSUMERS consumer
// warps). The producer waits for a stage to be empty, arms full[s] with the byte count and starts a
// cp.async.bulk of one tile; the consumers wait on full[s], read the tile, and release the stage on
// empty[s] (lane 0 of each warp, after __syncwarp).  out[k * TILE + i] = in[k * TILE + i] + k.
// Planted race bugs (-D): BUG_READ_EARLY (read before the wait on full), BUG_RELAXED (the wait on
// full is .relaxed), BUG_EARLY_RELEASE (lane 0 releases the stage before the warp has read it).
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

#define STAGES 2
#define ITERS 4
#define CONSUMERS 2
#define TILE 32

__device__ __forceinline__ void wait_full(uint64_t* bar, uint32_t parity) {
#ifdef BUG_RELAXED
  while (!ptx::mbarrier_try_wait_parity(ptx::sem_relaxed, ptx::scope_cta, bar, parity, 1000000u)) {}
#else
  while (!ptx::mbarrier_try_wait_parity(bar, parity)) {}
#endif
}

extern "C" __global__ void tma_ring(const int* in, int* out) {
  __shared__ alignas(128) int tile[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMERS);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (warp == 0) {
    if (lane == 0) {
      for (int k = 0; k < ITERS; ++k) {
        const int s = k % STAGES;
        while (!ptx::mbarrier_try_wait_parity(&empty[s], ((k / STAGES) & 1) ^ 1)) {}
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s], TILE * 4);
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, &tile[s][0], in + k * TILE, TILE * 4, &full[s]);
      }
    }
  } else {
    for (int k = 0; k < ITERS; ++k) {
      const int s = k % STAGES;
#ifdef BUG_READ_EARLY
      const int v = tile[s][lane];
      wait_full(&full[s], (k / STAGES) & 1);
#else
      wait_full(&full[s], (k / STAGES) & 1);
#ifdef BUG_EARLY_RELEASE
      if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
#endif
      const int v = tile[s][lane];
#endif
      if (warp == 1) out[k * TILE + lane] = v + k;
#ifndef BUG_EARLY_RELEASE
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
#endif
    }
  }
}
