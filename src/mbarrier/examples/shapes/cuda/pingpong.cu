// Shape 3, pingpong: the producer warpgroup (an elect.sync lane of its first warp) loads `tiles` x `iters`
// stages in order; consumer warpgroups 1 and 2 take the tiles in turn (tile t: warpgroup 1 + t % 2; the
// tile count must be even). Two mbarriers of count 1, `order[0]` and `order[1]`, are a turn lock: a
// warpgroup waits on its own for its turn, runs its mainloop (every thread reads each stage; the
// warpgroup meets at `bar.sync 1 + w, WG`, then one thread releases the stage on `empty`, count 1: one
// warpgroup consumes each stage), hands the turn to
// the other, waits again and runs its epilogue through a shared staging buffer (every thread writes its
// word, the warpgroup meets, every thread reads its neighbour's word and writes out[], the warpgroup meets
// again) and hands the turn back. Each warpgroup skips the other's stages in its pipeline state.
//   out[t * WG + i] = sum over k of in[(t * iters + k) * TILE + (i + 1) % WG % TILE]
// Planted bug (-D): BUG_ORDER (warpgroup 2 waits for the wrong parity of its order barrier: it does not
// wait for its first turn, so the two epilogues can overlap on the staging buffer).
#include "shapes.cuh"

#ifndef WG
#define WG 128
#endif
#ifdef BUG_ORDER
#define ORDER_FLIP 1
#else
#define ORDER_FLIP 0
#endif

extern "C" __global__ void pingpong(const int* in, int* out, int tiles, int iters) {
  __shared__ alignas(128) int tile[STAGES][TILE];
  __shared__ int staging[WG];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES], order[2];
  const int wg = threadIdx.x / WG, i = threadIdx.x % WG;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mb_init(&full[s], 1);
      mb_init(&empty[s], 1);
    }
    mb_init(&order[0], 1);
    mb_init(&order[1], 1);
    fence_init();
  }
  __syncthreads();
  PipeState st;
  if (wg == 0) {
    if (i < 32 && elect_one()) {
      for (int k = 0; k < tiles * iters; ++k) {
        mb_wait(&empty[st.stage], st.phase ^ 1);
        mb_expect(&full[st.stage], TILE * 4);
        bulk_load(&tile[st.stage][0], in + k * TILE, TILE * 4, &full[st.stage]);
        st.advance();
      }
    }
    return;
  }
  const int w = wg - 1;
  // Warpgroup 1's first wait passes on the fresh barrier (parity 1); warpgroup 2's waits for the first
  // hand-over.
  uint32_t turn = (w == 0 ? 1 : 0) ^ (w == 1 ? ORDER_FLIP : 0);
  for (int k = 0; k < w * iters; ++k) st.advance();  // the other warpgroup's first tile
  for (int t = w; t < tiles; t += 2) {
    mb_wait(&order[w], turn);  // the mainloop's turn
    turn ^= 1;
    int acc = 0;
    for (int k = 0; k < iters; ++k) {
      mb_wait(&full[st.stage], st.phase);
      acc += tile[st.stage][i % TILE];
      named_sync(wg, WG);
      if (i == 0) mb_arrive(&empty[st.stage]);
      st.advance();
    }
    if (i == 0) mb_arrive(&order[w ^ 1]);
    mb_wait(&order[w], turn);  // the epilogue's turn
    turn ^= 1;
    staging[i] = acc;
    named_sync(wg, WG);
    out[t * WG + i] = staging[(i + 1) % WG];
    named_sync(wg, WG);
    if (i == 0) mb_arrive(&order[w ^ 1]);
    for (int k = 0; k < iters; ++k) st.advance();  // the other warpgroup's next tile
  }
}
