"""float64 / exact-integer references for the PTX generators' launch specs (``kernlens run --launch``).

Each takes the decoded inputs and scalars of a generated launch spec and returns the expected
output buffers. ``gemm_XY``: X, Y = ``n`` (stored as the math shape) or ``t`` (stored transposed)
for A and B; ``C`` = alpha * A @ B + beta * C (integers exact, wrapping like s32).
"""

from __future__ import annotations

import numpy as np


def _gemm(d, ta: bool, tb: bool):
    a, b = d["A"], d["B"]
    if a.dtype.kind in "iu":
        A = a.astype(np.int64)
        B = b.astype(np.int64)
        acc = (A.T if ta else A) @ (B.T if tb else B)
        out = acc * int(d["alpha"]) + int(d["beta"]) * d["C"].astype(np.int64)
        return {"C": ((out + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int64)}
    A = a.astype(np.float64)
    B = b.astype(np.float64)
    acc = (A.T if ta else A) @ (B.T if tb else B)
    return {"C": float(d["alpha"]) * acc + float(d["beta"]) * d["C"].astype(np.float64)}


def gemm_nn(d):
    return _gemm(d, False, False)


def gemm_nt(d):
    return _gemm(d, False, True)


def gemm_tn(d):
    return _gemm(d, True, False)


def gemm_tt(d):
    return _gemm(d, True, True)


def reduce_sum(d):
    return {"out": d["x"].astype(np.float64).sum(axis=1)}


def reduce_max(d):
    return {"out": d["x"].astype(np.float64).max(axis=1)}


def softmax(d):
    x = d["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}
