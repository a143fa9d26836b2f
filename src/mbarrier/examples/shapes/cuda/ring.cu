// Shape 1, the TMA ring: the last warp's lane 0 is the producer (it waits until a stage is empty, arms
// its `full` barrier with the byte count and starts one bulk copy of a tile); the other warps consume:
// every thread waits on `full`, reads its word of the stage and writes out[], then lane 0 of each
// consumer warp releases the stage on `empty` (count: the consumer warps, from blockDim.x).
//   out[(k * consumers + warp) * TILE + lane] = in[k * TILE + lane] * 3 + k     for k < iters
// The trip count is the kernel parameter `iters` (a rolled loop), or -DITERS=N at compile time (nvcc
// unrolls it; with -DUNROLL1 it stays rolled). -DELECT picks the producer lane with elect.sync.
// Planted bugs (-D): BUG_PARITY (consumers wait for the wrong first parity), BUG_COUNT (`empty` expects one
// arrival more than there are consumer warps), BUG_BYTES (the producer expects 4 bytes more than it copies).
#include "shapes.cuh"

#ifndef ITERS
#define ITERS iters
#endif
#ifdef BUG_BYTES
#define EXPECT_BYTES (TILE * 4 + 4)
#else
#define EXPECT_BYTES (TILE * 4)
#endif
#ifdef BUG_COUNT
#define EXTRA 1
#else
#define EXTRA 0
#endif
#ifdef BUG_PARITY
#define FULL_PARITY0 1
#else
#define FULL_PARITY0 0
#endif

extern "C" __global__ void ring(const int* in, int* out, int iters) {
  __shared__ alignas(128) int tile[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int consumers = blockDim.x / 32 - 1;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mb_init(&full[s], 1);
      mb_init(&empty[s], consumers + EXTRA);
    }
    fence_init();
  }
  __syncthreads();
  if (warp == consumers) {
#ifdef ELECT
    if (elect_one()) {
#else
    if (lane == 0) {
#endif
#ifdef UNROLL1
#pragma unroll 1
#endif
      for (int k = 0; k < ITERS; ++k) {
        const int s = k % STAGES;
        const uint32_t round = k / STAGES;
        mb_wait(&empty[s], (round & 1) ^ 1);  // the first round passes at once
        mb_expect(&full[s], EXPECT_BYTES);
        bulk_load(&tile[s][0], in + k * TILE, TILE * 4, &full[s]);
      }
    }
  } else {
#ifdef UNROLL1
#pragma unroll 1
#endif
    for (int k = 0; k < ITERS; ++k) {
      const int s = k % STAGES;
      const uint32_t round = k / STAGES;
      mb_wait(&full[s], (round & 1) ^ FULL_PARITY0);
      out[(k * consumers + warp) * TILE + lane] = tile[s][lane] * 3 + k;
      __syncwarp();
      if (lane == 0) mb_arrive(&empty[s]);
    }
  }
}
