// The ring buffer of ring_buffer.cu with its arguments in one struct parameter, as CUTLASS and
// CuTe kernels take theirs (`const __grid_constant__ Params`): nvcc reads the fields through the
// parameter's address (`mov.b64 %rd, param; ld.param [%rd+off]`). Launched by ../struct_ring.launch.json.
//   out[k * TILE + i] = in[k * TILE + i] * scale + bias     for k < iters, i < TILE
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

#define STAGES 2
#define CONSUMERS 2
#define TILE 32  // floats per stage: one per consumer lane

struct Params {
  const float* in;
  float* out;
  int iters;
  float scale;
  float bias;
};

extern "C" __global__ void struct_ring(const __grid_constant__ Params p) {
  __shared__ alignas(128) float tile[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMERS);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  const Params* q = &p;  // the fields through the parameter's address
  if (warp == 0) {
    if (lane == 0) {
      for (int k = 0; k < q->iters; ++k) {
        const int s = k % STAGES;
        const uint32_t round = k / STAGES;
        while (!ptx::mbarrier_try_wait_parity(&empty[s], (round & 1) ^ 1)) {}
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s],
                                       TILE * 4);
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, &tile[s][0], q->in + k * TILE, TILE * 4,
                           &full[s]);
      }
    }
  } else {
    for (int k = 0; k < q->iters; ++k) {
      const int s = k % STAGES;
      const uint32_t round = k / STAGES;
      while (!ptx::mbarrier_try_wait_parity(&full[s], round & 1)) {}
      if (warp == 1) q->out[k * TILE + lane] = tile[s][lane] * q->scale + q->bias;
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
    }
  }
}
