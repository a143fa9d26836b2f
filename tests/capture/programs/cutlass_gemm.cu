// A CUTLASS 3.x Hopper GEMM as CUTLASS's example 48 builds it (bf16 x bf16 -> f32 accumulate, bf16 D,
// KernelTmaWarpSpecializedCooperative, cluster 2x1x1 with TMA multicast, TMA epilogue), run through
// GemmUniversalAdapter on integer-valued data and checked against a host product: the program
// `mbarrier capture` is tested on (tests/capture/gpu.sh). Headers: the nvidia-cutlass 4.2.0.0 wheel.
//
//   nvcc -std=c++17 --expt-relaxed-constexpr -gencode arch=compute_90a,code=[sm_90a,compute_90a] \
//        -I$CUT/include -I$CUT/tools/util/include cutlass_gemm.cu -o cutlass_gemm
//   ./cutlass_gemm M N K        (exit 0 when D equals A.B exactly)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/util/packed_stride.hpp"

using namespace cute;
using ElementA = cutlass::bfloat16_t;
using ElementB = cutlass::bfloat16_t;
using ElementC = cutlass::bfloat16_t;
using ElementAcc = float;
using LayoutA = cutlass::layout::RowMajor;
using LayoutB = cutlass::layout::ColumnMajor;
using LayoutC = cutlass::layout::ColumnMajor;
constexpr int Align = 8;
using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_2, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAcc, ElementAcc,
    ElementC, LayoutC, Align, ElementC, LayoutC, Align,
    cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, Align, ElementB, LayoutB, Align,
    ElementAcc, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<
        static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                        CollectiveEpilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main(int argc, char** argv) {
  if (argc != 4) { std::fprintf(stderr, "usage: %s M N K\n", argv[0]); return 2; }
  int M = std::atoi(argv[1]), N = std::atoi(argv[2]), K = std::atoi(argv[3]);
  // Small integers: every product and sum is exact in f32 and (|D| <= 256) in bf16.
  std::vector<ElementA> a(size_t(M) * K);
  std::vector<ElementB> b(size_t(N) * K);
  std::vector<ElementC> d(size_t(M) * N, ElementC(-7.0f));
  unsigned s = 12345;
  auto next = [&] { s = s * 1103515245u + 12345u; return int((s >> 16) % 3) - 1; };   // -1, 0, 1
  for (auto& x : a) x = ElementA(float(next()));
  for (auto& x : b) x = ElementB(float(next()));
  ElementA *dA; ElementB *dB; ElementC *dC, *dD;
  CHECK(cudaMalloc(&dA, a.size() * 2)); CHECK(cudaMalloc(&dB, b.size() * 2));
  CHECK(cudaMalloc(&dC, d.size() * 2)); CHECK(cudaMalloc(&dD, d.size() * 2));
  CHECK(cudaMemcpy(dA, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dC, d.data(), d.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dD, d.data(), d.size() * 2, cudaMemcpyHostToDevice));   // poison: -7 everywhere

  auto sA = cutlass::make_cute_packed_stride(typename Gemm::GemmKernel::StrideA{}, {M, K, 1});
  auto sB = cutlass::make_cute_packed_stride(typename Gemm::GemmKernel::StrideB{}, {N, K, 1});
  auto sC = cutlass::make_cute_packed_stride(typename Gemm::GemmKernel::StrideC{}, {M, N, 1});
  auto sD = cutlass::make_cute_packed_stride(typename Gemm::GemmKernel::StrideD{}, {M, N, 1});
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, 1},
                                {dA, sA, dB, sB}, {{1.0f, 0.0f}, dC, sC, dD, sD}};
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) { std::fprintf(stderr, "cannot implement\n"); return 1; }
  size_t ws = Gemm::get_workspace_size(args);
  void* workspace = nullptr;
  if (ws) CHECK(cudaMalloc(&workspace, ws));
  if (gemm.initialize(args, workspace) != cutlass::Status::kSuccess) { std::fprintf(stderr, "initialize failed\n"); return 1; }
  if (gemm.run() != cutlass::Status::kSuccess) { std::fprintf(stderr, "run failed\n"); return 1; }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(d.data(), dD, d.size() * 2, cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float want = 0;
      for (int k = 0; k < K; ++k) want += float(a[size_t(m) * K + k]) * float(b[size_t(n) * K + k]);
      if (float(d[size_t(n) * M + m]) != want) ++bad;   // D is column-major
    }
  std::printf("cutlass_gemm %dx%dx%d: %ld of %d elements of D differ from A.B (workspace %zu bytes)\n",
              M, N, K, bad, M * N, ws);
  return bad ? 1 : 0;
}
