"""float64 / exact references for the microbenchmarks (names as in ``manifest.json``).

Each function takes the decoded inputs and scalars and returns the expected output buffers, the
convention of ``kernlens run --reference``.
"""

from __future__ import annotations

import numpy as np


def _chain(v, a, b, n):
    for _ in range(n):
        v = v * a + b
    return v


def ffma_dep(d):
    return {"y": _chain(d["x"].astype(np.float64), float(d["a"]), float(d["b"]), 16 * int(d["iters"]))}


def ffma_indep(d):
    v0 = d["x"].astype(np.float64)
    n = 2 * int(d["iters"])
    return {"y": sum(_chain(v0 + k, float(d["a"]), float(d["b"]), n) for k in range(8))}


def _h(v):
    return np.float64(np.float16(v))


def hfma2_dep(d):
    # a and b are rounded to fp16 once (0.5 and 0.25 are exact); the chain contracts, so fp16 rounding stays small
    return {"y": _chain(d["x"].astype(np.float64), _h(d["a"]), _h(d["b"]), 16 * int(d["iters"]))}


def hfma2_indep(d):
    a, b = _h(d["a"]), _h(d["b"])
    v = d["x"].astype(np.float64)
    starts = [v]
    for _ in range(7):
        starts.append(starts[-1] + a)
    return {"y": sum(_chain(s, a, b, 2 * int(d["iters"])) for s in starts)}


def smem_conflict(d):
    threads = d["out"].size
    lane = np.arange(threads) % 32
    s = (np.arange(1024) & 63).astype(np.float64)
    j = np.arange(8 * int(d["iters"]))
    idx = (lane[:, None] * int(d["stride"]) + j[None, :]) & 1023
    return {"out": s[idx].sum(axis=1)}


def copy_f4(d):
    return {"dst": d["src"].astype(np.float64) + (int(d["reps"]) - 1)}


def strided_load(d):
    T = d["out"].size
    k = np.arange(int(d["per_thread"]))
    idx = (np.arange(T)[:, None] + k[None, :] * T) * int(d["stride"])
    return {"out": d["src"].astype(np.float64)[idx].sum(axis=1)}


def transpose(d):
    return {"out": d["inp"].astype(np.float64).T}


def atomic_same(d):
    return {"out": d["out"].astype(np.float64) + 132 * 256 * int(d["per_thread"])}


def atomic_spread(d):
    return {"out": d["out"].astype(np.float64) + int(d["per_thread"])}
