// The race corpus, nvcc-compiled (sm_90a): a TMA tensor round trip small enough for `mbarrier check`.
// Lane 0 arms an mbarrier with the box's bytes (mbarrier.arrive.expect_tx) and loads a 16 x 8 f32 box of
// `src` with cp.async.bulk.tensor; the warp waits on the barrier, adds 1 to every element with st.shared,
// makes its writes visible to the async proxy (fence.proxy.async.shared::cta), and lane 0 stores the box
// to `dst` with a TMA tensor store (bulk_group, wait_group.read). Launched by ../nvcc_tma_tensor.launch.json.
// Planted bugs (-D): BUG_EXPECT_TX (expect_tx of half the box: the phase completes when half of it has
// landed), BUG_NO_FENCE (the store reads the st.shared writes with no fence.proxy.async between).
#include <cuda.h>
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

#define BOX_X 16
#define BOX_Y 8

extern "C" __global__ void tma_tensor(const __grid_constant__ CUtensorMap src, const __grid_constant__ CUtensorMap dst) {
  __shared__ alignas(128) float tile[BOX_Y * BOX_X];
  __shared__ alignas(8) uint64_t full;
  const int lane = threadIdx.x;
  if (lane == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncwarp();
  if (lane == 0) {
#ifdef BUG_EXPECT_TX
    const uint32_t bytes = sizeof(tile) / 2;
#else
    const uint32_t bytes = sizeof(tile);
#endif
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full, bytes);
    const int32_t at[2] = {0, 0};
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, tile, &src, at, &full);
  }
  while (!ptx::mbarrier_try_wait_parity(&full, 0)) {}
  for (int i = lane; i < BOX_X * BOX_Y; i += 32) tile[i] += 1.0f;
#ifndef BUG_NO_FENCE
  ptx::fence_proxy_async(ptx::space_shared);
#endif
  __syncwarp();
  if (lane == 0) {
    const int32_t at[2] = {0, 0};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &dst, at, tile);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}
