// The race corpus, nvcc-compiled: PTX ISA 9.7.13.15.16 Example 3 with data (rule 2). Warp 0 copies a
// tile from global to shared memory with cp.async (4 bytes per lane) and tracks the copies with
// cp.async.mbarrier.arrive.noinc (bar expects the 32 arrive-ons); warp 1 waits on bar and writes
// out[i] = in[i] * 2. Planted race bug (-D): BUG_UNTRACKED (a plain mbarrier.arrive instead of
// cp.async.mbarrier.arrive: the phase can complete before the copies land).
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

extern "C" __global__ void cp_async_arrive(const int* in, int* out) {
  __shared__ alignas(16) int tile[32];
  __shared__ alignas(8) uint64_t bar;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) ptx::mbarrier_init(&bar, 32);
  __syncthreads();
  if (warp == 0) {
    const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(&tile[lane]));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(in + lane) : "memory");
#ifdef BUG_UNTRACKED
    ptx::mbarrier_arrive(&bar);
#else
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];"
                 ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(&bar))) : "memory");
#endif
    asm volatile("cp.async.wait_all;" ::: "memory");  // the copies land before the producers exit
  } else {
    while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {}
    out[lane] = tile[lane] * 2;
  }
}
