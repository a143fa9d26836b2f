// Shape 4, a persistent kernel: each CTA takes tiles blockIdx.x, blockIdx.x + gridDim.x, ... (a
// grid-stride loop, runtime count `tiles`) and runs the ring of ring.cu over `iters` stages per tile
// (runtime count), the pipeline state (stage, phase) carried in registers across tiles. The producer (the
// last warp's lane 0) ends with its tail: it waits for the consumers' last release of every stage before
// it exits. Three stages (a reset state is then wrong for iters = 1, 2, 4, 5...).
//   out[((tile * iters + k) * consumers + warp) * TILE + lane] = in[(tile * iters + k) * TILE + lane] + tile
// Planted bug (-D): BUG_RESET (producer and consumers reset the pipeline state at every tile).
#define STAGES 3
#include "shapes.cuh"

extern "C" __global__ void persistent(const int* in, int* out, int tiles, int iters) {
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
  PipeState st;
  if (warp == consumers) {
    if (lane != 0) return;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
#ifdef BUG_RESET
      st = PipeState();
#endif
      for (int k = 0; k < iters; ++k) {
        mb_wait(&empty[st.stage], st.phase ^ 1);
        mb_expect(&full[st.stage], TILE * 4);
        bulk_load(&tile[st.stage][0], in + (t * iters + k) * TILE, TILE * 4, &full[st.stage]);
        st.advance();
      }
    }
    for (int s = 0; s < STAGES; ++s) {  // the producer's tail
      mb_wait(&empty[st.stage], st.phase ^ 1);
      st.advance();
    }
  } else {
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
#ifdef BUG_RESET
      st = PipeState();
#endif
      for (int k = 0; k < iters; ++k) {
        mb_wait(&full[st.stage], st.phase);
        out[((t * iters + k) * consumers + warp) * TILE + lane] = tile[st.stage][lane] + t;
        __syncwarp();
        if (lane == 0) mb_arrive(&empty[st.stage]);
        st.advance();
      }
    }
  }
}
