// cuda::barrier + cuda::memcpy_async (the libcu++ mbarrier path).
#include <cuda/barrier>
#include <cooperative_groups.h>

using barrier_t = cuda::barrier<cuda::thread_scope_block>;

__global__ void scale(float* out, const float* in, int n) {
  __shared__ alignas(16) float buf[2][256];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier_t bar[2];
  auto block = cooperative_groups::this_thread_block();
  if (block.thread_rank() == 0) {
    init(&bar[0], block.size());
    init(&bar[1], block.size());
  }
  block.sync();
  for (int s = 0; s < 2; ++s) {
    cuda::memcpy_async(block, buf[s], in + s * 256, cuda::aligned_size_t<16>(sizeof(buf[s])), bar[s]);
  }
  for (int s = 0; s < 2; ++s) {
    bar[s].arrive_and_wait();
    out[s * 256 + threadIdx.x] = buf[s][threadIdx.x] * 2.5f;
  }
}
