// Shape 5, a 2-CTA cluster: CTA 0's producer (its last warp's lane 0) arms `full[s]` of both CTAs (its
// own with arrive.expect_tx, CTA 1's remotely through mapa) and issues one multicast bulk copy into
// `tile[s]` of both CTAs; the consumer warps of both CTAs wait on their own `full[s]`, read the stage,
// write out[] and release it on CTA 0's `empty[s]` remotely (count: the consumer warps of the cluster).
// A cluster barrier follows the initialization and precedes the exit (no CTA leaves while the other may
// still touch its shared memory).
//   out[((k * 2 + rank) * consumers + warp) * TILE + lane] = in[k * TILE + lane] * 2 + rank
// Planted bug (-D): BUG_MASK (the multicast mask leaves CTA 1 out: its full barrier waits for bytes that
// never come).
#include "shapes.cuh"

#ifdef BUG_MASK
#define MASK 0x1
#else
#define MASK 0x3
#endif

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster(const int* in, int* out, int iters) {
  __shared__ alignas(128) int tile[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int consumers = blockDim.x / 32 - 1;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mb_init(&full[s], 1);
      mb_init(&empty[s], 2 * consumers);
    }
    fence_init();
  }
  cluster_sync();
  if (warp == consumers) {
    if (rank == 0 && lane == 0) {
      for (int k = 0; k < iters; ++k) {
        const int s = k % STAGES;
        mb_wait_cluster(&empty[s], ((k / STAGES) & 1) ^ 1);
        mb_expect(&full[s], TILE * 4);
        mb_expect_remote(mapa(&full[s], 1), TILE * 4);
        bulk_multicast(&tile[s][0], in + k * TILE, TILE * 4, &full[s], MASK);
      }
    }
  } else {
    for (int k = 0; k < iters; ++k) {
      const int s = k % STAGES;
      mb_wait(&full[s], (k / STAGES) & 1);
      out[((k * 2 + rank) * consumers + warp) * TILE + lane] = tile[s][lane] * 2 + rank;
      __syncwarp();
      if (lane == 0) mb_arrive_remote(mapa(&empty[s], 0));
    }
  }
  cluster_sync();
}
