// cp.async.bulk global->shared completing on an mbarrier (complete_tx::bytes), via <cuda/ptx>.
#include <cuda/ptx>
#include <cstdint>

namespace ptx = cuda::ptx;

__global__ void bulk_load(float* out, const float* in) {
  __shared__ alignas(128) float tile[1024];
  __shared__ alignas(8) uint64_t bar;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  uint64_t tok;
  if (threadIdx.x == 0) {
    ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, tile, in + blockIdx.x * 1024,
                       sizeof(tile), &bar);
    tok = ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar,
                                         sizeof(tile));
  } else {
    tok = ptx::mbarrier_arrive(&bar);
  }
  while (!ptx::mbarrier_try_wait(&bar, tok)) {}
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) out[blockIdx.x * 1024 + i] = tile[i] + 1.0f;
}
