#include <cstdio>
#include <cstdint>
__device__ __forceinline__ uint64_t desc(const void* p) {
  uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
  return ((a & 0x3FFFF) >> 4) | (uint64_t(128 >> 4) << 16) | (uint64_t(256 >> 4) << 32);
}
__global__ void k(long long* t, float* out, long long delay) {
  __shared__ alignas(128) uint16_t a[64 * 16], b[16 * 16];
  for (int i = threadIdx.x; i < 64 * 16; i += 128) a[i] = 0x3F80;
  for (int i = threadIdx.x; i < 16 * 16; i += 128) b[i] = 0x3F80;
  asm volatile("fence.proxy.async.shared::cta;");
  __syncthreads();
  int w = threadIdx.x / 32;
  long long s = clock64();
  if (w != 0) while (clock64() - s < delay) {}
  float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  long long t_issue = clock64();
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, 0, 1, 1, 0, 0;"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(desc(a)), "l"(desc(b)) : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  long long t_after_issue = clock64();
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  long long t_done = clock64();
  if (threadIdx.x % 32 == 0) { t[w * 4 + 0] = t_issue - s; t[w * 4 + 1] = t_after_issue - s; t[w * 4 + 2] = t_done - s; }
  out[threadIdx.x] = d[0];
}
int main() {
  long long* t; float* o; cudaMalloc(&t, 16 * 8); cudaMalloc(&o, 128 * 4);
  for (long long delay : {0LL, 200000LL, 2000000LL}) {
    k<<<1, 128>>>(t, o, delay);
    cudaError_t e = cudaDeviceSynchronize();
    long long h[16]; float ho[128]; cudaMemcpy(h, t, 128, cudaMemcpyDeviceToHost); cudaMemcpy(ho, o, 512, cudaMemcpyDeviceToHost);
    printf("delay %lld (%s) d0=%g:", delay, cudaGetErrorString(e), ho[0]);
    for (int w = 0; w < 4; ++w) printf(" w%d issue %lld after %lld done %lld;", w, h[w*4], h[w*4+1], h[w*4+2]);
    printf("\n");
  }
}
