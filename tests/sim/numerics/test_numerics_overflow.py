"""Overflow strategies on an f16 GEMM whose results exceed 65504."""

from __future__ import annotations

import numpy as np
import pytest

from isa.errors import InputError
from sim.numerics import round_float
from sim.numerics.overflow import gemm_with_overflow, lowp_gemm


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(4)
    a = rng.uniform(100, 300, (8, 16))
    b = rng.uniform(20, 60, (16, 6))
    b[:, :2] *= 0.01                       # two columns stay in range
    return a, b


def test_lowp_gemm_rounds_every_step():
    a = np.array([[1.0, 2.0 ** -11]])
    b = np.array([[1.0], [1.0]])
    assert float(lowp_gemm(a, b, "f16")[0, 0]) == 1.0              # 1 + 2^-11 is a tie -> 1.0
    assert float(lowp_gemm(a, b, "f16", "f32")[0, 0]) == 1.0       # f32 sum, f16 output tie
    a = np.array([[2.0 ** -11, 2.0 ** -11, 1.0]])
    b = np.ones((3, 1))
    assert float(lowp_gemm(a, b, "f16", "f32")[0, 0]) == 1 + 2.0 ** -10
    assert float(lowp_gemm(a[:, ::-1], b, "f16")[0, 0]) == 1.0     # order matters in f16


def test_each_strategy_reports_and_handles_overflow(big):
    a, b = big
    exact = a @ b
    n_over = int(np.sum(np.abs(exact) > 65504))
    assert 0 < n_over < exact.size

    raw = lowp_gemm(a, b, "f16")
    assert int(np.sum(np.isinf(raw))) == n_over

    c, rep = gemm_with_overflow(a, b, "f16", "clip")
    assert rep.n_overflow == n_over and rep.max_abs == pytest.approx(np.max(exact), rel=1e-3)
    assert rep.n_nonfinite_out == 0 and np.max(c) == 65504.0
    assert int(np.sum(c == 65504.0)) >= n_over

    c, rep = gemm_with_overflow(a, b, "f16", "scale")
    assert rep.scale_exp > 0 and rep.n_nonfinite_out == 0
    assert np.max(np.abs(c - exact) / np.abs(exact)) < 4e-3        # f16 accuracy, no clipping

    c, rep = gemm_with_overflow(a, b, "f16", "promote")
    assert rep.promoted_to == "f32" and rep.n_nonfinite_out == 0
    exact16 = np.asarray(round_float(a, "f16")) @ np.asarray(round_float(b, "f16"))   # inputs are f16
    assert np.max(np.abs(c - exact16) / np.abs(exact16)) < 1e-6

    prev = np.full(exact.shape, -1.0)
    c, rep = gemm_with_overflow(a, b, "f16", "skip", prev=prev)
    assert rep.skipped and rep.n_kept == exact.size and np.array_equal(c, prev)
    c, rep = gemm_with_overflow(a, b, "f16", "skip", prev=prev, per_element=True)
    assert rep.n_kept == n_over and np.array_equal(c == -1.0, np.abs(exact) > 65504)
    c, rep = gemm_with_overflow(a[:, :], b[:, :2], "f16", "skip", prev=prev[:, :2])
    assert not rep.skipped and rep.n_overflow == 0 and rep.scale_exp == 0


def test_scale_is_not_applied_when_in_range_and_bad_strategy():
    a, b = np.ones((2, 3)), np.ones((3, 2))
    c, rep = gemm_with_overflow(a, b, "bf16", "scale")
    assert rep.scale_exp == 0 and np.array_equal(c, np.full((2, 2), 3.0))
    with pytest.raises(InputError):
        gemm_with_overflow(a, b, "f16", "wrap")
