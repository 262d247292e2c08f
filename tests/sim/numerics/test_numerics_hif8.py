"""HiFloat8: every code, the binade structure from the paper, specials, and rounding."""

from __future__ import annotations

import numpy as np
import pytest

from sim.numerics import HIF8_VALUES, decode, encode, get_format, round_float

KNOWN = {0x00: 0.0, 0x01: 2.0 ** -22, 0x07: 2.0 ** -16, 0x08: 1.0, 0x0F: 1.875, 0x10: 2.0,
         0x18: 0.5, 0x20: 4.0, 0x28: 8.0, 0x30: 0.25, 0x40: 16.0, 0x60: 256.0, 0x61: 384.0,
         0x6E: 32768.0, 0x7E: 2.0 ** -15, 0x7F: 1.5 * 2.0 ** -15, 0x88: -1.0, 0xEE: -32768.0}


def test_known_codes():
    for code, value in KNOWN.items():
        assert float(decode(code, "hif8")) == value, hex(code)
    assert np.isnan(decode(0x80, "hif8"))
    assert float(decode(0x6F, "hif8")) == np.inf and float(decode(0xEF, "hif8")) == -np.inf


def test_all_256_codes_round_trip():
    codes = np.arange(256)
    vals = decode(codes, "hif8")
    back = encode(vals, "hif8")
    assert np.array_equal(back[codes != 0x80], codes[codes != 0x80])
    assert int(back[0x80]) == 0x80
    finite = vals[np.isfinite(vals)]
    assert len(np.unique(finite)) == len(finite) == 253          # one zero, 126 per sign


def test_binade_structure_matches_the_paper():
    pos = HIF8_VALUES[(HIF8_VALUES > 0) & np.isfinite(HIF8_VALUES)]
    exps = np.floor(np.log2(pos)).astype(int)
    counts = {e: int(np.sum(exps == e)) for e in np.unique(exps)}
    assert len(counts) == 38 and min(counts) == -22 and max(counts) == 15
    assert sum(1 for e, c in counts.items() if c == 8) == 7          # E in -3..3, 3-bit mantissa
    assert sum(1 for e, c in counts.items() if c == 4) == 8          # |E| in 4..7
    assert sum(1 for e, c in counts.items() if c == 2) == 15         # |E| in 8..15 except +15
    assert counts[15] == 1                                           # 1.5 * 2^15 is the Inf code
    assert all(counts[e] == 1 for e in range(-22, -15))              # 7 denormal binades
    f = get_format("hif8")
    assert (f.max, f.min_normal, f.min_subnormal) == (32768.0, 2.0 ** -15, 2.0 ** -22)


@pytest.mark.parametrize("x,rn,rna,rz", [
    (1.0625, 1.0, 1.125, 1.0),                        # tie at 3 mantissa bits: 0x08 even
    (1.1875, 1.25, 1.25, 1.125),                      # tie, even code above
    (320.0, 256.0, 384.0, 256.0),                     # tie at 1 mantissa bit
    (40960.0, 32768.0, np.inf, 32768.0),              # overflow midpoint (Inf code = 1.5*2^15)
    (40961.0, np.inf, np.inf, 32768.0),
    (2.0 ** -23, 0.0, 2.0 ** -22, 0.0),               # half the smallest denormal
    (1.5 * 2.0 ** -22, 2.0 ** -21, 2.0 ** -21, 2.0 ** -22),  # denormals are powers of two
    (-3.3, -3.25, -3.25, -3.25),
    (-3.4, -3.5, -3.5, -3.25),
])
def test_rounding_table(x, rn, rna, rz):
    assert float(round_float(x, "hif8", "rn")) == rn
    assert float(round_float(x, "hif8", "rna")) == rna
    assert float(round_float(x, "hif8", "rz")) == rz


def test_saturation_directed_modes_and_zero():
    assert float(round_float(1e9, "hif8", "rn", saturate=True)) == 32768.0
    assert float(round_float(-np.inf, "hif8", "rn", saturate=True)) == -32768.0
    assert float(round_float(1e9, "hif8", "rm")) == 32768.0
    assert float(round_float(-1e9, "hif8", "rm")) == -np.inf
    assert float(round_float(1.01, "hif8", "rp")) == 1.125
    assert int(encode(-1e-30, "hif8")) == 0x00                       # no negative zero
    rng = np.random.default_rng(0)
    x = rng.standard_normal(20000) * 10.0 ** rng.uniform(-6, 4, 20000)
    lo, hi = round_float(x, "hif8", "rm"), round_float(x, "hif8", "rp")
    assert np.all(lo <= x) and np.all(x <= hi)
    rn = round_float(x, "hif8", "rn")
    assert np.all((rn == lo) | (rn == hi))
    assert np.all(np.abs(rn - x) <= np.abs(np.where(rn == lo, hi, lo) - x))
