// The race corpus, nvcc-compiled (sm_90a): one CTA of a CUTLASS-style warp-specialized GEMM, a 128 x 128
// tile with K = 256. C (128 x 128 f32) = A (128 x K bf16, K-major) * B^T (B: 128 x K bf16, K-major).
// 384 threads: warpgroup 0 is the producer (one elected thread issues the TMA tensor loads of each k-tile:
// A and B boxes of 64 x 128 bf16, 128-byte swizzle, into a ring of 2 stages (the ring wraps: 4 k-tiles), each armed with
// mbarrier.arrive.expect_tx of both boxes' bytes); warpgroups 1 and 2 are the consumers (64 rows of the
// tile each: four wgmma.mma_async.m64n128k16.f32.bf16.bf16 per k-tile on SW128 descriptors, commit,
// wait_group 0, then release the stage on its empty barrier). setmaxnreg moves registers from the producer
// to the consumers, as CUTLASS does. Epilogue: each consumer warpgroup writes its accumulators to shared
// memory with st.shared, makes them visible to the async proxy (fence.proxy.async.shared::cta), syncs on
// its named barrier and stores its 64 x 128 f32 box with a TMA tensor store (bulk_group).
// Planted bugs (-D): BUG_EARLY_RELEASE (the stage is released before wgmma.wait_group retires the wgmmas
// that read it), BUG_EXPECT_TX (expect_tx names A's box only, not A's and B's), BUG_NO_FENCE (the TMA
// store reads shared memory written by st.shared with no fence.proxy.async between).
// Launched by ../nvcc_tile_gemm.launch.json (tensor maps as cuTensorMapEncodeTiled would build them).
#include <cuda.h>
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

#define BM 128
#define BN 128
#define BK 64
#define K 256
#define STAGES 2
#define KTILES (K / BK)
#define CONSUMER_WARPS 8

struct Shared {
  alignas(1024) uint16_t a[STAGES][BM * BK];  // bf16 bits: TMA writes them, wgmma reads them
  alignas(1024) uint16_t b[STAGES][BN * BK];
  alignas(128) float c[BM * BN];              // the epilogue's staging tile
  uint64_t full[STAGES], empty[STAGES];
};

// The matrix descriptor (PTX ISA 9.7.15.5.1.2.2) of a K-major SW128 tile: rows of 128 bytes, 8-row atoms
// of 1024 bytes (the stride byte offset), leading byte offset unused (1), swizzle mode 1 (128B).
__device__ __forceinline__ uint64_t descriptor(const void* at) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(at));
  return ((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
              "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])

// D (64 x 128 f32, 64 registers a thread) = A * B^T (+ D unless first): one wgmma of K = 16.
__device__ __forceinline__ void mma(float (&d)[64], uint64_t da, uint64_t db, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1, 0, 0;\n}"
      : D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56)
      : "l"(da), "l"(db), "r"(accumulate)
      : "memory");
}

// elect.sync (9.7.13.x): one lane of the full warp, as cute::elect_one_sync.
__device__ __forceinline__ bool elect_one() {
  uint32_t pred;
  asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}" : "=r"(pred));
  return pred != 0;
}

// Pins the accumulators' register accesses in program order around the wgmma instructions.
__device__ __forceinline__ void fence_operands(float (&d)[64]) {
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

extern "C" __global__ void __launch_bounds__(384, 1)
tile_gemm(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
          const __grid_constant__ CUtensorMap tc) {
  extern __shared__ __align__(1024) unsigned char raw[];
  Shared& s = *reinterpret_cast<Shared*>(raw);
  const int warpgroup = threadIdx.x / 128, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int i = 0; i < STAGES; ++i) {
      ptx::mbarrier_init(&s.full[i], 1);
      ptx::mbarrier_init(&s.empty[i], CONSUMER_WARPS);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (warp == 0 && elect_one()) {
      for (int t = 0; t < KTILES; ++t) {
        const int st = t % STAGES;
        while (!ptx::mbarrier_try_wait_parity(&s.empty[st], ((t / STAGES) & 1) ^ 1)) {}
#ifdef BUG_EXPECT_TX
        const uint32_t bytes = sizeof(s.a[0]);
#else
        const uint32_t bytes = sizeof(s.a[0]) + sizeof(s.b[0]);
#endif
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &s.full[st], bytes);
        const int32_t at[2] = {t * BK, 0};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, s.a[st], &ta, at, &s.full[st]);
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, s.b[st], &tb, at, &s.full[st]);
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  const int row0 = (warpgroup - 1) * 64;  // this warpgroup's rows of the tile
  float d[64];
  for (int i = 0; i < 64; ++i) d[i] = 0.0f;
  for (int t = 0; t < KTILES; ++t) {
    const int st = t % STAGES;
    while (!ptx::mbarrier_try_wait_parity(&s.full[st], (t / STAGES) & 1)) {}
    fence_operands(d);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int kk = 0; kk < BK / 16; ++kk)  // K = 16 is 32 bytes along a 128-byte row of the atom
      mma(d, descriptor(&s.a[st][row0 * BK + kk * 16]), descriptor(&s.b[st][kk * 16]), t > 0 || kk > 0);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#ifdef BUG_EARLY_RELEASE
    __syncwarp();
    if (lane == 0) ptx::mbarrier_arrive(&s.empty[st]);
#endif
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    fence_operands(d);
#ifndef BUG_EARLY_RELEASE
    __syncwarp();
    if (lane == 0) ptx::mbarrier_arrive(&s.empty[st]);
#endif
  }
  // The accumulator fragment (9.7.15.5.1.1): element i at row 16w + lane/4 + 8((i/2)%2), column
  // 8(i/4) + 2(lane%4) + i%2 of this warpgroup's 64 x 128.
  for (int i = 0; i < 64; ++i) {
    const int row = row0 + 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    s.c[row * BN + col] = d[i];
  }
#ifndef BUG_NO_FENCE
  ptx::fence_proxy_async(ptx::space_shared);
#endif
  asm volatile("bar.sync %0, 128;" ::"r"(warpgroup) : "memory");  // named barrier 1 or 2: this warpgroup
  if (warp == 0 && lane == 0) {
    const int32_t at[2] = {0, row0};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &tc, at, &s.c[row0 * BN]);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}
