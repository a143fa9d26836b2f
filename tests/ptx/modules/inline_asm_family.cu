// Inline asm exercising the whole mbarrier family (PTX ISA 9.7.13.15): every operation, sinks, counts,
// .noComplete, expect_tx/complete_tx, pending_count, test_wait/try_wait with and without .parity and a
// suspend-time hint, cp.async.mbarrier.arrive{.noinc}, inval.
#include <cstdint>

__global__ void family(uint32_t* out, const int* in) {
  __shared__ alignas(8) uint64_t bar;
  __shared__ int dst[32];
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(&dst[threadIdx.x % 32]));
  uint64_t state = 0;
  uint32_t ok = 0, pending = 0;
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(a), "r"(blockDim.x * 3));
  __syncthreads();
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(a));
  asm volatile("mbarrier.arrive.noComplete.shared.b64 %0, [%1], %2;" : "=l"(state) : "r"(a), "r"(1));
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pending) : "l"(state));
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(a), "r"(4));
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(a), "r"(4));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(d), "l"(in + threadIdx.x));
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" :: "r"(a));
  asm volatile("{\n\t.reg .pred p;\n\t"
               "LAB_WAIT:\n\t"
               "mbarrier.try_wait.shared::cta.b64 p, [%1], %2, 1000;\n\t"
               "@!p bra LAB_WAIT;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(ok) : "r"(a), "l"(state));
  asm volatile("{\n\t.reg .pred p;\n\t"
               "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(ok) : "r"(a), "r"(1));
  asm volatile("mbarrier.arrive_drop.shared.b64 _, [%0];" :: "r"(a));
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], 0;" :: "r"(a));
  __syncthreads();
  if (threadIdx.x == 0) asm volatile("mbarrier.inval.shared.b64 [%0];" :: "r"(a));
  out[threadIdx.x] = ok + pending + static_cast<uint32_t>(state >> 32);
}
