"""Shared helpers for the numerics tests: an independent exact rounding oracle (fractions only)."""

from __future__ import annotations

from fractions import Fraction

# (precision p incl. the hidden bit, emin, max finite, has_inf)
PARAMS = {
    "f32": (24, -126, (2 - Fraction(1, 2 ** 23)) * Fraction(2) ** 127, True),
    "f16": (11, -14, Fraction(65504), True),
    "bf16": (8, -126, (2 - Fraction(1, 2 ** 7)) * Fraction(2) ** 127, True),
    "f64": (53, -1022, (2 - Fraction(1, 2 ** 52)) * Fraction(2) ** 1023, True),
    "e5m2": (3, -14, Fraction(57344), True),
}


def oracle_round(v: Fraction, fmt: str, mode: str) -> float:
    """Round ``v`` to ``fmt`` by bracketing it between consecutive representable numbers."""
    p, emin, vmax, has_inf = PARAMS[fmt]
    if v == 0:
        return 0.0
    sign = -1 if v < 0 else 1
    a = abs(v)
    # exponent by repeated halving/doubling (deliberately unlike the library's bit-length trick)
    e = 0
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    step = Fraction(2) ** (max(e, emin) - (p - 1))
    k = a // step                       # floor
    lo, hi = k * step, (k + 1) * step
    if lo == a:
        r = lo
    else:
        mid = (lo + hi) / 2
        if mode == "rn":
            r = lo if a < mid else hi if a > mid else (lo if k % 2 == 0 else hi)
        elif mode == "rna":
            r = lo if a < mid else hi
        elif mode == "rz":
            r = lo
        elif mode == "rp":
            r = hi if sign > 0 else lo
        elif mode == "rm":
            r = hi if sign < 0 else lo
        else:
            raise ValueError(mode)
    if r > vmax:
        away = mode in ("rn", "rna") or (mode == "rp" and sign > 0) or (mode == "rm" and sign < 0)
        if away and has_inf:
            return sign * float("inf")
        r = vmax
    return sign * float(r)


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def oracle():
    """``oracle(Fraction, fmt, mode) -> float``: the exact reference rounding."""
    return oracle_round
