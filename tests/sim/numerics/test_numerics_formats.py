"""Formats and bit patterns: ranges, every code of the 8/16-bit formats, known values, ULPs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from isa.errors import InputError
from sim.numerics import (FORMATS, decode, describe, encode, get_format, ordinal, pack_int4,
                          ulp, ulp_distance, unpack_int4, values_to_bits)

ML = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
      "e5m2": ml_dtypes.float8_e5m2, "f32": np.float32}


@pytest.mark.parametrize("name", sorted(ML))
def test_ranges_match_ml_dtypes_finfo(name):
    f, fi = get_format(name), ml_dtypes.finfo(ML[name])
    assert f.max == float(fi.max)
    assert f.min_normal == float(fi.smallest_normal)
    assert f.min_subnormal == float(fi.smallest_subnormal)
    assert f.eps == float(fi.eps)


def test_tf32_and_int_ranges():
    t = get_format("tf32")
    assert (t.max, t.min_normal, t.eps) == ((2 - 2 ** -10) * 2.0 ** 127, 2.0 ** -126, 2.0 ** -10)
    assert t.min_subnormal == 2.0 ** -136
    assert [(get_format(n).min, get_format(n).max) for n in ("s4", "u4", "s8", "u8", "s32")] == [
        (-8, 7), (0, 15), (-128, 127), (0, 255), (-2 ** 31, 2 ** 31 - 1)]


def test_registry_aliases_and_unknown_name():
    assert get_format("fp16") is get_format(".f16") is get_format("half") is FORMATS["f16"]
    assert get_format("int4").name == "s4" and get_format("hifloat8").name == "hif8"
    with pytest.raises(InputError) as err:
        get_format("f12")
    assert "f16" in err.value.expected
    assert describe("e5m2")["max"] == 57344.0


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "f16", "bf16"])
def test_every_code_decodes_like_ml_dtypes_and_round_trips(name):
    f = get_format(name)
    codes = np.arange(1 << f.bits, dtype=np.uint64)
    vals = decode(codes, f)
    with np.errstate(invalid="ignore"):
        ref = codes.astype(f.storage).view(ML[name]).astype(np.float64)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(vals), nan)
    assert np.array_equal(vals[~nan], ref[~nan])
    back = encode(vals[~nan], f)
    # -0 and +0 are distinct codes and both survive
    assert np.array_equal(back.astype(np.uint64), codes[~nan])
    assert np.all(np.isnan(decode(encode(vals[nan], f), f)))


def test_known_bit_patterns():
    assert int(encode(1.0, "f16")) == 0x3C00 and int(encode(65504.0, "f16")) == 0x7BFF
    assert int(encode(1.0, "bf16")) == 0x3F80 and int(encode(-2.0, "bf16")) == 0xC000
    assert int(encode(448.0, "e4m3")) == 0x7E and int(encode(-448.0, "e4m3")) == 0xFE
    assert int(encode(57344.0, "e5m2")) == 0x7B and int(encode(np.inf, "e5m2")) == 0x7C
    assert int(encode(2.0 ** -9, "e4m3")) == 0x01 and int(encode(2.0 ** -16, "e5m2")) == 0x01
    assert int(encode(1.0, "f32")) == 0x3F800000 and int(encode(-0.0, "f32")) == 0x80000000
    assert float(decode(0x3F800000, "f32")) == 1.0 and float(decode(0x7BFF, "f16")) == 65504.0
    # tf32 keeps 10 mantissa bits inside an f32 word; the tie 1 + 2^-11 goes to even (1.0)
    assert int(encode(1 + 2.0 ** -11, "tf32")) == 0x3F800000
    assert int(encode(1 + 2.0 ** -11, "tf32", "rna")) == 0x3F802000
    assert float(decode(0x3F801FFF, "tf32")) == 1.0      # low 13 bits ignored
    assert int(values_to_bits(1 + 2.0 ** -10, "tf32")) == 0x3F802000


def test_int_formats_encode_decode():
    assert list(decode(np.array([0x7, 0x8, 0xF]), "s4")) == [7, -8, -1]
    assert list(encode(np.array([7.6, -9.0, -0.4]), "s4")) == [0x7, 0x8, 0x0]
    assert list(encode(np.array([300.0, -3.0, 2.5]), "u8")) == [255, 0, 2]
    assert list(decode(np.array([0xFF, 0x80]), "s8")) == [-1, -128]
    packed = pack_int4(np.array([1, -2, 7, -8, 3]))
    assert list(packed) == [0xE1, 0x87, 0x03]
    assert list(unpack_int4(packed, count=5)) == [1, -2, 7, -8, 3]


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "f16", "bf16", "hif8"])
def test_ordinal_orders_every_code_by_value(name):
    f = get_format(name)
    codes = np.arange(1 << f.bits, dtype=np.uint64)
    vals = decode(codes, f)
    ok = ~np.isnan(vals)
    ords, vals = ordinal(codes[ok], f), vals[ok]
    order = np.argsort(ords, kind="stable")
    assert np.all(np.diff(vals[order]) >= 0)
    # consecutive distinct values have consecutive ordinals
    uniq = np.unique(ords)
    assert np.array_equal(uniq, np.arange(uniq.min(), uniq.max() + 1))


def test_ulp_distance_and_spacing():
    assert int(ulp_distance(1.0, 1 + 2.0 ** -10, "f16")) == 1
    assert int(ulp_distance(-(2.0 ** -24), 2.0 ** -24, "f16")) == 2
    assert int(ulp_distance(1.0, 2.0, "bf16")) == 128
    assert int(ulp_distance(0.0, -0.0, "f32")) == 0
    assert int(ulp_distance(1.0, 2.0, "hif8")) == 8          # 3 mantissa bits at E=0
    assert int(ulp_distance(256.0, 512.0, "hif8")) == 2      # 1 mantissa bit at E=8
    assert int(ulp_distance(np.nan, 1.0, "f16")) == -1
    assert float(ulp(1.0, "f16")) == 2.0 ** -10 and float(ulp(1e-7, "f16")) == 2.0 ** -24
    assert float(ulp(300.0, "hif8")) == 128.0 and float(ulp(1.0, "e4m3")) == 0.125
