// cuda::ptx::mbarrier_* wrappers from <cuda/ptx>: init, arrive (plain, expect_tx), try_wait, test_wait.
#include <cuda/ptx>
#include <cstdint>

namespace ptx = cuda::ptx;

__global__ void producer_consumer(int* out, int rounds) {
  __shared__ alignas(8) uint64_t full, empty;
  __shared__ int slot;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::mbarrier_init(&empty, blockDim.x - 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    uint32_t parity = r & 1;
    if (threadIdx.x == 0) {
      if (r > 0) {
        while (!ptx::mbarrier_try_wait_parity(&empty, parity ^ 1)) {}
      }
      slot = r;
      ptx::mbarrier_arrive(&full);
    } else {
      while (!ptx::mbarrier_try_wait_parity(&full, parity)) {}
      atomicAdd(out, slot);
      uint64_t st = ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &empty);
      (void)st;
    }
  }
  uint64_t tok = ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                                &full, 0);
  while (!ptx::mbarrier_test_wait(&full, tok)) {}
}
