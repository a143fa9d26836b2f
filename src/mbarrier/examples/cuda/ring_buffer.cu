// A TMA-style warp-specialized ring buffer: warp 0 (one elected lane) is the producer, it waits for a
// stage to be empty, arms its `full` barrier with the byte count and starts a cp.async.bulk copy of one
// tile from global memory; CONSUMERS warps wait on `full`, read the tile, write out[] and release the
// stage on `empty` (one arrive per consumer warp).
//   out[k * TILE + i] = in[k * TILE + i] * 3 + k     for k < ITERS, i < TILE
// Planted bugs (-D): BUG_PARITY (consumers wait for the wrong initial parity), BUG_BYTES (the producer
// expects 4 bytes more than it copies), BUG_COUNT (empty expects one arrival more than there are
// consumer warps).
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

#ifndef STAGES
#define STAGES 3
#endif
#ifndef ITERS
#define ITERS 6
#endif
#ifndef CONSUMERS
#define CONSUMERS 4
#endif
#define TILE 32  // ints per stage: one per consumer lane

#ifdef BUG_BYTES
#define EXPECT_BYTES (TILE * 4 + 4)
#else
#define EXPECT_BYTES (TILE * 4)
#endif
#ifdef BUG_COUNT
#define EMPTY_COUNT (CONSUMERS + 1)
#else
#define EMPTY_COUNT CONSUMERS
#endif
#ifdef BUG_PARITY
#define FULL_PARITY0 1
#else
#define FULL_PARITY0 0
#endif

extern "C" __global__ void ring_buffer(const int* in, int* out) {
  __shared__ alignas(128) int tile[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], EMPTY_COUNT);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (warp == 0) {
    if (lane == 0) {
      for (int k = 0; k < ITERS; ++k) {
        const int s = k % STAGES;
        const uint32_t round = k / STAGES;
        // Wait until the consumers released this stage (the first round passes at once).
        while (!ptx::mbarrier_try_wait_parity(&empty[s], (round & 1) ^ 1)) {}
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s],
                                       EXPECT_BYTES);
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, &tile[s][0], in + k * TILE, TILE * 4,
                           &full[s]);
      }
    }
  } else {
    for (int k = 0; k < ITERS; ++k) {
      const int s = k % STAGES;
      const uint32_t round = k / STAGES;
      while (!ptx::mbarrier_try_wait_parity(&full[s], (round & 1) ^ FULL_PARITY0)) {}
      if (warp == 1) out[k * TILE + lane] = tile[s][lane] * 3 + k;
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
    }
  }
}
