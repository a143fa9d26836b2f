#!/usr/bin/env bash
# Regenerates the real PTX modules under tests/ptx/modules/ from their .cu sources with nvcc (CUDA 13.0).
# Each line: source, output name, extra nvcc flags. The .ptx files are committed; CI does not rerun this.
# nvcc compiles a copy of the sources at tests/ptx/modules/ under a fixed build directory, so the output
# is the same from any checkout (-G names internal symbols after the source's absolute path), and
# tools/ptx_relpaths.py makes the paths it writes (.file, the DWARF compile unit's) relative to the
# repository; the Triton modules get the same.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rel=tests/ptx/modules
mods="$root/$rel"
bdir="${TMPDIR:-/tmp}/mbarrier-nvcc-build"
rm -rf "$bdir" && mkdir -p "$bdir/$rel" && cp "$mods"/*.cu "$bdir/$rel/"
cd "$bdir"
build() {  # build SRC OUT FLAGS... ; then ptxas must accept the result for its own target
  local src=$1 out=$mods/$2
  shift 2
  nvcc -ptx "$@" "$rel/$src" -o "$out"
  python3 "$root/tools/ptx_relpaths.py" "$bdir" "$out"
  ptxas -arch="$(awk '/^\.target/ {sub(",", "", $2); print $2; exit}' "$out")" "$out" -o /dev/null
  echo "$(basename "$out"): nvcc -ptx $* $src"
}
build barrier_memcpy_async.cu barrier_memcpy_async.sm_90.ptx -arch=sm_90
build barrier_memcpy_async.cu barrier_memcpy_async.sm_80.ptx -arch=sm_80
build barrier_memcpy_async.cu barrier_memcpy_async.sm_90.G.ptx -arch=sm_90 -G
build ptx_mbarrier.cu ptx_mbarrier.sm_90.ptx -arch=sm_90
build ptx_mbarrier.cu ptx_mbarrier.sm_90.lineinfo.ptx -arch=sm_90 -lineinfo
build ptx_mbarrier.cu ptx_mbarrier.sm_100a.ptx -arch=sm_100a
build bulk_copy.cu bulk_copy.sm_90.ptx -arch=sm_90
build bulk_copy.cu bulk_copy.sm_90a.G.ptx -arch=sm_90a -G
build bulk_tensor.cu bulk_tensor.sm_90a.ptx -arch=sm_90a
build cluster.cu cluster.sm_90.ptx -arch=sm_90
build cluster.cu cluster.sm_90.lineinfo.ptx -arch=sm_90 -lineinfo
build inline_asm_family.cu inline_asm_family.sm_90.ptx -arch=sm_90
build inline_asm_sm80.cu inline_asm_sm80.sm_80.ptx -arch=sm_80
build generic_mix.cu generic_mix.sm_90.ptx -arch=sm_90
build generic_mix.cu generic_mix.sm_90.G.ptx -arch=sm_90 -G
build generic_mix.cu generic_mix.sm_100a.ptx -arch=sm_100a
build nvcc_features.cu nvcc_features.sm_90a.ptx -arch=sm_90a
# Triton kernels (needs `pip install triton`; no GPU needed: triton.compile with an explicit GPUTarget).
cd "$mods"
rm -rf "$bdir"
if python3 -c "import triton" 2>/dev/null; then
  TRITON_DEFAULT_FP_FUSION=1 python3 triton_kernels.py
  python3 "$root/tools/ptx_relpaths.py" "$root" triton_*.ptx
  for f in triton_*.ptx; do
    ptxas -arch="$(awk '/^\.target/ {sub(",", "", $2); print $2; exit}' "$f")" "$f" -o /dev/null
  done
else
  echo "triton not importable: Triton modules left as they are" >&2
fi
