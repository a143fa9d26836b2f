// Shape 6, Ampere-style copies: the producer warp (the last one) fills each stage with cp.async, 4 bytes
// per lane, and each lane tracks its copy with cp.async.mbarrier.arrive.noinc on `full[s]` (count 32: the
// arrive-ons are the expected arrivals); the consumer warps wait on `full`, read, write out[] and release
// the stage on `empty` (lane 0 of each consumer warp). Every producer lane waits for `empty` itself.
//   out[(k * consumers + warp) * TILE + lane] = in[k * TILE + lane] - k
// Planted bug (-D): BUG_INC (cp.async.mbarrier.arrive without .noinc: each arrive-on raises the pending
// count before it lowers it, so the 32 expected arrivals never come).
#include "shapes.cuh"

#ifdef BUG_INC
#define NOINC ""
#else
#define NOINC ".noinc"
#endif

extern "C" __global__ void cpasync(const int* in, int* out, int iters) {
  __shared__ alignas(128) int tile[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int consumers = blockDim.x / 32 - 1;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mb_init(&full[s], 32);
      mb_init(&empty[s], consumers);
    }
    fence_init();
  }
  __syncthreads();
  if (warp == consumers) {
    for (int k = 0; k < iters; ++k) {
      const int s = k % STAGES;
      mb_wait(&empty[s], ((k / STAGES) & 1) ^ 1);
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem(&tile[s][lane])),
                   "l"(in + k * TILE + lane) : "memory");
      asm volatile("cp.async.mbarrier.arrive" NOINC ".shared.b64 [%0];" ::"r"(smem(&full[s])) : "memory");
    }
  } else {
    for (int k = 0; k < iters; ++k) {
      const int s = k % STAGES;
      mb_wait(&full[s], (k / STAGES) & 1);
      out[(k * consumers + warp) * TILE + lane] = tile[s][lane] - k;
      __syncwarp();
      if (lane == 0) mb_arrive(&empty[s]);
    }
  }
}
