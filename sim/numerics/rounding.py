"""Exact, vectorised rounding: float->float, float->int, int->float, and PTX saturation.

These are the semantics of PTX ``cvt`` and of the rounding modifiers on arithmetic::

    cvt.rn.f16.f32            %rs1, %f1;     round_float(x, 'f16', 'rn')
    cvt.rz.satfinite.f16.f32  %rs1, %f1;     round_float(x, 'f16', 'rz', saturate=True)
    cvt.rni.s32.f32           %r1, %f1;      float_to_int(x, 's32', 'rni')
    cvt.rn.f32.s64            %f1, %rd1;     int_to_float(x, 'f32', 'rn')
    cvt.rn.sat.f32.f32        %f2, %f1;      round_float(x, 'f32', 'rn', sat=True)

Modes: ``rn`` nearest-even, ``rna`` nearest ties-away, ``rz`` toward zero, ``rm`` toward -inf,
``rp`` toward +inf, ``rs`` stochastic (seeded, or driven by explicit random bits).  The integer
spellings ``rni rzi rmi rpi`` are accepted everywhere.

Overflow follows IEEE 754 / PTX: a result whose rounded magnitude (with an unbounded exponent)
exceeds the largest finite value becomes Inf for rn/rna/rs and for rp (positive) / rm (negative),
and the largest finite value otherwise (H200: ``cvt.rn.f16.f32(65520) = 0x7C00``,
``cvt.rz.f16.f32(1e6) = 0x7BFF``).  Formats without Inf (e4m3) give NaN where Inf would be.
``saturate=True`` is ``.satfinite``: clamp to +-max finite, Inf -> +-max, NaN stays NaN
(``cvt.rn.satfinite.f16.f32(65520) = 0x7BFF``).  ``sat=True`` is ``.sat`` on a float destination:
clamp to [0, 1], NaN -> +0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from isa.errors import InputError

from .formats import FloatFormat, float_format, int_format
from .hif8 import BEYOND_MAX, POS_CODES, POS_VALUES

if TYPE_CHECKING:
    from fractions import Fraction

MODES = ("rn", "rna", "rz", "rm", "rp", "rs")

_MODE_ALIASES = {
    "rni": "rn", "rnai": "rna", "rzi": "rz", "rmi": "rm", "rpi": "rp",
    "nearest": "rn", "nearest_even": "rn", "rne": "rn", "ties_even": "rn",
    "ties_away": "rna", "ta": "rna", "nearest_away": "rna",
    "toward_zero": "rz", "trunc": "rz", "down": "rm", "floor": "rm", "up": "rp", "ceil": "rp",
    "stochastic": "rs", "sr": "rs",
}


def normalize_mode(mode: str) -> str:
    """``'rni'`` -> ``'rn'``, ``'.rz'`` -> ``'rz'``; raises InputError for an unknown mode."""
    m = str(mode).strip().lstrip(".").lower()
    m = _MODE_ALIASES.get(m, m)
    if m not in MODES:
        raise InputError(f"unknown rounding mode {mode!r}", expected=list(MODES) + ["rni", "rzi", "rmi", "rpi"])
    return m


def _uniform(shape, seed=None, rng=None, rbits=None) -> np.ndarray:
    """Numbers ``u`` in (0, 1] for stochastic rounding: round up when ``u <= fraction``.

    With explicit ``rbits`` (unsigned 32-bit random bits, as PTX ``cvt.rs`` takes them) this is
    "add the random bits below the kept LSB and truncate": up iff ``fraction + rbits/2^32 >= 1``,
    so ``rbits = 0`` truncates.  (This bit-level model is ours; the PTX text only says the bits
    are added and the result truncated.)  Otherwise ``u = 1 - U[0, 1)`` from ``rng`` or
    ``np.random.default_rng(seed)``, which rounds up with probability equal to the fraction.
    """
    if rbits is not None:
        r = np.broadcast_to(np.asarray(rbits).astype(np.uint64) & np.uint64(0xFFFFFFFF), shape)
        return 1.0 - r.astype(np.float64) / 2.0 ** 32
    if rng is None:
        rng = np.random.default_rng(seed)
    return 1.0 - rng.random(shape)


def _round_up(frac, n_odd, neg, mode, u):
    """Whether to increment the magnitude, given the discarded fraction in [0, 1)."""
    if mode == "rn":
        return (frac > 0.5) | ((frac == 0.5) & n_odd)
    if mode == "rna":
        return frac >= 0.5
    if mode == "rz":
        return np.zeros(np.shape(frac), dtype=bool)
    if mode == "rp":
        return (frac > 0) & ~neg
    if mode == "rm":
        return (frac > 0) & neg
    return u <= frac  # rs: u in (0, 1]


def _toward_inf(mode, neg):
    """Where overflow goes to Inf (True) rather than to the largest finite value."""
    if mode in ("rn", "rna", "rs"):
        return np.ones(np.shape(neg), dtype=bool)
    if mode == "rz":
        return np.zeros(np.shape(neg), dtype=bool)
    return ~neg if mode == "rp" else neg


def _magnitude_ieee(a, fmt: FloatFormat, mode, neg, u):
    """Round finite magnitudes ``a >= 0`` to ``fmt`` with an unbounded exponent."""
    _, e = np.frexp(a)
    qexp = np.maximum(e.astype(np.int64) - 1, fmt.emin) - fmt.mbits
    scaled = np.ldexp(a, -qexp)            # exact: < 2^(mbits+1)
    n = np.floor(scaled)
    frac = scaled - n
    up = _round_up(frac, np.fmod(n, 2) == 1, neg, mode, u)
    with np.errstate(over="ignore"):
        return np.ldexp(n + up, qexp)


def _magnitude_table(a, fmt: FloatFormat, mode, neg, u):
    """Round finite magnitudes to a format given as a sorted value table (HiF8)."""
    vals, codes = POS_VALUES, POS_CODES
    idx = np.searchsorted(vals, a, side="right") - 1
    lo = vals[idx]
    top = len(vals) - 1
    hi = np.where(idx < top, vals[np.minimum(idx + 1, top)], BEYOND_MAX)
    mid = (lo + hi) / 2.0                   # exact: few significant bits
    if mode == "rn":
        lo_even = (codes[idx] & 1) == 0
        up = (a > mid) | ((a == mid) & ~lo_even)
    elif mode == "rna":
        up = a >= mid
    elif mode == "rz":
        up = np.zeros(a.shape, dtype=bool)
    elif mode in ("rp", "rm"):
        inexact = a > lo
        up = inexact & (~neg if mode == "rp" else neg)
    else:
        up = u <= (a - lo) / (hi - lo)
    return np.where(up, hi, lo)


def round_float(x, fmt, mode: str = "rn", saturate: bool | None = None, *, sat: bool = False,
                ftz: bool = False, seed: int | None = None, rng=None, rbits=None) -> np.ndarray:
    """Round ``x`` (float64 or float32 values, any shape) to float format ``fmt``.

    Returns float64 values that are exactly representable in ``fmt`` (NaN and +-Inf kept, see
    the module docstring for overflow).  ``saturate`` is PTX ``.satfinite`` (None means off);
    ``sat`` is ``.sat`` (clamp to [0, 1], NaN -> +0); ``ftz`` flushes subnormal results to a
    signed zero.  Mode ``'rs'`` uses ``rbits``, else ``rng``, else ``np.random.default_rng(seed)``.

    >>> round_float(65520.0, 'f16', 'rn'), round_float(65520.0, 'f16', 'rn', saturate=True)
    (inf, 65504.0)
    """
    f = float_format(fmt)
    mode = normalize_mode(mode)
    xa = np.asarray(x)
    scalar = xa.ndim == 0
    x64 = xa.astype(np.float64)
    a = np.abs(x64)
    neg = np.signbit(x64)
    nan = np.isnan(x64)
    inf = np.isinf(x64)
    a_fin = np.where(nan | inf, 0.0, a)
    u = _uniform(x64.shape, seed, rng, rbits) if mode == "rs" else None
    if f.specials == "hif8":
        val = _magnitude_table(a_fin, f, mode, neg, u)
    else:
        val = _magnitude_ieee(a_fin, f, mode, neg, u)
    over = val > f.max
    if saturate:
        val = np.where(over | inf, f.max, val)
    else:
        big = np.inf if f.has_inf else np.nan
        val = np.where(over, np.where(_toward_inf(mode, neg), big, f.max), val)
        val = np.where(inf, big, val)
    if ftz:
        val = np.where(val < f.min_normal, 0.0, val)
    out = np.where(neg, -val, val)
    if f.specials == "hif8":
        out = np.where(out == 0, 0.0, out)          # HiF8 has a single (positive) zero
    out = np.where(nan, np.nan, out)
    if sat:
        out = sat01(out)
    return out[()] if scalar else out


def sat01(x) -> np.ndarray:
    """PTX ``.sat`` on a float result: clamp to [0.0, 1.0]; NaN and -0.0 give +0.0."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(x > 0, np.minimum(x, 1.0), 0.0)


# --------------------------------------------------------------------------- float -> int

def round_integral(x, mode: str = "rn") -> np.ndarray:
    """Round float64 values to integral float64 values (``cvt.rni.f32.f32`` and friends)."""
    mode = normalize_mode(mode)
    x = np.asarray(x, dtype=np.float64)
    if mode == "rn":
        return np.rint(x)
    if mode == "rz":
        return np.trunc(x)
    if mode == "rm":
        return np.floor(x)
    if mode == "rp":
        return np.ceil(x)
    if mode == "rna":
        t = np.trunc(x)
        with np.errstate(invalid="ignore"):
            bump = np.abs(x - t) >= 0.5
        return np.where(bump, t + np.sign(x), t)
    raise InputError("stochastic rounding is not defined for float->int conversion", expected=["rn", "rz", "rm", "rp", "rna"])


def float_to_int(x, itype, mode: str = "rni", *, src: str = "f32") -> np.ndarray:
    """PTX ``cvt.{rni,rzi,rmi,rpi}.<itype>.<src>``: round, then saturate to the range.

    Float->int always saturates in PTX.  NaN gives 0, except when the source is f64 or the
    destination is 64-bit, where it gives the pattern ``1 << (w-1)`` (H200: ``rzi(NaN) = 0``,
    ``rzi(3e10) = 2147483647``, ``rni(2.5) = 2``, ``rni.u32(-5) = 0``).  Returns an array of the
    destination's numpy type (int8 for s4, uint8 for u4).
    """
    f = int_format(itype)
    r = round_integral(x, mode)
    nan = np.isnan(r)
    w = f.bits
    if f.signed:
        above = r >= 2.0 ** (w - 1)
        below = r < -(2.0 ** (w - 1))
        wide = np.int64
    else:
        above = r >= 2.0 ** w
        below = r < 0
        wide = np.uint64
    bad = above | below | nan
    with np.errstate(invalid="ignore"):
        core = np.where(bad, 0.0, r).astype(wide)
    hi = wide(f.max)
    lo = wide(f.min)
    out = np.where(above, hi, np.where(below, lo, core))
    if np.any(nan):
        src_f64 = str(src).lstrip(".").lower() in ("f64", "fp64", "float64")
        if src_f64 or w == 64:
            pattern = wide(f.min) if f.signed else wide(1 << (w - 1))
        else:
            pattern = wide(0)
        out = np.where(nan, pattern, out)
    return out.astype(f.np_dtype)


def saturate_int(x, itype) -> np.ndarray:
    """Clamp integers to the range of ``itype`` (``cvt.sat.u8.s32(300) = 255``)."""
    f = int_format(itype)
    x = np.asarray(x)
    if x.dtype.kind == "u" and f.signed is False:
        return np.minimum(x, np.uint64(f.max)).astype(f.np_dtype)
    xi = x.astype(np.int64) if x.dtype != np.uint64 else x
    if x.dtype == np.uint64:
        return np.minimum(xi, np.uint64(max(f.max, 0))).astype(f.np_dtype)
    return np.clip(xi, f.min, f.max).astype(f.np_dtype)


def wrap_int(x, itype) -> np.ndarray:
    """Keep the low ``bits`` bits and sign/zero-extend (``cvt.s8.s32(0x1ff) = -1``)."""
    f = int_format(itype)
    x = np.asarray(x).astype(np.int64) if np.asarray(x).dtype != np.uint64 else np.asarray(x)
    if f.bits == 64:
        return x.astype(f.np_dtype)
    low = x.astype(np.uint64) & np.uint64(f.mask)
    low = low.astype(np.int64)
    if f.signed:
        low = np.where(low >= (1 << (f.bits - 1)), low - (1 << f.bits), low)
    return low.astype(f.np_dtype)


# --------------------------------------------------------------------------- int -> float

def round_fraction(value: Fraction | int, fmt, mode: str = "rn", saturate: bool = False) -> float:
    """Round one exact rational to ``fmt`` (scalar, pure Python; the slow exact path used for
    f64 results that numpy cannot produce in one rounding)."""
    f = float_format(fmt)
    mode = normalize_mode(mode)
    if mode == "rs":
        raise InputError("stochastic rounding needs the vector path", expected=["rn", "rna", "rz", "rm", "rp"])
    if f.specials == "hif8":
        raise InputError("round_fraction does not handle hif8; use round_float", expected=["f64", "f32"])
    from fractions import Fraction      # (with decimal, ~1.5 ms CPU to import): only this exact path needs it

    v = Fraction(value)
    if v == 0:
        return 0.0
    neg = v < 0
    a = -v if neg else v
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    elif Fraction(2) ** (e + 1) <= a:
        e += 1
    qexp = max(e, f.emin) - f.mbits
    scaled = a / Fraction(2) ** qexp
    n = scaled.numerator // scaled.denominator
    frac = scaled - n
    if mode == "rn":
        up = frac > Fraction(1, 2) or (frac == Fraction(1, 2) and n % 2 == 1)
    elif mode == "rna":
        up = frac >= Fraction(1, 2)
    elif mode == "rz":
        up = False
    elif mode == "rp":
        up = frac > 0 and not neg
    else:
        up = frac > 0 and neg
    n += int(up)
    if n == 0:
        return -0.0 if neg else 0.0
    over = Fraction(n) * Fraction(2) ** qexp > Fraction(f.max)
    if over:
        to_inf = bool(_toward_inf(mode, np.array(neg)))
        mag = f.max if (saturate or not to_inf) else (np.inf if f.has_inf else np.nan)
    else:
        mag = float(np.ldexp(float(n), qexp))
    return -mag if neg else mag


def int_to_float(x, fmt, mode: str = "rn", *, saturate: bool = False) -> np.ndarray:
    """PTX ``cvt.<mode>.<float>.<int>``: exact integers rounded once to ``fmt``.

    64-bit integers are split into two exact float64 halves and summed with round-to-odd, so
    ``cvt.rz.f32.s64`` is exact for every input; f64 destinations above 2^53 take the exact
    scalar path.
    """
    from .eft import sum_odd

    f = float_format(fmt)
    mode = normalize_mode(mode)
    xa = np.asarray(x)
    if xa.dtype.kind not in "iu":
        if xa.dtype == object or xa.dtype.kind == "b":
            xa = xa.astype(np.int64)
        else:
            raise InputError(f"int_to_float expects integers, got {xa.dtype}")
    if xa.dtype.itemsize <= 4:
        return round_float(xa.astype(np.float64), f, mode, saturate)
    if xa.dtype == np.uint64:
        hi = (xa >> np.uint64(32)).astype(np.float64)
        lo = (xa & np.uint64(0xFFFFFFFF)).astype(np.float64)
    else:
        xa = xa.astype(np.int64)
        hi = (xa >> 32).astype(np.float64)
        lo = (xa & 0xFFFFFFFF).astype(np.float64)
    s = sum_odd(hi * 2.0 ** 32, lo)
    if f.mbits + 1 <= 51:
        return round_float(s, f, mode, saturate)
    out = np.asarray(round_float(s, f, mode, saturate), dtype=np.float64).copy()
    big = np.abs(s) > 2.0 ** 53
    if np.any(big):
        flat = out.reshape(-1)
        src = xa.reshape(-1)
        for i in np.flatnonzero(big.reshape(-1)):
            flat[i] = round_fraction(int(src[i]), f, mode, saturate)
    return out[()] if xa.ndim == 0 else out
