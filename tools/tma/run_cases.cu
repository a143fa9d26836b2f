// Runs the tensor-copy conformance kernels (mbarrier.hw.tma) on the GPU through the CUDA driver.
//   run_cases DIR [RUNS]
// DIR/manifest.txt has one line a case: NAME PTX INPUT IN_BYTES OUT_BYTES CLUSTER (tools/driver_cases.h);
// DIR/NAME.tmap holds the arguments of the case's encode call, integers
// in the order mbarrier.hw.tma.Case.tmap_args writes them:
//   mode(0 tiled, 1 im2col) dataType rank interleave swizzle l2Promotion oobFill
//   globalDim[rank] globalStrides[rank-1] elementStrides[rank]
//   tiled: boxDim[rank]   im2col: lowerCorner[rank-2] upperCorner[rank-2] channelsPerPixel pixelsPerColumn
// Each case gets a fresh context (a fault in one cannot poison the next), the tensor from INPUT in global
// memory (the map's globalAddress), an output buffer filled with 0xA5, CLUSTER CTAs of 128 threads (a
// cluster of that many when above 1), RUNS launches, the tensor restored before each; each launch writes
// DIR/NAME.out<i> (the output buffer, then the tensor as the kernel left it), an error DIR/NAME.err.
// Exit 0 when every case ran.
#include "../driver_cases.h"

// The map of DIR/NAME.tmap over the tensor at `address`.
static std::string encode(const std::string& path, CUdeviceptr address, CUtensorMap* map) {
  std::ifstream f(path);
  std::vector<long long> v((std::istream_iterator<long long>(f)), std::istream_iterator<long long>());
  if (v.size() < 7) return "tensor map file " + path + " is short";
  size_t at = 0;
  int mode = static_cast<int>(v[at++]);
  auto type = static_cast<CUtensorMapDataType>(v[at++]);
  auto rank = static_cast<cuuint32_t>(v[at++]);
  auto interleave = static_cast<CUtensorMapInterleave>(v[at++]);
  auto swizzle = static_cast<CUtensorMapSwizzle>(v[at++]);
  auto l2 = static_cast<CUtensorMapL2promotion>(v[at++]);
  auto fill = static_cast<CUtensorMapFloatOOBfill>(v[at++]);
  size_t need = at + rank + (rank - 1) + rank + (mode == 0 ? rank : 2 * (rank - 2) + 2);
  if (rank < 1 || rank > 5 || v.size() != need) return "tensor map file " + path + " has the wrong length";
  cuuint64_t dims[5], strides[4];
  cuuint32_t estr[5], box[5];
  int lower[3], upper[3];
  for (cuuint32_t i = 0; i < rank; ++i) dims[i] = static_cast<cuuint64_t>(v[at++]);
  for (cuuint32_t i = 0; i + 1 < rank; ++i) strides[i] = static_cast<cuuint64_t>(v[at++]);
  for (cuuint32_t i = 0; i < rank; ++i) estr[i] = static_cast<cuuint32_t>(v[at++]);
  void* base = reinterpret_cast<void*>(address);
  if (mode == 0) {
    for (cuuint32_t i = 0; i < rank; ++i) box[i] = static_cast<cuuint32_t>(v[at++]);
    CHECK(cuTensorMapEncodeTiled(map, type, rank, base, dims, strides, box, estr, interleave, swizzle, l2,
                                 fill));
    return "";
  }
  for (cuuint32_t i = 0; i + 2 < rank; ++i) lower[i] = static_cast<int>(v[at++]);
  for (cuuint32_t i = 0; i + 2 < rank; ++i) upper[i] = static_cast<int>(v[at++]);
  auto cpp = static_cast<cuuint32_t>(v[at++]);
  auto ppc = static_cast<cuuint32_t>(v[at++]);
  CHECK(cuTensorMapEncodeIm2col(map, type, rank, base, dims, strides, lower, upper, cpp, ppc, estr,
                                interleave, swizzle, l2, fill));
  return "";
}

static std::string run_case(Case& c) {
  unsigned cluster = 1;
  if (!(c.more >> cluster)) return "the manifest line has no CLUSTER field";
  size_t in_bytes = c.in.size(), out_bytes = c.out_bytes;
  const std::string &dir = c.dir, &name = c.name;
  CUcontext ctx;
  CHECK(cuCtxCreate(&ctx, nullptr, 0, c.dev));
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr din = 0, dout = 0;
  alignas(64) CUtensorMap map;
  std::vector<char> out(out_bytes + in_bytes);
  auto body = [&]() -> std::string {
    CHECK(cuModuleLoad(&mod, (dir + "/" + name + ".cubin").c_str()));
    CHECK(cuModuleGetFunction(&fn, mod, "tma_case"));
    CHECK(cuMemAlloc(&din, in_bytes));
    CHECK(cuMemAlloc(&dout, out_bytes));
    std::string why = encode(dir + "/" + name + ".tmap", din, &map);
    if (!why.empty()) return why;
    for (int i = 0; i < c.runs; ++i) {
      CHECK(cuMemcpyHtoD(din, c.in.data(), in_bytes));
      CHECK(cuMemsetD8(dout, 0xA5, out_bytes));
      void* args[] = {&map, &din, &dout};
      CUlaunchConfig config = {};
      CUlaunchAttribute attr[1];
      config.gridDimX = cluster;
      config.gridDimY = config.gridDimZ = 1;
      config.blockDimX = 128;
      config.blockDimY = config.blockDimZ = 1;
      if (cluster > 1) {
        attr[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr[0].value.clusterDim.x = cluster;
        attr[0].value.clusterDim.y = 1;
        attr[0].value.clusterDim.z = 1;
        config.attrs = attr;
        config.numAttrs = 1;
      }
      CHECK(cuLaunchKernelEx(&config, fn, args, nullptr));
      CHECK(cuCtxSynchronize());
      CHECK(cuMemcpyDtoH(out.data(), dout, out_bytes));
      CHECK(cuMemcpyDtoH(out.data() + out_bytes, din, in_bytes));
      write_file(dir + "/" + name + ".out" + std::to_string(i), out);
    }
    return "";
  };
  std::string why = body();
  cuCtxDestroy(ctx);
  return why;
}

int main(int argc, char** argv) { return run_manifest(argc, argv, run_case); }
