"""The mma/wmma forms beyond f16/bf16/tf32/s8: m8n8k4 quad-pairs, f64, s4/u4, b1, mma.sp metadata,
the wmma shapes.  Expected values follow the ISA's definitions (9.7.14.5-6); the H200 programs of
``examples/ptx/isa`` (tests/sim/ptx/test_isa_examples.py) check the same forms bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from isa.errors import SimulationError
from sim.ptx.tensor import (decode, encode, fragment_to_matrix, matrix_to_fragment, mma_fragment_map, mma_sync,
                            wmma_fragment_map)
from sim.ptx.tensor.mma import mma_sp, sparse_expand

RNG = np.random.default_rng(12)


@pytest.mark.parametrize("shape,operand,etype", [
    ("m8n8k32", "a", "s4"), ("m16n8k64", "a", "u4"), ("m16n8k64", "b", "s4"), ("m8n8k128", "b", "b1"),
    ("m16n8k256", "a", "b1"), ("m16n8k16", "a", "f64"), ("m16n8k8", "b", "f64"), ("m8n8k4", "c", "f64"),
    ("m16n8k16", "a", "e4m3"),
])
def test_every_element_is_held_once(shape, operand, etype):
    fmap = mma_fragment_map(shape, operand, etype)
    flat = (fmap.rows * fmap.shape[1] + fmap.cols).ravel()
    assert sorted(flat.tolist()) == list(range(fmap.shape[0] * fmap.shape[1]))


def test_isa_formulas_of_the_new_shapes():
    # m16n8k64 .s4 A (ISA 9.7.14.5.12): row g for a0..a7 and a16..a23, col 8t + (i&7) (+32 for i >= 16)
    a = mma_fragment_map("m16n8k64", "a", "s4")
    lane, g, t = 6, 1, 2
    assert a.rows[lane].tolist() == [g] * 8 + [g + 8] * 8 + [g] * 8 + [g + 8] * 8
    assert a.cols[lane].tolist() == [8 * t + (i & 7) + 32 * (i >= 16) for i in range(32)]
    # m16n8k16 .f64 A: row g for even i, col 2i + t (even i), 2i - 2 + t (odd i)
    f = mma_fragment_map("m16n8k16", "a", "f64")
    assert f.rows[lane].tolist() == [g + 8 * (i % 2) for i in range(8)]
    assert f.cols[lane].tolist() == [2 * i + t if i % 2 == 0 else 2 * i - 2 + t for i in range(8)]
    assert f.nregs == 8 and f.reg_bits == 64
    # m8n8k128 .b1 B: row 32t + i, col g; one register
    b = mma_fragment_map("m8n8k128", "b", "b1")
    assert b.rows[lane].tolist() == [32 * t + i for i in range(32)] and set(b.cols[lane].tolist()) == {g}
    assert b.nregs == 1


def test_sub_byte_elements_decode_and_pack_low_first():
    assert decode(np.array([0x7, 0x8, 0xF]), "s4").tolist() == [7, -8, -1]
    assert decode(np.array([0x7, 0x8, 0xF]), "u4").tolist() == [7, 8, 15]
    fmap = mma_fragment_map("m8n8k32", "a", "s4")
    mat = np.zeros((1, 8, 32), np.uint32)
    mat[0, 0, :8] = [1, 2, 3, 4, 5, 6, 7, 0xF]        # lane 0 holds a0..a7 = row 0, cols 0..7
    assert matrix_to_fragment(mat, fmap)[0, 0, 0] == 0xF7654321


@pytest.mark.parametrize("op", ["and", "xor"])
def test_b1_popc_of_and_or_xor(op):
    a = RNG.integers(0, 2, (1, 8, 128))
    b = RNG.integers(0, 2, (1, 128, 8))
    c = RNG.integers(-50, 50, (1, 8, 8))
    A = matrix_to_fragment(a.astype(np.uint32), mma_fragment_map("m8n8k128", "a", "b1"))
    B = matrix_to_fragment(b.astype(np.uint32), mma_fragment_map("m8n8k128", "b", "b1"))
    C = matrix_to_fragment(encode(c, "s32"), mma_fragment_map("m8n8k128", "c", "s32"))
    D = mma_sync("m8n8k128", "b1", "b1", "s32", "s32", "row", "col", A, B, C, bitop=op)
    d = decode(fragment_to_matrix(D, mma_fragment_map("m8n8k128", "d", "s32")), "s32")[0]
    for m in range(8):
        for n in range(8):
            x = int("".join(map(str, a[0, m][::-1])), 2)               # row m of A as a 128-bit number
            y = int("".join(map(str, b[0, :, n][::-1])), 2)            # column n of B
            assert d[m, n] == c[0, m, n] + bin(x & y if op == "and" else x ^ y).count("1"), (m, n)
    with pytest.raises(SimulationError, match="popc"):
        mma_sync("m8n8k128", "b1", "b1", "s32", "s32", "row", "col", A, B, C)


def test_m8n8k4_quad_pairs_compute_four_independent_products():
    """ISA 9.7.14.5.1: lanes 4q..4q+3 and 4q+16..4q+19 compute MMA q; each an 8x8x4 product."""
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (4, 8, 4)).astype(np.float64)
    b = rng.integers(-4, 5, (4, 4, 8)).astype(np.float64)
    c = rng.integers(-4, 5, (4, 8, 8)).astype(np.float64)
    A32 = np.zeros((1, 32, 16)); B32 = np.zeros((1, 16, 32)); C32 = np.zeros((1, 32, 32))  # noqa: E702
    for q in range(4):
        A32[0, 8 * q:8 * q + 8, 4 * q:4 * q + 4] = a[q]
        B32[0, 4 * q:4 * q + 4, 8 * q:8 * q + 8] = b[q]
        C32[0, 8 * q:8 * q + 8, 8 * q:8 * q + 8] = c[q]
    for la, lb in (("row", "col"), ("col", "row"), ("row", "row")):
        A = matrix_to_fragment(encode(A32, "f16"), mma_fragment_map("m8n8k4", "a", "f16", la))
        B = matrix_to_fragment(encode(B32, "f16"), mma_fragment_map("m8n8k4", "b", "f16", lb))
        C = matrix_to_fragment(encode(C32, "f32"), mma_fragment_map("m8n8k4", "c", "f32"))
        D = mma_sync("m8n8k4", "f16", "f16", "f32", "f32", la, lb, A, B, C)
        dmap = mma_fragment_map("m8n8k4", "d", "f32")
        got = decode(D, "f32")[0]                                      # [32 lanes, 8]
        for lane in (0, 5, 18, 31):
            q = (lane % 16) // 4
            want = (a[q] @ b[q] + c[q])[dmap.rows[lane] - 8 * q, dmap.cols[lane] - 8 * q]
            assert got[lane].tolist() == want.tolist()
    # C/D .f32 (ISA): row = (lane & 1) + (i & 2) + 4*(lane >= 16), col = (i & 4) + (lane & 2) + (i & 1)
    dmap = mma_fragment_map("m8n8k4", "d", "f32")
    assert dmap.rows[19].tolist() == [1 + (i & 2) + 4 + 8 * 0 for i in range(8)]
    assert dmap.cols[19].tolist() == [(i & 4) + 2 + (i & 1) for i in range(8)]


def test_sparse_metadata_places_the_non_zeros():
    """2:4 sparsity (ISA 9.7.14.6.1): metadata nibble 0b1110 -> the chunk's non-zeros at 2 and 3,
    0b0100 -> at 0 and 1; for m16n8k16 .f16 one thread of the group (the selector, 0-3) holds the
    metadata of rows g (low half) and g + 8 (high half).  Every family: test_mma_sparse.py."""
    packed = np.arange(1, 16 * 8 + 1, dtype=np.uint32).reshape(1, 16, 8)     # 16 x K/2 for k16
    meta = np.zeros((1, 32), np.uint32)
    meta[0, :] = 0x4E4E4E4E                                              # chunks 0,2: cols 2,3; 1,3: cols 0,1
    meta[0, 4 * 3 + 1] = 0x4E4E9999      # selector 1, row 3: 0b1001 -> positions 1 and 2 in every chunk
    dense = sparse_expand(packed, meta, 1, 16, "f16")[0]
    assert dense[0].tolist() == [0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8, 0, 0]
    assert dense[3].tolist() == [0, 25, 26, 0, 0, 27, 28, 0, 0, 29, 30, 0, 0, 31, 32, 0]
    assert dense[11].tolist() == [0, 0, 89, 90, 91, 92, 0, 0, 0, 0, 93, 94, 95, 96, 0, 0]
    assert sparse_expand(packed, meta, 0, 16, "f16")[0, 3].tolist() == [0, 0, 25, 26, 27, 28, 0, 0,
                                                                         0, 0, 29, 30, 31, 32, 0, 0]
    with pytest.raises(SimulationError, match="selector"):
        mma_sp("m16n8k32", "f16", "f16", "f32", "f32", np.zeros((1, 32, 4), np.uint32),
               np.zeros((1, 32, 4), np.uint32), np.zeros((1, 32, 4), np.uint32), meta, 2)


@pytest.mark.parametrize("shape,operand,etype,nregs", [
    # register counts of the ISA (9.7.14.4.2)
    ("m32n8k16", "a", "f16", 8), ("m32n8k16", "b", "f16", 8), ("m32n8k16", "c", "f32", 8),
    ("m8n32k16", "a", "bf16", 2), ("m8n32k16", "b", "bf16", 8), ("m32n8k16", "a", "s8", 4),
    ("m8n32k16", "b", "u8", 4), ("m16n16k8", "a", "tf32", 4), ("m16n16k8", "b", "tf32", 4),
    ("m8n8k4", "a", "f64", 1), ("m8n8k4", "c", "f64", 2), ("m8n8k32", "a", "s4", 1), ("m8n8k128", "b", "b1", 1),
    ("m8n8k128", "c", "s32", 2), ("m16n16k16", "a", "f16", 8), ("m16n16k16", "b", "bf16", 4),
])
def test_wmma_fragments_have_the_isa_register_counts(shape, operand, etype, nregs):
    fmap = wmma_fragment_map(operand, etype, shape)
    assert fmap.nregs == nregs
    flat = set((fmap.rows * fmap.shape[1] + fmap.cols).ravel().tolist())
    assert flat == set(range(fmap.shape[0] * fmap.shape[1]))          # every element held


def test_wmma_refuses_types_a_shape_does_not_take():
    with pytest.raises(SimulationError, match="not supported"):
        wmma_fragment_map("a", "tf32", "m16n16k16")
    with pytest.raises(SimulationError, match="not a wmma shape"):
        wmma_fragment_map("a", "f16", "m16n8k16")
