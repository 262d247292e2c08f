"""Rounding: mode tables on ties, PTX overflow/saturation (H200-verified patterns), float<->int."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isa.errors import InputError
from sim.numerics import (decode, encode, float_to_int, int_to_float, normalize_mode, round_float,
                          round_integral, sat01, saturate_int, wrap_int)

U = 2.0 ** -10          # f16 ulp at 1.0

# value, then expected result for rn, rna, rz, rm, rp
F16_TABLE = [
    (1 + U / 2, 1.0, 1 + U, 1.0, 1.0, 1 + U),                    # tie, even below
    (1 + 3 * U / 2, 1 + 2 * U, 1 + 2 * U, 1 + U, 1 + U, 1 + 2 * U),  # tie, even above
    (1 + U / 4, 1.0, 1.0, 1.0, 1.0, 1 + U),                      # below the tie
    (1 + 3 * U / 4, 1 + U, 1 + U, 1.0, 1.0, 1 + U),              # above the tie
    (-(1 + U / 2), -1.0, -(1 + U), -1.0, -(1 + U), -1.0),
    (-(1 + 3 * U / 4), -(1 + U), -(1 + U), -1.0, -(1 + U), -1.0),
    (2.0 ** -25, 0.0, 2.0 ** -24, 0.0, 0.0, 2.0 ** -24),         # half the smallest subnormal
    (3 * 2.0 ** -25, 2.0 ** -23, 2.0 ** -23, 2.0 ** -24, 2.0 ** -24, 2.0 ** -23),
    (-(2.0 ** -26), -0.0, -0.0, -0.0, -(2.0 ** -24), -0.0),
    (65504.0, 65504.0, 65504.0, 65504.0, 65504.0, 65504.0),
    (65519.0, 65504.0, 65504.0, 65504.0, 65504.0, np.inf),
    (65520.0, np.inf, np.inf, 65504.0, 65504.0, np.inf),         # tie with 2^16 -> overflow
    (-1e6, -np.inf, -np.inf, -65504.0, -np.inf, -65504.0),
]


@pytest.mark.parametrize("row", F16_TABLE, ids=lambda r: repr(r[0]))
def test_f16_mode_table(row):
    x, *want = row
    got = [float(round_float(x, "f16", m)) for m in ("rn", "rna", "rz", "rm", "rp")]
    assert got == want
    assert [np.signbit(g) for g in got] == [np.signbit(w) for w in want]


def test_ptx_h200_verified_cvt_patterns():
    # ptx.md 10.7 (H200): cvt.rn.f16.f32(65520) = 0x7C00, .satfinite -> 0x7BFF, rz(1e6) -> 0x7BFF
    assert int(encode(np.float32(65520), "f16", "rn")) == 0x7C00
    assert int(encode(np.float32(65520), "f16", "rn", saturate=True)) == 0x7BFF
    assert int(encode(np.float32(1e6), "f16", "rz")) == 0x7BFF
    # cvt.rn.f16x2.f32 d, 1.0, 2.0 = 0x3C004000 (a -> high half); bf16x2 = 0x3F804000
    hi, lo = encode(np.array([1.0, 2.0]), "f16")
    assert (int(hi) << 16 | int(lo)) == 0x3C004000
    hi, lo = encode(np.array([1.0, 2.0]), "bf16")
    assert (int(hi) << 16 | int(lo)) == 0x3F804000


def test_satfinite_and_nan_inf_handling():
    x = np.array([np.inf, -np.inf, np.nan, 1e9, -1e9])
    assert list(round_float(x[:2], "f16", "rn", saturate=True)) == [65504.0, -65504.0]
    assert np.isnan(round_float(np.nan, "f16", "rn", saturate=True))
    assert list(encode(x, "e4m3", "rn", saturate=True)[[0, 1, 3, 4]]) == [0x7E, 0xFE, 0x7E, 0xFE]
    assert int(encode(np.nan, "e4m3", saturate=True)) & 0x7F == 0x7F
    # e4m3 has no Inf: overflow without satfinite is NaN, as ml_dtypes does
    assert int(encode(470.0, "e4m3")) == 0x7F and int(encode(464.0, "e4m3")) == 0x7E
    assert int(encode(1e9, "e5m2")) == 0x7C and int(encode(1e9, "e5m2", saturate=True)) == 0x7B
    assert int(encode(1e9, "e5m2", "rz")) == 0x7B


def test_sat_clamps_to_unit_interval():
    out = round_float(np.array([-0.5, 1.5, np.nan, -0.0, 0.25, np.inf]), "f16", "rn", sat=True)
    assert list(out) == [0.0, 1.0, 0.0, 0.0, 0.25, 1.0]
    assert not np.any(np.signbit(out))
    assert list(sat01(np.array([-np.inf, 0.9999]))) == [0.0, 0.9999]


def test_ftz_flushes_subnormal_results():
    assert float(round_float(1e-40, "f32", "rn")) == float(np.float32(1e-40))
    r = round_float(-1e-40, "f32", "rn", ftz=True)
    assert float(r) == 0.0 and np.signbit(r)


@pytest.mark.parametrize("name,ml", [("f16", np.float16), ("bf16", ml_dtypes.bfloat16),
                                     ("e4m3", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2)])
def test_rn_agrees_with_ml_dtypes_casts(name, ml):
    rng = np.random.default_rng(7)
    mant = rng.integers(0, 1 << 23, 20000).astype(np.uint32)
    expo = rng.integers(0, 255, 20000).astype(np.uint32)       # includes f32 subnormals and Inf/NaN
    sign = rng.integers(0, 2, 20000).astype(np.uint32)
    x = ((sign << 31) | (expo << 23) | mant).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = x.astype(ml).astype(np.float64)
    got = round_float(x, name, "rn")
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan], ref[~nan])
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(ref[~nan]))


def test_f64_to_f32_rn_agrees_with_numpy_and_directed_brackets():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(5000) * 10.0 ** rng.integers(-45, 39, 5000)
    assert np.array_equal(round_float(x, "f32", "rn"), x.astype(np.float32).astype(np.float64))
    lo, hi = round_float(x, "f32", "rm"), round_float(x, "f32", "rp")
    assert np.all(lo <= x) and np.all(hi >= x)
    assert np.all((lo == hi) == (x.astype(np.float32) == x))
    rz = round_float(x, "f32", "rz")
    assert np.array_equal(rz, np.where(x > 0, lo, hi))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64),
       st.sampled_from(["rn", "rna", "rz", "rm", "rp"]), st.sampled_from(["f32", "f16", "bf16", "e5m2"]))
def test_round_float_matches_fraction_oracle(oracle, x, mode, fmt):
    assert float(round_float(x, fmt, mode)) == oracle(Fraction(x), fmt, mode)


def test_stochastic_rounding_is_seeded_and_unbiased():
    x = np.full(40000, 1 + U / 4)
    a = round_float(x, "f16", "rs", seed=11)
    b = round_float(x, "f16", "rs", seed=11)
    assert np.array_equal(a, b)
    assert set(np.unique(a)) == {1.0, 1 + U}
    assert abs(np.mean(a == 1 + U) - 0.25) < 0.01
    assert abs(np.mean(a) - (1 + U / 4)) < 1e-5
    # explicit random bits: all-zero truncates, all-ones rounds up anything inexact
    assert float(round_float(1 + U / 4, "f16", "rs", rbits=0)) == 1.0
    assert float(round_float(1 + U / 4, "f16", "rs", rbits=0xFFFFFFFF)) == 1 + U
    assert float(round_float(1.0, "f16", "rs", rbits=0xFFFFFFFF)) == 1.0


def test_float_to_int_ptx_rules():
    # H200 (ptx.md 10.7)
    assert list(float_to_int(np.array([2.5, 3.5]), "s32", "rni")) == [2, 4]
    assert int(float_to_int(-2.7, "s32", "rzi")) == -2
    assert int(float_to_int(np.nan, "s32", "rzi")) == 0
    assert int(float_to_int(3e10, "s32", "rzi")) == 2147483647
    assert int(float_to_int(-5.0, "u32", "rni")) == 0
    assert int(float_to_int(-2.5, "s32", "rmi")) == -3 and int(float_to_int(-2.5, "s32", "rpi")) == -2
    # NaN from f64, or into 64-bit destinations, is 1 << (w-1)
    assert int(float_to_int(np.nan, "s32", "rni", src="f64")) == -2 ** 31
    assert int(float_to_int(np.nan, "s64", "rni")) == -2 ** 63
    assert int(float_to_int(np.nan, "u64", "rni")) == 2 ** 63
    assert int(float_to_int(2.0 ** 64, "u64", "rzi")) == 2 ** 64 - 1
    assert int(float_to_int(-2.0 ** 70, "s64", "rzi")) == -2 ** 63
    assert int(float_to_int(2.0 ** 63, "s64", "rzi")) == 2 ** 63 - 1
    assert list(float_to_int(np.array([7.6, -9.0, 2.5, -2.5]), "s4", "rna")) == [7, -8, 3, -3]
    assert float_to_int(np.array([1.0]), "u8").dtype == np.uint8
    assert list(round_integral(np.array([0.5, 1.5, -0.5]), "rna")) == [1.0, 2.0, -1.0]


def test_integer_saturation_and_wrapping():
    assert int(saturate_int(300, "u8")) == 255 and int(saturate_int(-300, "s8")) == -128
    assert int(wrap_int(0x1FF, "s8")) == -1 and int(wrap_int(0x1FF, "u8")) == 255
    assert int(wrap_int(-1, "u16")) == 0xFFFF


def test_int_to_float_is_exact_for_64_bit_sources():
    big = np.array([2 ** 63 - 1, -2 ** 63, 2 ** 24 + 1, -(2 ** 24 + 3)], dtype=np.int64)
    assert list(int_to_float(big, "f32", "rn")) == [2.0 ** 63, -2.0 ** 63, 2.0 ** 24, -(2.0 ** 24 + 4)]
    assert list(int_to_float(big, "f32", "rz")) == [2.0 ** 63 - 2.0 ** 39, -2.0 ** 63, 2.0 ** 24,
                                                   -(2.0 ** 24 + 2)]
    assert float(int_to_float(np.uint64(2 ** 64 - 1), "f32", "rn")) == 2.0 ** 64
    assert float(int_to_float(np.int64(2 ** 53 + 1), "f64", "rn")) == 2.0 ** 53
    assert float(int_to_float(np.int64(2 ** 53 + 1), "f64", "rp")) == 2.0 ** 53 + 2
    assert float(int_to_float(np.int32(65536 + 16), "f16", "rn")) == np.inf


@settings(max_examples=300, deadline=None)
@given(st.integers(-2 ** 63, 2 ** 63 - 1), st.sampled_from(["rn", "rna", "rz", "rm", "rp"]),
       st.sampled_from(["f32", "f16", "bf16", "f64"]))
def test_int_to_float_matches_oracle(oracle, v, mode, fmt):
    assert float(int_to_float(np.int64(v), fmt, mode)) == oracle(Fraction(v), fmt, mode)


def test_unknown_mode_is_an_input_error():
    assert normalize_mode(".rzi") == "rz"
    with pytest.raises(InputError):
        round_float(1.0, "f16", "rq")
    with pytest.raises(InputError):
        float_to_int(1.0, "f16")
