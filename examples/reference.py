"""float64 / exact-integer references for the example kernels.

Each function takes the decoded inputs and scalars (names as in ``launch/<kernel>.json``) and
returns the expected output buffers, the convention of ``kernlens run --reference``.
"""

from __future__ import annotations

import numpy as np


def sgemm_tiled(d):
    return {"C": d["A"].astype(np.float64) @ d["B"].astype(np.float64)}


def hgemm_wmma(d):
    # B is stored column-major: row n of the N x K buffer is column n of B.
    return {"C": d["A"].astype(np.float64) @ d["B"].astype(np.float64).T}


def dot_dp4a(d):
    return {"out": d["a"].astype(np.int64) @ d["b"].astype(np.int64)}


def reduce_sum(d):
    return {"out": d["out"].astype(np.float64) + np.sum(d["x"].astype(np.float64))}


def hfma2_axpy(d):
    a = np.float16(d["a"])  # the kernel rounds a to fp16 once
    x = d["x"].astype(np.float64)
    y = d["y"].astype(np.float64)
    return {"y": float(a) * x + y}


def last_block(d):
    x = d["inp"].astype(np.float64)
    parts = np.array([x[b * 128:(b + 1) * 128].sum() for b in range(8)])
    return {"partial": parts, "out": np.array([parts.sum()])}


def publish_flag(d):
    data = 1.0 + np.arange(64, dtype=np.float64)
    return {"data": data, "flag": np.array([1]), "out": data}


def cp_async_early(d):
    return {"out": 2.0 * d["inp"].astype(np.float64)}


def wgmma_early(d):
    return {"C": d["A"].astype(np.float64) @ d["W"].astype(np.float64).T}


def tma_gemm(d):
    return {"C": d["A"].astype(np.float64) @ d["B"].astype(np.float64)}
