"""sim.check: error measures, decoding of stored formats, NaN/Inf handling, variant consistency."""

from __future__ import annotations

import json
import math

import ml_dtypes
import numpy as np
import pytest

from isa.errors import InputError
from sim.check import bit_exact, check, check_outputs, compare_variants, ulp_distance


def test_exact_f32_output_passes_with_zero_error():
    ref = np.array([1.0, -2.5, 3.25], dtype=np.float64)
    rep = check(ref.astype(np.float32), ref)
    assert rep.passed and rep.dtype == "f32"
    assert (rep.max_abs, rep.max_rel, rep.max_ulp, rep.n_bad) == (0.0, 0.0, 0, 0)
    assert rep.exact_fraction == 1.0 and math.isinf(rep.psnr_db)
    assert dict(rep.histogram)["0"] == 3


def test_errors_ulps_and_worst_elements():
    ref = np.array([1.0, 2.0, 4.0, 8.0])
    got = np.array([1.0, 2.0 + 2 * 2.0 ** -22, 4.0, 8.5], dtype=np.float32)  # 2 ulp, 0.5 abs
    rep = check(got, ref, rtol=1e-7, atol=0.0)
    assert not rep.passed and rep.n_bad == 2
    assert rep.max_abs == 0.5 and rep.max_rel == pytest.approx(0.0625)
    assert rep.max_ulp == 0.5 / 2.0 ** -20                # f32 spacing at 8 is 2^-20
    assert rep.worst[0].index == (3,) and rep.worst[0].got == 8.5 and rep.worst[0].ref == 8.0
    assert rep.worst[1].index == (1,) and rep.worst[1].ulp == 2
    assert rep.mean_abs == pytest.approx((0.5 + 2 * 2.0 ** -22) / 4)
    mse = (0.25 + (2 * 2.0 ** -22) ** 2) / 4
    assert rep.psnr_db == pytest.approx(10 * math.log10(64 / mse))
    assert rep.exact_fraction == 0.5


def test_p99_relative_error():
    ref = np.ones(1000)
    got = np.ones(1000, dtype=np.float32)
    got[:20] = 1.5                                       # 2 % of elements off by 0.5
    rep = check(got, ref, rtol=1.0, atol=0.0)
    assert rep.passed and rep.p99_rel == pytest.approx(0.5)
    got[:20] = 1.0
    got[:5] = 1.5                                        # 0.5 %: the 99th percentile is clean
    assert check(got, ref).p99_rel == 0.0


def test_bf16_bits_are_decoded_and_ulp_counted_in_bf16():
    ref = np.array([1.0, 3.0, -0.5])
    vals = np.array([1.0, 3.0 + 2 * 2.0 ** -6, -0.5], dtype=ml_dtypes.bfloat16)  # bf16 ulp at 3 is 2^-6
    bits = vals.view(np.uint16)
    rep = check(bits, ref, "bf16")
    assert rep.dtype == "bf16" and rep.max_abs == 2 * 2.0 ** -6 and rep.max_ulp == 2
    # the same values given decoded (float32 holding bf16 values, as the corpus npz stores them)
    rep2 = check(vals.astype(np.float32), ref, "bf16")
    assert rep2.max_ulp == 2 and rep2.max_abs == rep.max_abs


def test_e4m3_bytes_are_decoded():
    ref = np.array([1.0, 448.0, -0.25])
    raw = np.array([1.0, 448.0, -0.25], dtype=ml_dtypes.float8_e4m3fn).view(np.uint8)
    rep = check(raw, ref, "e4m3")
    assert rep.passed and rep.max_ulp == 0 and rep.dtype == "e4m3"
    raw2 = raw.copy()
    raw2[0] += 1                                         # next e4m3 code: 1.125
    rep = check(raw2, ref, "e4m3", rtol=0.0, atol=0.0)
    assert not rep.passed and rep.max_ulp == 1 and rep.max_abs == 0.125


def test_nan_and_inf_never_pass_silently():
    ref = np.array([1.0, 2.0, np.inf, np.nan])
    got = np.array([1.0, np.nan, np.inf, np.nan], dtype=np.float32)
    rep = check(got, ref, rtol=1e9, atol=1e9)           # even a huge tolerance cannot hide a NaN
    assert not rep.passed and rep.n_bad == 1 and rep.special_mismatch == 1
    assert (rep.nan_got, rep.inf_got, rep.nan_ref, rep.inf_ref) == (2, 1, 1, 1)
    assert rep.worst[0].index == (1,)
    assert "non-finite" in rep.render()
    got = np.array([1.0, 2.0, -np.inf, np.nan], dtype=np.float32)   # wrong-signed Inf
    assert not check(got, ref, rtol=1e9, atol=1e9).passed
    got = np.array([1.0, 2.0, np.inf, np.nan], dtype=np.float32)
    rep = check(got, ref)
    assert rep.passed and "non-finite" in rep.render()


def test_integers_must_match_exactly():
    ref = np.array([5, -7, 2**31 - 1], dtype=np.int64)
    rep = check(np.array([5, -7, 2**31 - 1], dtype=np.int32), ref)
    assert rep.passed and rep.dtype == "s32" and (rep.rtol, rep.atol) == (0.0, 0.0)
    rep = check(np.array([5, -6, 2**31 - 1], dtype=np.int32), ref)
    assert not rep.passed and rep.max_ulp == 1 and rep.worst[0].index == (1,)


def test_worst_indices_are_multidimensional():
    ref = np.zeros((3, 4))
    got = np.zeros((3, 4), dtype=np.float32)
    got[2, 1] = 1.0
    rep = check(got, ref)
    assert rep.worst[0].index == (2, 1) and rep.shape == (3, 4)


def test_json_and_text_forms():
    ref = np.array([1.0, 2.0])
    rep = check(np.array([1.0, np.nan], dtype=np.float16), ref, name="y")
    d = json.loads(rep.to_json())
    assert d["name"] == "y" and d["passed"] is False and d["dtype"] == "f16"
    assert d["histogram"]["NaN"] == 1 and d["worst"][0]["index"] == [1]
    text = rep.render()
    assert text.startswith("FAIL y (f16, 2)") and "[1] got nan" in text


def test_shape_mismatch_is_an_input_error():
    with pytest.raises(InputError):
        check(np.zeros(3, np.float32), np.zeros(4))


def test_check_outputs_with_per_output_tolerance():
    got = {"a": np.array([1.0, 2.01], np.float32), "b": np.array([3], np.int32)}
    ref = {"a": np.array([1.0, 2.0]), "b": np.array([3])}
    rep = check_outputs(got, ref, rtol=0.0, atol=0.0)
    assert not rep.passed and not rep["a"].passed and rep["b"].passed
    rep = check_outputs(got, ref, rtol=0.0, atol=0.0, per_output={"a": {"atol": 0.02}})
    assert rep.passed and "check: PASS (2/2 outputs)" in rep.render()
    with pytest.raises(InputError):
        check_outputs({}, ref)


def test_ulp_distance_and_bit_exact():
    a = np.array([1.0, 1.0, 0.0, np.nan])
    b = np.array([1.0, np.nextafter(np.float32(1), np.float32(2)), -0.0, np.nan])
    assert ulp_distance(a, b, "f32").tolist() == [0, 1, 0, -1]
    assert bit_exact(a.astype(np.float32), b.astype(np.float32)).tolist() == [True, False, False, True]
    assert ulp_distance(np.array([1.0]), np.array([1.0 + 2**-10]), "f16").tolist() == [1]


def test_variants_of_one_computation_fp32_fp16_bf16_int8():
    def inputs(shape):
        rng = np.random.default_rng(sum(shape))
        return rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape[::-1]).astype(np.float32)

    def reference(shape):
        a, b = inputs(shape)
        return a.astype(np.float64) @ b.astype(np.float64)

    def int8(shape):
        a, b = inputs(shape)
        sa, sb = np.abs(a).max() / 127, np.abs(b).max() / 127
        qa, qb = np.rint(a / sa).astype(np.int32), np.rint(b / sb).astype(np.int32)
        return ((qa @ qb) * (sa * sb)).astype(np.float32)

    variants = {
        "fp32": lambda s: (lambda a, b: a @ b)(*inputs(s)),
        "fp16": lambda s: (lambda a, b: (a.astype(np.float16) @ b.astype(np.float16)))(*inputs(s)),
        "bf16": lambda s: (lambda a, b: (a.astype(ml_dtypes.bfloat16).astype(np.float32)
                                         @ b.astype(ml_dtypes.bfloat16).astype(np.float32)
                                         ).astype(ml_dtypes.bfloat16).view(np.uint16))(*inputs(s)),
        "int8": int8,
    }
    shapes = [(8, 16), (32, 64)]
    rep = compare_variants(variants, reference, shapes, dtypes={"bf16": "bf16"},
                           tolerances={"int8": {"rtol": 0.1, "atol": 0.5}, "bf16": {"rtol": 0.05, "atol": 0.3}})
    assert [r.variant for r in rep.results] == ["fp32", "fp16", "bf16", "int8"] * 2
    fp32 = rep.result("fp32", (32, 64)).report
    fp16 = rep.result("fp16", (32, 64)).report
    bf16 = rep.result("bf16", (32, 64)).report
    assert fp32.dtype == "f32" and fp16.dtype == "f16" and bf16.dtype == "bf16"
    assert fp32.max_rel < fp16.max_rel and fp32.psnr_db > fp16.psnr_db > bf16.psnr_db
    assert rep.result("fp32", (8, 16)).max_abs_vs_baseline == 0.0
    assert rep.result("int8", (32, 64)).max_abs_vs_baseline > 0
    text = rep.render()
    assert "consistency:" in text and "32x64" in text and "int8" in text
    assert json.loads(rep.to_json())["results"][1]["check"]["dtype"] == "f16"
