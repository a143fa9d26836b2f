// Runs the bundled nvcc_tile_gemm.ptx on a GPU with the inputs of its launch file (run on the device):
//   nvcc -o tile_gemm_h100 tile_gemm_h100.cu -lcuda && ./tile_gemm_h100 PTX A.bin B.bin OUT_PREFIX REPEATS
// The driver JIT-compiles the PTX; the three tensor maps are the launch file's cuTensorMapEncodeTiled
// calls (A and B: bf16 256 x 128, box 64 x 128, 128-byte swizzle; C: f32 128 x 128, box 128 x 64). Each
// repeat clears C, launches one CTA of 384 threads with 131,136 bytes of dynamic shared memory and writes
// C to OUT_PREFIX.N.bin.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char* s; cuGetErrorString(r, &s); \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1); } } while (0)

static std::vector<char> slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  std::vector<char> b;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
  fclose(f);
  return b;
}

static CUtensorMap tiled(CUtensorMapDataType t, CUdeviceptr p, cuuint64_t d0, cuuint64_t d1, cuuint64_t stride,
                         cuuint32_t b0, cuuint32_t b1, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2) {
  CUtensorMap m;
  cuuint64_t dims[2] = {d0, d1}, strides[1] = {stride};
  cuuint32_t box[2] = {b0, b1}, es[2] = {1, 1};
  CK(cuTensorMapEncodeTiled(&m, t, 2, (void*)p, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw, l2,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

int main(int argc, char** argv) {
  if (argc != 6) { fprintf(stderr, "usage: %s PTX A.bin B.bin OUT_PREFIX REPEATS\n", argv[0]); return 2; }
  std::vector<char> ptx = slurp(argv[1]), a = slurp(argv[2]), b = slurp(argv[3]);
  ptx.push_back(0);
  CK(cuInit(0));
  CUdevice dev; CK(cuDeviceGet(&dev, 0));
  char name[256]; CK(cuDeviceGetName(name, sizeof name, dev));
  int drv; CK(cuDriverGetVersion(&drv));
  printf("device %s driver %d\n", name, drv);
  CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  CUmodule mod; CK(cuModuleLoadData(&mod, ptx.data()));
  CUfunction fn; CK(cuModuleGetFunction(&fn, mod, "tile_gemm"));
  const int smem = 131136;
  CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
  CUdeviceptr da, db, dc;
  CK(cuMemAlloc(&da, a.size())); CK(cuMemAlloc(&db, b.size())); CK(cuMemAlloc(&dc, 65536));
  CK(cuMemcpyHtoD(da, a.data(), a.size())); CK(cuMemcpyHtoD(db, b.data(), b.size()));
  CUtensorMap ta = tiled(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, da, 256, 128, 512, 64, 128,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  CUtensorMap tb = tiled(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, db, 256, 128, 512, 64, 128,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  CUtensorMap tc = tiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dc, 128, 128, 512, 128, 64,
                         CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE);
  void* params[3] = {&ta, &tb, &tc};
  std::vector<char> c(65536);
  for (int i = 0; i < atoi(argv[5]); ++i) {
    CK(cuMemsetD8(dc, 0, 65536));
    CK(cuLaunchKernel(fn, 1, 1, 1, 384, 1, 1, smem, 0, params, nullptr));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(c.data(), dc, 65536));
    char path[512]; snprintf(path, sizeof path, "%s.%d.bin", argv[4], i);
    FILE* f = fopen(path, "wb"); fwrite(c.data(), 1, c.size(), f); fclose(f);
  }
  printf("ok\n");
  return 0;
}
