// Not about mbarriers: a mix of what real modules contain so the generic parser sees it all:
// printf (extern .func, .global string initializers), non-inlined device functions with return values,
// an indirect call (.callprototype), vector loads/stores, warp shuffles, half/double math, a constant
// table with an initializer list, dynamic shared memory, atomics, and a local array.
#include <cstdio>
#include <cuda_fp16.h>

__constant__ int table[8] = {1, -2, 3, 0x40, 5, 6, 7, 8};
__device__ float gscale = 1.5f;
__device__ double gdouble = 0.1;
extern __shared__ float4 dyn[];

__device__ __noinline__ float poly(float x, int k) { return x * x * table[k & 7] + gscale; }
__device__ __noinline__ double twice(double v) { return v * 2.0 + gdouble; }
typedef float (*unary_fn)(float, int);
__device__ unary_fn pick[1] = {poly};

__global__ void __launch_bounds__(128, 2) mix(float4* out, const float4* in, __half* h, int sel, double* dd) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 v = in[i];
  dyn[threadIdx.x] = v;
  __syncthreads();
  float s = v.x + v.y + v.z + v.w;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  float arr[16];
  for (int k = 0; k < 16; ++k) arr[k] = s * k;
  s = arr[sel & 15] + pick[0](s, sel);
  h[i] = __hadd(h[i], __float2half(s));
  dd[i] = twice(dd[i]) + (double)s;
  unsigned ballot = __ballot_sync(0xffffffff, s > 0.0f);
  atomicAdd(reinterpret_cast<int*>(out), __popc(ballot));
  if (i == 0) printf("sum %f ballot %u\n", s, ballot);
  out[i] = make_float4(s, v.y, dyn[(threadIdx.x + 1) % 128].z, -0.0f);
}
