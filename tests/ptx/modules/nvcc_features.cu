// Not about mbarriers: what nvcc writes for C++ features the other modules lack, each once refused by our
// parser though ptxas takes it: a __managed__ variable (`.attribute(.managed)`), pointers to an array
// element and to a struct member in initializers (`generic(g)+8`), virtual functions (vtables of
// function addresses), and sparse-texture fetches with the residency predicate (`{a, b, c, d}|%p`).
// Built with: nvcc -ptx -arch=sm_90a nvcc_features.cu -o nvcc_features.sm_90a.ptx
#include <cuda_runtime.h>

__device__ __managed__ int managed_count = 5;
__device__ int table[4] = {1, 2, 3, 4};
__device__ int* third = &table[2];
struct Node { int value; int* next; const char* name; };
__device__ Node node = {7, &table[1], "node"};
__device__ Node* node_value = &node;

struct Shape { __device__ virtual float area(float s) { return s; } };
struct Square : Shape { __device__ float area(float s) override { return s * s; } };

__global__ void features(cudaTextureObject_t t, float4* out, int sel) {
  bool resident;
  float4 v = tex2D<float4>(t, 0.5f, 0.5f, &resident);
  float4 g = tex2Dgather<float4>(t, 0.5f, 0.5f, &resident, 1);
  Shape* s = sel ? new Square() : new Shape();
  float a = s->area(v.x);
  delete s;
  out[threadIdx.x] = resident ? v : g;
  out[threadIdx.x].w += a + *third + node.next[0] + node_value->value + managed_count;
}
