// An Ampere-style cp.async ring (tests/sim/test_address.py): STAGES stages of TILE ints in shared memory,
// thread t copies word t of each tile with cp.async (cuda_pipeline.h), keeps STAGES - 1 tiles in flight,
// waits for the oldest group and adds its word:  out[t] = sum over k < tiles of in[k * TILE + t].
// Built by the test with `nvcc -ptx -arch=sm_90a -O3`. Launch: 1 CTA of at most TILE threads.
#include <cuda_pipeline.h>

#define STAGES 4
#define TILE 32

extern "C" __global__ void cp_async_ring(const int* __restrict__ in, int* __restrict__ out, int tiles) {
  __shared__ alignas(16) int buf[STAGES][TILE];
  const int t = threadIdx.x;
  int sum = 0;
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) __pipeline_memcpy_async(&buf[s][t], in + s * TILE + t, 4);
    __pipeline_commit();
  }
  for (int k = 0; k < tiles; ++k) {
    const int next = k + STAGES - 1;
    if (next < tiles) __pipeline_memcpy_async(&buf[next % STAGES][t], in + next * TILE + t, 4);
    __pipeline_commit();
    __pipeline_wait_prior(STAGES - 1);
    sum += buf[k % STAGES][t];
  }
  out[t] = sum;
}
