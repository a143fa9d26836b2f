// The race corpus, nvcc-compiled (sm_90a): a warpgroup GEMM without TMA. Warp 4, the producer, copies each
// k-tile of A (64 x 16) and B (16 x N) from global memory into a shared stage with st.shared, in the
// canonical K-major layout of wgmma (no swizzle: core matrices of 8 rows x 16 bytes, the second 16 bytes
// of K 128 bytes on, the next 8 rows 256 bytes on), makes them visible to the async proxy
// (fence.proxy.async.shared::cta) and arrives on full[s]. Warps 0-3, the consumer warpgroup, wait on
// full[s], run wgmma.mma_async.m64n16k16.f32.f16.f16 on the stage, wait for it (wgmma.wait_group 0) and
// release the stage on empty[s] (lane 0 of each warp). C (64 x N f32, row-major) = A (64 x K f16,
// row-major) * B (K x N f16, given column by column: N rows of K).
// Planted race bug (-D): BUG_EARLY_RELEASE (the stage is released before wgmma.wait_group retires the
// wgmma.mma_async that reads it: the producer may overwrite the tiles it is still reading).
#include <cuda/ptx>
#include <cuda_fp16.h>
#include <cstdint>
namespace ptx = cuda::ptx;

#define N 16
#define K 32
#define KT 16  // K of one wgmma
#define TILES (K / KT)
#define STAGES 1
#define CONSUMER_WARPS 4

struct Stage {
  alignas(128) __half a[64 * KT];
  alignas(128) __half b[N * KT];
};

// The byte offset of the 16-byte chunk c (K elements 8c..8c+7) of row r of a K-major tile.
__device__ __forceinline__ int chunk(int r, int c) { return (r / 8) * 256 + c * 128 + (r % 8) * 16; }

// The matrix descriptor of a tile (9.7.15.5.1.2.2): start, LBO 128, SBO 256, no swizzle.
__device__ __forceinline__ uint64_t descriptor(const void* tile) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  return ((addr & 0x3FFFF) >> 4) | (uint64_t(128 >> 4) << 16) | (uint64_t(256 >> 4) << 32);
}

// Pins the accumulator's register accesses in program order around the wgmma instructions.
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

extern "C" __global__ void wgmma_gemm(const __half* A, const __half* B, float* C) {
  __shared__ Stage stage[STAGES];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMER_WARPS);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (warp == CONSUMER_WARPS) {
    for (int t = 0; t < TILES; ++t) {
      const int s = t % STAGES;
      while (!ptx::mbarrier_try_wait_parity(&empty[s], ((t / STAGES) & 1) ^ 1)) {}
      char* a = reinterpret_cast<char*>(stage[s].a);
      char* b = reinterpret_cast<char*>(stage[s].b);
      for (int i = lane; i < 64 * 2; i += 32) {  // A: 64 rows of two chunks
        const int r = i / 2, c = i % 2;
        *reinterpret_cast<uint4*>(a + chunk(r, c)) = *reinterpret_cast<const uint4*>(A + r * K + t * KT + c * 8);
      }
      if (lane < N * 2) {  // B: N rows of two chunks
        const int r = lane / 2, c = lane % 2;
        *reinterpret_cast<uint4*>(b + chunk(r, c)) = *reinterpret_cast<const uint4*>(B + r * K + t * KT + c * 8);
      }
      ptx::fence_proxy_async(ptx::space_shared);
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(&full[s]);
    }
  } else if (warp < CONSUMER_WARPS) {
    float d[8];
    for (int i = 0; i < 8; ++i) d[i] = 0.0f;
    for (int t = 0; t < TILES; ++t) {
      const int s = t % STAGES;
      while (!ptx::mbarrier_try_wait_parity(&full[s], (t / STAGES) & 1)) {}
      for (int i = 0; i < 8; ++i) fence_operand(d[i]);
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      asm volatile(
          "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
          "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, 1, 1, 1, 0, 0;"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
          : "l"(descriptor(stage[s].a)), "l"(descriptor(stage[s].b))
          : "memory");
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#ifdef BUG_EARLY_RELEASE
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
#endif
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      for (int i = 0; i < 8; ++i) fence_operand(d[i]);
#ifndef BUG_EARLY_RELEASE
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
#endif
    }
    // The accumulator fragment (9.7.15.5.1.1): element i at row 16w + lane/4 + 8((i/2)%2), column
    // 8(i/4) + 2(lane%4) + i%2.
    for (int i = 0; i < 8; ++i) {
      const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
      C[row * N + col] = d[i];
    }
  }
}
