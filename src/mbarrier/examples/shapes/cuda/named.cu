// Shape 7, named barriers as the "empty" side: mbarriers say a stage is full (the last warp's lane 0
// arms `full[s]` and issues a bulk copy), named barrier 1 + s says it is empty again: the consumer warps
// `bar.arrive 1 + s, N` after reading (when the producer will refill the stage), and the whole producer
// warp `bar.sync 1 + s, N` before it refills it (N: every thread of the CTA).
//   out[(k * consumers + warp) * TILE + lane] = in[k * TILE + lane] ^ k
// Planted bug (-D): BUG_SKIP (consumer warp 0 skips its release on odd iterations).
#include "shapes.cuh"

extern "C" __global__ void named(const int* in, int* out, int iters) {
  __shared__ alignas(128) int tile[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int consumers = blockDim.x / 32 - 1;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) mb_init(&full[s], 1);
    fence_init();
  }
  __syncthreads();
  if (warp == consumers) {
    for (int k = 0; k < iters; ++k) {
      const int s = k % STAGES;
      if (k >= STAGES) named_sync(1 + s, blockDim.x);  // the consumers have read round k / STAGES - 1
      if (lane == 0) {
        mb_expect(&full[s], TILE * 4);
        bulk_load(&tile[s][0], in + k * TILE, TILE * 4, &full[s]);
      }
      __syncwarp();
    }
  } else {
    for (int k = 0; k < iters; ++k) {
      const int s = k % STAGES;
      mb_wait(&full[s], (k / STAGES) & 1);
      out[(k * consumers + warp) * TILE + lane] = tile[s][lane] ^ k;
#ifdef BUG_SKIP
      if (warp == 0 && (k & 1)) continue;
#endif
      if (k + STAGES < iters) named_arrive(1 + s, blockDim.x);
    }
  }
}
