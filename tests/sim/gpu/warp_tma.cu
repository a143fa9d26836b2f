// Does each lane of a warp that executes cp.async.bulk.tensor issue its own copy? (recorded on an H100:
// warp_tma.json). 32 lanes load the same 16 x 8 f32 box onto one mbarrier armed (count 1) with expect_tx of
// `boxes` boxes; the phase completes only if that many boxes' bytes arrive (out[0] = 1 within 2,000,000
// polls). Then the 32 lanes each run cp.reduce.async.bulk .add.u32 of 16 bytes {1, 0, 0, 0} into one
// counter: it ends at the number of copies. Built and run: nvcc -arch=sm_90a -o w warp_tma.cu -lcuda && ./w
#include <cuda.h>
#include <cstdio>
#include <cstdint>
__global__ void k(const __grid_constant__ CUtensorMap t, int boxes, int* out, unsigned* counter) {
  __shared__ alignas(128) float tile[128];
  __shared__ alignas(8) uint64_t bar;
  __shared__ alignas(16) unsigned one[4];
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar), d = (unsigned)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;");
    one[0] = 1; one[1] = one[2] = one[3] = 0;
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncwarp();
  if (threadIdx.x == 0)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(boxes * 512));
  __syncwarp();
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(d), "l"(&t), "r"(0), "r"(0), "r"(b) : "memory");
  int done = 0;
  for (int i = 0; i < 2000000 && !done; ++i) {
    uint32_t ok;
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b));
    done = ok;
  }
  if (threadIdx.x == 0) out[0] = done;
  unsigned src = (unsigned)__cvta_generic_to_shared(one);
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%0], [%1], 16;" :: "l"(counter), "r"(src) : "memory");
  asm volatile("cp.async.bulk.commit_group;");
  asm volatile("cp.async.bulk.wait_group 0;");
}
int main() {
  float* g; cudaMalloc(&g, 32 * 16 * 4); cudaMemset(g, 0, 32 * 16 * 4);
  int* out; cudaMalloc(&out, 4); unsigned* counter; cudaMalloc(&counter, 16);
  CUtensorMap t; cuuint64_t dims[2] = {32, 16}, str[1] = {128}; cuuint32_t box[2] = {16, 8}, es[2] = {1, 1};
  CUresult r = cuTensorMapEncodeTiled(&t, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, g, dims, str, box, es,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  printf("encode %d\n", r);
  for (int boxes : {1, 2, 32, 33}) {
    cudaMemset(out, 0xff, 4); cudaMemset(counter, 0, 16);
    k<<<1, 32>>>(t, boxes, out, counter);
    cudaError_t e = cudaDeviceSynchronize();
    int h; unsigned c; cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost); cudaMemcpy(&c, counter, 4, cudaMemcpyDeviceToHost);
    printf("expect_tx of %d boxes: phase completed=%d; reduce-add counter=%u (%s)\n", boxes, h, c, cudaGetErrorString(e));
  }
}
