// Shape 2, CUTLASS-like warp specialization with warpgroups (3 x WG threads, WG = 128): warpgroup 0 is
// the producer, the lane elect.sync picks in its first warp issues the copies (the other producer threads
// exit at once); warpgroups 1 and 2 consume: every thread waits on `full`, reads its word of the stage,
// the warpgroup meets at `bar.sync 1 + w, WG` (all its reads are done) and one thread per warpgroup
// releases the stage on `empty` (count 2). The pipeline state (stage, phase) is carried in registers;
// the trip count is the kernel parameter `iters` (or -DITERS=N).
//   out[w * WG + i] = sum over k of in[k * TILE + i % TILE]     (w: consumer warpgroup, i < WG)
// Planted bug (-D): BUG_COUNT (`empty` expects 3 arrivals: one more than there are consumer warpgroups).
#include "shapes.cuh"

#ifndef WG
#define WG 128
#endif
#ifndef ITERS
#define ITERS iters
#endif
#ifdef BUG_COUNT
#define EMPTY_COUNT 3
#else
#define EMPTY_COUNT 2
#endif

extern "C" __global__ void warpgroup(const int* in, int* out, int iters) {
  __shared__ alignas(128) int tile[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const int wg = threadIdx.x / WG, i = threadIdx.x % WG;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mb_init(&full[s], 1);
      mb_init(&empty[s], EMPTY_COUNT);
    }
    fence_init();
  }
  __syncthreads();
  PipeState st;
  if (wg == 0) {
    if (i < 32 && elect_one()) {
      for (int k = 0; k < ITERS; ++k) {
        mb_wait(&empty[st.stage], st.phase ^ 1);
        mb_expect(&full[st.stage], TILE * 4);
        bulk_load(&tile[st.stage][0], in + k * TILE, TILE * 4, &full[st.stage]);
        st.advance();
      }
    }
  } else {
    int acc = 0;
    for (int k = 0; k < ITERS; ++k) {
      mb_wait(&full[st.stage], st.phase);
      acc += tile[st.stage][i % TILE];
      named_sync(wg, WG);  // every thread of the warpgroup has read the stage
      if (i == 0) mb_arrive(&empty[st.stage]);
      st.advance();
    }
    out[(wg - 1) * WG + i] = acc;
  }
}
