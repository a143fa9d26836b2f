// Runs the tensor-copy conformance kernels (mbarrier.hw.tma) on the GPU through the CUDA driver.
//   run_cases DIR [RUNS]
// DIR/manifest.txt has one line a case: NAME PTX INPUT IN_BYTES OUT_BYTES CLUSTER; DIR/NAME.cubin is the
// case's kernel (ptxas -arch=sm_90a DIR/PTX) and DIR/NAME.tmap the arguments of its encode call, integers
// in the order mbarrier.hw.tma.Case.tmap_args writes them:
//   mode(0 tiled, 1 im2col) dataType rank interleave swizzle l2Promotion oobFill
//   globalDim[rank] globalStrides[rank-1] elementStrides[rank]
//   tiled: boxDim[rank]   im2col: lowerCorner[rank-2] upperCorner[rank-2] channelsPerPixel pixelsPerColumn
// Each case gets a fresh context (a fault in one cannot poison the next), the tensor from INPUT in global
// memory (the map's globalAddress), an output buffer filled with 0xA5, CLUSTER CTAs of 128 threads (a
// cluster of that many when above 1), RUNS launches, the tensor restored before each; each launch writes
// DIR/NAME.out<i> (the output buffer, then the tensor as the kernel left it), an error DIR/NAME.err.
// Exit 0 when every case ran.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

static std::vector<char> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

static void write_file(const std::string& path, const std::vector<char>& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
}

static std::string error(CUresult r, const char* what) {
  const char* s = nullptr;
  cuGetErrorString(r, &s);
  return std::string(what) + ": " + (s ? s : "unknown error");
}

#define CHECK(x)                                   \
  do {                                             \
    CUresult r_ = (x);                             \
    if (r_ != CUDA_SUCCESS) return error(r_, #x);  \
  } while (0)

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

static std::string run_case(CUdevice dev, const std::string& dir, const std::string& name,
                            const std::string& input, size_t in_bytes, size_t out_bytes, unsigned cluster,
                            int runs) {
  std::vector<char> in = read_file(dir + "/" + input);
  if (in.size() != in_bytes) return "input file " + input + " has " + std::to_string(in.size()) + " bytes";
  CUcontext ctx;
  CHECK(cuCtxCreate(&ctx, nullptr, 0, dev));
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
    for (int i = 0; i < runs; ++i) {
      CHECK(cuMemcpyHtoD(din, in.data(), in_bytes));
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

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [RUNS]\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  CUdevice dev;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS) {
    std::fprintf(stderr, "no CUDA device\n");
    return 2;
  }
  std::ifstream manifest(dir + "/manifest.txt");
  std::string line;
  int failed = 0, total = 0;
  while (std::getline(manifest, line)) {
    std::istringstream fields(line);
    std::string name, ptx, input;
    size_t in_bytes = 0, out_bytes = 0;
    unsigned cluster = 1;
    if (!(fields >> name >> ptx >> input >> in_bytes >> out_bytes >> cluster)) continue;
    ++total;
    std::string why = run_case(dev, dir, name, input, in_bytes, out_bytes, cluster, runs);
    if (!why.empty()) {
      ++failed;
      write_file(dir + "/" + name + ".err", std::vector<char>(why.begin(), why.end()));
      std::fprintf(stderr, "%s: %s\n", name.c_str(), why.c_str());
    }
  }
  std::printf("%d cases, %d failed\n", total, failed);
  return failed ? 1 : 0;
}
