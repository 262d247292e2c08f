"""Correctly rounded arithmetic with one rounding, in any PTX rounding mode.

The PTX simulator calls these for::

    fma.rn.f32      %f4, %f1, %f2, %f3;     fma(a, b, c, 'f32', 'rn')
    fma.rz.ftz.f32  %f4, %f1, %f2, %f3;     fma(a, b, c, 'f32', 'rz', ftz=True)
    add.rm.f32      %f3, %f1, %f2;          add(a, b, 'f32', 'rm')
    mul.rn.bf16     %rs3, %rs1, %rs2;       mul(a, b, 'bf16', 'rn')
    fma.rn.sat.f16  %rs4, %rs1, %rs2, %rs3; fma(a, b, c, 'f16', 'rn', sat=True)
    div.rn.f32      %f3, %f1, %f2;          div(a, b, 'f32', 'rn')
    sqrt.rn.f32     %f2, %f1;               sqrt(a, 'f32', 'rn')

Inputs are float64 arrays holding values of the operand format.  For formats of at most 24
bits of precision (f32, tf32, f16, bf16, fp8, hif8) products are exact in float64; sums,
quotients and roots are made exact-to-odd with error-free transformations (:mod:`.eft`) and
then rounded once by :func:`round_float`, so there is no double rounding.  f64 results use the
float64 RN result plus its exact error sign (add, mul, div, sqrt) or, for ``fma.f64``, exact
rational arithmetic per element (slow: about 60 us per element, see bench/numerics.py).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .eft import sum_odd, to_odd, two_prod, two_sum
from .formats import FloatFormat, float_format
from .rounding import _toward_inf, normalize_mode, round_float, round_fraction


def _prep(fmt, mode, *xs):
    f = float_format(fmt)
    m = normalize_mode(mode)
    arrs = [np.asarray(x, dtype=np.float64) for x in xs]
    scalar = all(a.ndim == 0 for a in arrs)
    arrs = np.broadcast_arrays(*arrs)
    return f, m, [np.array(a, dtype=np.float64) for a in arrs], scalar


def _flush(x, f: FloatFormat):
    """``.ftz``: subnormal inputs of ``f`` become a zero of the same sign."""
    return np.where(np.abs(x) < f.min_normal, np.copysign(0.0, x), x)


def _finish(val, f, mode, kw, scalar):
    out = round_float(val, f, mode, kw.get("saturate"), sat=kw.get("sat", False),
                      ftz=kw.get("ftz", False), seed=kw.get("seed"), rng=kw.get("rng"),
                      rbits=kw.get("rbits"))
    out = np.asarray(out)
    return out[()] if scalar else out


def _zero_sign_rm(r, x, y, mode):
    """IEEE: an exact zero sum is -0 under rm unless both addends are +0."""
    if mode != "rm":
        return r
    both_pos_zero = (x == 0) & (y == 0) & ~np.signbit(x) & ~np.signbit(y)
    return np.where((r == 0) & ~both_pos_zero, -0.0, r)


# --------------------------------------------------------------------------- f64 helpers

def _adjust_f64(s, err, mode, finite_in):
    """Directed/ties-away f64 result from ``s = RN(exact)`` and ``err`` ~ ``exact - s``.

    ``err`` carries the exact sign; it equals half an ulp only where ``exact`` is a tie (add,
    mul give the exact error; div and sqrt cannot produce ties).
    """
    s = np.asarray(s, dtype=np.float64)
    err = np.asarray(err, dtype=np.float64)
    if mode == "rn":
        out = s
    elif mode == "rna":
        half = np.abs(np.spacing(s)) / 2
        tie_toward_zero = (np.abs(err) == half) & (np.sign(err) == np.sign(s)) & (err != 0)
        out = np.where(tie_toward_zero, np.nextafter(s, np.copysign(np.inf, s)), s)
    else:
        if mode == "rz":
            want_up = np.signbit(s)            # toward zero = up for negatives
        else:
            want_up = np.full(s.shape, mode == "rp")
        step_up = want_up & (err > 0)
        step_dn = ~want_up & (err < 0)
        out = np.where(step_up, np.nextafter(s, np.inf), np.where(step_dn, np.nextafter(s, -np.inf), s))
    # overflow: RN gave Inf from finite operands
    over = np.isinf(s) & finite_in
    if np.any(over):
        neg = np.signbit(s)
        out = np.where(over & ~_toward_inf(mode, neg), np.copysign(np.finfo(np.float64).max, s), out)
    return out


def _f64_result(s, err, f, mode, kw, finite_in, scalar):
    out = _adjust_f64(s, err, mode, finite_in)
    if kw.get("saturate"):
        out = np.where(np.isinf(out), np.copysign(f.max, out), out)
    if kw.get("sat"):
        from .rounding import sat01
        out = sat01(out)
    return out[()] if scalar else out


_TINY = 2.0 ** -968      # below this an f64 product/quotient error term may underflow


def _exact_where(out, mask, exact, f, mode, kw, *arrays):
    """Recompute ``out`` where ``mask`` with exact rational arithmetic (rare f64 underflow cases)."""
    if not np.any(mask):
        return out
    out = np.array(out, dtype=np.float64)
    flat = out.reshape(-1)
    cols = [np.broadcast_to(x, out.shape).reshape(-1) for x in arrays]
    for i in np.flatnonzero(np.broadcast_to(mask, out.shape).reshape(-1)):
        flat[i] = round_fraction(exact(*(Fraction(float(c[i])) for c in cols)), f, mode,
                                 bool(kw.get("saturate")))
    return out


# --------------------------------------------------------------------------- operations

def add(a, b, fmt="f32", mode="rn", **kw):
    """``add{.rnd}{.ftz}{.sat}.<fmt> d, a, b`` with one rounding.

    Keywords: ``ftz``, ``sat`` (clamp [0,1]), ``saturate`` (.satfinite), ``seed``/``rng``/``rbits``
    for mode ``'rs'``.
    """
    f, mode, (a, b), scalar = _prep(fmt, mode, a, b)
    if kw.get("ftz"):
        a, b = _flush(a, f), _flush(b, f)
    if f.mbits > 50:
        with np.errstate(invalid="ignore", over="ignore"):
            s, e = two_sum(a, b)
        fin = np.isfinite(a) & np.isfinite(b)
        e = np.where(np.isfinite(s), e, 0.0)
        s = _zero_sign_rm(s, a, b, mode)
        return _f64_result(s, e, f, mode, kw, fin, scalar)
    with np.errstate(invalid="ignore"):
        r = _zero_sign_rm(sum_odd(a, b), a, b, mode)
    return _finish(r, f, mode, kw, scalar)


def sub(a, b, fmt="f32", mode="rn", **kw):
    """``sub{.rnd}.<fmt> d, a, b`` = ``add(a, -b)``."""
    return add(a, -np.asarray(b, dtype=np.float64), fmt, mode, **kw)


def mul(a, b, fmt="f32", mode="rn", **kw):
    """``mul{.rnd}{.ftz}{.sat}.<fmt> d, a, b`` with one rounding."""
    f, mode, (a, b), scalar = _prep(fmt, mode, a, b)
    if kw.get("ftz"):
        a, b = _flush(a, f), _flush(b, f)
    with np.errstate(invalid="ignore", over="ignore"):
        p = a * b
        if f.mbits > 50:
            fin = np.isfinite(a) & np.isfinite(b)
            ok = np.isfinite(p) & (p != 0)
            _, e = two_prod(np.where(ok, a, 0.0), np.where(ok, b, 0.0))
            out = _f64_result(p, np.where(ok, e, 0.0), f, mode, kw, fin, False)
            tiny = (np.abs(p) < _TINY) & (a != 0) & (b != 0) & fin
            out = _exact_where(out, tiny, lambda x, y: x * y, f, mode, kw, a, b)
            return out[()] if scalar else out
    return _finish(p, f, mode, kw, scalar)


def fma(a, b, c, fmt="f32", mode="rn", **kw):
    """``fma{.rnd}{.ftz}{.sat}.<fmt> d, a, b, c``: ``a*b + c`` rounded once.

    f32/f16/bf16: the product is exact in float64, the sum is rounded to odd, then rounded to
    ``fmt``.  f64: exact rational arithmetic per finite element.
    """
    f, mode, (a, b, c), scalar = _prep(fmt, mode, a, b, c)
    if kw.get("ftz"):
        a, b, c = _flush(a, f), _flush(b, f), _flush(c, f)
    if f.mbits > 50:
        return _fma_f64(a, b, c, f, mode, kw, scalar)
    with np.errstate(invalid="ignore", over="ignore"):
        p = a * b
        r = _zero_sign_rm(sum_odd(p, c), p, c, mode)
    return _finish(r, f, mode, kw, scalar)


def _fma_f64(a, b, c, f, mode, kw, scalar):
    with np.errstate(invalid="ignore", over="ignore"):
        approx = a * b + c                     # right for every non-finite case
    out = np.array(approx, dtype=np.float64)          # a real (0-d or n-d) array, not a scalar
    fin = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    flat_out = out.reshape(-1)
    fa, fb, fc = a.reshape(-1), b.reshape(-1), c.reshape(-1)
    for i in np.flatnonzero(fin.reshape(-1)):
        p = Fraction(float(fa[i])) * Fraction(float(fb[i]))
        exact = p + Fraction(float(fc[i]))
        if exact == 0:
            pz = float(fa[i]) * float(fb[i])
            flat_out[i] = float(_zero_sign_rm(np.float64(pz + float(fc[i])), np.float64(pz),
                                              np.float64(fc[i]), mode))
        else:
            flat_out[i] = round_fraction(exact, f, mode, bool(kw.get("saturate")))
    if kw.get("sat"):
        from .rounding import sat01
        out = sat01(out)
    return out[()] if scalar else out


def div(a, b, fmt="f32", mode="rn", **kw):
    """``div{.rnd}{.ftz}.<fmt> d, a, b`` (IEEE-correct division, not ``div.approx``)."""
    f, mode, (a, b), scalar = _prep(fmt, mode, a, b)
    if kw.get("ftz"):
        a, b = _flush(a, f), _flush(b, f)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        q = a / b
        ok = np.isfinite(q) & (q != 0) & np.isfinite(b) & (b != 0)
        # residual sign on mantissas in [0.5, 1): no underflow or overflow in the error terms
        ma, ea = np.frexp(np.where(ok, a, 1.0))
        mb, eb = np.frexp(np.where(ok, b, 1.0))
        qm = ma / mb
        p, e = two_prod(qm, mb)
        r = (ma - p) - e                        # sign of a - q*b, exactly
        # valid for q = RN(a/b) = RN(ma/mb) * 2^(ea-eb) wherever q is normal; subnormal f64
        # quotients take the exact path below (f32-range quotients are always normal in f64)
        direction = np.where(ok, np.sign(r) * np.sign(mb), 0.0)
    fin = np.isfinite(a) & np.isfinite(b) & (b != 0)
    if f.mbits > 50:   # no ties possible: pass an error well below half an ulp
        out = _f64_result(q, direction * np.abs(np.spacing(q)) / 4, f, mode, kw, fin, False)
        tiny = (np.abs(q) < _TINY) & (a != 0) & fin
        out = _exact_where(out, tiny, lambda x, y: x / y, f, mode, kw, a, b)
        return out[()] if scalar else out
    return _finish(to_odd(q, direction), f, mode, kw, scalar)


def sqrt(a, fmt="f32", mode="rn", **kw):
    """``sqrt{.rnd}{.ftz}.<fmt> d, a`` (IEEE-correct square root)."""
    f, mode, (a,), scalar = _prep(fmt, mode, a)
    if kw.get("ftz"):
        a = _flush(a, f)
    with np.errstate(invalid="ignore"):
        # scale tiny inputs by 2^108 (the root by 2^54, exactly) so the error term cannot underflow
        scale = np.where(np.abs(a) < 2.0 ** -900, 2.0 ** 108, 1.0)
        a_s = a * scale
        s = np.sqrt(a_s)
        ok = np.isfinite(s) & (s > 0)
        ss = np.where(ok, s, 1.0)
        p, e = two_prod(ss, ss)
        r = (np.where(ok, a_s, 1.0) - p) - e
        direction = np.where(ok, np.sign(r), 0.0)
        s = s / np.sqrt(scale)
    if f.mbits > 50:   # no ties possible: pass an error well below half an ulp
        return _f64_result(s, direction * np.abs(np.spacing(s)) / 4, f, mode, kw, np.isfinite(a), scalar)
    return _finish(to_odd(s, direction), f, mode, kw, scalar)


def cvt_float(x, dst, mode="rn", **kw):
    """``cvt.<mode>{.ftz}{.sat|.satfinite}.<dst>.<src>`` for a float source already decoded to
    float64 (every narrower float is exact in float64): one rounding to ``dst``."""
    f, mode, (x,), scalar = _prep(dst, mode, x)
    return _finish(x, f, mode, kw, scalar)
