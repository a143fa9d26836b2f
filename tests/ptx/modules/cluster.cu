// A thread-block cluster: remote arrive on a peer CTA's mbarrier through map_shared_rank and
// mbarrier.arrive.shared::cluster; local wait.
#include <cooperative_groups.h>
#include <cstdint>

namespace cg = cooperative_groups;

__device__ void remote_arrive(uint64_t* local_bar, unsigned peer) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(local_bar));
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(a), "r"(peer));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(remote) : "memory");
}

__global__ void __cluster_dims__(2, 1, 1) ping(int* out) {
  __shared__ alignas(8) uint64_t bar;
  __shared__ int value;
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(a), "r"(1));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    value = 0;
  }
  cluster.sync();
  if (threadIdx.x == 0) {
    int* peer_value = cluster.map_shared_rank(&value, rank ^ 1);
    *peer_value = 40 + rank;
    remote_arrive(&bar, rank ^ 1);
  }
  uint32_t done = 0;
  while (!done) {
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done) : "r"(a), "r"(0) : "memory");
  }
  out[rank * blockDim.x + threadIdx.x] = value;
  cluster.sync();
}
