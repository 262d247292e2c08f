"""Error-free transformations on float64 arrays, and round-to-odd.

These make single-rounding arithmetic possible with numpy alone.  A float64 result that is
*rounded to odd* (truncate, then set the last bit if anything was lost) keeps enough information
to be rounded again, in any mode, to any format of at most 51 bits of precision with the same
result as one direct rounding of the exact value (Boldo & Melquiond, "Emulation of FMA and
correctly-rounded sums: proved algorithms using rounding to odd", IEEE TC 2008: 53 >= 2p + 2
holds for f32's p = 24).  That is how ``fma.rn.f32``, ``add.rz.f32`` and ``cvt.rn.f32.s64`` are
simulated without double rounding.
"""

from __future__ import annotations

import numpy as np

_SPLITTER = float(2 ** 27 + 1)


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s + e == a + b`` exactly, with ``s = fl(a + b)`` (Knuth; no overflow assumed)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp split: ``hi + lo == a`` with both halves of at most 26 significant bits."""
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def _two_prod_core(a, b):
    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p + e == a * b`` exactly, with ``p = fl(a * b)`` (Dekker; no over/underflow of the
    product assumed).  Factors above 2^995, whose Veltkamp split would overflow, are scaled by
    2^-64 first and the results scaled back (exact: powers of two)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        big_a = np.abs(a) > 2.0 ** 995
        big_b = np.abs(b) > 2.0 ** 995
    if not (np.any(big_a) or np.any(big_b)):
        return _two_prod_core(a, b)
    k = np.where(big_a, 64, 0) + np.where(big_b, 64, 0)
    p, e = _two_prod_core(np.where(big_a, a * 2.0 ** -64, a), np.where(big_b, b * 2.0 ** -64, b))
    with np.errstate(over="ignore"):
        return np.ldexp(p, k), np.ldexp(e, k)


def to_odd(s: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Turn ``s = RN(exact)`` into ``RO(exact)``.

    ``direction`` is the sign of ``exact - s`` (0 where ``s`` is exact).  Where ``s`` is inexact
    and its last bit is even, the exact value lies strictly between ``s`` and its neighbour on
    the ``direction`` side, which is odd: take it.
    """
    s = np.asarray(s, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        even = (s.view(np.int64) & 1) == 0
        fix = (direction != 0) & even & np.isfinite(s)
    if not np.any(fix):
        return s
    toward = np.where(direction > 0, np.inf, -np.inf)
    return np.where(fix, np.nextafter(s, toward), s)


def sum_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``RO(a + b)`` for float64 arrays (exact sum rounded to odd)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        s, e = two_sum(a, b)
        e = np.where(np.isfinite(s), e, 0.0)
    return to_odd(s, np.sign(e))
