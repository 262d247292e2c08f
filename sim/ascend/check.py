"""``--check``: random inputs and the numpy reference, built from a generated kernel's header.

Generated kernels start with ``.meta op=gemm m=.. n=.. k=.. dtype=.. out=.. layout_a=.. ...``
(or ``op=reduce``/``op=softmax``); :func:`make_inputs` draws inputs, :func:`reference` computes
what the kernel must produce (fp32 / int32 accumulation), :func:`compare` gives the verdict::

    meta = read_meta(module)        # {'op': 'gemm', 'm': 100, ...}
    inputs = make_inputs(meta, seed=0)
    ok = compare(outputs, reference(meta, inputs), meta)   # {'passed': True, 'max_abs_err': ...}
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from isa import ir
from isa.errors import InputError

from .dataops import np_dtype, quantize


def read_meta(module: ir.Module) -> dict | None:
    for item in module.items:
        if isinstance(item, ir.Directive) and item.name == "meta":
            out = {}
            for word in item.args.split():
                k, _, v = word.partition("=")
                try:
                    out[k] = int(v)
                except ValueError:
                    try:
                        out[k] = float(v)
                    except ValueError:
                        out[k] = v
            return out
    return None


def _rand(rng, shape, dt):
    if dt == "s8":
        return rng.integers(-128, 128, size=shape, dtype=np.int8)
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(np_dtype(dt))


def make_inputs(meta: dict, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    op = meta.get("op")
    if op == "gemm":
        m, n, k, dt = meta["m"], meta["n"], meta["k"], meta["dtype"]
        a = _rand(rng, (m, k), dt)
        b = _rand(rng, (k, n), dt)
        a_st = a if meta["layout_a"] == "row" else np.ascontiguousarray(a.T)
        b_st = b if meta["layout_b"] == "row" else np.ascontiguousarray(b.T)
        return {"a": a_st.reshape(-1), "b": b_st.reshape(-1)}
    if op == "gemm_epilogue":
        m, n, k, dt = meta["m"], meta["n"], meta["k"], meta["dtype"]
        return {"a": _rand(rng, (m, k), dt).reshape(-1), "b": _rand(rng, (k, n), dt).reshape(-1),
                "bias": rng.uniform(-1, 1, n).astype(np.float32)}
    if op == "conv2d":
        from isa.generate.conv import pack_weights
        x = _rand(rng, (meta["h"], meta["w"], meta["cin"]), "f16")
        wt = _rand(rng, (meta["cout"], meta["cin"], meta["kh"], meta["kw"]), "f16")
        return {"x": x.reshape(-1), "w": pack_weights(wt, meta["cin"]).reshape(-1)}
    if op == "flash_attention":
        s, sk, d, dt = meta["sq"], meta["sk"], meta["d"], meta["dtype"]
        return {"q": _rand(rng, (s, d), dt).reshape(-1), "k": _rand(rng, (sk, d), dt).reshape(-1),
                "v": _rand(rng, (sk, d), dt).reshape(-1)}
    if op in ("reduce", "softmax"):
        return {"x": _rand(rng, (meta["rows"], meta["cols"]), meta["dtype"]).reshape(-1)}
    raise InputError(f"--check does not know how to build inputs for op={op}")


def reference(meta: dict, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    op = meta["op"]
    if op == "gemm_epilogue":
        m, n, k = meta["m"], meta["n"], meta["k"]
        a = inputs["a"].reshape(m, k).astype(np.float64)
        b = inputs["b"].reshape(k, n).astype(np.float64)
        y = (a @ b).astype(np.float32) + inputs["bias"].astype(np.float32)[None, :]
        if meta["act"] == "relu":
            y = np.maximum(y, np.float32(0))
        if meta["out"] == "s8":
            t = (y * np.float32(meta["scale"])).astype(np.float16).astype(np.float64)
            c = np.clip(np.rint(t), -128, 127).astype(np.int8)
        else:
            c = y.astype(np.float16)
        return {"c": c.reshape(-1)}
    if op == "conv2d":
        H, W, cin, cout, kh, kw, st, p = (meta[k] for k in ("h", "w", "cin", "cout", "kh", "kw", "stride", "pad"))
        x = np.pad(inputs["x"].reshape(H, W, cin).astype(np.float64), ((p, p), (p, p), (0, 0)))
        c1 = -(-cin // 16)
        wt = inputs["w"].reshape(c1, kh, kw, 16, cout).transpose(4, 0, 3, 1, 2).reshape(cout, c1 * 16, kh, kw)
        wt = wt[:, :cin].astype(np.float64)
        oh, ow = (H + 2 * p - kh) // st + 1, (W + 2 * p - kw) // st + 1
        y = np.zeros((oh, ow, cout))
        for i in range(kh):
            for j in range(kw):
                patch = x[i:i + st * (oh - 1) + 1:st, j:j + st * (ow - 1) + 1:st, :]
                y += patch @ wt[:, :, i, j].T
        return {"y": y.astype(np.float32).astype(np.float16).reshape(-1)}
    if op == "flash_attention":
        s, sk, d = meta["sq"], meta["sk"], meta["d"]
        q = inputs["q"].reshape(s, d).astype(np.float64)
        kk = inputs["k"].reshape(sk, d).astype(np.float64)
        v = inputs["v"].reshape(sk, d).astype(np.float64)
        x = q @ kk.T * meta["softmax_scale"]
        p = np.exp(x - x.max(axis=1, keepdims=True))
        o = (p / p.sum(axis=1, keepdims=True)) @ v
        return {"o": o.astype(np_dtype(meta["out"])).reshape(-1)}
    if op == "gemm":
        m, n, k, dt = meta["m"], meta["n"], meta["k"], meta["dtype"]
        a = inputs["a"].reshape((m, k) if meta["layout_a"] == "row" else (k, m))
        b = inputs["b"].reshape((k, n) if meta["layout_b"] == "row" else (n, k))
        if meta["layout_a"] == "col":
            a = a.T
        if meta["layout_b"] == "col":
            b = b.T
        if dt == "s8":
            acc = a.astype(np.int64) @ b.astype(np.int64)
            acc = acc.astype(np.int32)
            out = meta["out"]
            if out == "s32":
                c = acc
            else:
                from isa.generate.gemm import GemmConfig
                q = GemmConfig(dtype="s8", scale=meta["scale"], offset=meta["offset"]).quant_pre()
                c, _ = quantize(acc, "DEQF16" if out == "f16" else "REQ8", q, None)
        else:
            acc = a.astype(np.float64) @ b.astype(np.float64)
            c = acc.astype(np.float32).astype(np_dtype(meta["out"]))
        return {"c": c.reshape(-1)}
    x = inputs["x"].reshape(meta["rows"], meta["cols"]).astype(np.float64)
    if op == "reduce":
        r = x.sum(axis=1) if meta["reduce"] == "sum" else x.max(axis=1)
        return {"y": r.astype(np_dtype(meta["dtype"]))}
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"y": (e / e.sum(axis=1, keepdims=True)).astype(np_dtype(meta["dtype"])).reshape(-1)}


# normwise tolerance: max |out - ref| <= rtol * max |ref| + atol
_TOL = {"f16": (4e-3, 1e-3), "bf16": (2e-2, 1e-2), "f32": (1e-5, 1e-6), "s8": (0, 0), "s32": (0, 0)}


def compare(outputs: dict, ref: dict, meta: dict) -> dict:
    """``{'passed', 'max_abs_err', 'max_rel_err', 'tolerance'}`` over every reference output."""
    worst_abs, worst_rel, passed = 0.0, 0.0, True
    tol_txt = ""
    for name, want in ref.items():
        got = outputs.get(name)
        if got is None:
            raise InputError(f"the kernel has no output '{name}'")
        g = got.reshape(-1).astype(np.float64)
        w = want.reshape(-1).astype(np.float64)
        err = np.abs(g - w)
        err = np.where(np.isnan(g) & np.isnan(w), 0.0, err)
        mx = float(np.nanmax(err)) if err.size else 0.0
        if np.isnan(err).any():
            mx = float("inf")
        rel = float(np.max(err / np.maximum(np.abs(w), 1e-30))) if err.size else 0.0
        out_t = meta.get("out", meta.get("dtype"))
        rtol, atol = _TOL.get(out_t, (1e-3, 1e-3))
        if meta.get("op") == "gemm_epilogue" and out_t == "s8":
            atol = 1.0   # fp32 accumulation order: a value at a rounding boundary may land one step off
        if meta.get("op") == "flash_attention":
            rtol, atol = 2e-2, 2e-3   # P rounded to f16 before PV, exp in f32
        if meta.get("op") == "reduce" and meta.get("reduce") == "sum":
            atol = max(atol, rtol * float(np.abs(inputs_scale(meta))))
        limit = rtol * float(np.max(np.abs(w))) + atol if w.size else 0.0
        passed &= mx <= limit
        worst_abs, worst_rel = max(worst_abs, mx), max(worst_rel, rel)
        tol_txt = f"max|err| <= {rtol:g} * max|ref| + {atol:g}"
    return {"passed": bool(passed), "max_abs_err": worst_abs, "max_rel_err": worst_rel, "tolerance": tol_txt}


def inputs_scale(meta: dict) -> float:
    """Sum reductions accumulate in the data type: allow an error that grows with the row length."""
    return float(np.sqrt(meta.get("cols", 1)))


__all__ = ["read_meta", "make_inputs", "reference", "compare", "ml_dtypes"]
