// The sm_80 subset of the mbarrier family in inline asm (PTX ISA 9.7.13.15): init, arrive (on sm_8x a
// count needs .noComplete), arrive_drop, pending_count, test_wait (no try_wait, no .parity before
// sm_90), cp.async.mbarrier.arrive, inval.
#include <cstdint>

__global__ void family80(uint32_t* out, const int* in) {
  __shared__ alignas(8) uint64_t bar;
  __shared__ int dst[32];
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(&dst[threadIdx.x % 32]));
  uint64_t state = 0;
  uint32_t ok = 0, pending = 0;
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(a), "r"(blockDim.x * 4));
  __syncthreads();
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(a));
  asm volatile("mbarrier.arrive.noComplete.shared.b64 %0, [%1], %2;" : "=l"(state) : "r"(a), "r"(1));
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pending) : "l"(state));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(d), "l"(in + threadIdx.x));
  asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];" :: "r"(a));
  asm volatile("mbarrier.arrive_drop.noComplete.shared.b64 %0, [%1], 1;" : "=l"(state) : "r"(a));
  asm volatile("{\n\t.reg .pred p;\n\t"
               "WAIT80:\n\t"
               "mbarrier.test_wait.shared.b64 p, [%1], %2;\n\t"
               "@!p bra WAIT80;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(ok) : "r"(a), "l"(state));
  __syncthreads();
  if (threadIdx.x == 0) asm volatile("mbarrier.inval.shared.b64 [%0];" :: "r"(a));
  out[threadIdx.x] = ok + pending + static_cast<uint32_t>(state >> 32);
}
