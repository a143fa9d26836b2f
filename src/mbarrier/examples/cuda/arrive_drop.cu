// Threads that leave early: of the block's threads, those with threadIdx.x >= STAY drop out of the
// barrier with arrive_drop and exit; the others run ROUNDS phases of arrive + wait, each round adding
// their neighbour's previous value.
//   acc[i] after round r: acc[i] + acc[(i+1) % STAY] (read before the barrier of round r)
// Planted bug (-D BUG_NO_DROP): the leaving threads exit without arrive_drop.
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

#ifndef STAY
#define STAY 40
#endif
#ifndef ROUNDS
#define ROUNDS 3
#endif

extern "C" __global__ void arrive_drop(const int* in, int* out) {
  __shared__ int acc[2][256];
  __shared__ alignas(8) uint64_t bar;
  const unsigned t = threadIdx.x;
  if (t == 0) ptx::mbarrier_init(&bar, blockDim.x);
  __syncthreads();
  if (t >= STAY) {
#ifndef BUG_NO_DROP
    asm volatile("mbarrier.arrive_drop.shared::cta.b64 _, [%0];" :: "r"((uint32_t)__cvta_generic_to_shared(&bar)) : "memory");
#endif
    return;
  }
  acc[0][t] = in[t];
  for (int r = 0; r < ROUNDS; ++r) {
    uint64_t state = ptx::mbarrier_arrive(&bar);
    while (!ptx::mbarrier_test_wait(&bar, state)) { __nanosleep(20); }
    acc[(r + 1) & 1][t] = acc[r & 1][t] + acc[r & 1][(t + 1) % STAY];
    state = ptx::mbarrier_arrive(&bar);
    while (!ptx::mbarrier_test_wait(&bar, state)) { __nanosleep(20); }
  }
  out[t] = acc[ROUNDS & 1][t];
}
