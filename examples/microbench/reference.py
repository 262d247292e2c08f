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


def read_cg(d):
    # every thread sums its grid-stride slice (fp32 sums in the kernel: a loose tolerance)
    T = d["out"].size
    src = d["src"].astype(np.float64).reshape(-1, 4).sum(axis=1)
    n4 = int(d["n4"])
    acc = np.zeros(T)
    for i0 in range(0, n4, T):
        part = src[i0:i0 + T]
        acc[:len(part)] += part
    return {"out": acc * int(d["reps"])}


def write_f4(d):
    out = np.zeros(d["dst"].size)
    out[:4 * int(d["n4"])] = int(d["reps"]) - 1
    return {"dst": out}


def write_strided(d):
    out = np.zeros(d["dst"].size)
    stride, per = int(d["stride"]), int(d["per_thread"])
    T = out.size // (per * stride)
    out[np.arange(T * per) * stride] = int(d["reps"]) - 1
    return {"dst": out}


def hfma2_ffma_mix(d):
    a, b = float(d["a"]), float(d["b"])
    n = 2 * int(d["iters"])
    v = d["x"].astype(np.float64)
    vf = d["xf"].astype(np.float64)
    ah, bh = _h(a), _h(b)
    return {"y": sum(_chain(v + k * ah, ah, bh, n) for k in range(4)),
            "yf": sum(_chain(vf + k * a, a, b, n) for k in range(4))}


def atomic_addrs(d):
    out = d["out"].astype(np.float64).copy()
    naddr, per = int(d["naddr"]), int(d["per_thread"])
    warps = 132 * 256 // 32
    for a in range(naddr):
        out[a * 32] += 32 * per * len(range(a, warps, naddr))
    return {"out": out}


def atomic_same_33(d):
    return {"out": d["out"].astype(np.float64) + 33 * 256 * int(d["per_thread"])}


def _mix_ratio(d, nh, nf):
    a, b = float(d["a"]), float(d["b"])
    n = 2 * int(d["iters"])
    v = d["x"].astype(np.float64)
    vf = d["xf"].astype(np.float64)
    ah, bh = _h(a), _h(b)
    return {"y": sum(_chain(v + k * ah, ah, bh, n) for k in range(nh)),
            "yf": sum(_chain(vf + k * a, a, b, n) for k in range(nf))}


def hfma2_ffma_1to3(d):
    return _mix_ratio(d, 2, 6)


def hfma2_ffma_3to1(d):
    return _mix_ratio(d, 6, 2)


def cvt_f16_ffma(d):
    a, b = np.float32(d["a"]), np.float32(d["b"])
    f0 = d["xf"].astype(np.float32)
    total = np.zeros(f0.shape, dtype=np.float64)
    for k in range(8):
        f = f0 + np.float32(k) * a if k else f0.copy()
        if k:                       # f[k] = f[k-1] + a in the kernel (fp32 adds)
            f = f0.copy()
            for _ in range(k):
                f = (f + a).astype(np.float32)
        for _ in range(int(d["iters"])):
            f = (f.astype(np.float16).astype(np.float64) * float(a) + float(b)).astype(np.float32)
        total += f
    return {"yf": total}


def atomic_spacing(d):
    out = d["out"].astype(np.float64).copy()
    naddr, per, s = int(d["naddr"]), int(d["per_thread"]), int(d["spacing"])
    warps = 132 * 256 // 32
    for a in range(naddr):
        out[a * s] += 32 * per * len(range(a, warps, naddr))
    return {"out": out}
