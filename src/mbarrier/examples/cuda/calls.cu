// Device functions that nvcc keeps as calls (__noinline__): an arrive and a wait through .func calls
// with .param arguments and results, plus a local-memory array indexed at run time.
//   out[i] = i * (i % 8) + 1
#include <cuda/ptx>
#include <cstdint>
__device__ __noinline__ uint64_t arrive_on(uint64_t* bar, int n) {
  uint64_t s = 0;
  for (int i = 0; i < n; ++i) s = cuda::ptx::mbarrier_arrive(bar);
  return s;
}
__device__ __noinline__ void wait_on(uint64_t* bar, uint64_t state) {
  while (!cuda::ptx::mbarrier_try_wait(bar, state)) {}
}
extern "C" __global__ void calls(int* out) {
  __shared__ alignas(8) uint64_t bar;
  int local[8];
  if (threadIdx.x == 0) cuda::ptx::mbarrier_init(&bar, blockDim.x * 2);
  __syncthreads();
  uint64_t s = arrive_on(&bar, 2);
  wait_on(&bar, s);
  for (int i = 0; i < 8; ++i) local[i] = threadIdx.x * i;
  out[threadIdx.x] = local[threadIdx.x % 8] + 1;
}
