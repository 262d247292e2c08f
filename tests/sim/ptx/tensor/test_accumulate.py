"""The float32/int32 fast path of the tensor-core accumulation gives the float64 path's bits."""

import ml_dtypes
import numpy as np
import pytest

from sim.ptx.tensor import accumulate as acc

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
      "e5m2": ml_dtypes.float8_e5m2, "tf32": np.float32}


def _values(rng, shape, t, spread):
    """Exact values of type ``t``: normal draws times 2**U(-spread, spread), a third of them zero."""
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread + 1, shape))
    x[rng.random(shape) < 0.3] = 0
    with np.errstate(all="ignore"):
        v = x.astype(NP[t])
    if t == "tf32":
        v = (v.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    v = v.astype(np.float64)
    v[~np.isfinite(v)] = 0
    return v


@pytest.mark.parametrize("t", sorted(NP))
@pytest.mark.parametrize("spread", [0, 12, 40, 140])
def test_fast_path_matches_float64_path(t, spread):
    rng = np.random.default_rng(spread * 7 + len(t))
    # below and above _REPEAT_MAX (2**16 products): both ways of forming the products
    shapes = [(3, 16, 8, 16), (2, 16, 64, 16), (5, 16, 64, 16), (2, 16, 8, 32), (1, 16, 8, 8), (2, 16, 16, 4)]
    for (W, M, N, K) in shapes:
        a, b = _values(rng, (W, M, K), t, spread), _values(rng, (W, K, N), t, spread)
        c = (rng.standard_normal((W, M, N)) * np.exp2(rng.integers(-spread - 10, spread + 10, (W, M, N))))
        with np.errstate(over="ignore"):  # wide spreads overflow to +-Inf on purpose
            c = c.astype(np.float32).astype(np.float64)
        for p in sorted({acc.ALIGN_BITS[t], 14, 26}):
            want = acc.float_accumulate_f64(a, b, c, t, t, "f32", p)
            got = acc.float_accumulate(a, b, c, t, t, "f32", p)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (t, spread, (W, M, N, K), p)


def test_fast_path_is_taken_in_range_and_refused_outside():
    rng = np.random.default_rng(3)
    a, b = _values(rng, (2, 16, 16), "f16", 8), _values(rng, (2, 16, 8), "f16", 8)
    ea, eb = acc._exponent16(a, -14), acc._exponent16(b, -14)
    shift = np.full((2, 16, 8), -10, np.int32)
    assert acc._fast_terms(a, b, ea, eb, shift, "f16", "f16", 26) is not None
    big = np.full((1, 16, 16), 2.0 ** 100)            # bf16 products of 2**200 are not float32
    ebig = acc._exponent16(big, -126)
    assert acc._fast_terms(big, big.transpose(0, 2, 1), ebig, ebig.transpose(0, 2, 1),
                           np.full((1, 16, 16), 175, np.int32), "bf16", "bf16", 26) is None
    # and float_accumulate still gives the float64 path's (finite, exact) answer there
    c = np.zeros((1, 16, 16))
    got = acc.float_accumulate(big, big.transpose(0, 2, 1), c, "bf16", "bf16", "f32")
    assert np.array_equal(got, acc.float_accumulate_f64(big, big.transpose(0, 2, 1), c, "bf16", "bf16", "f32", 26))
    assert (got == np.finfo(np.float32).max).all()     # 16 * 2**200 rounded toward zero


def test_nan_and_inf_operands_give_the_ieee_sum():
    rng = np.random.default_rng(4)
    a, b = _values(rng, (2, 16, 16), "f16", 4), _values(rng, (2, 16, 8), "f16", 4)
    a[0, 1, 2] = np.inf
    b[1, 3, 4] = np.nan
    with np.errstate(invalid="ignore"):
        d = acc.float_accumulate(a, b, np.zeros((2, 16, 8)), "f16", "f16", "f32")
    assert np.isnan(d[1, :, 4]).all()
    row = d[0, 1]
    assert (np.isinf(row) | np.isnan(row)).all() and np.isfinite(d[0, 0]).all()


def test_round_toward_zero_f32_matches_nextafter():
    rng = np.random.default_rng(5)
    s = rng.standard_normal(20000) * np.exp2(rng.integers(-160, 130, 20000))
    s = np.concatenate([s, [0.0, -0.0, 1e300, -1e300, np.nan, 2.0 ** -149 * 0.75, 3.4e38 * 1.0000001]])
    with np.errstate(over="ignore"):
        f = s.astype(np.float32)
        over = np.abs(f.astype(np.float64)) > np.abs(s)
        want = np.where(over, np.nextafter(f, np.float32(0)), f).astype(np.float32)
        got = acc._round_toward_zero_f32(s)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
