// TMA through <cuda/ptx>: a 2-D tensor tile loaded with cp.async.bulk.tensor, multicast to both CTAs of
// a cluster, completing on each CTA's mbarrier (expect_tx, try_wait.parity), and a bulk store back.
#include <cuda.h>
#include <cuda/ptx>
#include <cstdint>

namespace ptx = cuda::ptx;

__global__ void __cluster_dims__(2, 1, 1) tile_copy(const __grid_constant__ CUtensorMap in,
                                                    const __grid_constant__ CUtensorMap out, int rows) {
  __shared__ alignas(128) float tile[64][64];
  __shared__ alignas(8) uint64_t bar;
  const uint32_t rank = ptx::get_sreg_cluster_ctarank();
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  for (int r = 0, phase = 0; r < rows; r += 64, phase ^= 1) {
    if (threadIdx.x == 0) {
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, sizeof(tile));
      if (rank == 0) {
        const int32_t coords[2] = {0, r};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, tile, &in, coords, &bar,
                                  static_cast<uint16_t>(0b11));
      }
    }
    while (!ptx::mbarrier_try_wait_parity(&bar, phase)) {}
    if (threadIdx.x == 0 && rank == 1) {
      ptx::fence_proxy_async(ptx::space_shared);
      const int32_t coords[2] = {0, r};
      ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &out, coords, tile);
      ptx::cp_async_bulk_commit_group();
      ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  }
}
