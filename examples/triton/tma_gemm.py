"""Triton's TMA GEMM for sm_90a: host TensorDescriptors become CUtensorMap kernel parameters, loads and
the store become cp.async.bulk.tensor ([%rd11, {%r72, %r37}] operands) with mbarrier complete_tx,
the product wgmma. C = A @ B in fp16 with fp32 accumulation; M, N, K are not multiples of the
blocks, so the last boxes read out-of-bound zeros and the store clips.
examples/ptx/tma/tma_gemm.sm_90a.ptx is what Triton 3.6.0 compiled on the H200
(bench/device/tma_gemm_truth.py)."""
import triton
import triton.language as tl

M, N, K = 96, 80, 72
BM, BN, BK = 64, 64, 32
SEED = 11


@triton.jit
def tma_gemm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([om, k])
        b = b_desc.load([k, on])
        acc = tl.dot(a, b, acc)
    c_desc.store([om, on], acc.to(tl.float16))
