// Shape 8, a data-dependent branch between the waits: the ring of ring.cu, where each consumer warp
// votes on the word it loaded (plus the iteration: with zero input, odd iterations compute, even ones
// skip) and only computes and writes out[] when some lane says so; either way the stage is released.
// Planted bug (-D): BUG_SKIP (the warp that skips the work skips the release too: `continue`).
#include "shapes.cuh"

extern "C" __global__ void branch(const int* in, int* out, int iters) {
  __shared__ alignas(128) int tile[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int consumers = blockDim.x / 32 - 1;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mb_init(&full[s], 1);
      mb_init(&empty[s], consumers);
    }
    fence_init();
  }
  __syncthreads();
  if (warp == consumers) {
    if (lane == 0) {
      for (int k = 0; k < iters; ++k) {
        const int s = k % STAGES;
        mb_wait(&empty[s], ((k / STAGES) & 1) ^ 1);
        mb_expect(&full[s], TILE * 4);
        bulk_load(&tile[s][0], in + k * TILE, TILE * 4, &full[s]);
      }
    }
  } else {
    for (int k = 0; k < iters; ++k) {
      const int s = k % STAGES;
      mb_wait(&full[s], (k / STAGES) & 1);
      const int v = tile[s][lane];
      if (__any_sync(0xffffffffu, (v + k) & 1)) {
        out[(k * consumers + warp) * TILE + lane] = v * 3 + k;
      } else {
#ifdef BUG_SKIP
        continue;
#endif
      }
      __syncwarp();
      if (lane == 0) mb_arrive(&empty[s]);
    }
  }
}
