"""H200 truth for Triton's sm_90a TMA-descriptor GEMM (host TensorDescriptor -> CUtensorMap params):
runs examples/triton/tma_gemm.py's kernel on inputs drawn here, writes $OUT/tma_gemm.npz (A, B, C),
the PTX Triton compiled ($OUT/tma_gemm.sm_90a.ptx) and its metadata ($OUT/tma_gemm.json).
Run by bench/device/tma_truth.sh."""
import json
import os
import sys

import numpy as np
import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tma_gemm import BK, BM, BN, K, M, N, SEED, tma_gemm  # noqa: E402

out = os.environ.get("OUT", ".")
rng = np.random.default_rng(SEED)
A = rng.standard_normal((M, K)).astype(np.float16)
B = rng.standard_normal((K, N)).astype(np.float16)
a, b = torch.tensor(A, device="cuda"), torch.tensor(B, device="cuda")
c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
ad = TensorDescriptor.from_tensor(a, [BM, BK])
bd = TensorDescriptor.from_tensor(b, [BK, BN])
cd = TensorDescriptor.from_tensor(c, [BM, BN])
grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
k = tma_gemm[grid](ad, bd, cd, M, N, K, BM=BM, BN=BN, BK=BK, num_warps=4, num_stages=2)
torch.cuda.synchronize()
C = c.cpu().numpy()
np.savez(os.path.join(out, "tma_gemm.npz"), A=A, B=B, C=C)
open(os.path.join(out, "tma_gemm.sm_90a.ptx"), "w").write(k.asm["ptx"])
meta = {kk: (v if isinstance(v, (int, float, str, list, dict, bool, type(None))) else str(v))
        for kk, v in k.metadata._asdict().items()}
meta["grid"] = list(grid)
meta["device"] = torch.cuda.get_device_name()
meta["triton"] = triton.__version__
ref = A.astype(np.float32) @ B.astype(np.float32)
meta["max_abs_err_vs_fp32"] = float(np.nanmax(np.abs(C.astype(np.float32) - ref)))
meta["nan_count"] = int(np.isnan(C).sum())
json.dump(meta, open(os.path.join(out, "tma_gemm.json"), "w"), indent=1, default=str)
print("tma_gemm", grid, "max abs err vs fp32", meta["max_abs_err_vs_fp32"], "nans", meta["nan_count"])
