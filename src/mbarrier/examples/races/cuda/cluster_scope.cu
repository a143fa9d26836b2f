// The race corpus, nvcc-compiled: PTX ISA 9.7.13.15.16 Example 4 with data. Cluster of 2 CTAs; thread
// 0 of CTA 0 initializes bar for every thread of the cluster; every thread stores a value into CTA 0's
// slots (distributed shared memory) and arrives on CTA 0's bar with .release.cluster; CTA 0 waits with
// .acquire.cluster and writes out[] from the slots CTA 1 filled.  out[i] = 1000 + i.
// Planted race bug (-D): BUG_CTA_SCOPE (the remote arrive has .cta scope).
#include <cuda/ptx>
#include <cooperative_groups.h>
#include <cstdint>
namespace ptx = cuda::ptx;
namespace cg = cooperative_groups;

#define THREADS 32

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_scope(int* out) {
  __shared__ alignas(8) uint64_t bar;
  __shared__ int slot[2 * THREADS];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  if (rank == 0 && threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 2 * THREADS);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  cluster.sync();
  int* remote_slot = cluster.map_shared_rank(slot, 0);
  uint64_t* remote_bar = cluster.map_shared_rank(&bar, 0);
  remote_slot[rank * THREADS + threadIdx.x] = 1000 + rank * THREADS + threadIdx.x;
#ifdef BUG_CTA_SCOPE
  // cuda::ptx offers no .cta-scope remote arrive: the same instruction with .cta, written out.
  asm volatile("mbarrier.arrive.release.cta.b64 _, [%0];" ::"l"(remote_bar) : "memory");
#else
  ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cluster, ptx::space_cluster, remote_bar);
#endif
  if (rank == 0) {
    while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, &bar, 0)) {}
    out[threadIdx.x] = slot[THREADS + threadIdx.x] - THREADS;
  }
}
