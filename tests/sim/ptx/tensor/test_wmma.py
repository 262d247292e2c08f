"""wmma m16n16k16: H200 fragment layout, load/store round trips, and the corpus GEMM bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from isa.errors import SimulationError
from sim.ptx.tensor import decode, encode
from sim.ptx.tensor.wmma import wmma_addresses, wmma_fragment_map, wmma_load, wmma_mma, wmma_store

RNG = np.random.default_rng(11)


def _mem_f16(values):
    return encode(values, "f16").astype(np.uint16).view(np.uint8).reshape(-1).copy()


@pytest.mark.parametrize("layout", ["row", "col"])
def test_a_registers_equal_for_both_layouts_and_repeat(layout):
    a = RNG.standard_normal((16, 16)).astype(np.float16)
    stride = 24
    buf = np.zeros((16, stride), np.float16)
    if layout == "row":
        buf[:, :16] = a
    else:
        buf[:, :16] = a.T
    regs = wmma_load("a", layout, "f16", buf.view(np.uint8).reshape(-1).copy(), np.array([0]), stride)
    assert regs.shape == (1, 32, 8)
    np.testing.assert_array_equal(regs[..., 4:], regs[..., :4])
    # lane 5 (g=1, q=1): register 0 = a[1][2] | a[1][3] << 16 (facts 10.1 / 10.3)
    bits = a.view(np.uint16).astype(np.uint32)
    assert regs[0, 5, 0] == bits[1, 2] | (bits[1, 3] << 16)
    assert regs[0, 5, 1] == bits[9, 2] | (bits[9, 3] << 16)


def test_b_and_c_layouts_match_facts():
    b = RNG.standard_normal((16, 16)).astype(np.float16)
    regs = wmma_load("b", "row", "f16", b.view(np.uint8).reshape(-1).copy(), np.array([0]), 16)
    bits = b.view(np.uint16).astype(np.uint32)
    lane, g, q = 6, 1, 2
    assert regs[0, lane, 0] == bits[2 * q, g] | (bits[2 * q + 1, g] << 16)          # n = g
    assert regs[0, lane, 2] == bits[2 * q, g + 8] | (bits[2 * q + 1, g + 8] << 16)  # n = g + 8
    cmap = wmma_fragment_map("c", "f32")
    assert cmap.rows[lane].tolist() == [1, 1, 9, 9, 1, 1, 9, 9]
    assert cmap.cols[lane].tolist() == [4, 5, 4, 5, 12, 13, 12, 13]


@pytest.mark.parametrize("etype,layout", [("f32", "row"), ("f32", "col"), ("f16", "row"), ("s32", "col")])
def test_store_then_load_c_round_trips(etype, layout):
    n = wmma_fragment_map("d", etype).nregs
    regs = RNG.integers(0, 1 << 32, size=(2, 32, n), dtype=np.uint64).astype(np.uint32)
    mem = np.zeros(2 * 4 * 16 * 20 + 64, np.uint8)
    base = np.array([0, 4 * 16 * 20 + 64])
    wmma_store(layout, etype, mem, base, 20, regs)
    np.testing.assert_array_equal(wmma_load("c", layout, etype, mem, base, 20), regs)
    addr = wmma_addresses("d", layout, etype, base, 20)
    size = 2 if etype == "f16" else 4
    touched = np.unique(addr)
    assert len(touched) == 2 * 256 and (touched % size == 0).all()


def test_int8_wmma_matches_int64():
    a = RNG.integers(-128, 128, size=(16, 16)).astype(np.int8)
    b = RNG.integers(0, 256, size=(16, 16)).astype(np.uint8)
    c = RNG.integers(-1000, 1000, size=(16, 16)).astype(np.int32)
    A = wmma_load("a", "row", "s8", a.view(np.uint8).reshape(-1).copy(), np.array([0]), 16)
    B = wmma_load("b", "col", "u8", b.T.copy().reshape(-1), np.array([0]), 16)
    C = wmma_load("c", "row", "s32", c.view(np.uint8).reshape(-1).copy(), np.array([0]), 16)
    assert A.shape == (1, 32, 2) and B.shape == (1, 32, 2)
    D = wmma_mma("s8", "u8", "s32", "s32", A, B, C)
    out = np.zeros(16 * 16 * 4, np.uint8)
    wmma_store("row", "s32", out, np.array([0]), 16, D)
    np.testing.assert_array_equal(out.view(np.int32).reshape(16, 16), a.astype(np.int64) @ b + c)


def test_wmma_gemm_bit_exact_with_h200(corpus):
    """cuda/wmma_f16.cu: one warp per 16x16 tile, K loop of load a/b + mma; compare got_C bits."""
    d = np.load(corpus / "h200/io_sm90/wmma_gemm_f16_f32.sm_90.npz")
    A, B, got = d["in_A"], d["in_B"], d["got_C"]
    M, K = A.shape
    N = B.shape[1]
    memA, memB = _mem_f16(A), _mem_f16(B)
    tiles = [(r, c) for r in range(0, M, 16) for c in range(0, N, 16)]
    acc = np.zeros((len(tiles), 32, 8), np.uint32)
    for k in range(0, K, 16):
        fa = wmma_load("a", "row", "f16", memA, np.array([(r * K + k) * 2 for r, _ in tiles]), K)
        fb = wmma_load("b", "row", "f16", memB, np.array([(k * N + c) * 2 for _, c in tiles]), N)
        acc = wmma_mma("f16", "f16", "f32", "f32", fa, fb, acc)
    out = np.zeros(M * N * 4, np.uint8)
    wmma_store("row", "f32", out, np.array([(r * N + c) * 4 for r, c in tiles]), N, acc)
    assert out.view(np.uint32).tolist() == got.view(np.uint32).ravel().tolist()
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.abs(out.view(np.float32).reshape(M, N) - ref).max() < 1e-4


def test_wmma_rejects_other_shapes_and_bad_fragments():
    with pytest.raises(SimulationError, match="not a wmma shape"):
        wmma_fragment_map("a", "f16", "m16n8k16")
    z = np.zeros((1, 32, 8), np.uint32)
    with pytest.raises(SimulationError, match="W, 32, 8"):
        wmma_mma("f16", "f16", "f32", "f32", z[..., :4], z, z)
    assert decode(np.array([0x3C00]), "f16")[0] == 1.0
