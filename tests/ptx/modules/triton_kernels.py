"""Triton kernels compiled to PTX without a GPU (triton.compile with an explicit GPUTarget), for the
parser's real-module tests. Run by tools/gen_modules.sh with Triton installed (`pip install triton`);
not imported by the tests. Writes triton_<kernel>.<target>.ptx next to this file."""

from __future__ import annotations

import sys
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                  stride_cn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK * stride_ak
        b += BK * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(tl.float16))


@triton.jit
def tma_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Tensor descriptors: TMA loads completing on mbarriers (cp.async.bulk.tensor ... complete_tx::bytes).
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=3):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@triton.jit
def ws_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # The same with warp specialization: producer and consumer warps hand stages over on mbarriers.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=3, warp_specialize=True):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


MATMUL_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
STRIDES = {f"stride_{s}": "i32" for s in ("am", "ak", "bk", "bn", "cm", "cn")}
BLOCKS = {"BM": 128, "BN": 128, "BK": 64}

KERNELS = [
    ("add", add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024},
     {}),
    ("matmul", matmul_kernel, MATMUL_SIG | STRIDES, BLOCKS, {"num_stages": 3, "num_warps": 8}),
    ("tma_matmul", tma_matmul_kernel, MATMUL_SIG, BLOCKS, {"num_warps": 8}),
    ("ws_matmul", ws_matmul_kernel, MATMUL_SIG, BLOCKS, {"num_warps": 4}),
]
TARGETS = [("sm_90", GPUTarget("cuda", 90, 32)), ("sm_100a", GPUTarget("cuda", 100, 32))]


def main() -> None:
    out = Path(__file__).parent
    for name, fn, sig, constexprs, options in KERNELS:
        for tname, target in TARGETS:
            signature = sig | {k: "constexpr" for k in constexprs}
            src = ASTSource(fn=fn, signature=signature, constexprs=constexprs)
            try:
                # PTX ISA 9.0: what ptxas of CUDA 13.0 (this project's oracle) reads; Triton 3.9 would
                # otherwise write .version 9.4 for its own newer ptxas.
                compiled = triton.compile(src, target=target, options=options | {"ptx_version": 90})
            except Exception as e:  # report and go on: one kernel that does not build is no reason to stop
                print(f"{name} {tname}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            f = out / f"triton_{name}.{tname}.ptx"
            f.write_text(compiled.asm["ptx"])
            print(f"{f.name}: triton {triton.__version__}, {tname}, {options}")


if __name__ == "__main__":
    main()
