"""One-rounding arithmetic: known double-rounding traps, and hypothesis against exact fractions."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.numerics import add, div, fma, mul, round_float, sqrt, sub

MODES = ["rn", "rna", "rz", "rm", "rp"]


def test_fma_avoids_double_rounding_at_a_tie():
    # exact = 1 + 2^-24 + 2^-60: just above the f32 midpoint between 1 and 1 + 2^-23.
    a = -(1 - 2.0 ** -18) * 2.0 ** -24
    b = 1 + 2.0 ** -18
    c = 1 + 2.0 ** -23
    naive = float(np.float32(a * b + c))            # float64 RN lands on the tie, then ties-to-even
    assert naive == 1.0
    assert float(fma(a, b, c, "f32", "rn")) == 1 + 2.0 ** -23


def test_fma_directed_modes_see_the_lost_bits():
    # exact = (1 + 2^-23) - 2^-60: float64 RN returns 1 + 2^-23, but rz must go below it
    c, a = 1 + 2.0 ** -23, 2.0 ** -30
    assert float(np.float32(a * -a + c)) == c
    assert float(fma(a, -a, c, "f32", "rz")) == 1.0
    assert float(fma(a, -a, c, "f32", "rm")) == 1.0
    assert float(fma(a, -a, c, "f32", "rp")) == c
    assert float(fma(a, a, 1.0, "f32", "rp")) == 1 + 2.0 ** -23
    assert float(fma(a, a, 1.0, "f32", "rz")) == 1.0


def test_f16_and_bf16_fma_hard_cases():
    # f16: exact = 1 + 2^-11 + 2^-40 (above the tie) must round up
    a, b = 2.0 ** -20, 2.0 ** -20
    assert float(fma(a, b, 1 + 2.0 ** -11 - 2.0 ** -11 + 2.0 ** -11, "f32", "rn")) == 1 + 2.0 ** -11
    c = 1.0
    p = 2.0 ** -11 * (1 + 2.0 ** -10)                # f16-exact factor product, lands just past tie
    assert float(fma(2.0 ** -11, 1 + 2.0 ** -10, c, "f16", "rn")) == 1 + 2.0 ** -10
    assert float(round_float(c + 2.0 ** -11, "f16", "rn")) == 1.0 and p > 2.0 ** -11
    # bf16: 1 + 2^-8 is a tie (to 1.0); adding 2^-30 through the product must round up
    assert float(fma(2.0 ** -15, 2.0 ** -15, 1 + 2.0 ** -8, "bf16", "rn")) == 1 + 2.0 ** -7
    assert float(fma(0.0, 5.0, 1 + 2.0 ** -8, "bf16", "rn")) == 1.0


def test_exact_zeros_take_the_ieee_sign():
    # these are the cases the hypothesis tests below also reach: each must be a real zero check
    for mode in MODES:
        neg = mode == "rm"
        for fmt in ("f32", "f16", "bf16", "f64"):
            assert _neg(add(1.5, -1.5, fmt, mode)) == neg
            assert _neg(fma(2.0, 3.0, -6.0, fmt, mode)) == neg
            assert _neg(add(-0.0, -0.0, fmt, mode)) and not _neg(add(0.0, 0.0, fmt, mode))
            assert _neg(mul(-0.0, 3.0, fmt, mode)) and not _neg(mul(-0.0, -3.0, fmt, mode))
            assert _neg(div(0.0, -3.0, fmt, mode))
            assert _neg(fma(-0.0, 2.0, -0.0, fmt, mode)) and _neg(fma(0.0, 2.0, -0.0, fmt, mode)) == neg


def test_fma_special_values_and_zero_signs():
    assert np.isnan(fma(np.inf, 0.0, 1.0, "f32"))
    assert float(fma(1e30, 1e30, 0.0, "f32", "rn")) == np.inf
    assert float(fma(1e30, 1e30, 0.0, "f32", "rz")) == float(np.finfo(np.float32).max)
    assert float(fma(1e30, 1e30, 0.0, "f16", "rn", saturate=True)) == 65504.0
    z = fma(1.0, 1.0, -1.0, "f32", "rn")
    assert float(z) == 0.0 and not np.signbit(z)
    z = fma(1.0, 1.0, -1.0, "f32", "rm")
    assert float(z) == 0.0 and np.signbit(z)
    z = fma(-0.0, 1.0, -0.0, "f32", "rn")
    assert np.signbit(z)
    assert float(fma(0.5, 3.0, 0.0, "f32", "rn", sat=True)) == 1.0
    assert float(fma(1e-20, 1e-20, 0.0, "f32", "rn", ftz=True)) == 0.0
    assert float(add(1e-40, 0.0, "f32", "rn", ftz=True)) == 0.0


def test_vectorised_shapes_broadcast():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    out = fma(a, 2.0, 1.0, "f32")
    assert out.shape == (2, 3) and list(out.ravel()) == [1, 3, 5, 7, 9, 11]
    assert float(sub(3.0, 1.0, "f16")) == 2.0


f32s = st.floats(width=32, allow_nan=False, allow_infinity=False)


def _f16s():
    return st.floats(width=16, allow_nan=False, allow_infinity=False)


def _bf16s():
    return st.integers(0, 0xFFFF).map(
        lambda b: float(np.array([b << 16], dtype=np.uint32).view(np.float32)[0])).filter(np.isfinite)


FMT_VALUES = {"f32": f32s, "f16": _f16s(), "bf16": _bf16s()}


def _check(got, exact, oracle, fmt, mode, *, zero_is_negative=None):
    """``got`` is ``exact`` rounded once; an exact zero needs ``zero_is_negative`` (IEEE 754 6.3)."""
    if exact == 0:
        assert float(got) == 0.0 and bool(np.signbit(got)) == zero_is_negative
        return
    want = oracle(exact, fmt, mode)
    assert float(got) == want
    if want == 0:
        assert bool(np.signbit(got)) == (exact < 0)


def _neg(x) -> bool:
    return bool(np.signbit(x))


def _sum_zero_is_negative(x_zero, x_neg, y, mode):
    """Sign of an exactly zero ``x + y``: two zeros of one sign keep it, otherwise -0 only in rm."""
    if x_zero and y == 0 and x_neg == _neg(y):
        return x_neg
    return mode == "rm"


def _check_add_mul_div(oracle, a, b, fmt, mode):
    """``add``, ``mul`` and (for b != 0) ``div`` of two values against exact fractions."""
    fa, fb = Fraction(a), Fraction(b)
    _check(add(a, b, fmt, mode), fa + fb, oracle, fmt, mode,
           zero_is_negative=_sum_zero_is_negative(fa == 0, _neg(a), b, mode))
    _check(mul(a, b, fmt, mode), fa * fb, oracle, fmt, mode, zero_is_negative=_neg(a) != _neg(b))
    if fb != 0:
        _check(div(a, b, fmt, mode), fa / fb, oracle, fmt, mode, zero_is_negative=_neg(a) != _neg(b))


def _check_fma(oracle, a, b, c, fmt, mode):
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    _check(fma(a, b, c, fmt, mode), exact, oracle, fmt, mode,
           zero_is_negative=_sum_zero_is_negative(a == 0 or b == 0, _neg(a) != _neg(b), c, mode))


@pytest.mark.parametrize("fmt", ["f32", "f16", "bf16"])
def test_fma_matches_fractions(oracle, fmt):
    @settings(max_examples=250, deadline=None)
    @given(FMT_VALUES[fmt], FMT_VALUES[fmt], FMT_VALUES[fmt], st.sampled_from(MODES))
    def run(a, b, c, mode):
        _check_fma(oracle, a, b, c, fmt, mode)
    run()


@settings(max_examples=250, deadline=None)
@given(f32s, f32s, st.sampled_from(MODES))
def test_add_mul_div_f32_match_fractions(oracle, a, b, mode):
    _check_add_mul_div(oracle, a, b, "f32", mode)


@settings(max_examples=250, deadline=None)
@given(st.floats(width=32, min_value=0.0, exclude_min=True, allow_infinity=False),
       st.sampled_from(MODES))
def test_sqrt_f32_brackets_the_exact_root(a, mode):
    r = float(sqrt(a, "f32", mode))
    fa = Fraction(a)
    lo = float(round_float(np.sqrt(a), "f32", "rz"))   # candidate neighbours around the root
    cands = sorted({np.nextafter(np.float32(lo), np.float32(0)).item(), lo,
                    np.nextafter(np.float32(lo), np.float32(np.inf)).item()})
    below = max(c for c in cands if Fraction(c) ** 2 <= fa)
    above = min(c for c in cands if Fraction(c) ** 2 >= fa)
    if below == above:
        assert r == below
    elif mode in ("rz", "rm"):
        assert r == below
    elif mode == "rp":
        assert r == above
    else:   # nearest: compare squared distance to the midpoint (no ties for roots)
        mid = (Fraction(below) + Fraction(above)) / 2
        assert r == (below if fa < mid ** 2 else above)


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e100, max_value=1e100),
       st.floats(allow_nan=False, allow_infinity=False, min_value=-1e100, max_value=1e100),
       st.floats(allow_nan=False, allow_infinity=False, min_value=-1e200, max_value=1e200),
       st.sampled_from(MODES))
def test_f64_ops_match_fractions(oracle, a, b, c, mode):
    _check_fma(oracle, a, b, c, "f64", mode)
    _check_add_mul_div(oracle, a, b, "f64", mode)
    _check_add_mul_div(oracle, a, c, "f64", mode)


def test_f64_underflowing_products_and_roots():
    a, b = 1.8203266035852457e-191, -4.172733806696836e-221      # found by hypothesis
    assert float(mul(a, b, "f64", "rm")) == -5e-324
    assert float(mul(a, b, "f64", "rn")) == 0.0
    assert float(div(5e-324, 3.0, "f64", "rp")) == 5e-324
    r = float(sqrt(5e-324, "f64", "rz"))
    assert Fraction(r) ** 2 <= Fraction(5e-324) < Fraction(np.nextafter(r, 1.0)) ** 2


def test_f64_huge_operands_split_without_overflow(oracle):
    # found by hypothesis: the Veltkamp split of a quotient near 1e306 overflowed
    for a, b in ((166298358205053.0, 3.325427715204556e-292), (1e300, 1.5e-10), (1.7e308, 0.75)):
        for mode in MODES:
            _check(div(a, b, "f64", mode), Fraction(a) / Fraction(b), oracle, "f64", mode)
            _check(mul(a, b, "f64", mode), Fraction(a) * Fraction(b), oracle, "f64", mode)
    r = float(sqrt(1.7e308, "f64", "rp"))
    assert Fraction(r) ** 2 >= Fraction(1.7e308) > Fraction(np.nextafter(r, 0.0)) ** 2


def test_f64_division_with_subnormal_operands(oracle):
    a, b = 2.225073858507203e-309, 2.1688353711569246e-298           # found by hypothesis
    for mode in MODES:
        _check(div(a, b, "f64", mode), Fraction(a) / Fraction(b), oracle, "f64", mode)
        _check(div(b, a, "f64", mode), Fraction(b) / Fraction(a), oracle, "f64", mode)
