"""float64 / exact references for the never-seen kernels (names as in ``manifest.json``).

Each function takes the decoded inputs and scalars and returns the expected output buffers, the
convention of ``kernlens run --reference`` and of ``../manifest.json``.
"""

from __future__ import annotations

import numpy as np


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def sgemm(d):
    return {"C": _f64(d["A"]) @ _f64(d["B"])}


def histogram256(d):
    n = int(d["n"])
    return {"bins": np.bincount(np.asarray(d["data"]).reshape(-1)[:n].astype(np.int64), minlength=256).astype(np.uint32)}


def scan_block(d):
    x = _f64(d["x"]).reshape(-1, 1024)
    y = np.cumsum(x, axis=1)
    return {"y": y.reshape(-1), "sums": y[:, -1]}


def conv1d(d):
    x, w = _f64(d["x"]), _f64(d["w"])
    r = (w.size - 1) // 2
    xp = np.concatenate([np.zeros(r), x, np.zeros(r)])
    return {"y": sum(w[j] * xp[j:j + x.size] for j in range(w.size))}


def _erf(x):
    from math import erf
    return np.vectorize(erf, otypes=[np.float64])(x)


def gelu(d):
    x = _f64(d["x"])
    return {"y": 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))}


def gemv(d):
    return {"y": _f64(d["A"]) @ _f64(d["x"])}


def rmsnorm(d):
    x, w = _f64(d["x"]), _f64(d["w"])
    h = int(d["H"])
    x = x.reshape(-1, h)
    r = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + float(d["eps"]))
    return {"y": (x * r * w[None, :]).reshape(-1)}


def igemm_nt(d):
    return {"C": (np.asarray(d["A"], dtype=np.int64) @ np.asarray(d["Bt"], dtype=np.int64).T).astype(np.int32)}


def hgemm_nt(d):
    return {"C": _f64(d["A"]) @ _f64(d["Bt"]).T}


def stencil2d(d):
    u = _f64(d["u"])
    c0, c1 = float(d["c0"]), float(d["c1"])
    v = u.copy()
    v[1:-1, 1:-1] = c0 * u[1:-1, 1:-1] + c1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return {"v": v}
