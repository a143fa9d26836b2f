// What the GPU recorders' runners share (tools/tma/run_cases.cu, tools/wgmma/run_cases.cu): files in and
// out, a CUDA driver error as text, and the loop over DIR/manifest.txt.
//   run_cases DIR [RUNS]
// DIR/manifest.txt has one line a case: NAME PTX INPUT IN_BYTES OUT_BYTES, then the fields the recorder
// adds; DIR/NAME.cubin is the case's kernel (ptxas -arch=sm_90a DIR/PTX), DIR/INPUT its input. A case's
// error goes to DIR/NAME.err and stderr. Exit 0 when every case ran, 1 when one failed, 2 without a GPU.
#pragma once

#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
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

// One case of the manifest, its input read: what a recorder's runner gets.
struct Case {
  CUdevice dev;
  std::string dir, name;
  std::vector<char> in;
  size_t out_bytes;
  int runs;
  std::istream& more;  // the rest of the manifest line: the recorder's own fields
};

// Runs `run_case` (an error in words, or "") on every case of DIR/manifest.txt.
static int run_manifest(int argc, char** argv, const std::function<std::string(Case&)>& run_case) {
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
    Case c{dev, dir, name, read_file(dir + "/" + input), out_bytes, runs, fields};
    std::string why = c.in.size() != in_bytes
                          ? "input file " + input + " has " + std::to_string(c.in.size()) + " bytes"
                          : run_case(c);
    if (!why.empty()) {
      ++failed;
      write_file(dir + "/" + name + ".err", std::vector<char>(why.begin(), why.end()));
      std::fprintf(stderr, "%s: %s\n", name.c_str(), why.c_str());
    }
  }
  std::printf("%d cases, %d failed\n", total, failed);
  return failed ? 1 : 0;
}
