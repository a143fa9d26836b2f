#!/bin/sh
# Regenerates tests/capture/data/ on a machine with a Hopper GPU (what test_recorded.py replays): captures
# the two programs of tests/capture/programs with `mbarrier capture` and keeps each launch file, its
# buffers (before the launch, and after it as the GPU left them) and its PTX.
#
#   CUTLASS_DIR=.../cutlass_library/source tests/capture/gpu.sh OUTDIR      # builds cutlass_gemm
#   CUTLASS_BIN=.../cutlass_gemm tests/capture/gpu.sh OUTDIR                # or takes it built
#
# CUTLASS_DIR: the nvidia-cutlass 4.2.0.0 wheel unzipped (pip download --no-deps nvidia-cutlass==4.2.0.0),
# its cutlass_library/source. Needs nvcc 13.0 (for the build), PyTorch and Triton 3.6 (for the second).
set -eu
out=${1:?usage: gpu.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
bin=${CUTLASS_BIN:-}
if [ -z "$bin" ]; then
    cut=${CUTLASS_DIR:?set CUTLASS_DIR or CUTLASS_BIN}
    bin=$tmp/cutlass_gemm
    nvcc -std=c++17 --expt-relaxed-constexpr -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]' \
        -I"$cut/include" -I"$cut/tools/util/include" "$here/programs/cutlass_gemm.cu" -o "$bin"
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# one cluster of two CTAs (256 x 128 x 128: two 128 x 128 tiles, two k-blocks of 64)
python3 -m mbarrier capture -o "$tmp/cutlass_gemm" -- "$bin" 256 128 128
# one CTA (64 x 64 x 128: one 64 x 64 tile, two k-blocks of 64); exact allocations, not torch's pool
PYTORCH_NO_CUDA_MEMORY_CACHING=1 TRITON_CACHE_DIR=$tmp/triton-cache python3 -m mbarrier capture \
    --kernel 'matmul_tma*' --ptx "$tmp/triton-cache" -o "$tmp/triton_tma_matmul" -- \
    python3 "$here/programs/triton_tma_matmul.py" 64 64 128
# a grid of 2 x 2 CTAs (128 x 128 x 128), of which the test replays one
PYTORCH_NO_CUDA_MEMORY_CACHING=1 TRITON_CACHE_DIR=$tmp/triton-cache-grid python3 -m mbarrier capture \
    --kernel 'matmul_tma*' --ptx "$tmp/triton-cache-grid" -o "$tmp/triton_tma_matmul_grid" -- \
    python3 "$here/programs/triton_tma_matmul.py" 128 128 128
for d in cutlass_gemm triton_tma_matmul triton_tma_matmul_grid; do
    mkdir -p "$out/$d"
    cp "$tmp/$d"/*.launch.json "$tmp/$d"/*.bin "$out/$d/"
done
# Triton's PTX is built from our own script and kept; CUTLASS's is not (it is generated from CUTLASS's
# sources): the test rebuilds it from the pinned wheel and checks it against the hash of the one the GPU ran.
cp "$tmp"/triton_tma_matmul/module-*.ptx "$out/triton_tma_matmul/"
cp "$tmp"/triton_tma_matmul_grid/module-*.ptx "$out/triton_tma_matmul_grid/"
(cd "$here" && python3 -c 'import sys, hashlib, test_recorded as t; print(hashlib.sha256(t._code(open(sys.argv[1]).read()).encode()).hexdigest(), " the code (test_recorded._code) of the PTX the GPU ran")' "$tmp"/cutlass_gemm/module-*.ptx) > "$out/cutlass_gemm/module.sha256"
rm -rf "$tmp"
