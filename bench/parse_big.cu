// A large real kernel for bench/parse.py: a fold over STEPS template instances, each a load, an FMA,
// a compare-and-branch with a read-modify-write, and a warp shuffle; nvcc emits it as straight-line PTX.
#include <cuda/std/utility>

#ifndef STEPS
#define STEPS 1000
#endif

template <int I>
__device__ __forceinline__ void step(float& acc, const float* __restrict__ c, int* flags) {
  acc = fmaf(acc, c[(I * 13) & 255], (float)I) * 0.5f;
  if (acc > c[(I * 7) & 255]) flags[I & 63] += (int)acc;
  acc = __shfl_xor_sync(0xffffffff, acc, I & 31);
}

template <int... Is>
__device__ __forceinline__ float chain(float x, const float* c, int* flags,
                                       cuda::std::integer_sequence<int, Is...>) {
  float acc = x;
  (step<Is>(acc, c, flags), ...);
  return acc;
}

__global__ void big(float* out, const float* in, const float* c, int* flags) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = chain(in[i], c, flags, cuda::std::make_integer_sequence<int, STEPS>{});
}
