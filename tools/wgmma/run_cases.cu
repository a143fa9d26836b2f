// Runs the wgmma.mma_async conformance kernels (mbarrier.hw.wgmma) on the GPU through the CUDA driver.
//   run_cases DIR [RUNS]
// DIR/manifest.txt has one line a case: NAME PTX INPUT IN_BYTES OUT_BYTES; DIR/NAME.cubin is the case's
// kernel (ptxas -arch=sm_90a DIR/PTX). Each case gets a fresh context (a fault in one cannot poison the
// next), its input buffer, an output buffer filled with 0xA5, one CTA of 128 threads, RUNS launches; each
// launch's output goes to DIR/NAME.out<i>, an error to DIR/NAME.err. Exit 0 when every case ran.
#include <cuda.h>

#include <cstdio>
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

static std::string run_case(CUdevice dev, const std::string& dir, const std::string& name,
                            const std::string& input, size_t in_bytes, size_t out_bytes, int runs) {
  std::vector<char> in = read_file(dir + "/" + input);
  if (in.size() != in_bytes) return "input file " + input + " has " + std::to_string(in.size()) + " bytes";
  CUcontext ctx;
  CHECK(cuCtxCreate(&ctx, nullptr, 0, dev));
  std::string why;
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr din = 0, dout = 0;
  std::vector<char> out(out_bytes);
  auto body = [&]() -> std::string {
    CHECK(cuModuleLoad(&mod, (dir + "/" + name + ".cubin").c_str()));
    CHECK(cuModuleGetFunction(&fn, mod, "wgmma_case"));
    CHECK(cuMemAlloc(&din, in_bytes));
    CHECK(cuMemAlloc(&dout, out_bytes));
    CHECK(cuMemcpyHtoD(din, in.data(), in_bytes));
    for (int i = 0; i < runs; ++i) {
      CHECK(cuMemsetD8(dout, 0xA5, out_bytes));
      void* args[] = {&din, &dout};
      CHECK(cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
      CHECK(cuCtxSynchronize());
      CHECK(cuMemcpyDtoH(out.data(), dout, out_bytes));
      write_file(dir + "/" + name + ".out" + std::to_string(i), out);
    }
    return "";
  };
  why = body();
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
    if (!(fields >> name >> ptx >> input >> in_bytes >> out_bytes)) continue;
    ++total;
    std::string why = run_case(dev, dir, name, input, in_bytes, out_bytes, runs);
    if (!why.empty()) {
      ++failed;
      write_file(dir + "/" + name + ".err", std::vector<char>(why.begin(), why.end()));
      std::fprintf(stderr, "%s: %s\n", name.c_str(), why.c_str());
    }
  }
  std::printf("%d cases, %d failed\n", total, failed);
  return failed ? 1 : 0;
}
