"""Floating-point instructions on f32/f64 and on f16/bf16 (scalar and packed ``x2``)::

    fma.rn.f32 %f14, %f13, %f12, %f29;     add.f32 %f5, %f4, %f3;       ex2.approx.ftz.f32 %f9, %f8;
    fma.rn.f16x2 %r21, %r20, %r20, %r20;   rsqrt.approx.f32 %f7, %f6;   div.full.f32 %r9, %r7, %r8;
    setp.gtu.f32 %p1, %f1, %f2;            max.f32 %f3, %f1, %f2;       fma.rm.f32 %f4, %f1, %f2, %f3;

Every result is rounded once. f32 add/sub/mul/div/sqrt are exact through float64 (double
rounding is innocuous there, 53 >= 2*24+2); ``fma.rn.f32`` computes in float64 and repairs the
rare midpoint case exactly; other rounding modes go through :mod:`sim.numerics`. f16/bf16
values are decoded to float64, computed and re-encoded once. Approximate instructions
(``ex2.approx``, ``rsqrt.approx``, ``div.full``, ``tanh.approx``) return the correctly rounded
value, which is within the ISA's stated error.
"""

from __future__ import annotations

import numpy as np

from sim.numerics import codec

from ..dtypes import types_of
from . import op
from .integer import binary, ternary, ufunc2, unary

F32, F64 = np.float32, np.float64
U16, U32, U64 = np.uint16, np.uint32, np.uint64
MIN_NORMAL = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022, "f16": 2.0 ** -14, "bf16": 2.0 ** -126}
HALF = ("f16", "bf16", "f16x2", "bf16x2")
ROUND = ("rn", "rz", "rm", "rp", "rna")


def _ty(mods):
    ts = types_of(mods)
    return ts[-1] if ts else "f32"


def _mode(ms, default="rn"):
    for r in ROUND:
        if r in ms:
            return r
    return default


# ---------------------------------------------------------------------------------- half codecs
dec = codec.decode                      # f16/bf16 bit patterns -> float64 values
bf16_bits = codec.bf16_bits_from_f32    # float32 values -> bf16 bits (RNE, NaN kept)


def round_to_odd_f32(x64) -> np.ndarray:
    """float64 -> float32 such that a later rounding to <= 22 bits is the same as rounding ``x64``."""
    x64 = np.asarray(x64, dtype=F64)
    r = x64.astype(F32)
    inexact = (r.astype(F64) != x64) & np.isfinite(r)
    bits = r.view(U32)
    fix = inexact & ((bits & U32(1)) == 0)
    if fix.any():
        away = np.abs(x64) > np.abs(r.astype(F64))
        bits = np.where(fix, np.where(away, bits + U32(1), bits - U32(1)), bits).astype(U32)
        r = bits.view(F32)
    return r


def enc(x64, fmt: str) -> np.ndarray:
    """float64 values -> f16/bf16 bits, one round-to-nearest-even."""
    x64 = np.asarray(x64, dtype=F64)
    if fmt == "f16":
        return x64.astype(np.float16).view(U16)
    return bf16_bits(round_to_odd_f32(x64))


def _flush(x, fmt):
    return np.where(np.abs(x) < MIN_NORMAL[fmt], np.copysign(0.0, x), x)


def half_op(nargs: int, t: str, fn64, ms, *, result_float=True):
    """A function on packed bits: decode each half, ``fn64`` on float64, encode once (RN or mode)."""
    base = t[:-2] if t.endswith("x2") else t
    x2 = t.endswith("x2")
    ftz = "ftz" in ms
    sat = "sat" in ms
    mode = _mode(ms)

    def finish(v):
        if ftz:
            v = _flush(v, base)
        if sat:
            v = np.where(np.isnan(v), 0.0, np.clip(v, 0.0, 1.0))
        if mode == "rn" and "satfinite" not in ms:
            out = enc(v, base)
        else:
            from sim.numerics import encode
            out = encode(v, base, mode, saturate=True if "satfinite" in ms else None).astype(U16)
        if ftz:
            out = enc(_flush(dec(out, base), base), base) if not sat else out
        return out

    def one(*args):
        vals = [dec(a, base) for a in args]
        if ftz:
            vals = [_flush(v, base) for v in vals]
        return finish(fn64(*vals))

    if not x2:
        return one

    def two(*args):
        lo = one(*[np.asarray(a).astype(U32) & U32(0xFFFF) for a in args])
        hi = one(*[np.asarray(a).astype(U32) >> U32(16) for a in args])
        return (np.asarray(hi).astype(U32) << U32(16)) | np.asarray(lo).astype(U32)

    return two


# ---------------------------------------------------------------------------------- f32 helpers
def flush32(x):
    return np.where(np.abs(x) < np.float32(2.0 ** -126), np.copysign(np.float32(0), x), x).astype(F32)


def sat32(x):
    return np.where(np.isnan(x), F32(0), np.clip(x, F32(0), F32(1))).astype(F32)


def _post(ms, t):
    """Result fix-ups for .ftz/.sat on f32."""
    ftz = "ftz" in ms and t == "f32"
    sat = "sat" in ms
    if not ftz and not sat:
        return None

    def post(v):
        if ftz:
            v = flush32(v)
        if sat:
            v = sat32(v) if t == "f32" else np.where(np.isnan(v), 0.0, np.clip(v, 0.0, 1.0))
        return v
    return post


def _pre(ms, t):
    if "ftz" in ms and t == "f32":
        return flush32
    return None


def _wrap(fn, ms, t, nargs):
    pre, post = _pre(ms, t), _post(ms, t)
    if pre is None and post is None:
        return fn

    def g(*args):
        if pre is not None:
            args = [pre(np.asarray(a, dtype=F32)) for a in args]
        v = fn(*args)
        return post(v) if post is not None else v
    return g


def _numerics(name, t, mode, ms):
    from sim import numerics

    f = getattr(numerics, name)
    kw = {"ftz": "ftz" in ms, "sat": "sat" in ms}
    cd = F32 if t == "f32" else F64

    def g(*args):
        return np.asarray(f(*[np.asarray(a, dtype=F64) for a in args], t, mode, **kw)).astype(cd)
    return g


# ---------------------------------------------------------------------------------- builders
def float_arith(M, pc, ins, canon, ms, mods):
    """add/sub/mul on floats."""
    t = _ty(mods)
    mode = _mode(ms)
    if t in HALF:
        fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[canon]
        return binary(M, ins, t, half_op(2, t, fn, ms))
    uf = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[canon]
    if mode == "rn" and not ({"ftz", "sat"} & ms):
        return ufunc2(M, ins, t, uf)
    if mode == "rn":
        return binary(M, ins, t, _wrap(uf, ms, t, 2))
    return binary(M, ins, t, _numerics(canon, t, mode, ms))


def fma_rn_f32(a, b, c):
    """fma.rn.f32 with one rounding: float64 product (exact) plus sum, then a fix for midpoints."""
    a = np.asarray(a, dtype=F32)
    s = np.multiply(a, b, dtype=F64)
    s += c
    r = s.astype(F32)
    bits = s.view(U64) if s.ndim else np.asarray(s).view(U64)
    risky = (bits & U64(0x1FFFFFFF)) == U64(0x10000000)
    risky |= (np.abs(s) < 2.0 ** -125) & (s != 0)      # f32 subnormal range: other rounding point
    if risky.any():
        idx = np.flatnonzero(np.broadcast_to(risky, r.shape)) if r.ndim else None
        if idx is None:
            return _fma_exact(a, b, c, s, r)
        ab = np.broadcast_to(a, r.shape).reshape(-1)[idx].astype(F64)
        bb = np.broadcast_to(b, r.shape).reshape(-1)[idx].astype(F64)
        cb = np.broadcast_to(c, r.shape).reshape(-1)[idx].astype(F64)
        p = ab * bb
        ss = s.reshape(-1)[idx]
        z = ss - p
        err = (p - (ss - z)) + (cb - z)                 # two_sum: exact error of the float64 sum
        tiny = (np.abs(ss) < 2.0 ** -125) & (ss != 0)
        bad = (err != 0) | tiny
        if bad.any():
            from sim.numerics import fma as nfma

            k = idx[bad]
            r = r.reshape(-1).copy()
            r[k] = np.asarray(nfma(ab[bad], bb[bad], cb[bad], "f32", "rn")).astype(F32)
            r = r.reshape(s.shape)
    return r


def _fma_exact(a, b, c, s, r):
    from sim.numerics import fma as nfma
    return F32(nfma(float(a), float(b), float(c), "f32", "rn"))


def fma_builder(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    mode = _mode(ms)
    if t in HALF:
        from sim.numerics.eft import sum_odd

        return ternary(M, ins, t, half_op(3, t, lambda a, b, c: sum_odd(a * b, c), ms))
    if t == "f32" and mode == "rn":
        return ternary(M, ins, t, _wrap(fma_rn_f32, ms, t, 3))
    if t == "f32":
        return ternary(M, ins, t, _numerics("fma", t, mode, ms))
    return ternary(M, ins, t, _numerics("fma", t, mode, ms))


op("fma")(lambda M, pc, ins, canon, ms, mods: fma_builder(M, pc, ins, canon, ms, mods))


def float_div(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    if canon == "rem":
        from . import not_implemented
        return not_implemented(M, ins, ins.full_opcode)
    mode = _mode(ms)
    if t == "f32" and ("approx" in ms or "full" in ms or mode == "rn"):
        return binary(M, ins, t, _wrap(lambda a, b: np.divide(a, b, dtype=F64).astype(F32), ms, t, 2))
    if t in HALF:
        return binary(M, ins, t, half_op(2, t, np.divide, ms))
    return binary(M, ins, t, _numerics("div", t, mode, ms))


@op("rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh")
def _transcendental(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    f64 = {
        "rcp": lambda x: 1.0 / x, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "ex2": np.exp2,
        "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    }[canon]
    if t in HALF:
        return unary(M, ins, t, half_op(1, t, f64, ms))
    mode = _mode(ms)
    if t == "f64":
        if canon == "sqrt" and "approx" not in ms and mode != "rn":
            return unary(M, ins, t, _numerics("sqrt", t, mode, ms))
        if canon == "rcp" and "approx" not in ms and mode != "rn":
            return unary(M, ins, t, lambda x: _numerics("div", t, mode, ms)(np.ones_like(x), x))
        return unary(M, ins, t, lambda x: f64(np.asarray(x, dtype=F64)))
    if mode != "rn" and canon in ("rcp", "sqrt") and "approx" not in ms:
        if canon == "sqrt":
            return unary(M, ins, t, _numerics("sqrt", t, mode, ms))
        dv = _numerics("div", t, mode, ms)
        return unary(M, ins, t, lambda x: dv(np.ones(np.shape(x)), x))
    return unary(M, ins, t, _wrap(lambda x: f64(np.asarray(x, dtype=F64)).astype(F32), ms, t, 1))


def float_unary(M, pc, ins, canon, ms, mods):
    """abs/neg on floats (sign-bit operations for f16/bf16)."""
    t = _ty(mods)
    if t in HALF:
        sign = U32(0x80008000) if t.endswith("x2") else U16(0x8000)
        if canon == "abs":
            fn = lambda a: np.asarray(a) & ~sign  # noqa: E731
        else:
            fn = lambda a: np.asarray(a) ^ sign  # noqa: E731
        if "ftz" in ms:
            fn = half_op(1, t, lambda x: np.abs(x) if canon == "abs" else -x, ms)
        return unary(M, ins, t, fn)
    fn = np.abs if canon == "abs" else np.negative
    return unary(M, ins, t, _wrap(fn, ms, t, 1))


def float_minmax(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    nan = "NaN" in ms
    if nan:
        fn = np.minimum if canon == "min" else np.maximum
    else:
        fn = np.fmin if canon == "min" else np.fmax
    if t in HALF:
        return binary(M, ins, t, half_op(2, t, fn, ms))
    if len(ins.operands) > 3:   # three-input min/max (sm_100)
        return ternary(M, ins, t, _wrap(lambda a, b, c: fn(fn(a, b), c), ms, t, 3))
    return binary(M, ins, t, _wrap(fn, ms, t, 2))


def float_compare(cmp: str, t: str):
    def vals(x):
        if t in ("f16", "bf16"):
            return dec(x, t)
        return x

    ordered = {"eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}

    def f(a, b):
        a, b = vals(a), vals(b)
        na, nb = np.isnan(a), np.isnan(b)
        if cmp in ordered:
            return ordered[cmp](a, b)
        if cmp == "ne":
            return (a != b) & ~na & ~nb
        if cmp == "num":
            return ~na & ~nb
        if cmp == "nan":
            return na | nb
        base = cmp[:-1]
        if base == "ne":
            return (a != b) | na | nb
        return ordered[base](a, b) | na | nb
    return f


@op("testp")
def _testp(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    kind = next(m for m in mods if m in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"))
    mn = MIN_NORMAL.get(t, 2.0 ** -126)
    fn = {
        "finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x), "notanumber": np.isnan,
        "normal": lambda x: np.isfinite(x) & (np.abs(x) >= mn),
        "subnormal": lambda x: (np.abs(x) < mn) & (x != 0),
    }[kind]
    return unary(M, ins, t, fn, tout="pred")


@op("copysign")
def _copysign(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    return binary(M, ins, t, lambda a, b: np.copysign(b, a))
