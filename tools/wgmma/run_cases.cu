// Runs the wgmma.mma_async conformance kernels (mbarrier.hw.wgmma) on the GPU through the CUDA driver.
//   run_cases DIR [RUNS]
// DIR/manifest.txt has one line a case: NAME PTX INPUT IN_BYTES OUT_BYTES (tools/driver_cases.h). Each
// case gets a fresh context (a fault in one cannot poison the next), its input buffer, an output buffer
// filled with 0xA5, one CTA of 128 threads, RUNS launches; each launch's output goes to DIR/NAME.out<i>.
#include "../driver_cases.h"

static std::string run_case(Case& c) {
  size_t in_bytes = c.in.size(), out_bytes = c.out_bytes;
  CUcontext ctx;
  CHECK(cuCtxCreate(&ctx, nullptr, 0, c.dev));
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr din = 0, dout = 0;
  std::vector<char> out(out_bytes);
  auto body = [&]() -> std::string {
    CHECK(cuModuleLoad(&mod, (c.dir + "/" + c.name + ".cubin").c_str()));
    CHECK(cuModuleGetFunction(&fn, mod, "wgmma_case"));
    CHECK(cuMemAlloc(&din, in_bytes));
    CHECK(cuMemAlloc(&dout, out_bytes));
    CHECK(cuMemcpyHtoD(din, c.in.data(), in_bytes));
    for (int i = 0; i < c.runs; ++i) {
      CHECK(cuMemsetD8(dout, 0xA5, out_bytes));
      void* args[] = {&din, &dout};
      CHECK(cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
      CHECK(cuCtxSynchronize());
      CHECK(cuMemcpyDtoH(out.data(), dout, out_bytes));
      write_file(c.dir + "/" + c.name + ".out" + std::to_string(i), out);
    }
    return "";
  };
  std::string why = body();
  cuCtxDestroy(ctx);
  return why;
}

int main(int argc, char** argv) { return run_manifest(argc, argv, run_case); }
