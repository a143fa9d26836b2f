// A 2-CTA cluster handshake through distributed shared memory: every thread of CTA 1 writes a value
// into CTA 0's shared buffer (map_shared_rank) and arrives on CTA 0's mbarrier remotely
// (mbarrier.arrive.release.cluster.shared::cluster); CTA 0 waits on it and copies the buffer to out[].
//   out[i] = 1000 * (cluster id) + i + 7     for i < blockDim.x
// Planted bug (-D BUG_COUNT): the barrier expects one arrival more than CTA 1 has threads.
#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cstdint>
namespace cg = cooperative_groups;
namespace ptx = cuda::ptx;

#ifdef BUG_COUNT
#define EXTRA 1
#else
#define EXTRA 0
#endif

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_handshake(int* out) {
  __shared__ int buf[128];
  __shared__ alignas(8) uint64_t bar;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  if (rank == 0 && threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, blockDim.x + EXTRA);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  cluster.sync();
  if (rank == 1) {
    int* remote_buf = cluster.map_shared_rank(buf, 0);
    uint64_t* remote_bar = cluster.map_shared_rank(&bar, 0);
    remote_buf[threadIdx.x] = 1000 * (blockIdx.x / 2) + threadIdx.x + 7;
    ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cluster, ptx::space_cluster, remote_bar);
  } else {
    while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, &bar, 0)) {}
    out[(blockIdx.x / 2) * blockDim.x + threadIdx.x] = buf[threadIdx.x];
  }
  cluster.sync();  // CTA 0's shared memory must outlive CTA 1's remote accesses
}
