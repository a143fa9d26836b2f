"""A Triton TMA matmul with host-side tensor descriptors (`TensorDescriptor.from_tensor`: Triton's
launcher encodes each CUtensorMap with cuTensorMapEncodeTiled), run on integer-valued f16 data and
checked against torch: the Python program `mbarrier capture` is tested on (tests/capture/gpu.sh).

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 TRITON_CACHE_DIR=tc python3 triton_tma_matmul.py M N K
"""

from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

BM, BN, BK = 64, 64, 64


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([pid_n * BN, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


def main() -> int:
    m, n, k = (int(x) for x in sys.argv[1:4])
    g = torch.Generator(device="cuda").manual_seed(7)
    # -1, 0, 1: every product and sum is exact in f32, and in f16 at the end (|C| <= K <= 2048)
    a = torch.randint(-1, 2, (m, k), device="cuda", generator=g).to(torch.float16)
    b = torch.randint(-1, 2, (n, k), device="cuda", generator=g).to(torch.float16)
    c = torch.full((m, n), -7.0, device="cuda", dtype=torch.float16)   # poison
    blocks = ((a, BM, BK), (b, BN, BK), (c, BM, BN))
    descs = [TensorDescriptor.from_tensor(t, [rows, cols]) for t, rows, cols in blocks]
    matmul_tma[(triton.cdiv(m, BM), triton.cdiv(n, BN))](*descs, k, BM=BM, BN=BN, BK=BK, num_warps=4,
                                                         num_stages=2)
    torch.cuda.synchronize()
    want = (a.float() @ b.float().T).half()
    bad = int((c != want).sum())
    print(f"triton_tma_matmul {m}x{n}x{k}: {bad} of {m * n} elements of C differ from A.B^T")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
