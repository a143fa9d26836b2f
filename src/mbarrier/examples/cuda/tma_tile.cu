// One TMA tile load: a CUtensorMap parameter (`const __grid_constant__ CUtensorMap`, 128 bytes, 64-byte
// aligned) describes a 2-D float tensor; thread 0 arms an mbarrier with the tile's bytes and issues
// cp.async.bulk.tensor.2d for the tile at (x0, y0); every thread waits on the barrier and copies one
// element of the tile to out. Launched by ../tma_tile.launch.json.
//   out[r * BOX_X + c] = tensor[y0 + r][x0 + c]     for r < BOX_Y, c < BOX_X
#include <cuda.h>
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

#define BOX_X 16
#define BOX_Y 8

extern "C" __global__ void tma_tile(const __grid_constant__ CUtensorMap tensor, float* out, int x0, int y0) {
  __shared__ alignas(128) float tile[BOX_Y][BOX_X];
  __shared__ alignas(8) uint64_t full;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full,
                                   sizeof(tile));
    const int32_t coords[2] = {x0, y0};
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, &tile[0][0], &tensor, coords, &full);
  }
  while (!ptx::mbarrier_try_wait_parity(&full, 0)) {}
  for (int i = threadIdx.x; i < BOX_X * BOX_Y; i += blockDim.x) out[i] = tile[i / BOX_X][i % BOX_X];
}
