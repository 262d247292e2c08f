"""mma.sync fragments and arithmetic: layouts, exact products, wrap/saturate, H200 outputs."""

from __future__ import annotations

import numpy as np
import pytest

from isa.errors import SimulationError
from sim.ptx.tensor import (decode, encode, fragment_to_matrix, matrix_to_fragment, mma_fragment_map,
                            mma_sync)

RNG = np.random.default_rng(7)

SHAPES = [
    ("m16n8k16", "a", "f16"), ("m16n8k16", "b", "bf16"), ("m16n8k16", "c", "f32"), ("m16n8k16", "c", "f16"),
    ("m16n8k8", "a", "bf16"), ("m16n8k8", "b", "f16"), ("m16n8k8", "a", "tf32"), ("m16n8k8", "b", "tf32"),
    ("m16n8k4", "a", "tf32"), ("m16n8k4", "b", "tf32"),
    ("m16n8k32", "a", "s8"), ("m16n8k32", "b", "u8"), ("m16n8k32", "a", "e4m3"), ("m16n8k32", "c", "s32"),
    ("m16n8k16", "a", "s8"), ("m16n8k16", "b", "s8"),
]


@pytest.mark.parametrize("shape,operand,etype", SHAPES)
def test_fragment_covers_matrix_once_and_round_trips(shape, operand, etype):
    fmap = mma_fragment_map(shape, operand, etype)
    flat = fmap.rows * fmap.shape[1] + fmap.cols
    assert sorted(flat.ravel().tolist()) == list(range(fmap.shape[0] * fmap.shape[1]))
    mask = (1 << fmap.bits) - 1
    mat = RNG.integers(0, mask + 1, size=(3,) + fmap.shape, dtype=np.uint64).astype(np.uint32)
    regs = matrix_to_fragment(mat, fmap)
    assert regs.shape == (3, 32, fmap.nregs) and regs.dtype == np.uint32
    np.testing.assert_array_equal(fragment_to_matrix(regs, fmap), mat)


def test_m16n8k16_a_layout_matches_isa_formula():
    fmap = mma_fragment_map("m16n8k16", "a", "f16")
    for lane in (0, 5, 31):
        g, t = lane >> 2, lane & 3
        # a0,a1 -> row g; a2,a3 -> row g+8; a4..a7 -> cols +8 (ISA 9.7.14.5.8)
        assert fmap.rows[lane].tolist() == [g, g, g + 8, g + 8, g, g, g + 8, g + 8]
        assert fmap.cols[lane].tolist() == [2 * t, 2 * t + 1, 2 * t, 2 * t + 1,
                                            2 * t + 8, 2 * t + 9, 2 * t + 8, 2 * t + 9]
    # element a0 sits in bits 15:0 of register 0, a1 in bits 31:16
    mat = np.zeros((1, 16, 16), np.uint32)
    mat[0, 0, 0], mat[0, 0, 1] = 0x1111, 0x2222
    assert matrix_to_fragment(mat, fmap)[0, 0, 0] == 0x22221111


def _frags(shape, at, bt, ct, a, b, c):
    A = matrix_to_fragment(encode(a, at), mma_fragment_map(shape, "a", at))
    B = matrix_to_fragment(encode(b, bt), mma_fragment_map(shape, "b", bt))
    C = matrix_to_fragment(encode(c, ct), mma_fragment_map(shape, "c", ct))
    return A, B, C


@pytest.mark.parametrize("shape,t,acc", [("m16n8k16", "f16", "f32"), ("m16n8k16", "bf16", "f32"),
                                         ("m16n8k8", "f16", "f16"), ("m16n8k8", "tf32", "f32"),
                                         ("m16n8k4", "tf32", "f32"), ("m16n8k32", "e4m3", "f32"),
                                         ("m16n8k32", "e5m2", "f32")])
def test_float_mma_exact_on_small_integers(shape, t, acc):
    _, _, k = (16, 8, int(shape.split("k")[1]))
    a = RNG.integers(-4, 5, size=(2, 16, k)).astype(np.float64)
    b = RNG.integers(-4, 5, size=(2, k, 8)).astype(np.float64)
    c = RNG.integers(-50, 51, size=(2, 16, 8)).astype(np.float64)
    A, B, C = _frags(shape, t, t, acc, a, b, c)
    D = mma_sync(shape, t, t, acc, acc, "row", "col", A, B, C)
    d = decode(fragment_to_matrix(D, mma_fragment_map(shape, "d", acc)), acc)
    np.testing.assert_array_equal(d, a @ b + c)


def test_float_mma_close_to_float64_on_random_values():
    a = RNG.standard_normal((4, 16, 16)).astype(np.float16).astype(np.float64)
    b = RNG.standard_normal((4, 16, 8)).astype(np.float16).astype(np.float64)
    c = RNG.standard_normal((4, 16, 8)).astype(np.float32).astype(np.float64)
    D = mma_sync("m16n8k16", "f16", "f16", "f32", "f32", "row", "col", *_frags("m16n8k16", "f16", "f16", "f32", a, b, c))
    d = decode(fragment_to_matrix(D, mma_fragment_map("m16n8k16", "d", "f32")), "f32")
    ref = a @ b + c
    assert np.abs(d - ref).max() <= 4 * np.abs(ref).max() * 2.0**-24
    assert not np.array_equal(d, ref.astype(np.float32))  # truncating model differs from RNE somewhere


@pytest.mark.parametrize("at,bt", [("s8", "s8"), ("u8", "s8"), ("u8", "u8")])
def test_int8_mma_matches_int64(at, bt):
    lo = {"s8": -128, "u8": 0}
    a = RNG.integers(lo[at], lo[at] + 256, size=(3, 16, 32))
    b = RNG.integers(lo[bt], lo[bt] + 256, size=(3, 32, 8))
    c = RNG.integers(-(2**20), 2**20, size=(3, 16, 8))
    D = mma_sync("m16n8k32", at, bt, "s32", "s32", "row", "col", *_frags("m16n8k32", at, bt, "s32", a, b, c))
    d = decode(fragment_to_matrix(D, mma_fragment_map("m16n8k32", "d", "s32")), "s32")
    np.testing.assert_array_equal(d, a @ b + c)


@pytest.mark.parametrize("sat,expect", [(False, -2146967621), (True, 2147483647)])
def test_int8_overflow_wraps_or_saturates_as_on_h200(sat, expect):
    # facts/ptx.md 10.2: A = B = 127, C = INT_MAX - 100 over k = 32
    a = np.full((1, 16, 32), 127)
    b = np.full((1, 32, 8), 127)
    c = np.full((1, 16, 8), 2**31 - 1 - 100)
    D = mma_sync("m16n8k32", "s8", "s8", "s32", "s32", "row", "col", *_frags("m16n8k32", "s8", "s8", "s32", a, b, c),
                 satfinite=sat)
    assert (D.view(np.int32) == expect).all()


def test_mma_bf16_gemm_bit_exact_with_h200(corpus):
    """Drive mma_sync exactly as cuda/mma_bf16.cu loads its fragments; compare with got_C."""
    d = np.load(corpus / "h200/io_sm90/mma_bf16_m16n8k16_gemm.sm_90.npz")
    A, W, got = d["in_A"], d["in_W"], d["got_C"]
    M, K = A.shape
    N = W.shape[0]
    A16 = encode(A, "bf16").astype(np.uint16)
    W16 = encode(W, "bf16").astype(np.uint16)
    pairs_a = (A16[:, 0::2].astype(np.uint32) | (A16[:, 1::2].astype(np.uint32) << 16))   # [M, K/2]
    pairs_w = (W16[:, 0::2].astype(np.uint32) | (W16[:, 1::2].astype(np.uint32) << 16))
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    # one "warp" per 16x8 output tile
    tiles = [(r0, n0) for r0 in range(0, M, 16) for n0 in range(0, N, 8)]
    acc = np.zeros((len(tiles), 32, 4), np.uint32)
    for k in range(0, K, 16):
        Ar = np.stack([np.stack([pairs_a[r0 + g, (k + 2 * t) >> 1], pairs_a[r0 + g + 8, (k + 2 * t) >> 1],
                                 pairs_a[r0 + g, (k + 8 + 2 * t) >> 1], pairs_a[r0 + g + 8, (k + 8 + 2 * t) >> 1]], -1)
                       for r0, _ in tiles])
        Br = np.stack([np.stack([pairs_w[n0 + g, (k + 2 * t) >> 1], pairs_w[n0 + g, (k + 8 + 2 * t) >> 1]], -1)
                       for _, n0 in tiles])
        acc = mma_sync("m16n8k16", "bf16", "bf16", "f32", "f32", "row", "col", Ar, Br, acc)
    out = np.zeros((M, N), np.float32)
    for w, (r0, n0) in enumerate(tiles):
        v = acc[w].view(np.float32)
        out[r0 + g, n0 + 2 * t] = v[:, 0]
        out[r0 + g, n0 + 2 * t + 1] = v[:, 1]
        out[r0 + g + 8, n0 + 2 * t] = v[:, 2]
        out[r0 + g + 8, n0 + 2 * t + 1] = v[:, 3]
    assert out.view(np.uint32).tolist() == got.view(np.uint32).tolist()


def test_unsupported_forms_raise():
    z4 = np.zeros((1, 32, 4), np.uint32)
    z2 = np.zeros((1, 32, 2), np.uint32)
    with pytest.raises(SimulationError, match="row.col"):
        mma_sync("m16n8k16", "f16", "f16", "f32", "f32", "col", "col", z4, z2, z4)
    with pytest.raises(SimulationError, match="not supported"):
        mma_sync("m16n8k16", "f16", "bf16", "f32", "f32", "row", "col", z4, z2, z4)
    with pytest.raises(SimulationError, match="W, 32, 4"):
        mma_sync("m16n8k16", "f16", "f16", "f32", "f32", "row", "col", z2, z2, z4)
